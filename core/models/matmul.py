"""Matrix products through oneDNN on the CPU.

torch runs an fp32 matrix product on the CPU through MKL, and MKL picks its fast
AVX-512 kernels only on Intel processors: on an AMD EPYC with AVX-512 it ran square
fp32 products at 199-213 GFLOP/s, where oneDNN (also inside torch) ran them at 466-473
(docs/benchmarks.md, "fp32 products through oneDNN"). bf16 products already go to
oneDNN, but `F.linear` with a bias first copies the bias into every output row and then
accumulates the product onto it; oneDNN adds the bias inside the product, which made the
bench model's softmax layer (576 x 256 x 14,790) 26 % faster in bf16 and 46 % in fp32.

So `linear` (differentiable), `mm` and `addmm` (for passes written by hand) send fp32
CPU products to oneDNN's matmul (`torch.ops.mkldnn._linear_pointwise`), and `linear`
also bf16 products with a bias where oneDNN has bf16 kernels. Everything else (bf16
without a bias, where torch already calls oneDNN; float64; CUDA; a torch without oneDNN;
products under MIN_MACS) stays with torch's own products. In bf16 the results are
torch's to the bit; in fp32 they differ by summation order only.
"""
from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.weak import WeakIdKeyDictionary

from core.models import int8

#: products of fewer multiply-adds (M x K x N) stay with torch: oneDNN costs about 10 us
#: more per call and about 0.3 ms to build its kernel for each new shape, which only
#: products of this size and up repay (64 x 64 x 256: 19.5 against 21.3 us in fp32)
MIN_MACS = 1 << 20


@functools.cache
def _bf16_supported() -> bool:
    """torch's own test for oneDNN bf16 products (AVX-512 BW/VL/DQ or newer)."""
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


@functools.cache
def _available() -> bool:
    return torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")


def uses_onednn(x: Tensor, macs: int = MIN_MACS, with_bias: bool = False) -> bool:
    """x: any, macs: the product's M x K x N -> whether it goes to oneDNN here: on the
    CPU with oneDNN enabled, at least MIN_MACS, fp32; or bf16 with a bias (`with_bias`)
    where oneDNN has bf16 kernels."""
    if x.dtype == torch.float32:
        wanted = True
    elif x.dtype == torch.bfloat16 and with_bias:
        wanted = _bf16_supported()
    else:
        return False
    return (wanted and macs >= MIN_MACS and x.device.type == "cpu" and _available()
            and torch.backends.mkldnn.enabled)


def _dense(t: Tensor) -> Tensor:
    """t: 2-D -> t where it is row- or column-major without gaps, else a contiguous copy:
    oneDNN's fast kernels take only those two layouts and fall back to its reference
    code for others (a column slice of a weight took 378 ms instead of 0.1)."""
    return t if t.is_contiguous() or t.t().is_contiguous() else t.contiguous()


#: a search's products have few rows (a batch of sentences, or of hypotheses): up to
#: this many, a parameter's weight is used in oneDNN's own blocked layout
PACKED_MAX_ROWS = 256
#: parameter -> ((its version, its storage) when packed, the tensor packed from, the
#: packed weight N x K); the tensor packed from is held so that its storage's address
#: cannot be reused by another one while the entry stands
_packed = WeakIdKeyDictionary()  # by identity: a tensor's == is elementwise
_searching = threading.local()


@contextlib.contextmanager
def packed_weights():
    """Within it (a search, in this thread), products without gradients may use packed
    weights (_inference_weight), and core.models.activations.tanh its cheaper identity
    (in_search). A scope rather than the grad mode alone: a training
    step's hand-written passes (an autograd Function's forward and backward) also run
    without gradients, and there a weight changes at every step."""
    before = getattr(_searching, "on", False)
    _searching.on = True
    try:
        yield
    finally:
        _searching.on = before


#: owner -> (key, what `kept` built for it): weights built from Parameters for searches
_kept = WeakIdKeyDictionary()
#: tensors `kept` built, packed as Parameters are (by identity; nothing writes to them)
_built = WeakIdKeyDictionary()
#: optimiser steps taken in this process (any thread), counted by _forget_packed
_steps = [0]


#: the key of a kept entry that no longer changes (freeze_kept)
FROZEN = object()


def kept(owner: object, key: object, build: Callable[[], list[Tensor]],
         sources: list[Tensor] | None = None) -> list[Tensor]:
    """Weights that decoding builds from Parameters (Luong's concatenated cell weights),
    each N x K: `build()`'s, for `owner`, kept across searches until `key` (the
    Parameters' versions and storages, a dtype) changes or an optimiser steps. A search's
    products use them packed, as they do Parameters (_inference_weight): built afresh
    for each search, a weight would be packed afresh too, for about what its products
    save in one search. Not seen, as for packed Parameters: a change through `.data`
    (the version counter does not move; nothing in the workbench writes so). An optimiser
    step on another thread while `build` runs leaves the result unkept (_steps).
    `sources`: the Parameters `build` reads (freeze_kept names them). A frozen entry
    (freeze_kept) is returned as it is, whatever `key`."""
    entry = _kept.get(owner)
    if entry is not None and entry[0] is FROZEN:
        return entry[1]
    if entry is None or entry[0] != key:
        steps = _steps[0]
        weights = build()
        if _steps[0] != steps:  # a step landed during the build: this search's only
            return weights
        for w in weights:  # a view's products see its base (_inference_weight)
            _built[w if w._base is None else w._base] = True
        entry = _kept[owner] = (key, weights, list(sources or []))
    int8.cover(owner, entry[1])  # packed per row for a model prepared for int8
    return entry[1]


def freeze_kept(owner: object, stand_in: Callable[[Tensor], Tensor]) -> list[Tensor]:
    """Replace each weight kept for `owner` by `stand_in(weight)` and keep the entry from
    now on, whatever key `kept` is given (core.models.int8_release.release: the weights
    become shape-only stand-ins of their int8 forms, each out x in as the weight).
    Returns the Parameters they were built from (kept's `sources`); nothing for an owner
    without kept weights."""
    entry = _kept.get(owner)
    if entry is None:
        return []
    _kept[owner] = (FROZEN, [stand_in(w) for w in entry[1]], [])
    return entry[2]


def in_search() -> bool:
    """Whether this thread is inside `packed_weights` (a search)."""
    return getattr(_searching, "on", False)


def _forget_packed(optimizer, args, kwargs) -> None:
    """After any optimiser's step: fused Adam updates the weights in place without moving
    their version counters, so no packed copy, nor any weight built from them, may
    outlive a step."""
    _steps[0] += 1
    _packed.clear()
    _kept.clear()
    _built.clear()


register_optimizer_step_post_hook(_forget_packed)


def _inference_weight(weight: Tensor, rows: int) -> Tensor:
    """weight: N x K -> the same values in oneDNN's blocked layout where that pays: in a
    search (packed_weights) without gradients, in fp32, for a product of at most
    PACKED_MAX_ROWS rows, when `weight` is a Parameter's whole matrix as it is stored
    (the Parameter itself, or the transpose of its transpose that addmm gets), or a
    weight built from Parameters by `kept`. oneDNN otherwise reorders the weight inside
    every call: a greedy step's softmax layer (32 x 256 x 14,790) took 2.6 against 1.7
    ms with AVX-512 kernels, 5.1 against 3.9 with AVX2 ones. The packed copy
    is kept beside the Parameter until it changes (its version counter), so a search
    packs each weight once; it costs one copy of each weight so used. Every optimiser
    step drops all packed copies (_forget_packed). Not seen: a change through `.data`
    or through another tensor sharing the storage (the version counter does not move;
    nothing in the workbench does either); inference tensors (no version counter) are
    never packed."""
    if (not in_search() or torch.is_grad_enabled()
            or rows > PACKED_MAX_ROWS or weight.dtype != torch.float32):
        return _dense(weight)
    param = weight if weight._base is None else weight._base
    if (not (isinstance(param, torch.nn.Parameter) or param in _built) or param.is_inference()
            or weight.shape != param.shape or not weight.is_contiguous()
            or weight.data_ptr() != param.data_ptr()):
        return _dense(weight)
    key = (param._version, param.data_ptr())
    entry = _packed.get(param)
    if entry is None or entry[0] != key:
        source = weight.detach()
        entry = (key, source, torch.ops.mkldnn._reorder_linear_weight(source, rows))
        _packed[param] = entry
    return entry[2]


def _product(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """x: M x K, weight: N x K (any strides), bias: N or None -> M x N by oneDNN."""
    return torch.ops.mkldnn._linear_pointwise(_dense(x), _inference_weight(weight, x.size(0)),
                                              bias, "none", [], "")


def mm(a: Tensor, b: Tensor) -> Tensor:
    """a: M x K, b: K x N -> a @ b, M x N (no autograd: for forward and backward passes
    written by hand). int8 against a prepared weight inside int8.products(); oneDNN
    where `uses_onednn(a)`, else torch.mm."""
    packed = int8.packed_for(b.t())
    if packed is not None:
        return int8.linear(a, packed)
    if a.dtype != b.dtype or not uses_onednn(a, a.numel() * b.size(1)):
        return torch.mm(a, b)
    return _product(a, b.t(), None)


def addmm(c: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """c: N or M x N, a: M x K, b: K x N -> c + a @ b, M x N (no autograd), as
    torch.addmm; int8 against a prepared weight inside int8.products(); by oneDNN (c
    added inside the product) where `uses_onednn(a)`."""
    packed = int8.packed_for(b.t())
    if packed is not None:
        return int8.linear(a, packed, c)
    if len({a.dtype, b.dtype, c.dtype}) > 1 or not uses_onednn(a, a.numel() * b.size(1)):
        return torch.addmm(c, a, b)
    if c.dim() == 1:
        return _product(a, b.t(), c)
    return torch.ops.mkldnn._linear_pointwise.binary(
        _dense(a), c.expand(a.size(0), b.size(1)).contiguous(),
        _inference_weight(b.t(), a.size(0)), None, "add")


#: elements of the source a block of `_transposed` reads (2 MB of fp32: within L2)
TRANSPOSE_BLOCK = 1 << 19


def _transposed(t: Tensor) -> Tensor:
    """t: K x N -> t^T, N x K contiguous, copied a block of TRANSPOSE_BLOCK // K columns
    of t at a time. torch copies a transpose in one pass whose reads stride across the
    whole source, a cache line for each element: 256 x 14,790 fp32 took 5.8 against 1.5
    ms, 512 x 14,790 9.6 against 3.3 (2 threads, docs/benchmarks.md)."""
    k, n = t.shape
    cols = max(1, TRANSPOSE_BLOCK // max(1, k))
    if n <= cols:
        return t.t().contiguous()
    out = t.new_empty(n, k)
    for i in range(0, n, cols):
        out[i:i + cols].copy_(t[:, i:i + cols].t())
    return out


def _weight_gradient(g: Tensor, x: Tensor) -> Tensor:
    """g: M x N, x: M x K -> g^T x, N x K (contiguous). oneDNN is slow with a transposed
    left operand (28 against 9.9 ms at 576 x 14,790 x 256 in fp32), so one operand is
    copied: g^T (M x N) where M <= 2K and N <= 4K (a layer, not a softmax layer over the
    vocabulary, whose g^T is large), else the product x^T g (K x N) is computed and its
    transpose copied (N x K, by blocks: _transposed). Each way is up to 2.6x slower than
    the other at some layer shape; against always the second way, the rule made whole
    fp32 training steps 2.4 % faster for the thesis Transformer and 2.1 % for the bench
    LSTM (docs/benchmarks.md)."""
    if g.dtype != x.dtype or not uses_onednn(g, g.numel() * x.size(1)):
        return torch.mm(g.t(), x)
    if g.size(0) <= 2 * x.size(1) and g.size(1) <= 4 * x.size(1):
        return _product(g.t().contiguous(), x.t(), None)
    return _transposed(_product(x.t(), g.t(), None))


class _Linear(torch.autograd.Function):
    """x: M x K, weight: N x K, bias: N or None -> x weight^T + bias, M x N; the
    gradients as torch's addmm gives them (dx = g W, dW = g^T x, db = sum_rows g)."""

    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        ctx.save_for_backward(x, weight)
        return _product(x, weight, bias)

    @staticmethod
    @once_differentiable
    def backward(ctx, g: Tensor):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        g = g.contiguous()
        dx = mm(g, weight) if need_x else None
        dw = _weight_gradient(g, x) if need_w else None
        db = g.sum(0) if need_b else None
        return dx, dw, db


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x: ... x K, weight: N x K, bias: N or None -> ... x N, `F.linear` (autocast
    included: under CPU autocast all three are cast to its dtype, as autocast does) with
    the product by oneDNN where `uses_onednn` allows it. Under autocast without
    gradients (decoding) it is F.linear itself, whose casts autocast keeps. Inside
    int8.products() a prepared weight's product runs in int8 (core.models.int8)."""
    packed = int8.packed_for(weight)
    if packed is not None:
        return int8.linear(x, packed, bias)
    if x.device.type == "cpu" and torch.is_autocast_enabled("cpu"):
        if not torch.is_grad_enabled() or bias is None:
            # a search: autocast keeps its cast of a weight across the steps, where a
            # cast here would recast the softmax layer at every step (beam 5 bf16 -12 %);
            # without a bias, a bf16 product goes to torch (oneDNN) in any case
            return torch.nn.functional.linear(x, weight, bias)
        dtype = torch.get_autocast_dtype("cpu")
        x, weight = x.to(dtype), weight.to(dtype)
        bias = None if bias is None else bias.to(dtype)
    same = weight.dtype == x.dtype and (bias is None or bias.dtype == x.dtype)
    if not same or not uses_onednn(x, x.numel() * weight.size(0), bias is not None):
        return torch.nn.functional.linear(x, weight, bias)
    rows = x.reshape(-1, x.size(-1))
    return _Linear.apply(rows, weight, bias).reshape(*x.shape[:-1], weight.size(0))


class Linear(torch.nn.Linear):
    """nn.Linear whose fp32 product runs through oneDNN (`linear`); under autocast it is
    nn.Linear itself, whose casts of the weights autocast keeps for the whole forward
    (a decoder step reuses them). The same parameters and state_dict as nn.Linear."""

    def forward(self, x: Tensor) -> Tensor:
        """x: ... x in_features -> ... x out_features."""
        if torch.is_autocast_enabled(x.device.type) and int8.packed_for(self.weight) is None:
            return super().forward(x)
        return linear(x, self.weight, self.bias)

"""Luong's fused input-feeding decoder (core/models/feed_decoder.py) as CUDA graphs.

On a GPU the decoder's steps are small kernels launched one by one: the bench model's
training step launched 1,253 kernels for 3.7 ms of GPU work, and the GPU waited for the
host (docs/benchmarks.md). `graphed_feed_decoder` records the decoder's forward and its
backward once per shape bucket as two CUDA graphs, then replays them: two launches
in place of some 60 a target word.

A graph has fixed shapes and addresses, so every call copies its inputs into the
bucket's static buffers, padded up to multiples of BUCKET (steps, sentences, source
positions), and copies the results out. The padding changes no real value:
- a step depends only on the steps before it, so the padded steps after the last one
  change no earlier output;
- padded source positions get the mask's -inf, so they take no attention;
- padded sentences attend over zeros, never over nothing (a row of -inf, whose softmax
  would be NaN and reach the weight gradients as 0 x NaN): with global attention a
  bias of 0 everywhere, with local-p a length of one word;
- the backward's padded steps and sentences receive zero gradients, and everything they
  pass on (to earlier steps, to the weight gradients) is zero.

Where nothing can be captured (the CPU) the same buckets run eagerly on the same static
buffers: the tests check that path against `feed_decoder` on the CPU, and on a GPU the
graphs against it.
"""
from __future__ import annotations

import contextlib
import weakref
from collections import OrderedDict

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from core.models.attention import NEG_INF
from core.models.feed_decoder import (
    _WEIGHTS,
    LocalP,
    decoder_backward,
    decoder_forward,
    feed_decoder,
    input_dtypes,
    node_weights,
)

#: steps, sentences and source positions are padded up to a multiple of this: the
#: bench split's lengths (1-50) then need at most 7 x 7 buckets a batch size
BUCKET = 8
#: the cached buckets may hold this share of the GPU's memory; the least recently used
#: bucket is dropped beyond it
MEMORY_SHARE = 0.25
#: a bucket's memory, estimated as this many times the buffers it holds
TEMPORARIES = 2
#: batches of more sentences than this are padded to multiples of BATCH_BUCKET instead
#: of BUCKET: token-budget batches vary in size, and each size would be another bucket
LARGE_BATCH, BATCH_BUCKET = 64, 32


#: how many leading dimensions of x_pre, h0, c0, keys, memory are padded
_PADDED_DIMS = (2, 1, 1, 2, 2)


def bucket(n: int, step: int = BUCKET) -> int:
    """n >= 1 -> n rounded up to a multiple of step."""
    return -(-n // step) * step


def batch_bucket(n: int) -> int:
    """A batch of n sentences -> its bucket: a multiple of BUCKET up to LARGE_BATCH,
    of BATCH_BUCKET above."""
    return bucket(n) if n <= LARGE_BATCH else bucket(n, BATCH_BUCKET)


def _nbytes(obj, seen: set) -> int:
    """The bytes of the storages of every tensor in obj (nested lists and tuples of
    tensors and None), each storage counted once (seen: the storages counted so far)."""
    if isinstance(obj, Tensor):
        storage = obj.untyped_storage()
        if storage.data_ptr() in seen:
            return 0
        seen.add(storage.data_ptr())
        return storage.nbytes()
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(x, seen) for x in obj)
    return 0


class _Bucket:
    """One shape bucket: the static inputs, outputs, saved steps and gradients of the
    decoder at that shape, and (capture=True) its forward and backward graphs."""

    def __init__(self, inputs: list[Tensor], bias: Tensor | None, local: LocalP | None,
                 p: float, need: tuple[bool, ...], autocast: tuple[bool, torch.dtype],
                 steps: int, batch: int, src_len: int, capture: bool) -> None:
        """inputs: x_pre, h0, c0, keys, memory, w_c, then the weights (as `_FeedDecoder`
        takes them), used for their dtypes and unpadded shapes (local-p's W_p and v_p,
        the last two, are the attention's own parameters: its forward reads them, so
        the buffers are they themselves); bias (global) or local (local-p); steps,
        batch, src_len: the bucket's padded sizes."""
        x_pre, h0, c0, keys, memory, w_c, *weights = inputs
        live = 0 if local is None else 2

        def padded(t: Tensor, *sizes: int) -> Tensor:
            return t.new_zeros(*sizes, *t.shape[len(sizes):])

        self.x_pre = padded(x_pre, steps, batch)
        self.h0, self.c0 = padded(h0, batch), padded(c0, batch)
        self.keys, self.memory = padded(keys, batch, src_len), padded(memory, batch, src_len)
        self.bias = None if bias is None else padded(bias, batch, src_len)
        self.local = None
        if local is not None:  # lengths of at least 1, so padded sentences stay finite
            self.local = LocalP(local.attention,
                                local.src_lens.new_ones(batch),
                                local.mask.new_zeros(batch, src_len))
            self.local.mask[:, 0] = True  # the first pass below: no empty window
        # zeros, not empty: the first eager pass below reads them
        self.w_c = torch.zeros_like(w_c)
        self.copied = len(weights) - live  # the weights copied in at each call
        self.weights = (*(torch.zeros_like(w) for w in weights[:self.copied]),
                        *weights[self.copied:])
        self.p, self.need, self.autocast = p, need, autocast
        self.dtypes = input_dtypes(x_pre, h0, c0, keys, memory, w_c)
        self.graphs: tuple[torch.cuda.CUDAGraph, torch.cuda.CUDAGraph] | None = None
        #: the autograd node whose backward is still to come (weakly: a node dropped
        #: without a backward frees the bucket)
        self.pending: weakref.ref | None = None
        device = self.x_pre.device
        # a first eager pass (on a side stream before a capture: cuBLAS's workspaces,
        # the kernels' first launches) gives the outputs' dtypes, the gradients' buffers.
        # Its dropout draws are undone (fork_rng): a run that builds a bucket at another
        # step (a resumed one) must draw the same masks as one that does not
        side = torch.cuda.Stream(device) if capture else None
        with contextlib.ExitStack() as stack:
            stack.enter_context(torch.random.fork_rng(
                devices=[device] if device.type == "cuda" else [], device_type=device.type))
            if side is not None:
                stack.enter_context(torch.cuda.device(device))
                side.wait_stream(torch.cuda.current_stream(device))
                stack.enter_context(torch.cuda.stream(side))
            self._run_forward()
            self.d_out, self.d_attn = torch.zeros_like(self.out), torch.zeros_like(self.attn)
            self._run_backward()
        if side is not None:
            main = torch.cuda.current_stream(device)
            main.wait_stream(side)
            for made_on_side in (self.d_out, self.d_attn):  # used on the main stream next
                made_on_side.record_stream(main)
            self._capture()

    def busy(self) -> bool:
        """Whether a forward's saved steps still wait for their backward."""
        return self.pending is not None and self.pending() is not None

    def nbytes(self) -> int:
        """The bytes it holds, estimated: TEMPORARIES x its buffers' (each storage once),
        since a graph's memory pool also keeps the peak of the passes' temporaries (the
        backward's per-step gradients and stacked copies, about as large again)."""
        return TEMPORARIES * _nbytes(
            [self.x_pre, self.h0, self.c0, self.keys, self.memory, self.bias, self.w_c,
             self.weights[:self.copied], self.d_out, self.d_attn, self.out, self.attn,
             self.positions, self.saved, self.grads,
             [] if self.local is None else [self.local.src_lens, self.local.mask],
             [list(s[6].values()) for s in self.saved or [] if s[6]]], set())

    # --- the decoder on the static buffers ----------------------------------------
    def _run_forward(self) -> None:
        enabled, dtype = self.autocast
        device = self.x_pre.device.type
        with torch.no_grad(), torch.autocast(device, dtype=dtype, enabled=enabled,
                                             cache_enabled=False):
            self.out, self.attn, self.positions, self.saved = decoder_forward(
                self.x_pre, self.h0, self.c0, self.keys, self.memory, self.bias, self.w_c,
                self.p, True, self.local, self.weights)

    def _run_backward(self) -> None:
        # a custom node's backward runs with autocast off (the autograd engine's thread)
        with torch.no_grad(), torch.autocast(self.x_pre.device.type, enabled=False):
            self.grads = decoder_backward(self.saved, self.d_out, self.d_attn, self.keys,
                                          self.memory, self.w_c, self.weights, self.p,
                                          self.need, self.dtypes, self.local)

    def _capture(self) -> None:
        """Record the forward and the backward as CUDA graphs sharing one memory pool
        (the backward's temporaries may reuse the forward's; what either keeps is held
        here, so it is never reused)."""
        self.out = self.attn = self.positions = self.saved = self.grads = None
        device = self.x_pre.device
        pool = torch.cuda.graph_pool_handle()
        forward, backward = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
        # on the bucket's GPU, whichever is current (torch's own capture stream is made
        # once, on the GPU current at its first use)
        with torch.cuda.device(device):
            stream = torch.cuda.Stream(device)
            with torch.cuda.graph(forward, pool=pool, stream=stream):
                self._run_forward()
            with torch.cuda.graph(backward, pool=pool, stream=stream):
                self._run_backward()
        self.graphs = (forward, backward)

    def forward(self) -> None:
        if self.graphs is None:
            self._run_forward()
        else:
            self.graphs[0].replay()

    def backward(self) -> None:
        if self.graphs is None:
            self._run_backward()
        else:
            self.graphs[1].replay()


class DecoderGraphs:
    """A model's buckets, least recently used first, within max_bytes of buffers (one
    bucket is always kept, whatever its size). capture: record CUDA graphs (a GPU);
    False runs the buckets eagerly (the CPU, the tests)."""

    def __init__(self, capture: bool, max_bytes: int) -> None:
        self.capture, self.max_bytes = capture, max_bytes
        self.buckets: OrderedDict[tuple, _Bucket] = OrderedDict()
        self.captured = 0  # buckets built so far (the dropped ones included)

    @classmethod
    def for_device(cls, device: torch.device) -> DecoderGraphs:
        """Graphs on a CUDA device (MEMORY_SHARE of its memory), eager buckets elsewhere."""
        if device.type == "cuda":
            total = torch.cuda.get_device_properties(device).total_memory
            return cls(True, int(total * MEMORY_SHARE))
        return cls(False, 1 << 62)

    def get(self, key: tuple, build) -> _Bucket:
        """The bucket under key, built by build() the first time; drops the least
        recently used idle buckets while the buffers exceed max_bytes."""
        found = self.buckets.get(key)
        if found is not None:
            self.buckets.move_to_end(key)
            return found
        made = self.buckets[key] = build()
        self.captured += 1
        total = sum(b.nbytes() for b in self.buckets.values())
        for old_key in list(self.buckets):
            if total <= self.max_bytes or old_key == key:
                break
            if not self.buckets[old_key].busy():
                total -= self.buckets.pop(old_key).nbytes()
        return made


class _GraphedFeedDecoder(torch.autograd.Function):
    """`_FeedDecoder`'s forward and backward, run through a `_Bucket`."""

    @staticmethod
    def forward(ctx, bucket_: _Bucket, x_pre, h0, c0, keys, memory, bias, w_c, src_lens,
                mask, *weights):
        steps, batch, src_len = x_pre.size(0), x_pre.size(1), keys.size(1)
        b = bucket_
        # zero first, then copy: what an earlier, longer batch left in the padding is
        # gone (finite or not)
        for static, value in ((b.x_pre, x_pre), (b.h0, h0), (b.c0, c0), (b.keys, keys),
                              (b.memory, memory)):
            static.zero_()
            static[tuple(slice(0, n) for n in value.shape)].copy_(value)
        if b.bias is not None:  # global: padded positions -inf, padded sentences 0
            b.bias.zero_()
            b.bias[:batch].fill_(NEG_INF)
            b.bias[:batch, :src_len].copy_(bias)
        if b.local is not None:  # local-p: padded sentences one word long
            b.local.src_lens.fill_(1)
            b.local.src_lens[:batch].copy_(src_lens)
            b.local.mask.zero_()
            b.local.mask[batch:, 0] = True
            b.local.mask[:batch, :src_len].copy_(mask)
        b.w_c.copy_(w_c)
        for static, value in zip(b.weights[:b.copied], weights[:b.copied], strict=True):
            static.copy_(value)
        b.forward()
        b.pending = weakref.ref(ctx)
        ctx.bucket, ctx.sizes = b, (steps, batch, src_len)
        out = (b.out[:batch, :steps].clone(), b.attn[:batch, :steps, :src_len].clone())
        if b.positions is None:
            return out
        positions = b.positions[:batch, :steps].clone()
        ctx.mark_non_differentiable(positions)
        return (*out, positions)

    @staticmethod
    @once_differentiable
    def backward(ctx, d_out, d_attn, d_positions=None):
        b, (steps, batch, src_len) = ctx.bucket, ctx.sizes
        ctx.bucket = None
        if b is None:
            raise RuntimeError("the input-feeding decoder's backward ran twice over one "
                               "forward; run the forward again")
        b.d_out.zero_()
        b.d_out[:batch, :steps].copy_(d_out)
        b.d_attn.zero_()
        if d_attn is not None:
            b.d_attn[:batch, :steps, :src_len].copy_(d_attn)
        b.backward()
        b.pending = None
        g = b.grads
        # copies: autograd may keep a returned tensor as a .grad, and the next replay
        # writes into these
        rows = (slice(0, batch),)
        cut = [(slice(0, steps), slice(0, batch)), rows, rows,
               (slice(0, batch), slice(0, src_len)), (slice(0, batch), slice(0, src_len))]
        out = [None if g[i] is None else g[i][cut[i]].clone() for i in range(5)]
        weights = [None if x is None else x.clone() for x in g[_WEIGHTS:]]
        w_c = None if g[6] is None else g[6].clone()
        return (None, *out, None, w_c, None, None, *weights)


def graphed_feed_decoder(graphs: DecoderGraphs, x_pre: Tensor, h0: Tensor, c0: Tensor,
                         keys: Tensor, memory: Tensor, bias: Tensor | None, w_c: Tensor,
                         weights: list[tuple[Tensor, Tensor]], p: float,
                         local: LocalP | None = None) -> tuple[Tensor, Tensor, Tensor | None]:
    """`feed_decoder` (the same arguments, shapes and values) through graphs' buckets:
    x_pre T x batch x 4H; h0, c0 batch x L x H; keys, memory batch x S x H; bias batch x
    S (global) or local (local-p); w_c H x 2H; weights per layer (W, b) -> (h~ batch x T
    x H, attention batch x T x S, local-p's positions batch x T or None). Without a
    backward to come, or while the bucket's previous forward still waits for its
    backward, it is `feed_decoder` itself."""
    flat = node_weights(weights, local)
    inputs = [x_pre, h0, c0, keys, memory, w_c, *flat]
    if not (torch.is_grad_enabled() and any(x.requires_grad for x in inputs)):
        return feed_decoder(x_pre, h0, c0, keys, memory, bias, w_c, weights, p, local)
    # which of _FeedDecoder.forward's arguments want a gradient (bias, p, keep, local never)
    need = (*(x.requires_grad for x in inputs[:5]), False, w_c.requires_grad, False, False,
            False, *(x.requires_grad for x in inputs[6:]))
    device = x_pre.device.type
    autocast = (torch.is_autocast_enabled(device), torch.get_autocast_dtype(device))
    steps, batch, src_len = bucket(x_pre.size(0)), batch_bucket(x_pre.size(1)), bucket(keys.size(1))
    # what the graph reads in place: local-p's parameters (a new bucket if they move),
    # the attention's window and the lengths' dtype
    attend = ("global", bias.dtype) if local is None else (
        "local-p", local.attention.window, local.src_lens.dtype,
        *((t.data_ptr(), t.dtype) for t in flat[-2:]))
    # the padded (leading) dimensions come from the bucket, the others from the inputs
    # the products' precision settings are recorded into a graph too
    maths = (torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision())
    key = (x_pre.device, steps, batch, src_len, p, need, autocast, attend, maths,
           tuple((x.dtype, tuple(x.shape[skip:]))
                 for x, skip in zip(inputs, _PADDED_DIMS + (0,) * (len(inputs) - 5),
                                   strict=True)))
    b = graphs.get(key, lambda: _Bucket(inputs, bias, local, p, need, autocast, steps,
                                        batch, src_len, graphs.capture))
    if b.busy():  # two forwards before one backward: this one runs eagerly
        return feed_decoder(x_pre, h0, c0, keys, memory, bias, w_c, weights, p, local)
    src_lens, mask = (None, None) if local is None else (local.src_lens, local.mask)
    out = _GraphedFeedDecoder.apply(b, x_pre, h0, c0, keys, memory, bias, w_c, src_lens,
                                    mask, *flat)
    return out if local is not None else (*out, None)

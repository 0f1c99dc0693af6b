"""int8 products for inference on the CPU: weights stored as int8 with one scale per row.

A model is `prepare`d once: each weight matrix of at least MIN_INT8 elements (the output
layer, the attention and feed-forward projections, the recurrent weights) becomes int8
with one scale per row, packed for PyTorch's quantized engine (torch's 'x86' engine,
fbgemm's kernels; an output layer on the 'onednn' engine where that is faster:
`engine_for`) when a product first uses it (weights no product reads, such as
an encoder LSTM's inside torch's own kernel, are never packed). A shipped int8 run
(core.train.compact) gives its own int8 rows and scales, packed as they are; any other
weight is quantised per row here the same way (scale = max|w[r]| / 127). The packed
copies sit beside the fp32 Parameters (keyed by identity), so the fp32 path stays as it
was. A model used only for int8 searches (translate --int8) can then be released (core.models.int8_release):
the fp32 copies of the weights its searches packed are dropped, and any later fp32 read
of one fails (a RuntimeError) rather than computing with other values; its owner
(core.infer.session) reloads the checkpoint for fp32 work.

Within `products()` (a search or a forced pass of a session that asked for int8, in this
thread, without gradients) core.models.matmul's `linear`, `addmm` and `mm` send a product
against a prepared weight to `torch.ops.quantized.linear_dynamic`: the input rows are
quantised to uint8 per call (one scale for the batch), the product accumulates in int32
and comes back in fp32. `rnn_step` and `gru_cell` do one step of nn.LSTM / nn.GRU /
nn.GRUCell with those products (torch's own cells read fp32 weights inside). Attention
softmaxes, layer norms, the log-softmax and the search stay in fp32, so attention
weights are computed as before from int8-projected inputs.

Activations use 7 bits (reduce_range): without AVX-512 VNNI, fbgemm's u8 x s8 kernels
add pairs of products in 16 bits, which 8-bit activations against 127-weights overflow;
with 7 bits every CPU class (AVX2, AVX-512) computes the same int8 products (oneDNN's
output layer then differs from fbgemm's by the float rounding of the dequantisation).

Why this API: torch.ao's quantised tensors and dynamic ops are deprecated in favour of
torchao (not installed, and its CPU int8 path is not a dynamic linear with per-row
scales); they are the fbgemm / oneDNN kernels PyTorch still ships and tests. Making the
per-channel weight tensor warns once per call; the warning is caught here, where it is
expected, and nowhere else.
"""
from __future__ import annotations

import contextlib
import functools
import os
import threading
import warnings
from pathlib import Path

import torch
from torch import Tensor, nn
from torch.utils.weak import WeakIdKeyDictionary

#: matrices smaller than this stay fp32 (as core.train.compact keeps them fp16)
MIN_INT8 = 4096
#: the engines tried, in this order (torch.backends.quantized.supported_engines)
ENGINES = ("x86", "fbgemm", "onednn")
REDUCE_RANGE = True  # 7-bit activations: see the module doc
#: weights with at least this many rows are packed on wide_engine() where it names one:
#: output layers over a vocabulary, and a matrix as wide (a Transformer's default
#: 2,048-row feed-forward layer: oneDNN 1.05-1.1x fbgemm's speed on a 160 x 512 x 2,048
#: beam product on the bench host, single thread, so not a loss)
WIDE_ROWS = 2048
#: ONEDNN_MAX_CPU_ISA values that leave oneDNN its VNNI kernels
VNNI_ISAS = ("AVX512_CORE_VNNI", "AVX512_CORE_BF16", "AVX512_CORE_AMX", "AVX10")
CPUINFO = Path("/proc/cpuinfo")  # the CPU's flags (Linux)

#: weight (a Parameter or a tensor built from Parameters) -> (q, scales) from a shipped
#: int8 checkpoint, or None (quantised per row): what is packed on first use
_sources = WeakIdKeyDictionary()
#: weight -> its packed int8 form
_packed = WeakIdKeyDictionary()
#: bias -> (the packed form it was joined to, that form packed again with the bias)
_biased = WeakIdKeyDictionary()
#: models prepared: model -> (matrices prepared, of them from the checkpoint's own rows)
_prepared = WeakIdKeyDictionary()
_state = threading.local()
_engine_lock = threading.Lock()


@functools.cache
def engine() -> str | None:
    """The quantized engine int8 products run on (set once for the process), or None
    where torch has none of ENGINES (then int8 is not available)."""
    supported = torch.backends.quantized.supported_engines
    for name in ENGINES:
        if name in supported:
            torch.backends.quantized.engine = name
            return name
    return None


def available() -> bool:
    """Whether this PyTorch has a quantized engine for the int8 products (engine())."""
    return engine() is not None


def per_row(w: Tensor) -> tuple[Tensor, Tensor]:
    """w: N x K float -> (q N x K int8, scales N float32), core.train.compact's rule:
    scale = max|w[r]| / 127 (as float16, at least its smallest normal), round to nearest."""
    w32 = w.detach().float()
    scale = (w32.abs().amax(dim=1) / 127).half().clamp_min(torch.finfo(torch.float16).tiny)
    q = torch.round(w32 / scale.float()[:, None]).clamp_(-127, 127).to(torch.int8)
    return q, scale.float()


@functools.cache
def wide_engine() -> str | None:
    """The engine that packs a weight of at least WIDE_ROWS rows (an output layer over a
    vocabulary) instead of engine()'s: 'onednn' on a CPU whose int8 kernels use AVX-512
    VNNI (torch's ATen at AVX512, the CPU's flags naming avx512_vnni, oneDNN not capped
    below it by ONEDNN_MAX_CPU_ISA), else None. Why: on such a CPU oneDNN's kernel took
    0.73 against fbgemm's 1.09 ms for the bench model's 160 x 256 x 14,790 beam product,
    0.21 against 0.26 ms for a 4,000-word output layer, while it lost on products of
    fewer output rows (a fixed cost of about 8 us a call); with AVX2 kernels the two are
    equal on the output layer (docs/benchmarks.md, "oneDNN for the output layer"). Their
    outputs differ by the float rounding of the dequantisation (at most 1.5e-5 on a logit),
    not in the int8 products."""
    if engine() is None or "onednn" not in torch.backends.quantized.supported_engines:
        return None
    if torch.backends.cpu.get_cpu_capability() != "AVX512":
        return None
    capped = os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper()
    if capped != "ALL" and not capped.startswith(VNNI_ISAS):
        return None
    try:
        flags = CPUINFO.read_text(errors="replace")
    except OSError:  # not Linux: keep the one engine
        return None
    return "onednn" if " avx512_vnni" in flags else None


def engine_for(rows: int) -> str | None:
    """The engine that packs a weight of `rows` rows (wide_engine's or engine()'s)."""
    return (wide_engine() if rows >= WIDE_ROWS else None) or engine()


def pack(q: Tensor, scales: Tensor):
    """q: N x K int8, scales: N -> the packed weight (no bias), on engine_for(N)."""
    zeros = torch.zeros(q.size(0), dtype=torch.long)
    with warnings.catch_warnings():  # the deprecation of quantised tensors: module doc
        warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
        qw = torch._make_per_channel_quantized_tensor(q.contiguous(), scales.double(), zeros, 0)
    return _prepack(qw, None)


def _prepack(qw: Tensor, bias: Tensor | None):
    """torch's prepack of the quantised N x K weight (+ bias) on engine_for(N). The engine
    is a process-wide setting that prepack reads: switched under a lock and restored (a
    packed weight runs on its own engine's kernel whatever the setting)."""
    name = engine_for(qw.size(0))
    with _engine_lock:
        before = torch.backends.quantized.engine
        torch.backends.quantized.engine = name
        try:
            return torch.ops.quantized.linear_prepack(qw, bias)
        finally:
            torch.backends.quantized.engine = before


def prepare(model: nn.Module, compact: dict[str, tuple[Tensor, Tensor]] | None = None) -> int:
    """Make `model`'s weight matrices of at least MIN_INT8 elements int8 (see the module
    doc; each is packed when first used); `compact`: {state-dict name: (q N x K int8,
    scales N)} of a shipped int8 checkpoint, used as stored. Embedding tables are skipped
    unless a Linear shares them (a tied output layer). Returns the number of matrices
    (a second call changes nothing)."""
    if not available():
        raise RuntimeError("this torch has no quantized engine (fbgemm / oneDNN)")
    if model in _prepared:
        return _prepared[model][0]
    compact = compact or {}
    embeddings = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    product_weights = {id(m.weight) for m in model.modules() if isinstance(m, nn.Linear)}
    count = stored = wide = 0
    for name, p in model.named_parameters(remove_duplicate=True):
        if p.dim() != 2 or not p.is_floating_point() or p.numel() < MIN_INT8:
            continue
        if id(p) in embeddings and id(p) not in product_weights:
            continue
        _sources[p] = compact.get(name)
        count, stored = count + 1, stored + (name in compact)
        wide += engine_for(p.size(0)) != engine()
    _prepared[model] = (count, stored, wide)
    return count


def cover(owner: object, weights: list[Tensor]) -> None:
    """Weights built from a prepared model's Parameters (matmul.kept: Luong's concatenated
    cell weights, each N x K) made int8 too, quantised per row (their parts' rows have
    different stored scales); nothing for an unprepared owner."""
    if owner not in _prepared:
        return
    for w in weights:
        base = w if w._base is None else w._base  # packed_for looks a view's base up
        if (w.dim() == 2 and w.numel() >= MIN_INT8 and base.shape == w.shape
                and w.is_contiguous() and base not in _sources):
            _sources[base] = None


@contextlib.contextmanager
def products(on: bool = True):
    """Within it (this thread), products against prepared weights run in int8."""
    before = getattr(_state, "on", False)
    _state.on = on
    try:
        yield
    finally:
        _state.on = before


def active() -> bool:
    """Whether products run in int8 here: inside `products()` on this thread, gradients
    off (training and forced passes with gradients stay in float)."""
    return getattr(_state, "on", False) and not torch.is_grad_enabled()


def packed_for(weight: Tensor):
    """weight: N x K (a prepared tensor itself, or the transpose of its transpose) -> its
    packed form inside `products()`, else None."""
    if not active() or weight.device.type not in ("cpu", "meta"):  # meta: release's
        return None
    base = weight if weight._base is None else weight._base
    if base not in _sources or weight.shape != base.shape or not weight.is_contiguous():
        return None
    entry = _packed.get(base)
    if entry is None:  # first use: packed once (two threads may both pack; one wins)
        source = _sources[base]
        q, scales = source if source is not None else per_row(base)
        entry = _packed[base] = pack(q, scales.float())
    return entry


def linear(x: Tensor, packed, bias: Tensor | None = None) -> Tensor:
    """x: ... x K (float), packed: an N x K weight, bias: N or None -> ... x N fp32
    (+ bias). A bias is added inside the product (`with_bias`); another shape of `bias`
    (a row of M x N) after it."""
    rows = x.reshape(-1, x.size(-1)).float().contiguous()
    fused = bias is not None and bias.dim() == 1
    if fused:
        packed = with_bias(packed, bias)
    out = torch.ops.quantized.linear_dynamic(rows, packed, REDUCE_RANGE)
    if bias is not None and not fused:
        out = out + bias
    return out.reshape(*x.shape[:-1], out.size(-1))


def with_bias(packed, bias: Tensor):
    """packed (an N x K weight, no bias), bias: N float -> the same N x K int8 weight
    packed with `bias`, which the kernel adds to its fp32 output (a separate add of the
    output layer's 160 x 14,790 scores took 0.5-2 ms of an 8-13 ms beam step on AVX2
    kernels). Packed once per bias and kept beside the unbiased form (its int8 rows
    twice: 3.8 MB for a 14,790 x 256 output layer); a bias later changed in place is not
    seen, as a search never does."""
    entry = _biased.get(bias)
    if entry is None or entry[0] is not packed:
        q, _ = torch.ops.quantized.linear_unpack(packed)
        entry = _biased[bias] = (packed, _prepack(q, bias.detach().float().contiguous()))
    return entry[1]


def _product(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """x W^T + b in int8 where W is packed, else in fp32."""
    packed = packed_for(weight)
    if packed is None:
        return torch.nn.functional.linear(x, weight, bias)
    return linear(x, packed, bias)


def gru_cell(cell: nn.GRUCell, x: Tensor, h: Tensor) -> Tensor:
    """nn.GRUCell's step (gates r, z, n), its two products in int8 inside `products()`
    for a prepared cell, else `cell(x, h)`. x: batch x I, h: batch x H -> batch x H."""
    if packed_for(cell.weight_hh) is None:
        return cell(x, h)
    return _gru(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)


def _gru(x, h, w_ih, w_hh, b_ih, b_hh) -> Tensor:
    gi = _product(x, w_ih, b_ih).chunk(3, dim=1)
    gh = _product(h, w_hh, b_hh).chunk(3, dim=1)
    r = torch.sigmoid(gi[0] + gh[0])
    z = torch.sigmoid(gi[1] + gh[1])
    n = torch.tanh(gi[2] + r * gh[2])
    return (1 - z) * n + z * h


def _lstm(x, h, c, w_ih, w_hh, b_ih, b_hh) -> tuple[Tensor, Tensor]:
    gates = _product(x, w_ih, b_ih) + _product(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, dim=1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def rnn_step(rnn: nn.RNNBase, x: Tensor, hidden):
    """One step of a unidirectional batch-first nn.LSTM / nn.GRU in eval mode: x: batch x
    1 x I, hidden (h, c) or h, each layers x batch x H -> (top batch x 1 x H, hidden as
    given). In int8 inside `products()` for a prepared rnn, else `rnn(x, hidden)`."""
    if packed_for(rnn.weight_hh_l0) is None or rnn.bidirectional or not rnn.batch_first:
        return rnn(x, hidden)
    lstm = isinstance(rnn, nn.LSTM)
    h_all, c_all = hidden if lstm else (hidden, None)
    inp, hs, cs = x[:, 0], [], []
    for layer in range(rnn.num_layers):
        w = [getattr(rnn, f"{n}_l{layer}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        if lstm:
            inp, c = _lstm(inp, h_all[layer], c_all[layer], *w)
            cs.append(c)
        else:
            inp = _gru(inp, h_all[layer], *w)
        hs.append(inp)
    h = torch.stack(hs)
    return inp[:, None], ((h, torch.stack(cs)) if lstm else h)


def status_text(models: list[nn.Module], dropped: int = 0) -> str:
    """One line naming the path: 'int8 (x86 engine, 11 weight matrices, per-row scales;
    9 as stored in the checkpoint; 1 of 2,048 rows or more (output layers, and other
    matrices as wide) on the onednn engine)', the last part where wide_engine() packed
    any; `dropped`: the bytes of fp32 copies core.models.int8_release freed, said when
    any."""
    count, stored, wide = (sum(_prepared.get(m, (0, 0, 0))[k] for m in models) for k in range(3))
    return (f"int8 ({engine()} engine, {count} weight matrices, per-row scales; "
            f"{stored} as stored in the checkpoint"
            + (f"; {wide} of {WIDE_ROWS:,} rows or more (output layers, and other "
               f"matrices as wide) on the {wide_engine()} engine" if wide else "")
            + (f"; their fp32 copies dropped, {dropped / 2**20:.1f} MiB" if dropped else "")
            + ")")

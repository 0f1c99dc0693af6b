"""How far a training step is from what the machine can do: `bench train --flops`.

A model of this kind spends most of its arithmetic in matrix products (the output layer,
the gates, the attention), so two measured numbers bound its speed:

- the matrix-product FLOP of one training step per target token, counted by torch's own
  FlopCounterMode (mm, addmm, bmm, ... forward and backward; elementwise work is not
  counted) over the very batches that were timed, plus those of the recurrent layers
  (nn.LSTM, nn.GRU), whose fused CPU kernel it does not see;
- this machine's matrix-product rate at that precision: the best of a few large square
  products (`matmul_peak_gflops`) by torch and by oneDNN (core/models/matmul.py: on AMD
  CPUs torch's fp32 products run at half oneDNN's rate), with the benchmark's thread
  count.

Their ratio is a ceiling in target tokens per second that no trainer of the same model
and batches can pass on this machine, whatever it does around the products; the
achieved GFLOP/s over the peak is the share of the machine a trainer uses. A speed target
above the ceiling needs less arithmetic (e.g. the sampled softmax), not a faster loop.
"""
from __future__ import annotations

import time
from collections.abc import Callable

import torch
from torch.utils.flop_counter import FlopCounterMode

from core.models import matmul

#: square product sizes tried for the peak (the best rate of them is taken)
PEAK_SIZES = (1024, 2048, 3072)


def matmul_peak_gflops(device: torch.device, dtype: torch.dtype, seconds: float = 0.5
                       ) -> float:
    """The best rate, in GFLOP/s, of n x n by n x n products (n in PEAK_SIZES) in `dtype`
    on `device`, each size repeated for about `seconds` after one warm-up product."""
    best = 0.0
    for n in PEAK_SIZES:
        a = torch.randn(n, n, device=device).to(dtype)
        b = torch.randn(n, n, device=device).to(dtype)
        # matmul.mm is torch.mm itself where it does not take oneDNN (bf16, CUDA)
        onednn = matmul.uses_onednn(a, n ** 3)
        for product in (torch.mm, matmul.mm) if onednn else (torch.mm,):
            product(a, b)
            _sync(device)
            done, start = 0, time.perf_counter()
            while True:
                product(a, b)
                done += 1
                _sync(device)
                elapsed = time.perf_counter() - start
                if elapsed >= seconds:
                    break
            best = max(best, 2 * n ** 3 * done / elapsed / 1e9)
    return best


def _onednn_linear_flop(*args, out_shape=None, **kwargs) -> int:
    """FLOP of mkldnn::_linear_pointwise (x ... x K, weight N x K, ...) and of its
    .binary overload (x, other, weight, ...), from the arguments' shapes: 2 M K N."""
    x = args[0]
    weight = args[1] if isinstance(args[3], str) else args[2]
    rows = 1
    for size in x[:-1]:
        rows *= size
    return 2 * rows * x[-1] * weight[0]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def count_flops(step: Callable[[], None], model: torch.nn.Module | None = None) -> int:
    """Matrix-product FLOP of `step()` (forward and backward, whatever it runs), as torch's
    FlopCounterMode counts them, plus those of `model`'s recurrent layers where it cannot
    see them: nn.LSTM / nn.GRU run as one fused oneDNN kernel on the CPU (rnn_flops is
    added for a call during which the counter saw no product)."""
    custom = {}
    if hasattr(torch.ops.mkldnn, "_linear_pointwise"):  # core/models/matmul.py's products
        custom[torch.ops.mkldnn._linear_pointwise] = _onednn_linear_flop
    counter = FlopCounterMode(display=False, custom_mapping=custom)
    unseen = [0]
    before: dict[int, int] = {}

    def pre(mod, _args):
        before[id(mod)] = counter.get_total_flops()

    def post(mod, args, _out):
        if counter.get_total_flops() == before.pop(id(mod)):
            unseen[0] += rnn_flops(mod, args[0])

    rnns = [m for m in (model.modules() if model is not None else [])
            if isinstance(m, torch.nn.RNNBase)]
    hooks = [h for m in rnns for h in (m.register_forward_pre_hook(pre),
                                       m.register_forward_hook(post))]
    try:
        with counter:
            step()
    finally:
        for hook in hooks:
            hook.remove()
    return int(counter.get_total_flops()) + unseen[0]


def rnn_flops(rnn: torch.nn.RNNBase, inputs) -> int:
    """Matrix-product FLOP of one call of `rnn` on `inputs` (a padded batch x T x E /
    T x batch x E tensor or a PackedSequence): per token, layer and direction
    2 (in + H) G H for the G gates (LSTM 4, GRU 3, RNN 1), three times over when it trains
    (the products for the inputs' and the weights' gradients), as FlopCounterMode counts
    a linear layer."""
    data = inputs.data if isinstance(inputs, torch.nn.utils.rnn.PackedSequence) else inputs
    tokens = data.size(0) if data.dim() == 2 else data.size(0) * data.size(1)
    gates = {"LSTM": 4, "GRU": 3}.get(rnn.mode, 1)
    directions = 2 if rnn.bidirectional else 1
    hidden = rnn.hidden_size
    flop = 0
    for layer in range(rnn.num_layers):
        width = rnn.input_size if layer == 0 else hidden * directions
        flop += 2 * tokens * directions * gates * hidden * (width + hidden)
    trains = torch.is_grad_enabled() and rnn.training and rnn.weight_hh_l0.requires_grad
    return 3 * flop if trains else flop


def roofline(row: dict, flop_per_token: float, peak_gflops: float) -> dict:
    """The roofline fields of a `bench train` row: matmul FLOP per target token, the
    achieved GFLOP/s, the machine's peak, the share of it, and the ceiling in tok/s."""
    achieved = flop_per_token * row["tgt_tok_per_s"] / 1e9
    return {"mflop_per_tok": flop_per_token / 1e6, "gflops": achieved,
            "peak_gflops": peak_gflops, "peak_share": achieved / peak_gflops,
            "ceiling_tok_per_s": peak_gflops * 1e9 / flop_per_token}


#: the columns `roofline_columns` prints, after a benchmark's own
HEADER = f" {'MFLOP/tok':>9} {'GFLOP/s':>7} {'peak':>7} {'share':>6} {'ceiling':>9}"


def roofline_columns(row: dict) -> str:
    """A row's roofline fields, aligned under HEADER."""
    return (f" {row['mflop_per_tok']:>9.1f} {row['gflops']:>7.1f} {row['peak_gflops']:>7.1f}"
            f" {100 * row['peak_share']:>5.0f}% {row['ceiling_tok_per_s']:>9.0f}")

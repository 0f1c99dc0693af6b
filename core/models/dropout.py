"""Dropout whose mask is drawn from random 16-bit numbers on the CPU.

torch's CPU dropout draws its mask with `bernoulli_`, one draw of the generator per
element, and keeps a float mask for the backward pass. In the thesis-size Transformer
those masks were 15 % of a training step on the CPU (docs/benchmarks.md). This dropout
draws 64 random bits per four elements (`random_` over the full int64 range, 3x faster
than `torch.rand` per element), keeps an element where its 16 bits reach p's threshold,
scales the kept ones by 1 / (1 - p) and saves a one-byte mask for the backward pass:
nn.Dropout's distribution with the drop probability rounded to a multiple of 2^-16 (0.3
drops 0.299997), a different random stream. The output's mean is then the input's to
within 4e-6 at p = 0.3 and 6e-4 at p = 0.99; the scale stays 1 / (1 - p), which
(unlike the exact keep probability's inverse) is the same in bf16 and fp32 passes for
p such as 0.2. On other devices it is torch's own (fused) dropout.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

#: one lane of a random int64 word: int16 values uniform over [-2^15, 2^15)
_LANES = 4
_LOWEST = -(1 << 15)


def draw_keep(x: Tensor, p: float) -> Tensor:
    """x: batch x ... (any shape) -> bool batch x ... (x's shape): True (keep) with
    probability 1 - round(p * 2^16) / 2^16, whatever x's dtype (the CPU draw of
    `dropout`). 0 <= p < 1."""
    dropped = round(p * (1 << 16))  # how many of the 2^16 lane values drop
    if dropped >= 1 << 16:  # an int16 threshold of 2^15 would wrap around
        return torch.zeros(x.shape, dtype=torch.bool, device=x.device)
    n = x.numel()
    words = torch.empty(-(-n // _LANES), dtype=torch.int64, device=x.device)
    words.random_(-(1 << 63), None)  # every 64-bit value equally likely
    lanes = words.view(torch.int16)[:n].view(x.shape)
    return lanes >= _LOWEST + dropped


def keep_and_scale(x: Tensor, keep: Tensor, scale: float) -> Tensor:
    """x: batch x ... , keep: bool, the same shape -> x * keep * scale, the same shape in
    x's dtype; also the gradient's formula, with the gradient as x."""
    # through uint8 (the same 0/1 bytes): torch converts bool to a float type element by
    # element, uint8 with vector code (64 x 12 x 512 to bf16: 166 against 23 us)
    return x * keep.view(torch.uint8).to(x.dtype).mul_(scale)


class _KeepAndScale(torch.autograd.Function):
    """x * keep * scale, with the gradient grad * keep * scale (keep: bool, x's shape)."""

    @staticmethod
    def forward(ctx, x: Tensor, keep: Tensor, scale: float) -> Tensor:
        ctx.save_for_backward(keep)
        ctx.scale = scale
        return keep_and_scale(x, keep, scale)

    @staticmethod
    def backward(ctx, grad: Tensor):
        (keep,) = ctx.saved_tensors
        return keep_and_scale(grad, keep, ctx.scale), None, None


def dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """x: batch x ... (any shape) -> the same shape, each element zeroed with probability
    p and the others scaled by 1 / (1 - p) while training; x itself otherwise."""
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu" or p >= 1.0:
        return nn.functional.dropout(x, p, True)
    return _KeepAndScale.apply(x, draw_keep(x, p), 1.0 / (1.0 - p))


class Dropout(nn.Dropout):
    """nn.Dropout with the mask drawn as in `dropout` (no parameters: checkpoints of models
    built with nn.Dropout load unchanged)."""

    def forward(self, x: Tensor) -> Tensor:
        """x: batch x ... (any shape) -> batch x ... (the same shape)."""
        return dropout(x, self.p, self.training)

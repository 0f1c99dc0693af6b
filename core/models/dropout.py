"""Dropout whose mask is drawn with `torch.rand` on the CPU.

torch's CPU dropout draws its mask with `bernoulli_`, about twice as slow as `torch.rand`
and a comparison, and keeps a float mask for the backward pass. In the thesis-size
Transformer those masks were 15 % of a training step on the CPU (docs/benchmarks.md).
This dropout keeps each element with probability 1 - p, scales the kept ones by 1 / (1 - p)
and saves a one-byte mask for the backward pass: the same distribution as nn.Dropout, a
different random stream. On other devices it is torch's own (fused) dropout.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn


def draw_keep(x: Tensor, p: float) -> Tensor:
    """x: batch x ... (any shape) -> bool batch x ... (x's shape): True (keep) with
    probability 1 - p, drawn in fp32 whatever x's dtype (the CPU draw of `dropout`)."""
    return torch.rand(x.shape, device=x.device) >= p


def keep_and_scale(x: Tensor, keep: Tensor, scale: float) -> Tensor:
    """x: batch x ... , keep: bool, the same shape -> x * keep * scale, the same shape in
    x's dtype; also the gradient's formula, with the gradient as x."""
    return x * keep.to(x.dtype).mul_(scale)


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

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


class _KeepAndScale(torch.autograd.Function):
    """x * keep * scale, with the gradient grad * keep * scale (keep: bool, x's shape)."""

    @staticmethod
    def forward(ctx, x: Tensor, keep: Tensor, scale: float) -> Tensor:
        ctx.save_for_backward(keep)
        ctx.scale = scale
        return x * keep.to(x.dtype).mul_(scale)

    @staticmethod
    def backward(ctx, grad: Tensor):
        (keep,) = ctx.saved_tensors
        return grad * keep.to(grad.dtype).mul_(ctx.scale), None, None


def dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """x: batch x ... (any shape) -> the same shape, each element zeroed with probability
    p and the others scaled by 1 / (1 - p) while training; x itself otherwise."""
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu" or p >= 1.0:
        return nn.functional.dropout(x, p, True)
    keep = torch.rand(x.shape, device=x.device) >= p  # fp32 draws whatever x's dtype
    return _KeepAndScale.apply(x, keep, 1.0 / (1.0 - p))


class Dropout(nn.Dropout):
    """nn.Dropout with the mask drawn as in `dropout` (no parameters: checkpoints of models
    built with nn.Dropout load unchanged)."""

    def forward(self, x: Tensor) -> Tensor:
        """x: batch x ... (any shape) -> batch x ... (the same shape)."""
        return dropout(x, self.p, self.training)

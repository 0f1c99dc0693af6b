"""core.train.optim.clip_gradients gives the gradients torch's clip_grad_norm_ gives, bit
for bit, whether the norm is above the limit (scaled) or below it (left as they are)."""
from __future__ import annotations

import torch

from core.train.optim import clip_gradients


def _grads(scale: float) -> tuple[list[torch.nn.Parameter], list[torch.nn.Parameter]]:
    torch.manual_seed(3)
    shapes = [(40, 7), (7,), (3, 5, 2)]
    values = [torch.randn(s) * scale for s in shapes]
    ours, theirs = [], []
    for v in values:
        for group in (ours, theirs):
            p = torch.nn.Parameter(torch.zeros_like(v))
            p.grad = v.clone()
            group.append(p)
    unused = torch.nn.Parameter(torch.zeros(2))  # no gradient: skipped by both
    return ours + [unused], theirs + [unused]


def test_clipping_matches_torch_bit_for_bit():
    for scale, clipped in ((0.01, False), (3.0, True)):
        ours, theirs = _grads(scale)
        before = [p.grad.clone() for p in ours[:-1]]
        norm = clip_gradients(ours, max_norm=5.0)
        expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm=5.0)
        assert torch.equal(norm, expected)
        assert (float(norm) > 5.0) == clipped
        for a, b, old in zip(ours[:-1], theirs[:-1], before, strict=True):
            assert torch.equal(a.grad, b.grad)
            assert torch.equal(a.grad, old) != clipped  # scaled only above the limit
        if clipped:
            total = torch.sqrt(sum((p.grad.double() ** 2).sum() for p in ours[:-1]))
            assert abs(float(total) - 5.0) < 1e-4

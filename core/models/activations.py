"""tanh for the CPU's fp32 decoding steps.

torch's CPU tanh (Sleef's, within 1 ulp) costs several times its sigmoid: 160 x 256 took
60 against 33 us as 2 sigmoid(2x) - 1 on 2 threads, and RNNsearch's attention energies
(160 x 19 x 1,000) 5.1 against 1.9 ms (docs/benchmarks.md). The identity loses
precision near 0 only in relative terms: its error stays within 2e-7 absolute, below the
products' rounding that feeds it. Training keeps torch.tanh: the fused decoder's forward
(core/models/feed_decoder.py) gives the step graph's values to the bit.
"""
from __future__ import annotations

import torch
from torch import Tensor

from core.models import matmul


def tanh(x: Tensor) -> Tensor:
    """x: ... x D (any shape) -> tanh(x), ... x D. As 2 sigmoid(2x) - 1 for an fp32 CPU
    tensor in a search (matmul.in_search) outside autograd; torch.tanh otherwise
    (training, bf16, where the identity's error would be 0.004, other devices)."""
    if (not matmul.in_search() or x.requires_grad or x.dtype != torch.float32
            or x.device.type != "cpu"):
        return torch.tanh(x)
    out = torch.mul(x, 2)
    torch.sigmoid(out, out=out)
    return out.mul_(2).sub_(1)

"""The training loss's host work for a thesis-size batch: aten calls (each a dispatch,
most of them a kernel launch on a GPU) of its forward and backward, counted on the meta
device, which takes the GPU's code path (core/train/loss.py) without arithmetic.
Usage: python experiments/count_loss_calls.py"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from core.train import loss as loss_mod  # noqa: E402
from core.train.loss import sequence_nll  # noqa: E402


class CountCalls(TorchDispatchMode):
    """Counts every aten call made under it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def main() -> None:
    sentences, positions, words = 2048, 32, 14789  # 65,536 target positions, Tatoeba's en
    gpu_chunk = loss_mod.GPU_CHUNK_ELEMENTS
    for label, elements in (("chunks of 1M scores (the CPU's size)", 1 << 20),
                            (f"chunks of {gpu_chunk >> 20}M scores (a GPU's)", gpu_chunk)):
        loss_mod.GPU_CHUNK_ELEMENTS = elements
        for smoothing in (0.0, 0.1):
            scores = torch.empty(sentences, positions, words, device="meta",
                                 dtype=torch.bfloat16, requires_grad=True)
            target = torch.empty(sentences, positions, device="meta", dtype=torch.long)
            with CountCalls() as count:
                loss, _, _ = sequence_nll(scores, target, smoothing, n_tokens=60000)
                (loss / 60000).backward()
            print(f"{label}, label smoothing {smoothing}: {count.calls} aten calls")
    loss_mod.GPU_CHUNK_ELEMENTS = gpu_chunk


if __name__ == "__main__":
    main()

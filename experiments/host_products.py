"""How this host runs the bench model's largest operations: each product shape by MKL
(`torch.mm`) and by oneDNN (`core.models.matmul.mm`); the softmax layer's forward whole
and in two halves (each output under glibc's 32 MB mapping ceiling); the loss's chunked
softmax into a fresh buffer, into one already used and over the scores themselves (with
each row's maximum, as the loss does now); the transposed copy of the softmax layer's
weight gradient in one pass and by blocks. docs/benchmarks.md, "where a step goes on a
Zen 4 host". Medians of alternating rounds, 2 threads, fp32.

    python experiments/host_products.py
"""
from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from core.models import matmul  # noqa: E402
from experiments.slab_product import timed  # noqa: E402  (keeps freed memory, as main.py)

#: M x K x N of the bench model's products: a decoder layer's step, the attention
#: output's step, the softmax layer forward and its input gradient, two batch-wide ones
SHAPES = [(64, 512, 1024), (64, 512, 256), (576, 256, 14790), (576, 14790, 256),
          (576, 256, 1024), (1024, 576, 512)]
ROWS, HIDDEN, VOCAB, CHUNK = 576, 256, 14790, 70
ROUNDS = 5


def medians(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """name -> fn; each timed once a round for ROUNDS rounds -> name -> median ms."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            times[name].append(timed(fn, repeats))
    return {name: statistics.median(ms) for name, ms in times.items()}


def products() -> None:
    """Each SHAPES product by MKL and by oneDNN: ms and GFLOP/s."""
    for m, k, n in SHAPES:
        a, b = torch.randn(m, k), torch.randn(k, n)
        ms = medians({"mkl": lambda a=a, b=b: torch.mm(a, b),
                      "onednn": lambda a=a, b=b: matmul.mm(a, b)}, 10)
        gflop = 2 * m * k * n / 1e9
        print(f"{m} x {k} x {n}: MKL {ms['mkl']:7.2f} ms {gflop / ms['mkl'] * 1e3:4.0f} "
              f"GFLOP/s, oneDNN {ms['onednn']:7.2f} ms {gflop / ms['onednn'] * 1e3:4.0f}")


def page_faults() -> None:
    """The softmax layer's forward whole (a 34 MB output) and in halves (17 MB each); its
    chunked softmax into a fresh buffer, into a reused one and over the scores. glibc maps
    a block over its mmap threshold afresh only when its heap has no free room for it, so
    the fresh cases run first, before the halves grow the heap (not alternating with
    them)."""
    x, w, bias = torch.randn(ROWS, HIDDEN), torch.randn(VOCAB, HIDDEN), torch.randn(VOCAB)
    linear = torch.ops.mkldnn._linear_pointwise
    scores, kept = torch.randn(ROWS, VOCAB), torch.empty(ROWS, VOCAB)

    def softmax_into(out: torch.Tensor) -> None:
        for i in range(0, ROWS, CHUNK):
            torch.ops.aten._softmax.out(scores[i:i + CHUNK], 1, False, out=out[i:i + CHUNK])

    overwritten, row_max = torch.randn(ROWS, VOCAB), torch.empty(ROWS)

    def softmax_over_scores() -> None:  # the training loss since 2026-11-27 (fp32, CPU)
        for i in range(0, ROWS, CHUNK):
            chunk = overwritten[i:i + CHUNK]
            row_max[i:i + CHUNK] = chunk.amax(dim=1)
            torch.ops.aten._softmax.out(chunk, 1, False, out=chunk)

    for name, fn in [
        ("softmax into a fresh buffer", lambda: softmax_into(torch.empty(ROWS, VOCAB))),
        ("softmax into a reused buffer", lambda: softmax_into(kept)),
        ("softmax over the scores", softmax_over_scores),
        ("forward whole", lambda: linear(x, w, bias, "none", [], "")),
        ("forward in halves", lambda: [linear(h, w, bias, "none", [], "")
                                       for h in x.split(ROWS // 2)]),
    ]:
        ms = statistics.median(timed(fn, 5) for _ in range(ROUNDS))
        print(f"{name:<30} {ms:7.2f} ms")


def transposes() -> None:
    """The softmax layer's weight gradient (K x N, as x^T g gives it) copied to N x K:
    in one pass, and by matmul._transposed with blocks of 2^15..2^19 source elements
    (its TRANSPOSE_BLOCK, set for each call and put back)."""
    grad = torch.randn(HIDDEN, VOCAB)

    def by_blocks(block: int) -> Callable[[], torch.Tensor]:
        def copy() -> torch.Tensor:
            kept, matmul.TRANSPOSE_BLOCK = matmul.TRANSPOSE_BLOCK, block
            try:
                return matmul._transposed(grad)
            finally:
                matmul.TRANSPOSE_BLOCK = kept
        return copy

    fns = {"one pass": lambda: grad.t().contiguous()}
    fns.update({f"blocks of {1 << e}": by_blocks(1 << e) for e in range(15, 20)})
    for name, value in medians(fns, 10).items():
        print(f"transpose {name:<20} {value:7.2f} ms")


def main() -> None:
    torch.set_num_threads(2)
    page_faults()  # first: see its docstring
    products()
    transposes()


if __name__ == "__main__":
    main()

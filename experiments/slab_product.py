"""The bench model's softmax-layer product (576 x 256 x 14,790 by default, fp32) whole,
and by slabs of rows with the weight packed once for oneDNN, with and without copying the
slabs into one tensor: `docs/benchmarks.md`, "the loss computing the softmax layer by
slabs". Run it with the AVX2 environment of that file to see AVX2 kernels.

    python experiments/slab_product.py --rows 576
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.allocator import keep_freed_memory  # noqa: E402

keep_freed_memory()  # as the entry point does

import torch  # noqa: E402


def timed(fn, repeats: int = 12) -> float:
    """ms a call of fn(), after 3 warm-up calls."""
    for _ in range(3):
        fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=576)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=14790)
    ap.add_argument("--slabs", type=int, nargs="+", default=[64, 128, 192, 288])
    args = ap.parse_args()
    torch.set_num_threads(2)
    linear = torch.ops.mkldnn._linear_pointwise
    x = torch.randn(args.rows, args.hidden)
    w = torch.randn(args.vocab, args.hidden) * 0.05
    b = torch.randn(args.vocab)
    gflop = 2 * args.rows * args.hidden * args.vocab / 1e9

    def row(name: str, ms: float) -> None:
        print(f"{name:<28} {ms:7.2f} ms  {gflop / ms * 1e3:5.0f} GFLOP/s")

    row("whole", timed(lambda: linear(x, w, b, "none", [], "")))
    for rows in args.slabs:
        parts = x.split(rows)
        packed = torch.ops.mkldnn._reorder_linear_weight(w, rows)

        def slabs(parts=parts, packed=packed) -> list[torch.Tensor]:
            return [linear(p, packed, b, "none", [], "") for p in parts]

        row(f"slabs of {rows}", timed(slabs))
        row(f"slabs of {rows}, copied", timed(lambda slabs=slabs: torch.cat(slabs())))


if __name__ == "__main__":
    main()

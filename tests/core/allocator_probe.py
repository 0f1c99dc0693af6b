"""Page faults per beam-search step, in a fresh process: tests/core/test_allocator.py runs
this file with and without core.allocator.keep_freed_memory().

A 2 x 64 Luong model with a 15,000-word target vocabulary decodes 32 sentences with beam
5 in fp32: each step makes and frees several 160 x 15,000 tensors (9.6 MB), as the bench
model does. Usage: python tests/core/allocator_probe.py keep|default; prints one JSON
object: whether the setting was applied and the minor page faults per step of the median
of five searches after a warm-up search. Both modes start from glibc's initial
thresholds held fixed (`hand_memory_back`).
"""
from __future__ import annotations

import json
import resource
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def hand_memory_back() -> None:
    """Hold glibc's thresholds at their initial values (128 KiB): every large block is
    mapped on its own and unmapped when freed. By default glibc raises them after the
    first large free, and whether it then hands memory back depends on the heap's layout
    (0.1 to 2,300 faults a step for this probe, from one process to the next); fixed,
    the 'default' mode faults every step and 'keep' must undo it."""
    from core.allocator import M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, mallopt

    assert mallopt(M_MMAP_THRESHOLD, 128 << 10) and mallopt(M_TRIM_THRESHOLD, 128 << 10)


def main(mode: str) -> dict:
    from core.allocator import keep_freed_memory

    hand_memory_back()
    applied = keep_freed_memory() if mode == "keep" else False
    import torch

    from core.config import ModelConfig
    from core.infer.beam import beam_search
    from core.models.registry import build_model

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = build_model(ModelConfig(family="luong", emb_size=64, hidden_size=64, layers=2),
                        500, 15000).eval()
    src = torch.randint(4, 500, (32, 12))
    lens = torch.full((32,), 12)
    steps = 10
    opts = dict(beam=5, max_len_abs=steps - 1, max_len_ratio=1e9, min_len=steps - 1)
    beam_search(model, src, lens, **opts)  # warm-up: the heap grows to its working size
    per_search = []
    for _ in range(5):
        before = minor_faults()
        beam_search(model, src, lens, **opts)
        per_search.append(minor_faults() - before)
    # the median search: the heap's layout may need one more search to settle
    return {"applied": applied, "faults_per_step": statistics.median(per_search) / steps}

if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))

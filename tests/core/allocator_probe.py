"""Page faults per beam-search step, in a fresh process: tests/core/test_allocator.py runs
this file with and without core.allocator.keep_freed_memory().

A 2 x 64 Luong model with a 15,000-word target vocabulary decodes 32 sentences with beam
5 in fp32: each step makes and frees several 160 x 15,000 tensors (9.6 MB), as the bench
model does. Usage: python tests/core/allocator_probe.py keep|default; prints one JSON
object: whether the setting was applied and the minor page faults per step after a warm-up
batch.
"""
from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def main(mode: str) -> dict:
    from core.allocator import keep_freed_memory

    applied = keep_freed_memory() if mode == "keep" else False
    import torch

    from core.config import ModelConfig
    from core.infer.search import beam_search
    from core.models.registry import build_model

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = build_model(ModelConfig(family="luong", emb_size=64, hidden_size=64, layers=2),
                        500, 15000).eval()
    src = torch.randint(4, 500, (32, 12))
    lens = torch.full((32,), 12)
    steps = 10
    opts = dict(beam=5, max_len_abs=steps - 1, max_len_ratio=1e9, min_len=steps - 1)
    beam_search(model, src, lens, **opts)  # warm-up: the heap reaches its working size
    before = minor_faults()
    rounds = 3
    for _ in range(rounds):
        beam_search(model, src, lens, **opts)
    return {"applied": applied, "faults_per_step": (minor_faults() - before) / (rounds * steps)}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))

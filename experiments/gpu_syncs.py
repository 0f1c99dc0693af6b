"""ON A GPU: where a training step still waits for the GPU. For each bench variant named,
a few bench steps (core/tooling/bench.bench_step) on the Tatoeba split run once to warm
up (the decoder's graphs are recorded there), then again under
torch.cuda.set_sync_debug_mode("warn"); every synchronising call is printed once with
the workbench's frames of its stack, and a count per variant.

Usage: python3 experiments/gpu_syncs.py DATA_DIR [VARIANT ...] [--amp] [--steps N]"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from core.config import load_preset  # noqa: E402
from core.data.batching import BatchPlan  # noqa: E402
from core.data.vocab import Vocab  # noqa: E402
from core.models.luong import LuongModel  # noqa: E402
from core.models.registry import build_model  # noqa: E402
from core.tooling.bench import (  # noqa: E402
    SPECIALS,
    bench_step,
    bench_variants,
    load_bench_pairs,
    variant_data,
    variant_preset,
)
from core.train.optim import build_optimizer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("variants", nargs="*", default=["luong-global-general", "transformer-thesis"])
    ap.add_argument("--amp", action="store_true")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--device", default="cuda", help="cpu: a dry run of the script itself")
    args = ap.parse_args()
    LuongModel.graph_decoder_attentions = ("global", "local-p")
    src_tok, tgt_tok = load_bench_pairs(args.data, "onmt", 20000)
    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    for name in args.variants:
        cfg = dict(bench_variants())[name]
        src_size, tgt_size, sentences, tokens = variant_data(name)
        sv = Vocab.build(src_tok, max_size=src_size + SPECIALS)
        tv = Vocab.build(tgt_tok, max_size=tgt_size + SPECIALS)
        plan = BatchPlan([sv.encode(s) for s in src_tok], [tv.encode(t) for t in tgt_tok],
                         batch_size=sentences, batch_tokens=tokens, seed=1)
        batches = plan.epoch(0)[: args.steps]
        torch.manual_seed(1)
        model = build_model(cfg, len(sv), len(tv)).to(dev).train()
        train = load_preset(variant_preset(name)).train
        opt = build_optimizer(model.parameters(), train)
        for b in batches:
            bench_step(model, opt, plan.collate(b), dev, args.amp, train.clip_norm)
        if cuda:
            torch.cuda.synchronize()
        sites: collections.Counter = collections.Counter()
        stacks: dict[str, str] = {}

        def record(message, category, filename, lineno, file=None, line=None,
                   sites=sites, stacks=stacks):
            frames = [f for f in traceback.extract_stack()[:-1] if "/core/" in f.filename]
            key = " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno}" for f in frames[::-1][:4])
            sites[key] += 1
            stacks.setdefault(key, f"{message}\n" + "".join(traceback.format_list(frames)))

        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = record
            if cuda:
                torch.cuda.set_sync_debug_mode("warn")
            try:
                for b in batches:
                    bench_step(model, opt, plan.collate(b), dev, args.amp, train.clip_norm)
            finally:
                if cuda:
                    torch.cuda.set_sync_debug_mode("default")
        if cuda:
            torch.cuda.synchronize()
        print(f"== {name}{' bf16' if args.amp else ''}: {sum(sites.values())} synchronising "
              f"calls in {len(batches)} steps, {len(sites)} sites")
        for key, n in sites.most_common():
            print(f"  {n:4d}  {key}\n{stacks[key]}")


if __name__ == "__main__":
    main()

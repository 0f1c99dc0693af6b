"""Issue 17 item 2: the thesis Transformer's training speed per parameter against the
recurrent bench model, both trained in one process in alternating blocks of steps.

`bench train` runs each variant in its own process, and on this 2-core machine one
process's rate moves by 5-15 % against the next one's; a ratio of two such rows moves by
as much. Here both models train in one process on the same batches, alternating a block
of each per round (which goes first alternates), so each round's ratio compares two
blocks timed seconds apart. Each round's blocks start at the same batch: the Transformer
trains on the first of the batches the recurrent model trains on in that round.

For each round it prints both rates (target tokens/s, EOS included, as `bench train`
counts them) and the ratio (tokens/s x parameters, Transformer over recurrent model); the
median of the rounds closes the output.

    python experiments/per_parameter.py ~/.cache/nmt-peers/tatoeba-es-en --precision bf16
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.allocator import keep_freed_memory  # noqa: E402

keep_freed_memory()  # as the entry point does

import torch  # noqa: E402

from core.data.batching import BatchPlan  # noqa: E402
from core.data.vocab import Vocab  # noqa: E402
from core.models.registry import build_model  # noqa: E402
from core.tooling.bench import (  # noqa: E402
    SPECIALS,
    bench_preset,
    bench_step,
    bench_variants,
    load_bench_pairs,
)
from core.train.optim import build_optimizer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="the folder prepare_tatoeba.py wrote (train.tok.es/en)")
    ap.add_argument("--split", default="default", choices=("default", "onmt"))
    ap.add_argument("--precision", default="fp32", choices=("fp32", "bf16"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--recurrent", default="luong-global-general")
    ap.add_argument("--transformer", default="transformer-thesis")
    ap.add_argument("--recurrent-steps", type=int, default=40, help="steps per block")
    ap.add_argument("--transformer-steps", type=int, default=10, help="steps per block")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    amp = args.precision == "bf16"
    preset = bench_preset()
    src, tgt = load_bench_pairs(args.data, args.split)
    src_vocab = Vocab.build(src, max_size=preset.data.src_vocab_size + SPECIALS)
    tgt_vocab = Vocab.build(tgt, max_size=preset.data.tgt_vocab_size + SPECIALS)
    plan = BatchPlan([src_vocab.encode(s) for s in src], [tgt_vocab.encode(t) for t in tgt],
                     batch_size=preset.data.batch_size, seed=1)
    batches = plan.epoch(0)
    device = torch.device("cpu")
    variants = dict(bench_variants())

    runs = {}  # name -> (model, optimizer, steps per block, parameters)
    for name, steps in ((args.recurrent, args.recurrent_steps),
                        (args.transformer, args.transformer_steps)):
        torch.manual_seed(1)
        model = build_model(variants[name], len(src_vocab), len(tgt_vocab)).train()
        runs[name] = (model, build_optimizer(model.parameters(), preset.train), steps,
                      sum(p.numel() for p in model.parameters()))

    def train_step(model, opt, i: int) -> int:
        """One update on batch i, as `bench train` does it -> target tokens."""
        return bench_step(model, opt, plan.collate(batches[i % len(batches)]), device, amp,
                          preset.train.clip_norm)

    for model, opt, _, _ in runs.values():  # warm-up: the first steps build kernels
        for i in range(4):
            train_step(model, opt, i)
    print(f"# {args.precision}, {args.threads} threads, split {args.split}; per round "
          f"{args.recurrent_steps} steps of {args.recurrent}, then {args.transformer_steps} "
          f"of {args.transformer} (the first of the same batches), alternating which goes first")
    print(f"# parameters: {runs[args.recurrent][3] / 1e6:.2f} M and "
          f"{runs[args.transformer][3] / 1e6:.2f} M")
    ratios, first = [], 4
    for r in range(args.rounds):
        rates = {}
        order = list(runs.items()) if r % 2 == 0 else list(reversed(runs.items()))
        for name, (model, opt, steps, _) in order:
            start = time.perf_counter()
            tokens = sum(train_step(model, opt, first + j) for j in range(steps))
            rates[name] = tokens / (time.perf_counter() - start)
        first += max(s for _, _, s, _ in runs.values())
        ratio = (rates[args.transformer] * runs[args.transformer][3]
                 / (rates[args.recurrent] * runs[args.recurrent][3]))
        ratios.append(ratio)
        print(f"round {r + 1}: {args.recurrent} {rates[args.recurrent]:,.0f} tok/s, "
              f"{args.transformer} {rates[args.transformer]:,.0f} tok/s, "
              f"per parameter {ratio:.3f}x")
    print(f"median per parameter {statistics.median(ratios):.3f}x "
          f"(range {min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()

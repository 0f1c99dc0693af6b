"""Full softmax vs Jean et al.'s candidate softmax (train.sampled_softmax), and fp32 vs
bf16 autocast (train.amp), on the bench's Tatoeba split: same model (bench-onmt preset),
same batches, same seed; prints the dev perplexity (fp32, normalised over the WHOLE
vocabulary) and the wall time at fixed step counts.

Usage: .venv/bin/python experiments/sampled_softmax.py DATA_DIR [--steps 1500]
       [--every 500] [--k 0 2000] [--precision fp32 bf16] [--threads 1] [--seed 1]
DATA_DIR: the folder ../shared/bench/prepare_tatoeba.py writes (train/dev .tok.es/.en).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.data.batching import BatchPlan  # noqa: E402
from core.data.vocab import Vocab  # noqa: E402
from core.models.registry import build_model  # noqa: E402
from core.tooling.bench import (  # noqa: E402
    SPECIALS,
    bench_preset,
    bench_variants,
    load_bench_pairs,
    variant_data,
)
from core.train.device import amp_active  # noqa: E402
from core.train.loop import evaluate_perplexity, forward_batch, sequence_nll  # noqa: E402
from core.train.optim import build_optimizer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--every", type=int, default=500)
    ap.add_argument("--k", type=int, nargs="+", default=[0, 2000])
    ap.add_argument("--precision", nargs="+", choices=("fp32", "bf16"), default=["fp32"],
                    help="bf16 = train.amp (bf16 autocast; a CPU needs native bf16)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--variant", default="luong-global-general")
    ap.add_argument("--seed", type=int, default=1, help="batch order and initialisation")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    preset = bench_preset()
    cfg = dict(bench_variants())[args.variant]
    src_tok, tgt_tok = load_bench_pairs(args.data, "onmt")
    src_size, tgt_size, _, _ = variant_data(args.variant)  # luong-paper: its own sizes
    sv = Vocab.build(src_tok, max_size=src_size + SPECIALS)
    tv = Vocab.build(tgt_tok, max_size=tgt_size + SPECIALS)
    root = Path(args.data)
    dev_src = [line.split() for line in (root / "dev.tok.es").read_text().splitlines()]
    dev_tgt = [line.split() for line in (root / "dev.tok.en").read_text().splitlines()]
    plan = BatchPlan([sv.encode(s) for s in src_tok], [tv.encode(t) for t in tgt_tok],
                     batch_size=preset.data.batch_size, seed=args.seed)
    dev_plan = BatchPlan([sv.encode(s) for s in dev_src], [tv.encode(t) for t in dev_tgt],
                         batch_size=128, seed=1, shuffle=False)
    batches = plan.epoch(0)
    cpu = torch.device("cpu")
    print(f"# {args.variant}, target vocab {len(tv)}, {len(src_tok)} train / {len(dev_src)} dev "
          f"pairs, {args.threads} thread(s)")
    print("K      prec  steps  train s  dev ppl (full softmax, fp32)")
    for k, precision in [(k, p) for k in args.k for p in args.precision]:
        amp = precision == "bf16"
        if amp and not amp_active(cpu, True):
            print(f"{k or 'full':<6} bf16: this CPU has no native bf16, skipped")
            continue
        torch.manual_seed(args.seed)
        model = build_model(cfg, len(sv), len(tv)).train()
        opt = build_optimizer(model.parameters(), preset.train)
        elapsed = 0.0
        for step in range(1, args.steps + 1):
            start = time.perf_counter()
            out, _, targets = forward_batch(model, plan.collate(batches[step - 1]), cpu, amp,
                                            k, len(tv))
            loss_sum, _, n = sequence_nll(out.scores, targets)
            opt.zero_grad(set_to_none=True)
            (loss_sum / n).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), preset.train.clip_norm)
            opt.step()
            elapsed += time.perf_counter() - start
            if step % args.every == 0:
                ppl = evaluate_perplexity(model, dev_plan, cpu)[1]
                print(f"{k or 'full':<6} {precision:<5} {step:>5} {elapsed:>8.0f}  {ppl:.2f}",
                      flush=True)


if __name__ == "__main__":
    main()

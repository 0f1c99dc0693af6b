"""`bench`: benchmarks that print numbers (see core/bench.py)."""
from __future__ import annotations

import argparse
import json

import torch


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="print speed and memory benchmarks")
    bsub = p.add_subparsers(dest="bench_kind", metavar="KIND", required=True)
    t = bsub.add_parser("train", help="training throughput of every model variant")
    t.add_argument("--variant", action="append", help="only these variants (repeatable)")
    t.add_argument("--steps", type=int, default=30, help="timed steps per variant")
    t.add_argument("--warmup", type=int, default=5)
    t.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    t.add_argument("--threads", type=int, default=torch.get_num_threads())
    t.add_argument("--data", help="folder from ../shared/bench/prepare_tatoeba.py")
    t.add_argument("--json", help="also write the rows to this JSON file")
    t.set_defaults(func=run_train)


def run_train(args: argparse.Namespace) -> int:
    from core.bench import run_train_bench

    rows = run_train_bench(args.variant, args.steps, args.warmup, args.device, args.data,
                           args.threads)
    if args.json:
        from core.atomic import write_text_atomic

        write_text_atomic(args.json, json.dumps(rows, indent=2))
    return 0 if rows else 1

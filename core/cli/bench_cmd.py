"""`bench`: benchmarks that print numbers (see core/tooling/bench.py)."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import torch

from core import limits
from core.atomic import write_text_atomic
from core.errors import ConfigError
from core.train.device import check_device, check_threads


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `bench train` and `bench translate` commands to `sub`."""
    p = sub.add_parser("bench", help="print speed and memory benchmarks")
    bsub = p.add_subparsers(dest="bench_kind", metavar="KIND", required=True)
    t = bsub.add_parser("train", help="training throughput and peak memory of every model variant")
    t.add_argument("--variant", action="append", help="only these variants (repeatable)")
    t.add_argument("--steps", type=int, default=30, help="timed steps per variant")
    t.add_argument("--warmup", type=int, default=5, help="untimed steps before them")
    t.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    t.add_argument("--threads", type=int, default=torch.get_num_threads(),
                   help="torch CPU threads (default: torch's, i.e. the cores)")
    t.add_argument("--data", help="folder from ../shared/bench/prepare_tatoeba.py")
    t.add_argument("--split", choices=("default", "onmt"), default="default",
                   help="default: 10-40 token pairs; onmt: every train pair up to 50 tokens, "
                        "the data OpenNMT-py trains on in peers-onmt.sh (needs --data)")
    t.add_argument("--sampled-softmax", type=int, default=0, metavar="K",
                   help="also measure each variant with Jean et al.'s K-word candidate softmax "
                        "(train.sampled_softmax)")
    t.add_argument("--amp", action="store_true",
                   help="also measure each variant in bf16 autocast (train.amp; on a CPU only "
                        "with native bf16: AVX512-BF16 or AMX)")
    t.add_argument("--flops", action="store_true",
                   help="also count each step's matrix-product FLOP and measure this machine's "
                   "matmul peak: GFLOP/s achieved, share of the peak, ceiling in tok/s")
    batch = t.add_mutually_exclusive_group()
    batch.add_argument("--batch-size", type=int, metavar="N",
                       help="batches of N sentences (default: each variant's preset's: 64; "
                       "luong-paper 128)")
    batch.add_argument("--batch-tokens", type=int, metavar="N",
                       help="batches of about N padded target tokens instead")
    t.add_argument("--fused-decoder-gpu", action="store_true",
                   help="on a GPU, run Luong's input-feeding decoder as one autograd node, as "
                   "the CPU does (rows '+fused'; to compare with the step-by-step graph)")
    t.add_argument("--no-decoder-graphs", dest="decoder_graphs", action="store_false",
                   help="on a GPU, run Luong's fused input-feeding decoder step by step instead "
                   "of as CUDA graphs replayed per shape bucket (the default; rows '+graphs')")
    t.add_argument("--profile", type=int, default=0, metavar="N",
                   help="after the timing, profile N more steps (torch.profiler) and print "
                   "where their time goes; on a GPU also kernel time and launches a step")
    t.add_argument("--json", nargs="?", const="-", metavar="FILE",
                   help="also write the rows as JSON to FILE (to stdout without FILE)")
    t.set_defaults(func=run_train)
    d = bsub.add_parser("translate", help="decoding speed (greedy and beam) at a fixed output "
                        "length, as onmt_translate -min_length N -max_length N")
    d.add_argument("--variant", default="luong-global-general",
                   help="a bench train variant (default: the OpenNMT-py peer's model)")
    d.add_argument("--sentences", type=int, help="sentences decoded (default 500; --marian 60)")
    d.add_argument("--length", type=int, default=20, help="output tokens per sentence")
    d.add_argument("--beam", type=int, action="append",
                   help="beam sizes (repeatable; default 1 and 5; 1 = greedy)")
    d.add_argument("--batch", type=int, default=30, help="sentences per batch")
    d.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    d.add_argument("--threads", type=int, default=torch.get_num_threads())
    d.add_argument("--data", help="folder from ../shared/bench/prepare_tatoeba.py")
    d.add_argument("--split", choices=("default", "onmt"), default="default")
    d.add_argument("--amp", action="store_true",
                   help="also measure each beam size in bf16 autocast (translate --amp; on a "
                        "CPU only with native bf16)")
    d.add_argument("--int8", action="store_true",
                   help="also measure each beam size with int8 products (translate --int8; "
                   "CPU only)")
    d.add_argument("--flops", action="store_true",
                   help="also count each row's matrix-product FLOP per output token and "
                   "measure this machine's matmul peak: share of it, ceiling in tok/s")
    d.add_argument("--shortlist", nargs="?", const="50,100", metavar="PER_WORD,FREQUENT",
                   help="also decode over each batch's lexical shortlist (translate "
                        "--shortlist; default 50,100)")
    d.add_argument("--marian", action="store_true",
                   help="instead: a random-weight Marian model of OPUS-MT size (6 + 6 layers, "
                   "d_model 512), imported as `runs import` does, on the workbench's search "
                   "against transformers' generate (same sentences and beam), on the CPU: "
                   "sentences/s of both and their ratio (needs transformers)")
    d.add_argument("--marian-vocab", type=int, default=58101, metavar="N",
                   help="--marian: the shared vocabulary's size (default 58,101, as "
                   "opus-mt-en-de)")
    d.add_argument("--rounds", type=int, default=3,
                   help="--marian: timed rounds per beam size, alternating which goes first")
    d.set_defaults(func=run_translate)
    g = bsub.add_parser("gui", help="event-loop lateness of the GUI while a model trains")
    g.add_argument("--steps", type=int, default=60, help="training steps")
    g.add_argument("--hidden", type=int, default=64, help="LSTM and embedding size")
    g.set_defaults(func=run_gui)


def at_least(*checks: tuple[str, int | None, int]) -> None:
    """(option, value, lowest) each: ConfigError naming the first option given (not
    None) below its lowest value, before any work."""
    for option, value, lowest in checks:
        if value is not None and value < lowest:
            raise ConfigError(f"{option} must be {lowest} or more, not {value}")


def run_train(args: argparse.Namespace) -> int:
    """`bench train`: print a row per variant (the JSON rows to stdout or a file with --json);
    exit status 1 when no variant ran."""
    # imported when called: tests patch the name where it is defined
    from core.tooling.bench import run_train_bench

    at_least(("--steps", args.steps, 1), ("--warmup", args.warmup, 0),
             ("--threads", args.threads, 1), ("--batch-size", args.batch_size, 1),
             ("--batch-tokens", args.batch_tokens, 1), ("--profile", args.profile, 0),
             ("--sampled-softmax", args.sampled_softmax, 0))
    check_threads(args.threads, "--threads")
    check_device(args.device)
    to_stdout = args.json == "-"
    rows = run_train_bench(args.variant, args.steps, args.warmup, args.device, args.data,
                           args.threads, args.split, out=sys.stderr if to_stdout else sys.stdout,
                           sampled_softmax=args.sampled_softmax, amp=args.amp,
                           flops=args.flops, batch_size=args.batch_size or 0,
                           batch_tokens=args.batch_tokens or 0, profile=args.profile,
                           fused_decoder_gpu=args.fused_decoder_gpu,
                           decoder_graphs=args.decoder_graphs)
    if to_stdout:
        print(json.dumps(rows, indent=2))
    elif args.json:
        write_text_atomic(args.json, json.dumps(rows, indent=2))
    return 0 if rows else 1


def run_translate(args: argparse.Namespace) -> int:
    """`bench translate`: print decoding speed per beam size; exit status 1 when nothing ran."""
    from core.infer.shortlist import parse_spec  # lazy: a top-level import would load numpy

    # imported when called: tests patch the name where it is defined
    from core.tooling.bench_translate import run_translate_bench

    at_least(("--threads", args.threads, 1), ("--rounds", args.rounds, 1),
             ("--marian-vocab", args.marian_vocab, 16))
    for beam in args.beam or []:
        limits.check_beam(beam)
    check_threads(args.threads, "--threads")
    check_device(args.device)
    if args.marian:
        return run_marian(args)
    rows = run_translate_bench(args.variant, args.sentences or 500, args.length,
                               args.beam or [1, 5],
                               args.batch, args.device, args.data, args.threads, args.split,
                               amp=args.amp,
                               shortlist=parse_spec(args.shortlist) if args.shortlist else None,
                               flops=args.flops, q8=args.int8)
    return 0 if rows else 1


def run_marian(args: argparse.Namespace) -> int:
    """`bench translate --marian` (core/tooling/bench_marian.py): on the CPU only, without
    the options of the workbench's own variants."""
    # imported when called: tests patch the name where it is defined
    from core.models.marian import transformers_module
    from core.tooling.bench_marian import run_marian_bench  # lazy: transformers, torch

    if args.device != "cpu":
        raise ConfigError(f"--marian times the CPU; pass --device cpu, not {args.device!r}")
    for option, given in (("--amp", args.amp), ("--flops", args.flops),
                          ("--shortlist", args.shortlist)):
        if given:
            raise ConfigError(f"{option} is not measured with --marian; leave it out")
    transformers_module()  # ConfigError saying how to install it
    rows = run_marian_bench(args.sentences or 60, args.length, args.beam or [1, 5], args.batch,
                            args.threads, args.data, args.split, args.marian_vocab, args.rounds)
    return 0 if rows else 1


def run_gui(args: argparse.Namespace) -> int:
    """Runs app/responsiveness.py in its own process: core never imports Qt."""
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    root = Path(__file__).resolve().parents[2]
    cmd = [sys.executable, "-m", "app.responsiveness", "--steps", str(args.steps),
           "--hidden", str(args.hidden)]
    return subprocess.run(cmd, cwd=root, env=env).returncode

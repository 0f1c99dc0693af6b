"""Time (and with --profile, profile) a search of the bench model on the CPU, in the tree
at --repo (default: this one), so that two trees compare in alternating processes.

The first N sources of the bench split (`bench translate`'s sentences), batches of 32,
output fixed at 20 tokens, the bench-onmt size with random weights (speed does not
depend on them), fp32, 2 threads; the best of two timed passes after a warm-up batch.

    python experiments/decode_profile.py ~/.cache/nmt-peers/tatoeba-es-en --beam 5
    python experiments/decode_profile.py DATA --beam 1 --repo /tmp/base   # another tree
    python experiments/decode_profile.py DATA --beam 1 --profile           # per operator
    python experiments/decode_profile.py DATA --beam 5 --int8              # int8 products
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="folder from ../shared/bench/prepare_tatoeba.py")
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--sentences", type=int, default=320)
    ap.add_argument("--variant", default="luong-global-general")
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--int8", action="store_true",
                    help="int8 products (core.models.int8, as translate --int8)")
    ap.add_argument("--profile", action="store_true",
                    help="then profile 4 batches: operators by own CPU time, with shapes")
    args = ap.parse_args()
    sys.path.insert(0, args.repo)
    import torch

    from core.allocator import keep_freed_memory
    from core.data.vocab import Vocab
    from core.models import int8
    from core.models.registry import build_model
    from core.tooling.bench import SPECIALS, bench_variants, load_bench_pairs, variant_data
    from core.tooling.bench_translate import decode_all

    keep_freed_memory()  # as main.py does
    torch.set_num_threads(2)
    src_tok, tgt_tok = load_bench_pairs(args.data, "onmt")
    src_size, tgt_size, _, _ = variant_data(args.variant)
    src_vocab = Vocab.build(src_tok, max_size=src_size + SPECIALS)
    tgt_vocab = Vocab.build(tgt_tok, max_size=tgt_size + SPECIALS)
    ids = [src_vocab.encode(s) for s in src_tok[:args.sentences]]
    batches = [ids[i:i + 32] for i in range(0, len(ids), 32)]
    torch.manual_seed(1)
    model = build_model(dict(bench_variants())[args.variant], len(src_vocab),
                        len(tgt_vocab)).eval()
    cpu = torch.device("cpu")
    if args.int8:
        int8.prepare(model)
    decode_all(model, batches[:1], args.beam, 20, cpu, q8=args.int8)  # warm-up
    best = 0.0
    for _ in range(2):
        start = time.perf_counter()
        decode_all(model, batches, args.beam, 20, cpu, q8=args.int8)
        best = max(best, len(ids) / (time.perf_counter() - start))
    print(f"{args.repo} {args.variant} beam {args.beam}{' int8' if args.int8 else ''}: "
          f"{best:.1f} sentences/s")
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            decode_all(model, batches[:4], args.beam, 20, cpu, q8=args.int8)
        print(prof.key_averages(group_by_input_shape=True).table(
            sort_by="self_cpu_time_total", row_limit=30, max_name_column_width=32,
            max_shapes_column_width=60))


if __name__ == "__main__":
    main()

"""Does the gold-free reading choice (align --choose-by-anchors) pick the reading the
gold picks? For each kept checkpoint of a run: each reading's share of anchor words
linked to their twin on training pairs (core/services/reading_anchors.py) beside its
AER on a gold set (argmax, no sink, forced decoding), and the two choices.

    python experiments/reading_anchors_check.py --workspace WS --run RUN \\
        --gold-src F --gold-tgt F --gold-links F [--format talp] [--swap] [--pairs 2000]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.evaluate.aer import corpus_aer  # noqa: E402
from core.evaluate.attention_aer import reading_alignments  # noqa: E402
from core.goldsets import GoldSet, read_gold_links, read_token_lines  # noqa: E402
from core.infer.session import TranslationSession  # noqa: E402
from core.services.reading_anchors import (  # noqa: E402
    best_reading,
    reading_anchor_table,
    run_readings,
    training_token_pairs,
)
from core.store import Workspace  # noqa: E402
from core.train import artifacts  # noqa: E402
from core.train import checkpoint as ckpt  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--gold-src", required=True)
    ap.add_argument("--gold-tgt", required=True)
    ap.add_argument("--gold-links", required=True)
    ap.add_argument("--format", default="pharaoh", choices=("pharaoh", "talp"))
    ap.add_argument("--swap", action="store_true")
    ap.add_argument("--pairs", type=int, default=2000)
    args = ap.parse_args()
    src, tgt = read_token_lines(args.gold_src), read_token_lines(args.gold_tgt)
    gold = GoldSet("gold", src, tgt, read_gold_links(args.gold_links, args.format, False,
                                                     args.swap, src, tgt), "", "")
    with Workspace.open(args.workspace, create=False) as ws:
        info = ws.get_run(args.run)
        run_dir = ws.run_dir(info.id)
        files = sorted(run_dir.glob("best-*.pt")) + [run_dir / ckpt.LAST]
        pairs = None
        print(f"{args.run}: anchor share % (training pairs) / AER % (gold, no sink) per "
              "reading; the anchors' choice and the gold's")
        seen: set[int] = set()
        for path in files:
            if not path.exists():
                continue
            loaded = artifacts.load_model(run_dir, path.name)
            if loaded.step in seen:
                continue
            seen.add(loaded.step)
            if pairs is None:
                pairs = training_token_pairs(ws, info.id, loaded, args.pairs)
            shares, total = reading_anchor_table(loaded, *pairs)
            readings = run_readings(loaded.config)
            session = TranslationSession.from_loaded([loaded], [args.run])
            found = reading_alignments(session, gold, [(r, True) for r in readings])
            aer = {r: corpus_aer(found[r, True], gold.alignments).aer for r in readings}
            by_anchor, by_gold = best_reading(shares), min(aer, key=aer.get)
            cells = " | ".join(f"{r} {100 * shares[r]:.1f} / {100 * aer[r]:.1f}"
                               for r in readings)
            print(f"| {loaded.step} | {total} | {cells} | {by_anchor} ({100 * aer[by_anchor]:.1f})"
                  f" | {by_gold} ({100 * aer[by_gold]:.1f}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

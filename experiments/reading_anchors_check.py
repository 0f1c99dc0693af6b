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

from alignment_drift import add_gold_arguments, gold_from_args, kept_checkpoints  # noqa: E402

from core.evaluate.aer import corpus_aer  # noqa: E402
from core.evaluate.attention_aer import reading_alignments  # noqa: E402
from core.infer.session import TranslationSession  # noqa: E402
from core.services.reading_anchors import (  # noqa: E402
    best_reading,
    reading_anchor_table,
    run_readings,
    training_token_pairs,
)
from core.workspace.store import Workspace  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_gold_arguments(ap)
    ap.add_argument("--pairs", type=int, default=2000)
    args = ap.parse_args()
    gold = gold_from_args(args)
    with Workspace.open(args.workspace, create=False) as ws:
        info = ws.get_run(args.run)
        pairs = None
        print(f"{args.run}: anchor share % (training pairs) / AER % (gold, no sink) per "
              "reading; the anchors' choice and the gold's")
        for _path, loaded in kept_checkpoints(ws.run_dir(info.id)):
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

"""eflomal baseline AER on the WPT-03 trial gold set, trained on the Hansards training
text with the gold sentences appended (core.evaluate.baseline.align_with_training),
tokens split on whitespace exactly as the pretokenised runs see them.

    python experiments/eflomal_aer.py TRAIN.en TRAIN.fr GOLD_DIR [--out-dir D]

Why not `align --baseline eflomal --baseline-src/--baseline-tgt`: that path re-tokenises
the given text with Moses (Preprocessor(lang), not pretokenized), which splits e.g.
"hon." / "M." in 5-10 % of the Hansards lines, so its tokens no longer match the gold's.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.evaluate.alignment import write_pharaoh  # noqa: E402
from core.evaluate.attention_aer import aer_table  # noqa: E402
from core.evaluate.baseline import align_with_training  # noqa: E402
from core.evaluate.goldsets import GoldSet, read_gold_links, read_token_lines  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("train_src")
    ap.add_argument("train_tgt")
    ap.add_argument("gold_dir")
    ap.add_argument("--out-dir")
    args = ap.parse_args()
    g = Path(args.gold_dir)
    src, tgt = read_token_lines(g / "trial.en"), read_token_lines(g / "trial.fr")
    links = read_gold_links(g / "trial.talp", "talp", True, False, src, tgt)
    gold = GoldSet("wpt03-trial", src, tgt, links, "en", "fr")
    train_src = [ln.split() for ln in Path(args.train_src).read_text(encoding="utf-8").splitlines()]
    train_tgt = [ln.split() for ln in Path(args.train_tgt).read_text(encoding="utf-8").splitlines()]
    t0 = time.time()
    al, _ = align_with_training(train_src, train_tgt, gold.src_tokens, gold.tgt_tokens)
    print(f"eflomal on {len(train_src)} + {len(gold)} pairs: {time.time() - t0:.0f} s",
          file=sys.stderr)
    systems = {"eflomal en->fr": al.forward, "eflomal fr->en": al.reverse,
               "eflomal grow-diag-final-and": al.symmetrized("grow-diag-final-and"),
               "eflomal intersection": al.symmetrized("intersection"),
               "eflomal union": al.symmetrized("union")}
    print(aer_table(systems, gold).to_markdown())
    if args.out_dir:
        Path(args.out_dir).mkdir(parents=True, exist_ok=True)
        for name, a in systems.items():
            write_pharaoh(Path(args.out_dir) / (name.replace(" ", "_").replace(">", "") + ".pharaoh"), a)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Make a copy of the contrastive pronoun set (Bawden, MIT) in the Hansards training
convention: lowercased and Moses-tokenised (sacremoses, via the product's Preprocessor),
keeping the released file layout so `evaluate --contrastive DIR` reads it.

    python experiments/prep_contrastive.py SRC_DIR OUT_DIR [--every N]

--every N keeps every N-th example (both lines of a pair, and their context lines), a
subsample spread over the whole file, for CPU budgets.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.atomic import write_text_atomic  # noqa: E402
from core.data.preprocess import Preprocessor  # noqa: E402

FILES = [("OpenSubs.current.src", "en"), ("OpenSubs.current.trg", "fr")] + [
    (f"OpenSubs.c{k}.context.{side}", lang) for k in (1, 2, 3)
    for side, lang in (("src", "en"), ("trg", "fr"))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("src_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--k", type=int, nargs="+", default=[1, 2, 3])
    args = ap.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pre = {lang: Preprocessor(lang, lowercase=True) for lang in ("en", "fr")}
    tokenised: dict[str, list[str]] = {}
    for name, lang in FILES:
        if "context" in name and int(name.split(".c")[1][0]) not in args.k:
            continue
        lines = (Path(args.src_dir) / name).read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        keep = [ln for i, ln in enumerate(lines) if (i // 2) % args.every == 0]
        tokenised[name] = [" ".join(pre[lang].tokenize(ln)) if ln.strip() else "" for ln in keep]
    # Moses' nonbreaking prefixes can tokenise the two lines of a pair differently (French
    # "sec." stays one token after "il est sec." but not in "elle est sèche ."): such pairs
    # no longer differ in the pronoun alone, so the example is left out everywhere.
    trg = tokenised["OpenSubs.current.trg"]
    bad = {i // 2 for i in range(0, len(trg), 2)
           if len(trg[i].split()) != len(trg[i + 1].split())}
    for name, lines in tokenised.items():
        kept = [ln for i, ln in enumerate(lines) if i // 2 not in bad]
        write_text_atomic(out / name, "\n".join(kept) + "\n")
        print(f"{name}: {len(kept)} lines", file=sys.stderr)
    print(f"left out {len(bad)} example(s) whose lines tokenise differently", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

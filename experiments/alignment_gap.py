"""Where one alignment loses to another against gold: AER, precision and recall by
sentence length and by the kind of word a sure link joins (the comma and other
punctuation, short function words, the rest), and the sure links one system finds and
the other misses, by word.

    python experiments/alignment_gap.py GOLD_SRC GOLD_TGT GOLD_LINKS --format talp \\
        --system head=OUT/ref-hansards-demo-head-head.pharaoh \\
        --system eflomal=OUT/eflomal-grow-diag-final-and.pharaoh

The systems' files are Pharaoh links (0-based, as `align --out-dir` writes them); the
gold is read as `align` reads it (pharaoh, talp or wpt). Counts are pooled over the
pairs of a bucket, as the corpus AER is (core.evaluate.aer).
"""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.evaluate.aer import AERCounts, sentence_counts  # noqa: E402
from core.evaluate.alignment import Alignment, read_pharaoh, read_talp  # noqa: E402

#: short words that carry grammar rather than content, in both languages of the gold
FUNCTION_WORDS = set("""a an the of to in on at by for with from and or but that this these
those it its is are was were be been has have had do does not as than which who whom
le la les l' un une des du de d' à au aux en et ou mais que qu' qui ce cette ces il elle
ils elles se s' est sont a ont été ne n' pas par pour sur dans avec""".split())
LENGTH_BUCKETS = ((0, 15), (16, 25), (26, 40), (41, 1000))


def word_kind(word: str) -> str:
    """'comma', 'punctuation', 'function' or 'content'."""
    if word == ",":
        return "comma"
    if not any(c.isalnum() for c in word):
        return "punctuation"
    return "function" if word.lower() in FUNCTION_WORDS else "content"


def link_kind(src: list[str], tgt: list[str], link: tuple[int, int]) -> str:
    """The kind of a link: the less contentful of its two words' kinds."""
    order = ("comma", "punctuation", "function", "content")
    kinds = (word_kind(src[link[0]]), word_kind(tgt[link[1]]))
    return min(kinds, key=order.index)


def restrict(pred: Alignment, gold: Alignment, keep) -> tuple[Alignment, Alignment]:
    """pred and gold cut to the links `keep(link)` accepts."""
    return (Alignment.of({lk for lk in pred.sure if keep(lk)}),
            Alignment({lk for lk in gold.sure if keep(lk)},
                      {lk for lk in gold.possible if keep(lk)}))


def table(title: str, rows: dict[str, dict[str, AERCounts]], names: list[str]) -> str:
    """A Markdown table: one row per bucket, AER / precision / recall per system."""
    head = "| " + title + " | pairs or sure links | " + " | ".join(
        f"{n} AER / P / R %" for n in names) + " |"
    out = [head, "| --- | ---: |" + " --- |" * len(names)]
    for bucket, by_name in rows.items():
        first = by_name[names[0]]
        cells = [f"{c.aer * 100:.1f} / {c.precision * 100:.1f} / {c.recall * 100:.1f}"
                 for c in (by_name[n] for n in names)]
        out.append(f"| {bucket} | {first.n_sure} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gold_src")
    ap.add_argument("gold_tgt")
    ap.add_argument("gold_links")
    ap.add_argument("--format", choices=("pharaoh", "talp"), default="pharaoh")
    ap.add_argument("--system", action="append", required=True, metavar="NAME=FILE")
    args = ap.parse_args()
    src = [line.split() for line in Path(args.gold_src).read_text(encoding="utf-8").splitlines()]
    tgt = [line.split() for line in Path(args.gold_tgt).read_text(encoding="utf-8").splitlines()]
    reader = read_talp if args.format == "talp" else read_pharaoh
    gold = reader(args.gold_links, src_tokens=src, tgt_tokens=tgt).alignments
    systems = {}
    for spec in args.system:
        name, _, path = spec.partition("=")
        systems[name] = read_pharaoh(path, src_tokens=src, tgt_tokens=tgt).alignments
    names = list(systems)

    by_length: dict[str, dict[str, AERCounts]] = {}
    for lo, hi in LENGTH_BUCKETS:
        idx = [i for i in range(len(gold)) if lo <= len(src[i]) <= hi]
        label = f"{lo}-{hi} source words ({len(idx)} pairs)" if hi < 1000 else \
            f">= {lo} source words ({len(idx)} pairs)"
        by_length[label] = {n: sum((sentence_counts(systems[n][i], gold[i]) for i in idx),
                                   AERCounts()) for n in names}
    by_length["all"] = {n: sum((sentence_counts(systems[n][i], gold[i])
                                for i in range(len(gold))), AERCounts()) for n in names}
    print(table("sentence length", by_length, names), end="\n\n")

    by_kind: dict[str, dict[str, AERCounts]] = {}
    for kind in ("comma", "punctuation", "function", "content"):
        by_kind[kind] = {}
        for n in names:
            total = AERCounts()
            for i in range(len(gold)):
                def keep(lk, i=i, kind=kind):
                    return link_kind(src[i], tgt[i], lk) == kind
                total += sentence_counts(*restrict(systems[n][i], gold[i], keep))
            by_kind[kind][n] = total
    print(table("kind of word linked", by_kind, names), end="\n\n")

    if len(names) >= 2:
        a, b = names[0], names[1]
        missed: collections.Counter[str] = collections.Counter()
        for i in range(len(gold)):
            for s, t in gold[i].sure - systems[a][i].sure:
                if (s, t) in systems[b][i].sure:
                    missed[f"{src[i][s]} - {tgt[i][t]}"] += 1
        print(f"sure links {b} finds and {a} misses ({sum(missed.values())}), most frequent: "
              + ", ".join(f"{k} ({v})" for k, v in missed.most_common(15)))


if __name__ == "__main__":
    main()

"""Experiment G (Issue 18): a document-level en -> fr training corpus for the context
models, and a held-out contrastive set, in a workspace.

    python experiments/prep_context_docs.py WORKSPACE OUT_DIR [--data ../shared/data]

Two kinds of documents, both lowercased and tokenised like the Hansards release:
- the first 22 Hansards sittings (every line before `hansard.36.1.house.debates.023`);
  dev = sitting 013 (1,685 pairs), test = sitting 017 (3,836 pairs), the rest train;
- subtitle mini-documents from the contrastive pronoun set (Lopes et al. 2020, MIT;
  OpenSubtitles2018): for example e, its three previous sentence pairs and its CORRECT
  current pair, in order, as document `subs-e` (the contrastive line is never used).
  The examples are in film order, but their pronouns are not spread evenly (no 'ils'
  after example ~7,400), so the held-out examples are every 4th block of 250 examples:
  blocks keep films together, and GAP examples on each side of a held-out block are
  used nowhere (in case a film straddles the cut). In a held-out block, the first 15
  examples are dev documents, the next 18 test documents (document-level BLEU), and
  all but the dev ones form the held-out contrastive set, written to
  OUT_DIR/contrastive in the released layout with K = 1 context (`evaluate
  --contrastive OUT_DIR/contrastive`), and again as OUT_DIR/contrastive-other-context
  with every example's previous sentence taken from another film (the context ablation).
  The dev documents' examples form OUT_DIR/contrastive-dev, the set by which a context
  run's checkpoint is chosen.

The split is stored explicitly (ws.save_split), so every run on the corpus shares it.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.atomic import write_text_atomic  # noqa: E402
from core.data.preprocess import Preprocessor  # noqa: E402
from core.services.corpora import import_corpus  # noqa: E402
from core.workspace.store import Workspace  # noqa: E402

CORPUS = "docs-hansards-subs"
BLOCK, GAP, DEV_DOCS, TEST_DOCS = 250, 25, 15, 18
HANSARDS_DEV, HANSARDS_TEST = "hansard.36.1.house.debates.013", "hansard.36.1.house.debates.017"


def _lines(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def hansards(data: Path) -> tuple[list[str], list[str], list[str]]:
    """(en, fr, `train.docids` lines: document TAB position) of the first 22 sittings."""
    h = data / "hansards-en-fr-300k"
    docids = _lines(h / "train.docids")
    n = next(i for i, d in enumerate(docids) if d.startswith("hansard.36.1.house.debates.023\t"))
    return _lines(h / "train.en")[:n], _lines(h / "train.fr")[:n], docids[:n]


def subtitle_examples(data: Path) -> list[dict]:
    """Per contrastive example: current src/trg (correct and contrastive), the three
    previous src/trg sentences (oldest first, '' at a film's start), raw text."""
    c = data / "contrastive-pronoun-en-fr"
    cur_src, cur_trg = _lines(c / "OpenSubs.current.src"), _lines(c / "OpenSubs.current.trg")
    ctx_src, ctx_trg = _lines(c / "OpenSubs.c3.context.src"), _lines(c / "OpenSubs.c3.context.trg")
    n = len(cur_src) // 2
    if len(ctx_src) != 6 * n or len(ctx_trg) != 6 * n or len(cur_trg) != 2 * n:
        raise SystemExit(f"{c}: unexpected line counts (current {len(cur_src)}, c3 {len(ctx_src)})")
    return [{"src": cur_src[2 * e], "good": cur_trg[2 * e], "bad": cur_trg[2 * e + 1],
             "prev_src": ctx_src[6 * e:6 * e + 3], "prev_trg": ctx_trg[6 * e:6 * e + 3]}
            for e in range(n)]


def subtitle_part(e: int, n: int) -> str | None:
    """'train', 'dev', 'test', 'held' (held-out contrastive only) or None (a gap) for
    example e of n."""
    block, offset = divmod(e, BLOCK)
    if block % 4 == 3:
        return "dev" if offset < DEV_DOCS else "test" if offset < DEV_DOCS + TEST_DOCS else "held"
    near_held = [b * BLOCK for b in (block - 1, block + 1) if b % 4 == 3 and 0 <= b * BLOCK < n]
    for start in near_held:
        if start - GAP <= e < start + BLOCK + GAP:
            return None
    return "train"


def contrastive_files(examples: list[dict], tok) -> tuple[dict[str, list[str]], int]:
    """The released layout's lines (K = 1: the sentence just before) of these examples,
    and how many were left out because Moses split their two lines differently."""
    files: dict[str, list[str]] = {k: [] for k in (
        "OpenSubs.current.src", "OpenSubs.current.trg", "OpenSubs.c1.context.src", "OpenSubs.c1.context.trg")}
    left_out = 0
    for ex in examples:
        good, bad = tok(ex["good"], "fr"), tok(ex["bad"], "fr")
        if len(good.split()) != len(bad.split()):
            left_out += 1
            continue
        src, ps, pt = tok(ex["src"], "en"), tok(ex["prev_src"][-1], "en"), tok(ex["prev_trg"][-1], "fr")
        files["OpenSubs.current.src"] += [src, src]
        files["OpenSubs.current.trg"] += [good, bad]
        files["OpenSubs.c1.context.src"] += [ps, ps]
        files["OpenSubs.c1.context.trg"] += [pt, pt]
    return files, left_out


def write_contrastive(folder: Path, files: dict[str, list[str]]) -> None:
    folder.mkdir(exist_ok=True)
    for name, lines in files.items():
        write_text_atomic(folder / name, "\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace")
    ap.add_argument("out_dir")
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    args = ap.parse_args()
    data, out = Path(args.data), Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pre = {lang: Preprocessor(lang, lowercase=True) for lang in ("en", "fr")}

    def tok(text: str, lang: str) -> str:
        return " ".join(pre[lang].tokenize(text)) if text.strip() else ""

    en, fr, docid_lines = hansards(data)
    assign: dict[str, list[int]] = {"train": [], "dev": [], "test": []}
    for i, line in enumerate(docid_lines):
        d = line.split("\t")[0]
        assign["dev" if d == HANSARDS_DEV else "test" if d == HANSARDS_TEST else "train"].append(i)

    examples = subtitle_examples(data)
    for e, ex in enumerate(examples):
        part = subtitle_part(e, len(examples))
        if part is None or part == "held":
            continue
        pairs = [(s, t) for s, t in zip(ex["prev_src"], ex["prev_trg"], strict=True) if s.strip() and t.strip()]
        pairs.append((ex["src"], ex["good"]))
        for j, (s, t) in enumerate(pairs):
            assign[part].append(len(en))
            en.append(tok(s, "en"))
            fr.append(tok(t, "fr"))
            docid_lines.append(f"subs-{e:05d}\t{j}")

    for name, lines in (("corpus.en", en), ("corpus.fr", fr), ("corpus.docids", docid_lines)):
        write_text_atomic(out / name, "\n".join(lines) + "\n")
    with Workspace.open(args.workspace, create=True) as ws:
        if any(c.name == CORPUS for c in ws.list_corpora()):
            print(f"{CORPUS}: already in {args.workspace}, kept as it is", file=sys.stderr)
        else:
            import_corpus(ws, "parallel", [out / "corpus.en", out / "corpus.fr"], "en", "fr", CORPUS,
                          options={"docids_path": str(out / "corpus.docids")})
            ws.save_split(CORPUS, 1234, (0.0, 0.0, 0.0), assign)
    print(f"{CORPUS}: {len(en)} pairs; " + ", ".join(f"{k} {len(v)}" for k, v in assign.items()),
          file=sys.stderr)

    # the held-out contrastive set, and the dev documents' examples as a dev set (to
    # choose a context run's checkpoint by what it is for, never by the held-out set)
    dev = [ex for e, ex in enumerate(examples) if subtitle_part(e, len(examples)) == "dev"]
    held = [ex for e, ex in enumerate(examples) if subtitle_part(e, len(examples)) in ("test", "held")]
    for folder, chosen in (("contrastive", held), ("contrastive-dev", dev)):
        files, left_out = contrastive_files(chosen, tok)
        write_contrastive(out / folder, files)
        print(f"{folder}: {len(chosen) - left_out} examples "
              f"({left_out} left out: the two lines tokenise differently)", file=sys.stderr)
        if folder == "contrastive":
            # the same examples with another film's previous sentence (example i gets
            # example i + n/2's): a context model that uses the context should lose here
            half = len(files["OpenSubs.current.src"]) // 4 * 2
            shuffled = dict(files)
            for name in ("OpenSubs.c1.context.src", "OpenSubs.c1.context.trg"):
                shuffled[name] = files[name][half:] + files[name][:half]
            write_contrastive(out / "contrastive-other-context", shuffled)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

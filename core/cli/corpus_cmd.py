"""`corpus`: import corpora into the workspace, list them, show statistics, split, show
pairs, rename and delete them.

    corpus import PATH [PATH2] --format tsv --src-lang es --tgt-lang en [--name N]
    corpus list
    corpus stats NAME|ID
    corpus split NAME|ID --seed 1 --ratios 0.8,0.1,0.1
    corpus show NAME|ID [--start N] [--count K] [--split dev]
    corpus rename OLD NEW
    corpus delete NAME|ID [--yes]
"""
from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Any

from core.cli.confirm import add_rename_and_delete
from core.errors import ConfigError, StoreError
from core.services.corpora import split_and_store
from core.services.manage import corpus_deletion
from core.textsafe import cell, printable
from core.workspace.store import Workspace

FORMATS = ("parallel", "tsv", "tmx", "docs")
SPLIT_NAMES = ("train", "dev", "test")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `corpus` command with its actions import, list, stats, split, show, rename
    and delete to `sub`."""
    p = sub.add_parser("corpus", help="import, inspect, split, rename and delete corpora")
    cmds = p.add_subparsers(dest="corpus_command", metavar="ACTION", required=True)

    imp = cmds.add_parser("import", help="read a corpus file (or two) into the workspace")
    imp.add_argument("paths", nargs="+", metavar="PATH",
                     help="the corpus: one file (tsv, tmx) or source and target files "
                     "(parallel, docs)")
    imp.add_argument("--format", choices=FORMATS, default=None,
                     help="file format (default: tmx for *.tmx, tsv for one other file, "
                     "parallel for two files)")
    imp.add_argument("--src-lang", required=True, help="source language code, e.g. es")
    imp.add_argument("--tgt-lang", required=True, help="target language code, e.g. en")
    imp.add_argument("--name", default=None, help="corpus name (default: the file name)")
    imp.add_argument("--docids", default=None, metavar="FILE",
                     help="parallel only: side file with <document><TAB><index> per line")
    imp.add_argument("--src-col", type=int, default=None,
                     help="tsv only: 0-based column of the source side (default: guessed "
                     "from the text, else 1)")
    imp.add_argument("--tgt-col", type=int, default=None,
                     help="tsv only: 0-based column of the target side (default: guessed "
                     "from the text, else 0)")
    imp.add_argument("--lenient", action="store_true",
                     help="repair bad bytes and keep empty sides (reported as warnings) "
                     "instead of stopping at the first problem")
    imp.set_defaults(func=run_import)

    lst = cmds.add_parser("list", help="list the corpora in the workspace")
    lst.set_defaults(func=run_list)

    st = cmds.add_parser("stats", help="sentences, tokens, vocabulary, lengths, documents")
    st.add_argument("corpus", metavar="NAME|ID")
    st.add_argument("--tokenizer", choices=("space", "moses"), default="space",
                    help="count whitespace tokens (default, fast) or Moses tokens as a "
                    "word-level model sees them (slower on large corpora)")
    st.add_argument("--lowercase", action="store_true",
                    help="with --tokenizer moses: lowercase before counting types")
    st.set_defaults(func=run_stats)

    sp = cmds.add_parser("split", help="split into train/dev/test (documents kept whole)")
    sp.add_argument("corpus", metavar="NAME|ID")
    sp.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    sp.add_argument("--ratios", default="0.8,0.1,0.1",
                    help="train,dev,test fractions (default 0.8,0.1,0.1)")
    sp.set_defaults(func=run_split)

    sh = cmds.add_parser("show", help="print pairs with their line numbers")
    sh.add_argument("corpus", metavar="NAME|ID")
    sh.add_argument("--start", type=int, default=0, help="first pair (0-based, default 0)")
    sh.add_argument("--count", type=int, default=10, help="how many pairs (default 10)")
    sh.add_argument("--split", choices=SPLIT_NAMES, default=None,
                    help="show pairs of this split only (run `corpus split` first)")
    sh.set_defaults(func=run_show)

    add_rename_and_delete(cmds, "corpus", run_rename, run_delete,
                          "give a corpus a new, unused name (its runs keep it)",
                          "delete a corpus and its split (refused while runs use it)")


def _open(args: argparse.Namespace) -> Workspace:
    return Workspace.open(args.workspace)


#: suffixes of files the workbench writes or translates but does not import as a corpus
NOT_IMPORTED = {".xlf": "XLIFF", ".xliff": "XLIFF", ".docx": "a Word document",
                ".jsonl": "JSON lines"}


def guess_format(paths: list[str]) -> str:
    """The --format of `corpus import` when none is given: 'tmx' for one *.tmx file, 'tsv'
    for one other file, 'parallel' for two."""
    for path in paths:
        kind = NOT_IMPORTED.get(Path(path).suffix.lower())
        if kind:
            raise ConfigError(
                f"{path}: {kind} is not a corpus import format; import tsv (one file of "
                "tab-separated columns), tmx (one *.tmx file), parallel (two line-aligned "
                "files) or docs (two files of blank-line separated documents), e.g. convert "
                "it to TMX first")
    if len(paths) == 1:
        return "tmx" if paths[0].lower().endswith(".tmx") else "tsv"
    return "parallel"


def reader_options(args: argparse.Namespace, fmt: str) -> dict[str, Any]:
    """The read_corpus options the chosen format takes; an option given for a format
    that ignores it is an error rather than silently unused."""
    options: dict[str, Any] = {}
    if args.lenient:
        options["lenient"] = True
    if args.docids is not None:
        if fmt != "parallel":
            raise ConfigError(f"--docids applies to --format parallel, not {fmt}")
        options["docids_path"] = args.docids
    for flag in ("src_col", "tgt_col"):
        value = getattr(args, flag)
        if value is not None:
            if fmt != "tsv":
                raise ConfigError(f"--{flag.replace('_', '-')} applies to --format tsv, "
                                  f"not {fmt}")
            options[flag] = value
    return options


def run_import(args: argparse.Namespace) -> int:
    """`corpus import`: read the file(s) into the workspace, print the corpus and its
    warnings; returns 0."""
    # imported when called: tests patch the name where it is defined
    from core.services.corpora import check_language_codes, choose_tsv_columns, import_corpus

    check_language_codes(args.src_lang, args.tgt_lang, ("--src-lang", "--tgt-lang"))
    fmt = args.format or guess_format(args.paths)
    options = reader_options(args, fmt)
    name = args.name or Path(args.paths[0]).stem
    if fmt == "tsv":
        options, guessed, warning = choose_tsv_columns(args.paths[0], args.src_lang,
                                                       args.tgt_lang, options)
        for line in (guessed, warning and f"warning: {warning}"):
            if line:
                print(printable(line))
    with _open(args) as ws:
        corpus_id = import_corpus(ws, fmt, args.paths, args.src_lang, args.tgt_lang, name,
                                  options)
        info = ws.get_corpus(corpus_id)
    print(f"imported corpus {info.id} {info.name!r}: {info.n_pairs} pairs "
          f"({info.src_lang} -> {info.tgt_lang}), {info.n_documents} documents, "
          f"format {fmt}")
    for warning in info.warnings:
        print(f"warning: {printable(warning)}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    """`corpus list`: print the workspace's corpora as a table; returns 0."""
    with _open(args) as ws:
        corpora = ws.list_corpora()
    if not corpora:
        print("no corpora yet; add one with `corpus import`")
        return 0
    rows = [("id", "name", "langs", "pairs", "docs", "format", "created")]
    for c in corpora:
        created = dt.datetime.fromtimestamp(c.created).strftime("%Y-%m-%d %H:%M")
        rows.append((str(c.id), cell(c.name), printable(f"{c.src_lang}-{c.tgt_lang}"),
                     str(c.n_pairs), str(c.n_documents), printable(c.format), created))
    print(format_table(rows))
    return 0


def format_table(rows: list[tuple[str, ...]]) -> str:
    """Left-aligned text columns, numbers right-aligned."""
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    numeric = [all(r[k].isdigit() for r in rows[1:]) for k in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(r, widths, numeric, strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def run_stats(args: argparse.Namespace) -> int:
    """`corpus stats`: print sentence, token, vocabulary, length and document statistics
    (space or Moses tokens); returns 0."""
    from core.data.preprocess import Preprocessor  # lazy: a top-level import would load sacremoses

    # lazy: a top-level import would load sacremoses, sentencepiece
    from core.data.stats import corpus_stats, format_stats

    with _open(args) as ws:
        corpus = ws.load_corpus(args.corpus)
    src_pre = tgt_pre = None
    if args.tokenizer == "moses":
        src_pre = Preprocessor(corpus.src_lang, lowercase=args.lowercase)
        tgt_pre = Preprocessor(corpus.tgt_lang, lowercase=args.lowercase)
    print(f"corpus {corpus.name!r} ({corpus.src_lang} -> {corpus.tgt_lang}), "
          f"{args.tokenizer} tokens")
    print(format_stats(corpus_stats(corpus, src_pre, tgt_pre), corpus.src_lang,
                       corpus.tgt_lang))
    return 0


MAX_SEED = 2**32 - 1  # train.seed's range (core.config RULES)


def parse_ratios(text: str) -> tuple[float, float, float]:
    """'0.8,0.1,0.1' -> (0.8, 0.1, 0.1); core.data.splits checks they make a split."""
    try:
        ratios = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise ConfigError(f"--ratios must be three numbers separated by commas, e.g. "
                          f"0.8,0.1,0.1, not {text!r}") from None
    if len(ratios) != 3:
        raise ConfigError(f"--ratios needs three fractions (train,dev,test), not {text!r}")
    return ratios  # type: ignore[return-value]


def run_split(args: argparse.Namespace) -> int:
    """`corpus split`: split into train/dev/test with --seed and --ratios (documents kept
    whole), store it and print the sizes; returns 0."""
    ratios = parse_ratios(args.ratios)
    if not 0 <= args.seed <= MAX_SEED:
        raise ConfigError(f"--seed must be a whole number from 0 to {MAX_SEED} (as "
                          f"train.seed), not {args.seed}")
    with _open(args) as ws:
        corpus = ws.load_corpus(args.corpus)
        assignment = split_and_store(ws, args.corpus, args.seed, ratios)
    docs = " (documents kept whole)" if corpus.has_documents() else ""
    print(f"split corpus {corpus.name!r} with seed {args.seed}{docs}:")
    for name in SPLIT_NAMES:
        n = len(assignment[name])
        print(f"  {name:5s} {n:8d} pairs ({100.0 * n / max(1, len(corpus)):.1f}%)")
    return 0


def run_show(args: argparse.Namespace) -> int:
    """`corpus show`: print --count pairs from --start (of --split when given) with line
    numbers; ConfigError for negative bounds or a corpus without a split."""
    if args.start < 0 or args.count < 0:
        raise ConfigError("--start and --count must be 0 or more")
    with _open(args) as ws:
        corpus = ws.load_corpus(args.corpus)
        indices = list(range(len(corpus)))
        if args.split is not None:
            split = ws.load_split(args.corpus)
            if split is None:
                raise ConfigError(f"corpus {corpus.name!r} has no split yet; run "
                                  f"`corpus split {corpus.name}` first")
            indices = split.assignment.get(args.split, [])
    shown = indices[args.start:args.start + args.count]
    where = f" split {args.split}" if args.split else ""
    if not shown:
        print(f"corpus {corpus.name!r}{where}: no pairs from {args.start} "
              f"(it has {len(indices)})")
        return 0
    print(f"corpus {corpus.name!r}{where}: pairs {args.start}..{args.start + len(shown) - 1} "
          f"of {len(indices)}")
    for i in shown:
        pair = corpus.pairs[i]
        doc = f", document {pair.doc_id}" if pair.doc_id is not None else ""
        print(printable(f"[{i}] line {pair.line}{doc}"))
        print(printable(f"  {corpus.src_lang}: {pair.src}"))
        print(printable(f"  {corpus.tgt_lang}: {pair.tgt}"))
    return 0


def run_rename(args: argparse.Namespace) -> int:
    """`corpus rename`: give corpus OLD the name NEW (the store refuses a taken or bad
    name; its id, files, split and runs stay); returns 0."""
    with _open(args) as ws:
        info = ws.get_corpus(args.corpus)
        ws.rename_corpus(info.id, args.new_name)
        new = ws.get_corpus(info.id).name
    print(f"renamed corpus {info.id} {info.name!r} to {new!r}")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    """`corpus delete`: print what goes, confirm (or --yes) and delete the corpus; refused
    (exit 2, naming them) while runs use it; returns 0 when deleted, 1 when the answer
    was no."""
    # imported when called: tests patch the name where it is defined
    from core.cli.confirm import confirm_deletion, refuse

    with _open(args) as ws:
        info = ws.get_corpus(args.corpus)
        allowed, text = corpus_deletion(ws, info.id)
        if not allowed:
            refuse(StoreError, text)
        if not confirm_deletion("corpus", info.name, text, args.yes):
            return 1
        ws.delete_corpus(info.id)
    print(f"deleted corpus {info.id} {info.name!r}")
    return 0

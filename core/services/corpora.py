"""Corpora for both fronts: import (read + store), the stored split (made or remade),
statistics. `corpus import` / `corpus split` / `corpus stats` call these, and so do the
Corpora screen's jobs (`import_corpus`, `load_job`, `split_job`, and the import dialog's
`preview_job`: a file's first lines and its TSV columns guessed); training makes the
default split through `ensure_split`."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.data.langid import ColumnGuess, guess_tsv_columns
from core.data.readers import read_corpus
from core.data.splits import split_corpus
from core.errors import ConfigError, StoreError
from core.jobs import JobContext
from core.workspace.store import Workspace

#: the split a corpus gets when training needs one and none was stored
DEFAULT_RATIOS = (0.8, 0.1, 0.1)
SPLIT_NAMES = ("train", "dev", "test")


def check_language_codes(src_lang: str, tgt_lang: str,
                         labels: tuple[str, str] = ("source language", "target language")) -> None:
    """ConfigError unless both codes are non-empty and hold no whitespace; `labels` name
    them in the message (the command line's flags, or the import dialog's fields)."""
    for label, code, example in ((labels[0], src_lang, "es"), (labels[1], tgt_lang, "en")):
        if not code or any(ch.isspace() for ch in code):
            raise ConfigError(f"{label} {code!r}: give a language code without spaces, e.g. "
                              f"{example}")


def choose_tsv_columns(path: str | Path, src_lang: str, tgt_lang: str,
                       options: dict[str, Any], flags: str = "--src-col and --tgt-col",
                       ) -> tuple[dict[str, Any], str | None, str | None]:
    """The TSV reader's columns for importing `path` as src_lang -> tgt_lang: the
    user's (options src_col / tgt_col, the reader's defaults 1 and 0 filling a missing
    one), else guessed from the text (core.data.langid). Returns (options with both
    columns, what was guessed or None, a warning or None): the warning says why an
    unsure guess kept the defaults, or that the user's columns contradict a sure guess.
    `flags` names the user's controls in the warning. An unreadable file gets no guess
    (the reader reports it)."""
    given = "src_col" in options or "tgt_col" in options
    cols = (options.get("src_col", 1), options.get("tgt_col", 0))
    try:
        guess = guess_tsv_columns(path, src_lang, tgt_lang, default=cols)
    except OSError:
        return dict(options), None, None
    if given:
        return dict(options, src_col=cols[0], tgt_col=cols[1]), None, \
            guess.contradiction(*cols)
    chosen = dict(options, src_col=guess.src_col, tgt_col=guess.tgt_col)
    if not guess.sure:
        return chosen, None, guess.unsure_warning(flags)
    return chosen, f"columns guessed from the text: {guess.describe()}", None


def import_corpus(ws: Workspace, fmt: str, paths: Sequence[str | Path], src_lang: str,
                  tgt_lang: str, name: str, options: dict[str, Any] | None = None,
                  ctx: JobContext | None = None) -> int:
    """Read `paths` with the `fmt` reader (core.data.readers; a CorpusError names the
    file and line) and store the corpus as `name`; returns its id. A doc-id file given as
    options['docids_path'] is recorded among the sources."""
    check_language_codes(src_lang, tgt_lang)
    options = dict(options or {})
    if ctx is not None:
        ctx.progress(0, 2, f"reading {paths[0] if paths else ''}")
    corpus = read_corpus(fmt, [str(p) for p in paths], src_lang, tgt_lang, **options)
    if ctx is not None:
        ctx.check_cancelled()
        ctx.progress(1, 2, f"storing {len(corpus)} pairs")
    sources = [str(Path(p).resolve()) for p in paths]
    if options.get("docids_path"):
        options["docids_path"] = str(Path(options["docids_path"]).resolve())
        sources.append(options["docids_path"])
    return ws.add_corpus(corpus, name=name, format=fmt, options=options, sources=sources)


def split_and_store(ws: Workspace, corpus_ref: int | str, seed: int,
                    ratios: tuple[float, float, float] = DEFAULT_RATIOS) -> dict[str, list[int]]:
    """Split the corpus (core.data.splits: seeded, whole documents to one set) and store
    it as the corpus's one split; returns {train|dev|test: pair indices}. Runs record no
    split of their own: they train and are evaluated on the corpus's stored one, so a
    different split of a corpus that runs use is refused (StoreError naming them) - it
    would move their training pairs into the test set."""
    corpus = ws.load_corpus(corpus_ref)
    s = split_corpus(corpus, seed=seed, ratios=ratios)
    assignment = {"train": s.train_indices, "dev": s.dev_indices, "test": s.test_indices}
    info = ws.get_corpus(corpus_ref)
    # runs that trained (a queued or failed-at-start run checks the split when it starts)
    runs = [r.name for r in ws.list_runs(corpus_id=info.id) if r.steps > 0]
    if runs and _changes_split(ws, info.id, seed, ratios, assignment):
        raise StoreError(
            f"corpus {info.name!r} is used by runs {', '.join(runs)}, trained and evaluated "
            "on its current split: a new split would put their training pairs into the test "
            f"set. Import the corpus again under a new name (e.g. '{info.name}-2') and split "
            "that, or delete those runs first.")
    ws.save_split(corpus_ref, seed, ratios, assignment)
    return assignment


def _changes_split(ws: Workspace, corpus_id: int, seed: int, ratios, assignment) -> bool:
    """Whether storing `assignment` would change corpus `corpus_id`'s stored split. With
    its split.json unreadable, only the recorded seed and ratios (which give the same
    assignment again) leave it unchanged: that is how a damaged file is repaired."""
    try:
        old = ws.load_split(corpus_id)
    except StoreError:
        recorded = ws.split_settings(corpus_id)
        return recorded is None or recorded != (seed, [float(r) for r in ratios])
    return old is not None and {k: list(v) for k, v in assignment.items()} != old.assignment


def ensure_split(ws: Workspace, corpus_id: int, seed: int):
    """The corpus's stored split, made (DEFAULT_RATIOS, documents kept whole) on first use."""
    split = ws.load_split(corpus_id)
    if split is None:
        split_and_store(ws, corpus_id, seed)
        split = ws.load_split(corpus_id)
    return split


def load_split_corpora(ws: Workspace, corpus_id: int, seed: int):
    """(corpus, {split name: the sub-corpus}) with the stored split (made if missing)."""
    corpus = ws.load_corpus(corpus_id)
    split = ensure_split(ws, corpus_id, seed)
    return corpus, {name: corpus.subset(idx, name=name) for name, idx in split.assignment.items()}


def corpus_statistics(ws: Workspace, corpus_ref: int | str):
    """(corpus, its statistics: core.data.stats.corpus_stats)."""
    # lazy: a top-level import would load sacremoses, sentencepiece
    from core.data.stats import corpus_stats

    corpus = ws.load_corpus(corpus_ref)
    return corpus, corpus_stats(corpus)


def load_job(ws: Workspace, corpus_id: int, ctx: JobContext) -> tuple[Any, Any]:
    """corpus_statistics in a job (the Corpora screen's): -> (corpus, statistics)."""
    return corpus_statistics(ws, corpus_id)


def split_job(ws: Workspace, corpus_id: int, seed: int, ratios: tuple[float, float, float],
              ctx: JobContext | None = None) -> dict[str, int]:
    """split_and_store in a job; -> {set name: pairs} of the split."""
    return {k: len(v) for k, v in split_and_store(ws, corpus_id, seed, ratios).items()}


PREVIEW_LINES = 8  # lines the import dialog previews


@dataclass(frozen=True)
class ImportPreview:
    """What the import dialog shows of its first file: `lines` (its first lines, or
    why it cannot be read) and, for a TSV file, `guess` (which column holds which
    language; None when not guessed)."""

    lines: list[str] | str
    guess: ColumnGuess | None = None


def first_lines(path: str, n: int = PREVIEW_LINES) -> list[str] | str:
    """The first `n` lines of `path` (undecodable bytes replaced), or why it cannot
    be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = [next(handle, None) for _ in range(n)]
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror}"
    return [line.rstrip("\r\n") for line in lines if line is not None]


def preview_job(path: str, tsv_languages: tuple[str, str] | None,
                columns: tuple[int, int], ctx: JobContext) -> ImportPreview:
    """The import dialog's preview of `path`; with `tsv_languages` (source, target) the
    TSV columns guessed too (core.data.langid.guess_tsv_columns; `columns`, the
    dialog's current (source, target) columns, kept when the text does not tell)."""
    lines = first_lines(path)
    guess = None
    if tsv_languages is not None and all(tsv_languages) and Path(path).is_file():
        try:
            guess = guess_tsv_columns(path, *tsv_languages, default=columns)
        except OSError:
            guess = None  # the preview says why it cannot be read
    return ImportPreview(lines, guess)

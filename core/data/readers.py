"""Corpus readers: every format becomes a Corpus, every problem a CorpusError that
names file, line and what to do.

Formats: 'parallel' (two line-parallel files, optional doc-id side file), 'tsv'
(Tatoeba/Anki style columns), 'tmx' (see core/data/tmx.py) and 'docs' (two files whose
documents are separated by blank lines). `read_corpus` dispatches on the format name
so the CLI and the GUI share one entry point.

Strict mode (the default) refuses invalid UTF-8 and empty sides. Lenient mode replaces
bad bytes with U+FFFD, keeps pairs with an empty side (the filters drop them with a
report) and records both in `Corpus.warnings`.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.data.corpus import Corpus, SentencePair
from core.data.textio import read_lines
from core.data.tmx import read_tmx
from core.errors import ConfigError, CorpusError

__all__ = [
    "FORMATS",
    "read_blank_line_documents",
    "read_corpus",
    "read_parallel",
    "read_tmx",
    "read_tsv",
]

FORMATS = ("parallel", "tsv", "tmx", "docs")


def _divergence_line(src: list[str], tgt: list[str]) -> int:
    """First 1-based line where one side is blank and the other is not; otherwise the
    line just after the shorter file."""
    for i, (s, t) in enumerate(zip(src, tgt, strict=False)):
        if bool(s.strip()) != bool(t.strip()):
            return i + 1
    return min(len(src), len(tgt)) + 1


def check_same_length(src_path: Path, tgt_path: Path, src: list[str], tgt: list[str]) -> None:
    """CorpusError naming the shorter file and the first line where two line-parallel
    files' lines `src` / `tgt` diverge, unless they have as many lines."""
    if len(src) == len(tgt):
        return
    line = _divergence_line(src, tgt)
    shorter = src_path if len(src) < len(tgt) else tgt_path
    raise CorpusError(
        shorter, line,
        f"the files are not line-parallel: {src_path} has {len(src)} lines, "
        f"{tgt_path} has {len(tgt)}; they first diverge at line {line}. Make line i of "
        "one file the translation of line i of the other (one sentence per line).",
    )


def _pairs_from_lines(
    src_path: Path, tgt_path: Path, src: list[str], tgt: list[str], lenient: bool,
    warnings: list[str], lines: list[int] | None = None, doc_ids: list[str] | None = None,
) -> list[SentencePair]:
    """Zip two equally long line lists into pairs, refusing (or, leniently, counting)
    empty sides. `lines` gives each line's 1-based number (default: its position)."""
    pairs: list[SentencePair] = []
    empty = 0
    for i, (s, t) in enumerate(zip(src, tgt, strict=True)):
        line = lines[i] if lines is not None else i + 1
        if not s.strip() or not t.strip():
            if not lenient:
                which = src_path if not s.strip() else tgt_path
                raise CorpusError(
                    which, line,
                    "this line is empty (or only spaces)"
                    + (" on both sides" if not s.strip() and not t.strip() else "")
                    + ": remove it from both files, or read the corpus in lenient mode "
                    "to keep it (the empty-pair filter then drops it with a report)",
                )
            empty += 1
        pairs.append(SentencePair(s, t, None if doc_ids is None else doc_ids[i], line))
    if empty:
        warnings.append(f"{src_path}: kept {empty} pair(s) with an empty side (lenient mode)")
    return pairs


def _read_docids(path: Path, n_expected: int) -> list[str]:
    lines, _ = read_lines(path, lenient=False)
    if len(lines) != n_expected:
        raise CorpusError(
            path, min(len(lines), n_expected) + 1,
            f"has {len(lines)} lines but the corpus has {n_expected} pairs; the doc-id "
            "file needs one '<document><TAB><index>' line per sentence pair",
        )
    ids: list[str] = []
    last: dict[str, tuple[int, int]] = {}  # document -> (its last line, its last index)
    for i, line in enumerate(lines):
        cols = line.split("\t")
        if len(cols) != 2 or not cols[0].strip():
            raise CorpusError(
                path, i + 1,
                f"expected 2 tab-separated columns '<document><TAB><index>', found "
                f"{len(cols)} column(s){'' if cols[0].strip() else ' with an empty document'}",
            )
        index = cols[1].strip()
        if not (index.isascii() and index.isdigit()):
            raise CorpusError(
                path, i + 1,
                f"the second column must be the sentence's index in its document "
                f"(0, 1, 2, ...), not {cols[1]!r}",
            )
        doc, n = cols[0], int(index)
        if doc in last and ids[-1] != doc:
            raise CorpusError(
                path, i + 1,
                f"document {doc!r} starts again here after other documents (its last line "
                f"was {last[doc][0]}); keep each document's sentences together, in order")
        if doc in last and n <= last[doc][1]:
            raise CorpusError(
                path, i + 1,
                f"document {doc!r}: index {n} after index {last[doc][1]} (line "
                f"{last[doc][0]}); indices must increase within a document (0, 1, 2, ...), "
                "without duplicates")
        last[doc] = (i + 1, n)
        ids.append(doc)
    return ids


def read_parallel(
    src_path: str | Path, tgt_path: str | Path, src_lang: str, tgt_lang: str,
    docids_path: str | Path | None = None, lenient: bool = False, name: str | None = None,
) -> Corpus:
    """Two line-parallel UTF-8 files (line i of one translates line i of the other).

    `docids_path`: optional side file with `<document><TAB><index in document>` per
    line (as the Hansards release ships), giving each pair its document."""
    src_path, tgt_path = Path(src_path), Path(tgt_path)
    src, warnings = read_lines(src_path, lenient)
    tgt, tgt_warnings = read_lines(tgt_path, lenient)
    warnings += tgt_warnings
    check_same_length(src_path, tgt_path, src, tgt)
    doc_ids = None if docids_path is None else _read_docids(Path(docids_path), len(src))
    pairs = _pairs_from_lines(src_path, tgt_path, src, tgt, lenient, warnings, doc_ids=doc_ids)
    if not pairs:
        raise CorpusError(src_path, None, "holds no sentences; choose a non-empty corpus")
    return Corpus(pairs, src_lang, tgt_lang, name=name or src_path.stem, warnings=warnings)


def read_tsv(
    path: str | Path, src_lang: str, tgt_lang: str, src_col: int = 1, tgt_col: int = 0,
    lenient: bool = False, name: str | None = None,
) -> Corpus:
    """Tab-separated pairs with 2 or 3 columns (Tatoeba/Anki: `English<TAB>Other
    <TAB>attribution`). The columns (0-based) choose the direction: the defaults read
    Anki files as Other -> English. Blank lines are refused (lenient: skipped)."""
    path = Path(path)
    if src_col == tgt_col or min(src_col, tgt_col) < 0 or max(src_col, tgt_col) > 2:
        raise ConfigError(f"src_col and tgt_col must be different columns among 0, 1, 2, not {src_col}, {tgt_col}")
    lines, warnings = read_lines(path, lenient)
    need = max(src_col, tgt_col) + 1
    pairs: list[SentencePair] = []
    blank = empty = 0
    for i, line in enumerate(lines):
        if not line.strip():
            if not lenient:
                raise CorpusError(path, i + 1, "blank line: remove it, or read in lenient mode to skip blank lines")
            blank += 1
            continue
        cols = line.split("\t")
        if not need <= len(cols) <= 3 or len(cols) < 2:
            raise CorpusError(
                path, i + 1,
                f"expected 2 or 3 tab-separated columns (source, target, optional "
                f"attribution; reading columns {src_col} and {tgt_col}), found {len(cols)}; "
                "check for a missing or extra tab on this line",
            )
        s, t = cols[src_col], cols[tgt_col]
        if not s.strip() or not t.strip():
            if not lenient:
                raise CorpusError(
                    path, i + 1,
                    f"column {src_col if not s.strip() else tgt_col} is empty: give both "
                    "sides, or read in lenient mode to keep it (the empty filter drops it)",
                )
            empty += 1
        pairs.append(SentencePair(s, t, None, i + 1))
    if blank:
        warnings.append(f"{path}: skipped {blank} blank line(s) (lenient mode)")
    if empty:
        warnings.append(f"{path}: kept {empty} pair(s) with an empty side (lenient mode)")
    if not pairs:
        raise CorpusError(path, None, "holds no sentence pairs; choose a non-empty file")
    return Corpus(pairs, src_lang, tgt_lang, name=name or path.stem, warnings=warnings)


def _blocks(lines: list[str]) -> list[tuple[int, list[str], list[int]]]:
    """Group lines into documents separated by one or more blank lines:
    (first line number, sentences, their line numbers)."""
    docs: list[tuple[int, list[str], list[int]]] = []
    current: list[str] = []
    numbers: list[int] = []
    for i, line in enumerate(lines):
        if line.strip():
            current.append(line)
            numbers.append(i + 1)
        elif current:
            docs.append((numbers[0], current, numbers))
            current, numbers = [], []
    if current:
        docs.append((numbers[0], current, numbers))
    return docs


def read_blank_line_documents(
    src_path: str | Path, tgt_path: str | Path, src_lang: str, tgt_lang: str,
    lenient: bool = False, name: str | None = None,
) -> Corpus:
    """Two files, one sentence per line, documents separated by blank lines on both
    sides. Both files must hold the same documents with the same sentence counts; the
    documents are named doc1, doc2, ... in file order."""
    src_path, tgt_path = Path(src_path), Path(tgt_path)
    src, warnings = read_lines(src_path, lenient)
    tgt, tgt_warnings = read_lines(tgt_path, lenient)
    warnings += tgt_warnings
    src_docs, tgt_docs = _blocks(src), _blocks(tgt)
    for n, (sd, td) in enumerate(zip(src_docs, tgt_docs, strict=False), start=1):
        if len(sd[1]) != len(td[1]):
            raise CorpusError(
                src_path, sd[0],
                f"document {n} (starting here) has {len(sd[1])} sentences, but in "
                f"{tgt_path} (starting at line {td[0]}) it has {len(td[1])}; the blank "
                "lines separating documents must match in both files",
            )
    if len(src_docs) != len(tgt_docs):
        longer, docs = (src_path, src_docs) if len(src_docs) > len(tgt_docs) else (tgt_path, tgt_docs)
        extra = docs[min(len(src_docs), len(tgt_docs))]
        raise CorpusError(
            longer, extra[0],
            f"{src_path} has {len(src_docs)} documents but {tgt_path} has "
            f"{len(tgt_docs)}; the document starting here has no counterpart",
        )
    pairs: list[SentencePair] = []
    for n, (sd, td) in enumerate(zip(src_docs, tgt_docs, strict=True), start=1):
        for s, t, line in zip(sd[1], td[1], sd[2], strict=True):
            pairs.append(SentencePair(s, t, f"doc{n}", line))
    if not pairs:
        raise CorpusError(src_path, None, "holds no sentences; choose a non-empty corpus")
    return Corpus(pairs, src_lang, tgt_lang, name=name or src_path.stem, warnings=warnings)


def read_corpus(
    fmt: str, paths: Sequence[str | Path], src_lang: str, tgt_lang: str, **options: Any
) -> Corpus:
    """One entry point for every format.

    parallel: [src, tgt] or [src, tgt, docids]; tsv: [file] (options src_col,
    tgt_col); tmx: [file]; docs: [src, tgt]. `lenient` and `name` pass through."""
    expected = {"parallel": (2, 3), "tsv": (1,), "tmx": (1,), "docs": (2,)}
    if fmt not in expected:
        raise ConfigError(f"unknown corpus format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if len(paths) not in expected[fmt]:
        want = " or ".join(str(n) for n in expected[fmt])
        raise ConfigError(f"format {fmt!r} needs {want} file(s), got {len(paths)}")
    if fmt == "parallel":
        if len(paths) == 3:
            options.setdefault("docids_path", paths[2])
        return read_parallel(paths[0], paths[1], src_lang, tgt_lang, **options)
    if fmt == "tsv":
        return read_tsv(paths[0], src_lang, tgt_lang, **options)
    if fmt == "tmx":
        options.pop("lenient", None)  # XML must be well-formed; there is nothing to relax
        return read_tmx(paths[0], src_lang, tgt_lang, **options)
    return read_blank_line_documents(paths[0], paths[1], src_lang, tgt_lang, **options)

"""One entry point for translation exports, the format chosen by the file suffix."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core.errors import CorpusError
from core.formats.jsonl import read_jsonl, write_jsonl
from core.formats.records import TranslationRecord
from core.formats.text import read_plain, read_tsv, write_moses, write_plain, write_tsv
from core.formats.tmx_records import read_tmx, write_tmx
from core.formats.xliff import read_xliff, write_xliff

FORMATS = {".txt": "text", ".md": "text", ".tsv": "tsv", ".tmx": "tmx", ".xlf": "xliff",
           ".xliff": "xliff", ".jsonl": "jsonl"}
FILE_FILTER = ("Plain text (*.txt *.md);;TSV (*.tsv);;TMX 1.4 (*.tmx);;XLIFF 1.2 (*.xlf *.xliff);;"
               "JSON lines with attention (*.jsonl)")


def format_of(path: str | Path, fmt: str | None = None) -> str:
    """The export format: `fmt` when given (checked), else the one of the path's suffix
    (FORMATS); CorpusError for an unknown format or suffix."""
    if fmt:
        if fmt not in {*FORMATS.values(), "moses"}:
            raise CorpusError(path, None, f"unknown export format {fmt!r}")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise CorpusError(path, None, f"cannot tell the format from {suffix or 'no suffix'!r}: "
                          f"use one of {', '.join(FORMATS)}")
    return FORMATS[suffix]


def write_translations(path: str | Path,
                       sources: Sequence[str] | Sequence[TranslationRecord],
                       targets: Sequence[str] | None = None, *, src_lang: str = "src",
                       tgt_lang: str = "tgt", fmt: str | None = None,
                       decoding: Mapping[str, Any] | None = None) -> list[Path]:
    """Write translations: `sources` and `targets` as parallel strings, or `sources` as
    TranslationRecords (targets None) to keep tokens, scores and attention (JSON lines).
    Format by suffix (.txt/.md = translations only, a line each, .tsv, .tmx, .xlf/.xliff, .jsonl) or
    `fmt` ('moses' writes `<path>.<src_lang>` and `<path>.<tgt_lang>`). Atomic.
    `decoding` (core.infer.decoding) goes into the metadata of the formats that have
    some: TMX's header props, XLIFF's header notes, each JSON line's meta["decoding"]
    (text, TSV and Moses have none). Returns the files written."""
    if targets is None:
        records = [r if isinstance(r, TranslationRecord) else TranslationRecord(str(r), "")
                   for r in sources]
    else:
        if len(sources) != len(targets):
            raise ValueError(f"{len(sources)} sources but {len(targets)} translations")
        records = [TranslationRecord(str(s), t) for s, t in zip(sources, targets, strict=True)]
    kind = format_of(path, fmt)
    if kind == "text":
        return [write_plain(path, [r.translation for r in records])]
    if kind == "tsv":
        return [write_tsv(path, records)]
    if kind == "tmx":
        return [write_tmx(path, records, src_lang, tgt_lang, decoding)]
    if kind == "xliff":
        return [write_xliff(path, records, src_lang, tgt_lang, original=Path(path).stem,
                            decoding=decoding)]
    if kind == "jsonl":
        return [write_jsonl(path, records, decoding)]
    return list(write_moses(path, records, src_lang, tgt_lang))


def read_translations(path: str | Path, fmt: str | None = None) -> list[TranslationRecord]:
    """Read an export back (plain text gives records with an empty source)."""
    kind = format_of(path, fmt)
    if kind == "moses":
        raise CorpusError(path, None, "Moses exports are two files: use "
                          "core.formats.text.read_moses(src_path, tgt_path)")
    if kind == "text":
        return [TranslationRecord("", t) for t in read_plain(path)]
    reader = {"tsv": read_tsv, "tmx": read_tmx, "xliff": read_xliff, "jsonl": read_jsonl}[kind]
    return reader(path)

"""Line-based exports: plain text (one translation a line), Moses parallel files
(`<prefix>.<src_lang>` and `<prefix>.<tgt_lang>`, line-parallel) and TSV
(`source<TAB>translation`)."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from core.atomic import write_text_atomic
from core.data.textio import decode_text, read_bytes, split_lines
from core.errors import CorpusError
from core.formats.records import TranslationRecord


def _check_line(path: str | Path, k: int, text: str, tab_ok: bool = True) -> str:
    if "\n" in text or "\r" in text or (not tab_ok and "\t" in text):
        what = "a line break" if ("\n" in text or "\r" in text) else "a tab"
        raise CorpusError(path, k, f"segment {k} contains {what}, which this line-based "
                          "format cannot hold: export as TMX, XLIFF or JSON lines instead")
    return text


def _read(path: str | Path) -> list[str]:
    """The file's lines, read as any text input (core.data.textio): lines end at '\\n'
    only, as the writers above break them, so a segment holding U+2028 or a form feed
    comes back whole; bad UTF-8 names its line; the input limits hold."""
    return split_lines(decode_text(read_bytes(path), path)[0])


def write_plain(path: str | Path, lines: Iterable[str]) -> Path:
    """One segment a line, atomically."""
    out = [_check_line(path, k, t) for k, t in enumerate(lines, start=1)]
    return write_text_atomic(path, "".join(t + "\n" for t in out))


def read_plain(path: str | Path) -> list[str]:
    """The file's lines (UTF-8); CorpusError when it is missing or not UTF-8."""
    return _read(path)


def write_moses(prefix: str | Path, records: Sequence[TranslationRecord], src_lang: str,
                tgt_lang: str) -> tuple[Path, Path]:
    """Write `<prefix>.<src_lang>` (sources) and `<prefix>.<tgt_lang>` (translations)."""
    prefix = Path(prefix)
    src = write_plain(prefix.with_name(f"{prefix.name}.{src_lang}"), [r.source for r in records])
    tgt = write_plain(prefix.with_name(f"{prefix.name}.{tgt_lang}"),
                      [r.translation for r in records])
    return src, tgt


def read_moses(src_path: str | Path, tgt_path: str | Path) -> list[TranslationRecord]:
    """Records from line-parallel source and translation files; CorpusError when the line
    counts differ."""
    src, tgt = _read(src_path), _read(tgt_path)
    if len(src) != len(tgt):
        raise CorpusError(tgt_path, None, f"{len(tgt)} lines but {src_path} has {len(src)}: "
                          "Moses files must be line-parallel")
    return [TranslationRecord(s, t) for s, t in zip(src, tgt, strict=True)]


def write_tsv(path: str | Path, records: Iterable[TranslationRecord]) -> Path:
    """`source<TAB>translation` a line, atomically."""
    lines = []
    for k, r in enumerate(records, start=1):
        lines.append(f"{_check_line(path, k, r.source, False)}\t"
                     f"{_check_line(path, k, r.translation, False)}\n")
    return write_text_atomic(path, "".join(lines))


def read_tsv(path: str | Path) -> list[TranslationRecord]:
    """Records from 'source<TAB>translation' lines; CorpusError naming a line without
    exactly two fields."""
    records = []
    for k, line in enumerate(_read(path), start=1):
        fields = line.split("\t")
        if len(fields) != 2:
            raise CorpusError(path, k, f"expected 'source<TAB>translation', found "
                              f"{len(fields)} field(s)")
        records.append(TranslationRecord(fields[0], fields[1]))
    return records

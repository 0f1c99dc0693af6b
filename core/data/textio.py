"""Decoding a text file into lines, with errors that name file, line and byte.

Lines are split on '\\n' only (str.splitlines would also split on U+2028, form feeds
and other characters that may legitimately sit inside a sentence); a trailing '\\r'
(CRLF files) is dropped and a UTF-8 byte-order mark at the start is ignored. The input
limits of core.limits hold here: a file larger than NMT_WB_MAX_INPUT_MB is refused
before it is read, and so is text with more than NMT_WB_MAX_LINES lines or a line longer
than NMT_WB_MAX_LINE_CHARS characters.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from core import limits
from core.errors import CorpusError

_BOM = b"\xef\xbb\xbf"
_REPLACEMENT = "\ufffd"
_REPLACEMENT_BYTES = _REPLACEMENT.encode("utf-8")
#: the advice of an invalid UTF-8 byte where no lenient mode exists (translate, evaluate, align)
CONVERT_TO_UTF8 = ("convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE > NEW) "
                   "and try again")


def _cannot_read(path: str | Path, exc: OSError) -> CorpusError:
    if isinstance(exc, FileNotFoundError):
        return CorpusError(path, None, "no such file; check the path")
    if isinstance(exc, IsADirectoryError):
        return CorpusError(path, None, "is a folder, not a file; give a file in it")
    return CorpusError(path, None, f"cannot be read ({exc.strerror or exc}); check permissions")


def _open_input(path: str | Path) -> BinaryIO:
    """The file opened for reading; CorpusError when it cannot be, or when a regular
    file is larger than NMT_WB_MAX_INPUT_MB (checked before reading anything)."""
    try:
        f = open(path, "rb")  # noqa: SIM115 (returned to the caller's with-block)
    except OSError as exc:
        raise _cannot_read(path, exc) from None
    try:
        info = os.fstat(f.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(path)
        if stat.S_ISREG(info.st_mode):
            limits.check_input_size(path, info.st_size)
    except OSError as exc:
        f.close()
        raise _cannot_read(path, exc) from None
    except BaseException:
        f.close()
        raise
    return f


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes; CorpusError when it is missing, unreadable or larger than
    NMT_WB_MAX_INPUT_MB (checked before reading; a pipe is read up to the limit)."""
    with _open_input(path) as f:
        try:
            return read_stream(f, path)
        except OSError as exc:
            raise _cannot_read(path, exc) from None


def input_chunks(path: str | Path, size: int = 1 << 20) -> Iterator[bytes]:
    """The file's bytes in chunks of `size`, under read_bytes's checks (for readers
    that stream, such as the XML ones): never more than NMT_WB_MAX_INPUT_MB in all."""
    cap, total = limits.max_input_bytes(), 0
    with _open_input(path) as f:
        while True:
            try:
                chunk = f.read(size)
            except OSError as exc:
                raise _cannot_read(path, exc) from None
            if not chunk:
                return
            total += len(chunk)
            if total > cap:
                limits.check_input_size(path, total, "the input")
            yield chunk


def read_stream(stream: BinaryIO, name: str | Path) -> bytes:
    """All bytes of an open binary stream (stdin, a pipe), refused (CorpusError naming
    `name`) once they pass NMT_WB_MAX_INPUT_MB: never more than the limit is held."""
    cap = limits.max_input_bytes()
    data = stream.read(cap + 1)
    if len(data) > cap:
        limits.check_input_size(name, len(data), "the input")
    return data


def line_of_offset(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line number and 0-based byte column of byte `offset` in `data`."""
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    return line, offset - start


def decode_text(data: bytes, path: str | Path | None, lenient: bool = False,
                advice: str | None = None) -> tuple[str, list[str]]:
    """UTF-8 bytes -> text and the warnings of a lenient decode.

    `advice` replaces the end of an invalid byte's message (default: convert the file
    or read it in lenient mode) for callers that have no lenient mode (CONVERT_TO_UTF8).

    Strict mode raises CorpusError at the first invalid byte; lenient mode replaces
    invalid sequences with U+FFFD and says how many it replaced. NUL bytes mean a
    binary file and are refused in both modes, and so are more lines than
    NMT_WB_MAX_LINES and a line longer than NMT_WB_MAX_LINE_CHARS (core.limits)."""
    warnings: list[str] = []
    max_lines = limits.LINES.value()
    if data.count(b"\n", 0, len(data) - 1) >= max_lines:  # a final newline ends a line
        limits.check_count(limits.LINES, path, max_lines + 1, max_lines + 1, "lines")
    nul = data.find(b"\x00")
    if nul >= 0:
        line, _ = line_of_offset(data, nul)
        raise CorpusError(
            path, line,
            f"contains a NUL byte at byte offset {nul}: this looks like a binary file "
            "(or UTF-16 text); choose a UTF-8 text file",
        )
    skip = len(_BOM) if data.startswith(_BOM) else 0
    try:
        text = data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = skip + exc.start
        if not lenient:
            line, col = line_of_offset(data, offset)
            raise CorpusError(
                path, line,
                f"invalid UTF-8 byte 0x{data[offset]:02x} at byte offset {offset} "
                f"(byte {col} of the line); " + (advice or "convert the file to UTF-8 or "
                                                 "read it in lenient mode to replace bad "
                                                 "bytes with U+FFFD"),
            ) from None
        text = data[skip:].decode("utf-8", errors="replace")
        # count only the replacements we made, not U+FFFD already in the file
        made = text.count(_REPLACEMENT) - data.count(_REPLACEMENT_BYTES)
        first_line, _ = line_of_offset(data, offset)
        warnings.append(
            f"{path}: replaced {made} invalid UTF-8 sequence(s) with U+FFFD "
            f"(first at line {first_line}, byte offset {offset})"
        )
    long = limits.first_long_line(text, limits.LINE_CHARS.value())
    if long is not None:
        limits.check_length(path, long[0], long[1])
    return text, warnings


def split_lines(text: str) -> list[str]:
    """Split on '\\n', drop one trailing '\\r' per line and the empty piece after a
    final newline."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def read_lines(path: str | Path, lenient: bool = False,
               advice: str | None = None) -> tuple[list[str], list[str]]:
    """The lines of a UTF-8 text file and the warnings of a lenient decode (`advice`:
    see decode_text)."""
    text, warnings = decode_text(read_bytes(path), path, lenient, advice)
    return split_lines(text), warnings

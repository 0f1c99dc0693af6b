"""Decoding a text file into lines, with errors that name file, line and byte.

Lines are split on '\\n' only (str.splitlines would also split on U+2028, form feeds
and other characters that may legitimately sit inside a sentence); a trailing '\\r'
(CRLF files) is dropped and a UTF-8 byte-order mark at the start is ignored.
"""
from __future__ import annotations

from pathlib import Path

from core.errors import CorpusError

_BOM = b"\xef\xbb\xbf"
_REPLACEMENT = "\ufffd"
_REPLACEMENT_BYTES = _REPLACEMENT.encode("utf-8")


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes; CorpusError (no such file, a folder, unreadable) saying what to do."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise CorpusError(path, None, "no such file; check the path") from None
    except IsADirectoryError:
        raise CorpusError(path, None, "is a folder, not a file; choose the corpus file") from None
    except OSError as exc:
        raise CorpusError(path, None, f"cannot be read ({exc.strerror}); check permissions") from None


def line_of_offset(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line number and 0-based byte column of byte `offset` in `data`."""
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    return line, offset - start


def decode_text(data: bytes, path: str | Path | None, lenient: bool = False) -> tuple[str, list[str]]:
    """UTF-8 bytes -> text and the warnings of a lenient decode.

    Strict mode raises CorpusError at the first invalid byte; lenient mode replaces
    invalid sequences with U+FFFD and says how many it replaced. NUL bytes mean a
    binary file and are refused in both modes."""
    warnings: list[str] = []
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
                f"(byte {col} of the line); convert the file to UTF-8 or read it in "
                "lenient mode to replace bad bytes with U+FFFD",
            ) from None
        text = data[skip:].decode("utf-8", errors="replace")
        # count only the replacements we made, not U+FFFD already in the file
        made = text.count(_REPLACEMENT) - data.count(_REPLACEMENT_BYTES)
        first_line, _ = line_of_offset(data, offset)
        warnings.append(
            f"{path}: replaced {made} invalid UTF-8 sequence(s) with U+FFFD "
            f"(first at line {first_line}, byte offset {offset})"
        )
    return text, warnings


def split_lines(text: str) -> list[str]:
    """Split on '\\n', drop one trailing '\\r' per line and the empty piece after a
    final newline."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def read_lines(path: str | Path, lenient: bool = False) -> tuple[list[str], list[str]]:
    """The lines of a UTF-8 text file and the warnings of a lenient decode."""
    text, warnings = decode_text(read_bytes(path), path, lenient)
    return split_lines(text), warnings

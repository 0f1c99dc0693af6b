"""Text from files and the database, made safe to print on a terminal or show in a list.

A corpus or run name, a sentence or a file name may hold control characters: an ESC
sequence would drive the user's terminal, a newline would forge an output line, and
bidirectional overrides reorder what is shown. `printable` writes each such character
as a visible escape (\\x1b, \\n, \\u202e); `unprintable_chars` finds them, for refusing
names that hold any.
"""
from __future__ import annotations

import unicodedata

# bidirectional embeddings/overrides/isolates and the Unicode line/paragraph separators
_INVISIBLE = set("\u2028\u2029\u200e\u200f\u061c") | {chr(c) for c in range(0x202A, 0x202F)} \
    | {chr(c) for c in range(0x2066, 0x206A)}


def _unsafe(ch: str) -> bool:
    return ch in _INVISIBLE or unicodedata.category(ch) == "Cc"


def _escape(ch: str) -> str:
    code = ord(ch)
    special = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return special.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str, keep: str = "") -> str:
    """`text` with every control character (but those in `keep`) written as an escape."""
    if not any(_unsafe(ch) for ch in text):
        return text
    return "".join(_escape(ch) if _unsafe(ch) and ch not in keep else ch for ch in text)


def unprintable_chars(text: str) -> list[str]:
    """The distinct control characters of `text`, escaped, in order of appearance."""
    return list(dict.fromkeys(_escape(ch) for ch in text if _unsafe(ch)))


#: characters of a name shown in a table's cell (`runs list`, `corpus list`); the whole
#: name stays in the database and in --json
SHOWN_NAME_CHARS = 60


def cell(text: str, most: int = SHOWN_NAME_CHARS) -> str:
    """`printable(text)` cut to `most` characters, the cut marked with '…': one name
    (a 5,000-character one made before names had a limit) cannot widen every row."""
    text = printable(text)
    return text if len(text) <= most else text[:most - 1] + "…"

"""The decoding settings (core.infer.decoding) in an export's metadata and back.

TMX: one `<prop type="x-decoding-KEY">` per setting in the header, XLIFF: one
`<note from="x-decoding-KEY">` per setting in the <file>'s header (beside its <tool>);
each value written as JSON (5, 0.0, "fp32", ["run-a", "run-b"], null), so a reader
gets back the very values. JSON lines keep them in each record's meta["decoding"].
Readers put what they find into every record's meta["decoding"] (one dict shared by
the file's records)."""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

PREFIX = "x-decoding-"


def to_pairs(decoding: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(PREFIX + key, the value as JSON) per setting, in order; none without settings."""
    return [(PREFIX + key, json.dumps(value, ensure_ascii=False))
            for key, value in (decoding or {}).items()]


def from_pairs(pairs: Iterable[tuple[str, str]]) -> dict[str, Any] | None:
    """The settings among (name, text) pairs (names without PREFIX are someone else's
    and left out); a text that is not JSON (edited by hand) is kept as text. None when
    there is none."""
    out: dict[str, Any] = {}
    for name, text in pairs:
        if not name.startswith(PREFIX) or len(name) == len(PREFIX):
            continue
        try:
            out[name[len(PREFIX):]] = json.loads(text)
        except ValueError:
            out[name[len(PREFIX):]] = text.strip()
    return out or None


def with_decoding(meta: dict[str, Any], decoding: Mapping[str, Any] | None) -> dict[str, Any]:
    """`meta` with meta["decoding"] = `decoding` (a new dict, `decoding` itself shared by
    the records of a file; `meta` as it is without settings)."""
    return {**meta, "decoding": decoding} if decoding else meta

"""JSON lines: one TranslationRecord per line, with tokens, scores and attention."""
from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from core.atomic import write_text_atomic
from core.errors import CorpusError
from core.formats.records import TranslationRecord

_FIELDS = {f.name for f in dataclasses.fields(TranslationRecord)}


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _default(v: Any) -> Any:
    if isinstance(v, np.ndarray | np.generic):
        return _plain(v)
    raise TypeError(f"cannot write {type(v).__name__} to JSON")


def record_to_json(r: TranslationRecord) -> str:
    """One line of JSON; None fields are left out; attention rows are target tokens."""
    d: dict[str, Any] = {}
    for f in dataclasses.fields(r):
        v = getattr(r, f.name)
        if v is None or (f.name == "meta" and not v):
            continue
        d[f.name] = _plain(v)
    return json.dumps(d, ensure_ascii=False, allow_nan=False, default=_default)


def write_jsonl(path: str | Path, records: Iterable[TranslationRecord]) -> Path:
    """One JSON object per record and line (record_to_json), atomically; returns the path."""
    return write_text_atomic(path, "".join(record_to_json(r) + "\n" for r in records))


def read_jsonl(path: str | Path) -> list[TranslationRecord]:
    """The records of a JSON lines file (blank lines skipped); CorpusError naming the line
    for bad JSON, missing or unknown fields, or attention that is not target x source."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise CorpusError(path, None, "file not found: check the path") from None
    out = []
    for k, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            raise CorpusError(path, k, f"not valid JSON ({e.msg})") from None
        if not isinstance(d, dict) or "source" not in d or "translation" not in d:
            raise CorpusError(path, k, "each line must be an object with 'source' and "
                              "'translation'")
        unknown = set(d) - _FIELDS
        if unknown:
            raise CorpusError(path, k, f"unknown field(s) {sorted(unknown)}")
        att = d.get("attention")
        if att is not None:
            rows = len(att)
            if any(len(r) != len(att[0]) for r in att) or any(
                    not isinstance(x, int | float) or math.isnan(x) for r in att for x in r):
                raise CorpusError(path, k, "attention must be a rectangular matrix of numbers")
            tt, st = d.get("target_tokens"), d.get("source_tokens")
            if (tt is not None and rows != len(tt)) or (
                    st is not None and rows and len(att[0]) != len(st)):
                raise CorpusError(path, k, "attention must be target_tokens x source_tokens")
        out.append(TranslationRecord(**d))
    return out

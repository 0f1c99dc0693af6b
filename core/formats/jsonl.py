"""JSON lines: one TranslationRecord per line, with tokens, scores and attention."""
from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from core.atomic import write_text_atomic
from core.data.textio import decode_text, read_bytes, split_lines
from core.errors import CorpusError
from core.formats.decoding_meta import with_decoding
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


def write_jsonl(path: str | Path, records: Iterable[TranslationRecord],
                decoding: Mapping[str, Any] | None = None) -> Path:
    """One JSON object per record and line (record_to_json), atomically; returns the path.
    `decoding` (core.infer.decoding) goes into every record's meta["decoding"]: each
    line stays a whole record for the readers that take one line at a time."""
    if decoding:
        records = (dataclasses.replace(r, meta=with_decoding(r.meta, decoding))
                   for r in records)
    return write_text_atomic(path, "".join(record_to_json(r) + "\n" for r in records))


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _type_problem(d: dict[str, Any]) -> str | None:
    """What is wrong with the fields' types, or None."""
    for name in ("source", "translation"):
        if not isinstance(d[name], str):
            return f"'{name}' must be text"
    for name in ("reference", "id", "doc_id"):
        if d.get(name) is not None and not isinstance(d[name], str):
            return f"'{name}' must be text"
    for name in ("source_tokens", "target_tokens"):
        v = d.get(name)
        if v is not None and not (isinstance(v, list) and all(isinstance(t, str) for t in v)):
            return f"'{name}' must be a list of texts"
    if d.get("score") is not None and not _number(d["score"]):
        return "'score' must be a number"
    v = d.get("token_scores")
    if v is not None and not (isinstance(v, list) and all(_number(x) for x in v)):
        return "'token_scores' must be a list of numbers"
    if "meta" in d and not isinstance(d["meta"], dict):
        return "'meta' must be an object"
    att = d.get("attention")
    if att is not None and not (isinstance(att, list) and all(
            isinstance(r, list) and len(r) == len(att[0]) and all(_number(x) for x in r)
            for r in att)):
        return "attention must be a rectangular matrix of numbers"
    return None


def read_jsonl(path: str | Path) -> list[TranslationRecord]:
    """Records of a JSON-lines export; CorpusError naming the line of anything else
    (read as any text input: core.data.textio, the input limits hold)."""
    lines = split_lines(decode_text(read_bytes(path), path)[0])
    out = []
    for k, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            raise CorpusError(path, k, f"not valid JSON ({e.msg})") from None
        except RecursionError:
            raise CorpusError(path, k, "JSON nested too deeply") from None
        except ValueError as e:  # a number too long to convert, ...
            raise CorpusError(path, k, f"not valid JSON ({e})") from None
        if not isinstance(d, dict) or "source" not in d or "translation" not in d:
            raise CorpusError(path, k, "each line must be an object with 'source' and "
                              "'translation'")
        unknown = set(d) - _FIELDS
        if unknown:
            raise CorpusError(path, k, f"unknown field(s) {sorted(unknown)}")
        problem = _type_problem(d)
        if problem:
            raise CorpusError(path, k, problem)
        att = d.get("attention")
        if att is not None:
            rows = len(att)
            tt, st = d.get("target_tokens"), d.get("source_tokens")
            if (tt is not None and rows != len(tt)) or (
                    st is not None and rows and len(att[0]) != len(st)):
                raise CorpusError(path, k, "attention must be target_tokens x source_tokens")
        out.append(TranslationRecord(**d))
    return out

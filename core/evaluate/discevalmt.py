"""Contrastive sets in the DiscEvalMT layout (Bawden et al. 2018, "Evaluating Discourse
Phenomena in Neural Machine Translation").

A JSON object of numbered blocks. Each block gives an English sentence pair `src`
[previous, current] and its French variants, in one of two shapes:

    {"src": [prev, cur], "type": T?, "trg": [VARIANT, ...]}                 (anaphora)
    {"type": T, "examples": [{"src": [prev, cur], "trg": VARIANT}, ...]}    (lexical choice)

A VARIANT is {"correct" or "semi-correct": [prev, cur], "incorrect": [prev, cur]}: the
previous translation is part of the example and is the same in both candidates; only
the current sentence differs. 'semi-correct' marks a good candidate whose previous
translation is not the ideal one (the pronoun agrees with it all the same), and counts
as the good candidate. Each variant becomes one ContrastiveExample: the current source
with the previous source (and previous translation) as context; its phenomenon is the
block's `type` (else the file's stem), so accuracy is reported per type. Other keys
("inspired by", ...) are ignored.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from core.data.textio import decode_text, read_bytes
from core.errors import CorpusError
from core.evaluate.contrastive import ContrastiveExample

GOOD = ("correct", "semi-correct")
_SPACE = re.compile(r"\s*")


def is_discevalmt(path: str | Path) -> bool:
    """Whether the file is one JSON object whose values are DiscEvalMT blocks (a dict
    with 'src' and 'trg', or with 'examples'); JSON lines and JSON lists are not."""
    try:
        value = json.loads(decode_text(read_bytes(path), path)[0])
    except (json.JSONDecodeError, CorpusError):
        return False
    return isinstance(value, dict) and bool(value) and all(
        isinstance(b, dict) and ({"src", "trg"} <= b.keys() or "examples" in b)
        for b in value.values())


def _blocks(text: str, path: Path) -> list[tuple[str, int, Any]]:
    """(key, line of its value, value) of each member of the top-level JSON object."""
    decoder = json.JSONDecoder()

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    def parse(pos: int) -> tuple[Any, int]:
        try:
            return decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise CorpusError(path, exc.lineno, f"invalid JSON ({exc.msg}, column {exc.colno})"
                              ) from None

    pos = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
    if not text.startswith("{", pos):
        raise CorpusError(path, line_of(pos), "a DiscEvalMT set is one JSON object of blocks "
                          '({"1": {"src": [...], "trg": [...]}, ...})')
    out, pos = [], pos + 1
    while True:
        pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith("}", pos):
            return out
        key, pos = parse(pos)
        pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if not isinstance(key, str) or not text.startswith(":", pos):
            raise CorpusError(path, line_of(pos), "expected a block name and ':'")
        pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
        start = pos
        value, pos = parse(pos)
        out.append((key, line_of(start), value))
        pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith(",", pos):
            pos += 1
        elif not text.startswith("}", pos):
            raise CorpusError(path, line_of(pos), "expected ',' or '}' after a block")


def _pair(value: Any, what: str, where: str, path: Path, line: int) -> tuple[str, str]:
    if not (isinstance(value, list) and len(value) == 2
            and all(isinstance(s, str) and s.strip() for s in value)):
        raise CorpusError(path, line, f"{where}: {what} must be [previous, current], two "
                          "non-empty strings")
    return value[0].strip(), value[1].strip()


def _example(src: Any, variant: Any, phenomenon: str, where: str, path: Path,
             line: int) -> ContrastiveExample:
    prev_src, cur_src = _pair(src, "src", where, path, line)
    if not isinstance(variant, dict):
        raise CorpusError(path, line, f"{where}: a trg variant must be an object with "
                          "'correct' (or 'semi-correct') and 'incorrect'")
    good_keys = [k for k in GOOD if k in variant]
    if len(good_keys) != 1 or "incorrect" not in variant:
        raise CorpusError(path, line, f"{where}: a trg variant needs one of 'correct' or "
                          "'semi-correct', and 'incorrect'")
    prev_good, good = _pair(variant[good_keys[0]], good_keys[0], where, path, line)
    prev_bad, bad = _pair(variant["incorrect"], "incorrect", where, path, line)
    if prev_good != prev_bad:
        raise CorpusError(path, line, f"{where}: the good and the incorrect candidate have "
                          "different previous translations; the two candidates must share "
                          "it (only the current sentence is scored)")
    if good == bad:
        raise CorpusError(path, line, f"{where}: the incorrect translation equals the good one")
    return ContrastiveExample(source=cur_src, context_src=[prev_src], context_tgt=[prev_good],
                              correct=good, contrastive=bad, phenomenon=phenomenon, line=line)


def read_discevalmt(path: str | Path) -> list[ContrastiveExample]:
    """Every variant of every block, in file order (see the module's docstring).
    Errors are CorpusErrors naming the file, the line of the block and the block."""
    path = Path(path)
    text, _ = decode_text(read_bytes(path), path)
    out: list[ContrastiveExample] = []
    for key, line, block in _blocks(text, path):
        where = f"block {key!r}"
        if not isinstance(block, dict):
            raise CorpusError(path, line, f"{where} is a {type(block).__name__}, not an object")
        phenomenon = str(block.get("type") or path.stem)
        if "examples" in block:
            items = block["examples"]
            if not isinstance(items, list) or not items:
                raise CorpusError(path, line, f"{where}: 'examples' must be a non-empty list")
            for item in items:
                if not isinstance(item, dict) or "src" not in item or "trg" not in item:
                    raise CorpusError(path, line, f"{where}: each example needs 'src' and 'trg'")
                out.append(_example(item["src"], item["trg"],
                                    str(item.get("type") or phenomenon), where, path, line))
        elif "src" in block and "trg" in block:
            variants = block["trg"] if isinstance(block["trg"], list) else [block["trg"]]
            if not variants:
                raise CorpusError(path, line, f"{where}: 'trg' holds no variant")
            out += [_example(block["src"], v, phenomenon, where, path, line) for v in variants]
        else:
            raise CorpusError(path, line, f"{where} needs 'src' and 'trg', or 'examples'")
    if not out:
        raise CorpusError(path, None, "holds no blocks")
    return out

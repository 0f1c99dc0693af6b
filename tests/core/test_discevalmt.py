"""Contrastive sets in the DiscEvalMT layout (core.evaluate.discevalmt): both block
shapes, semi-correct variants, the previous translation as target-side context,
accuracy per type, and errors that name the block's line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import CorpusError
from core.evaluate.contrastive import contrastive_accuracy
from core.evaluate.discevalmt import is_discevalmt, read_discevalmt

SET = Path(__file__).resolve().parents[1] / "fixtures" / "contrastive" / "discevalmt-style.json"


def test_both_block_shapes_give_one_example_per_variant():
    examples = read_discevalmt(SET)
    assert [e.phenomenon for e in examples] == ["discevalmt-style"] * 3 + ["disambig"] * 2
    first, semi, fishing = examples[0], examples[2], examples[3]
    assert (first.source, first.context_src) == ("It was built in two years.",
                                                 ["The new bridge opens on Monday."])
    assert first.context_tgt == ["Le nouveau pont ouvre lundi."]
    assert (first.correct, first.contrastive) == ("Il a été construit en deux ans.",
                                                  "Elle a été construite en deux ans.")
    assert semi.correct == "Elle a été construite en deux ans."  # semi-correct is the good one
    assert semi.context_tgt == ["La nouvelle route ouvre lundi."]
    assert fishing.correct == "La rive était couverte de boue." and fishing.line == 13
    assert [e.line for e in examples[:3]] == [2, 2, 2]


def test_context_blind_and_context_using_scorers():
    """A scorer that ignores the context gets the balanced set about half right; one
    that reads the previous translation (context_side 'tgt') gets every example."""
    examples = read_discevalmt(SET)

    def blind(sources, contexts, targets):
        return [float(t.startswith("Il") or "rive" in t) for t in targets]

    def reads_previous(sources, contexts, targets):
        out = []
        for (prev,), t in zip(contexts, targets, strict=True):
            masculine = prev.startswith("Le ")
            if "pêcher" in prev or "voleurs" in prev:
                out.append(float(("rive" in t) == ("pêcher" in prev)))
            else:
                out.append(float(t.startswith("Il") == masculine))
        return out

    rep = contrastive_accuracy(blind, examples)
    got = {k: (g.total, g.correct) for k, g in rep.by_phenomenon.items()}
    assert got == {"discevalmt-style": (3, 1), "disambig": (2, 1)}
    rep = contrastive_accuracy(reads_previous, examples, context_side="tgt")
    assert (rep.overall.total, rep.overall.correct) == (5, 5)


def _write(tmp_path, blocks) -> Path:
    p = tmp_path / "set.json"
    p.write_text(json.dumps(blocks, ensure_ascii=False, indent=1), encoding="utf-8")
    return p


GOOD = {"src": ["A b.", "C d."], "trg": [{"correct": ["P.", "Q."], "incorrect": ["P.", "R."]}]}


@pytest.mark.parametrize("bad, words", [
    ({"src": ["A b.", "C d."], "trg": [{"correct": ["P.", "Q."], "incorrect": ["X.", "R."]}]},
     "different previous translations"),
    ({"src": ["A b.", "C d."], "trg": [{"correct": ["P.", "Q."]}]}, "and 'incorrect'"),
    ({"src": ["only one"], "trg": [{"correct": ["P.", "Q."], "incorrect": ["P.", "R."]}]},
     "[previous, current]"),
    ({"src": ["A b.", "C d."], "trg": [{"correct": ["P.", "Q."], "semi-correct": ["P.", "Q."],
                                        "incorrect": ["P.", "R."]}]}, "one of 'correct'"),
    ({"src": ["A b.", "C d."], "trg": [{"correct": ["P.", "Q."], "incorrect": ["P.", "Q."]}]},
     "equals the good one"),
    ({"type": "x", "examples": []}, "non-empty list"),
])
def test_errors_name_the_block_and_its_line(tmp_path, bad, words):
    path = _write(tmp_path, {"1": GOOD, "2": bad})
    with pytest.raises(CorpusError, match="block '2'") as err:
        read_discevalmt(path)
    assert words in str(err.value)
    assert err.value.line == path.read_text(encoding="utf-8").splitlines().index(' "2": {') + 1


def test_layout_detection_and_broken_json(tmp_path):
    assert is_discevalmt(SET)
    one_record = tmp_path / "one.jsonl"  # a Voita-style JSON-lines record is no block set
    one_record.write_text('{"src": "a", "dst": "b", "dst_alternatives": ["c"]}\n', encoding="utf-8")
    assert not is_discevalmt(one_record)
    assert not is_discevalmt(_write(tmp_path, [GOOD]))
    broken = tmp_path / "broken.json"
    broken.write_text('{\n "1": {"src": ["a", "b"],\n "trg": [}\n}', encoding="utf-8")
    with pytest.raises(CorpusError, match="invalid JSON") as err:
        read_discevalmt(broken)
    assert err.value.line == 3

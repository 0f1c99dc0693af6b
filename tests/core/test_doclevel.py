"""Document-level BLEU table: numbers equal sacrebleu on the concatenated documents."""
from __future__ import annotations

import csv

import pytest
import sacrebleu

from core.errors import CorpusError
from core.evaluate.doclevel import SystemInfo, document_bleu

DOCS = [
    [("s1", "The cat sat on the mat ."), ("s2", "It was very happy there ."),
     ("s3", "Then the dog came in .")],
    [("s4", "She bought a new car yesterday ."), ("s5", "It is red and fast .")],
]
REFS = [r for d in DOCS for _, r in d]
SYSTEMS = {
    "Transformer": [["The cat sat on a mat .", "He was very happy there .", "Then a dog came ."],
                    ["She bought a car yesterday .", "He is red and quick ."]],
    "Context WS": [["The cat sat on the mat .", "It was happy there .", "Then the dog came in ."],
                   ["She bought a new car .", "It is red and fast ."]],
    "Oracle": [[r for _, r in d] for d in DOCS],
}
INFO = {"Transformer": SystemInfo("sentence-level"), "Context WS": SystemInfo("ws", 1),
        "Oracle": SystemInfo("reference", None)}


def test_bleu_equals_sacrebleu_on_concatenated_documents(tmp_path):
    res = document_bleu(DOCS, SYSTEMS, baseline="Transformer", info=INFO)
    expected = {name: sacrebleu.corpus_bleu([h for d in docs for h in d], [REFS]).score
                for name, docs in SYSTEMS.items()}
    assert {n: s.score for n, s in res.scores.items()} == pytest.approx(expected, abs=1e-9)
    assert res.scores["Oracle"].score == pytest.approx(100.0)
    assert res.scores["Transformer"].score < res.scores["Context WS"].score < 100.0
    assert res.delta("Context WS") == pytest.approx(expected["Context WS"] - expected["Transformer"])
    assert (res.n_documents, res.n_sentences) == (2, 5)

    md, csv_path = res.save(tmp_path / "table5_5")
    rows = list(csv.reader(csv_path.read_text(encoding="utf-8").splitlines()))
    assert rows[0] == ["system", "training strategy", "context depth", "BLEU", "Δ BLEU"]
    assert rows[1] == ["Transformer", "sentence-level", "", f"{round(expected['Transformer'], 2)}", ""]
    ws = rows[2]
    assert ws[:3] == ["Context WS", "ws", "1"]
    assert float(ws[3]) == round(expected["Context WS"], 2)
    assert float(ws[4]) == round(expected["Context WS"] - expected["Transformer"], 2)
    assert float(rows[3][4]) == round(100.0 - expected["Transformer"], 2)
    text = md.read_text(encoding="utf-8")
    assert f"| Context WS | ws | 1 | {expected['Context WS']:.2f} |" in text
    assert "nrefs:1|case:mixed" in text and "tok:13a" in text  # sacrebleu's signature
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table5_5.csv", "table5_5.md"]


def test_concatenation_is_not_the_mean_of_document_scores():
    res = document_bleu(DOCS, {"Transformer": SYSTEMS["Transformer"]})
    per_doc = [sacrebleu.corpus_bleu(h, [[r for _, r in d]]).score
               for d, h in zip(DOCS, SYSTEMS["Transformer"], strict=True)]
    assert res.baseline == "Transformer"
    assert abs(res.scores["Transformer"].score - sum(per_doc) / 2) > 0.5


def test_mismatched_systems_name_system_and_document():
    bad = {"A": [SYSTEMS["Oracle"][0], SYSTEMS["Oracle"][1][:1]]}
    with pytest.raises(CorpusError) as err:
        document_bleu(DOCS, bad)
    assert "'A', document 2: 1 hypotheses for 2 sentences" in err.value.reason
    with pytest.raises(CorpusError) as err:
        document_bleu(DOCS, {"B": SYSTEMS["Oracle"][:1]})
    assert "1 documents but the test set has 2" in err.value.reason
    with pytest.raises(ValueError):
        document_bleu(DOCS, SYSTEMS, baseline="missing")


def test_system_info_names_strategy_and_context_side():
    from types import SimpleNamespace

    from core.config import ModelConfig
    from core.services.doc_eval import system_info

    def info(**model):
        config = SimpleNamespace(model=ModelConfig(**model))
        return system_info(SimpleNamespace(first=SimpleNamespace(config=config)))

    assert info(family="transformer") == SystemInfo("sentence-level", None)
    assert info(family="concat") == SystemInfo("concat", None)
    assert info(family="context_transformer", strategy="ws", ctx_layers=1) == SystemInfo("ws", 1)
    assert info(family="context_transformer", strategy="ts", ctx_layers=2,
                ctx_side="target") == SystemInfo("ts, target context", 2)

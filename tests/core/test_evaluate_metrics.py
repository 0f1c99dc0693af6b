"""sacrebleu wrappers, perplexity, BLEU by length and report tables."""
from __future__ import annotations

import json
import math

import pytest
import sacrebleu

from core.errors import ConfigError
from core.evaluate.metrics import (
    FEW_SENTENCES,
    bleu_by_length,
    chrf,
    corpus_bleu,
    length_table,
    perplexity,
    sentence_bleu,
    ter,
    tokenized_bleu,
)
from core.evaluate.report import Table, write_html_report

REFS = ["The cat sat on the mat .", "A dog barked at the postman today ."]


def test_identical_text():
    b = corpus_bleu(REFS, REFS)
    assert b.score == pytest.approx(100.0)
    assert "tok:13a" in b.signature and "nrefs:1" in b.signature
    assert chrf(REFS, REFS).score == pytest.approx(100.0)
    assert ter(REFS, REFS).score == pytest.approx(0.0)


def test_tokenized_bleu_hand_case():
    # hyp "a b c d e f" vs ref "a b c d x f", tokenize none, BP = 1 (same length):
    # 1-grams 5/6, 2-grams 3/5 (ab bc cd), 3-grams 2/4 (abc bcd), 4-grams 1/3 (abcd)
    # BLEU = (5/6 * 3/5 * 1/2 * 1/3) ** (1/4) = (1/12) ** 0.25 = 0.537285
    s = tokenized_bleu([["a", "b", "c", "d", "e", "f"]], ["a b c d x f"])
    assert s.score == pytest.approx(100 * (1 / 12) ** 0.25, abs=1e-4)
    assert "tok:none" in s.signature


def test_matches_sacrebleu_functions():
    hyps = ["The cat is on the mat .", "A dog barked at the mailman ."]
    assert corpus_bleu(hyps, REFS).score == pytest.approx(
        sacrebleu.corpus_bleu(hyps, [REFS]).score)
    assert chrf(hyps, REFS).score == pytest.approx(sacrebleu.corpus_chrf(hyps, [REFS]).score)
    assert ter(hyps, REFS).score == pytest.approx(sacrebleu.corpus_ter(hyps, [REFS]).score)
    assert sentence_bleu(hyps[0], REFS[0]) == pytest.approx(
        sacrebleu.sentence_bleu(hyps[0], [REFS[0]]).score)
    # tokenisation matters: "mat." is one token without 13a
    assert corpus_bleu(["the mat."], ["the mat ."], tokenize="none").score < 100


def test_perplexity():
    # summed NLL = 10 ln 2 over 10 tokens -> exp(ln 2) = 2
    assert perplexity(10 * math.log(2), 10) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        perplexity(1.0, 0)


def test_bleu_by_length_buckets():
    srcs = [["w"] * n for n in (3, 12, 9, 25, 10)]
    refs = [f"sentence number {k} has enough words here" for k in range(5)]
    bad = list(refs)
    bad[1] = "something completely unrelated"  # only bucket [10, 20) suffers
    table = bleu_by_length(srcs, {"good": refs, "bad": bad}, refs,
                           buckets=[(0, 10), (10, 20), (20, 30), (30, None)])
    # lengths 3, 9 -> [0,10); 12, 10 -> [10,20); 25 -> [20,30); none >= 30
    assert table.counts == [2, 2, 1, 0]
    assert table.scores["good"] == [pytest.approx(100.0)] * 3 + [None]
    assert table.scores["bad"][0] == pytest.approx(100.0)
    assert table.scores["bad"][1] < 100.0
    assert table.scores["bad"][3] is None
    # bucket [10, 20) for "bad" is the corpus BLEU of sentences 2 and 5 (indices 1, 4)
    assert table.scores["bad"][1] == pytest.approx(
        sacrebleu.corpus_bleu([bad[1], bad[4]], [[refs[1], refs[4]]]).score)
    t = table.to_table()
    assert t.columns == ["bucket", "sentences", "good", "bad", "note"]
    assert [r[:2] for r in t.rows] == [["0-9", 2], ["10-19", 2], ["20-29", 1], ["30+", 0]]
    # buckets of fewer than 10 sentences are marked; an empty one has no BLEU to doubt
    assert [r[-1] for r in t.rows] == [FEW_SENTENCES] * 3 + [""]
    with pytest.raises(ValueError, match="sentence 4"):
        bleu_by_length(srcs, {"good": refs}, refs, buckets=[(0, 20)])


def test_report_formats(tmp_path):
    t = Table(["system", "BLEU"], [["a|b", 12.345], ["c", None]], title="T")
    assert t.to_csv() == "system,BLEU\na|b,12.345\nc,\n"
    md = t.to_markdown().splitlines()
    assert md[2] == "| system | BLEU |" and md[4] == "| a\\|b | 12.35 |" and md[5] == "| c | – |"
    data = json.loads(t.save(tmp_path / "r.json").read_text())
    assert data["rows"] == [{"system": "a|b", "BLEU": 12.345}, {"system": "c", "BLEU": None}]
    assert (t.save(tmp_path / "r.csv")).read_text() == t.to_csv()
    with pytest.raises(ConfigError, match="r.xlsx"):
        t.save(tmp_path / "r.xlsx")
    page = write_html_report(tmp_path / "r.html", [t], title="A <report>").read_text()
    assert "<h1>A &lt;report&gt;</h1>" in page
    assert "<tr><td>a|b</td><td>12.35</td></tr>" in page and "<td>–</td>" in page


def test_report_column_formats_and_embedded_figures(tmp_path):
    import base64

    t = Table(["system", "AER %", "BLEU"], [["a", 70.3125, 12.345]], formats={"AER %": ".1f"})
    assert "| a | 70.3 | 12.35 |" in t.to_markdown()
    assert "<td>70.3</td><td>12.35</td>" in t.to_html()
    png = b"\x89PNG\r\n\x1a\nnot really"
    page = write_html_report(tmp_path / "r.html", [t], figures=[("Dev <ppl>", png)]).read_text()
    assert f'src="data:image/png;base64,{base64.b64encode(png).decode()}"' in page
    assert "<figcaption>Dev &lt;ppl&gt;</figcaption>" in page
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]


def test_length_table_from_stored_evaluations_counts_and_marks_small_buckets():
    one = ("a", {"0-9": 30.0, "10-19": 25.5, "20+": 12.0}, {"0-9": 120, "10-19": 40, "20+": 4})
    two = ("b", {"0-9": 28.0, "10-19": 21.0, "20+": None}, {"0-9": 120, "10-19": 9, "20+": 0})
    t = length_table([one, two])
    assert t.columns == ["bucket", "sentences", "a", "b", "note"]
    assert t.rows == [["0-9", 120, 30.0, 28.0, ""],
                      ["10-19", "40 / 9", 25.5, 21.0, FEW_SENTENCES],
                      ["20+", "4 / 0", 12.0, None, FEW_SENTENCES]]
    assert "<td>40 / 9</td>" in t.to_html() and "fewer than 10 sentences" in t.to_html()

"""AER / precision / recall on hand-worked cases."""
from __future__ import annotations

import pytest

from core.evaluate.aer import corpus_aer, sentence_aer
from core.evaluate.alignment import Alignment

# Gold: S = {(0,0), (1,1)}, P = S + {(1,2), (2,2)}  -> |S| = 2, |P| = 4
GOLD = Alignment(sure={(0, 0), (1, 1)}, possible={(1, 2), (2, 2)})


def test_possible_includes_sure():
    assert GOLD.possible == {(0, 0), (1, 1), (1, 2), (2, 2)}


def test_mixed_sure_and_possible():
    # A = {(0,0), (1,2), (2,1)}: |A| = 3, A n S = {(0,0)} -> 1, A n P = {(0,0),(1,2)} -> 2
    # AER = 1 - (1 + 2) / (3 + 2) = 0.4; precision = 2/3; recall = 1/2
    r = sentence_aer({(0, 0), (1, 2), (2, 1)}, GOLD)
    assert r.aer == pytest.approx(0.4)
    assert r.precision == pytest.approx(2 / 3)
    assert r.recall == pytest.approx(0.5)


def test_possible_only_links_in_prediction():
    # A = {(1,2), (2,2)} (both possible-only): A n S = 0, A n P = 2
    # AER = 1 - (0 + 2) / (2 + 2) = 0.5; precision = 1; recall = 0
    r = sentence_aer(Alignment.of({(1, 2), (2, 2)}), GOLD)
    assert r.aer == pytest.approx(0.5)
    assert r.precision == 1.0
    assert r.recall == 0.0


def test_empty_prediction():
    # A empty, |S| = 2: AER = 1 - 0/2 = 1; precision defined as 1 (nothing wrong proposed)
    r = sentence_aer(set(), GOLD)
    assert (r.aer, r.precision, r.recall) == (1.0, 1.0, 0.0)


def test_empty_sure_set():
    # S empty, P = {(0,1)}; A = {(0,1), (1,1)}: A n P = 1 -> AER = 1 - 1/2 = 0.5,
    # precision = 1/2, recall defined as 1 (no sure link to miss)
    gold = Alignment(sure=set(), possible={(0, 1)})
    r = sentence_aer({(0, 1), (1, 1)}, gold)
    assert r.aer == pytest.approx(0.5)
    assert r.precision == pytest.approx(0.5)
    assert r.recall == 1.0


def test_both_empty():
    r = sentence_aer(set(), Alignment())
    assert (r.aer, r.precision, r.recall) == (0.0, 1.0, 1.0)


def test_corpus_aer_pools_counts_not_ratios():
    # sentence 1: as in test_mixed: |A|=3, |S|=2, AnS=1, AnP=2 -> AER 0.4
    # sentence 2: gold S = {(0,0)}, A empty -> AER 1.0
    # mean of ratios = 0.7, corpus = 1 - (1 + 2) / (3 + 3) = 0.5
    preds = [{(0, 0), (1, 2), (2, 1)}, set()]
    golds = [GOLD, Alignment(sure={(0, 0)})]
    per = [sentence_aer(p, g).aer for p, g in zip(preds, golds, strict=True)]
    assert sum(per) / 2 == pytest.approx(0.7)
    c = corpus_aer(preds, golds)
    assert c.aer == pytest.approx(0.5)
    assert c.precision == pytest.approx(2 / 3)  # 2 / 3 proposed
    assert c.recall == pytest.approx(1 / 3)     # 1 / 3 sure


def test_corpus_length_mismatch():
    with pytest.raises(ValueError):
        corpus_aer([set()], [GOLD, GOLD])

"""eflomal baseline on WPT-03 trial gold + the first 10k Hansards pairs, and the
bilingual dictionary."""
from __future__ import annotations

import itertools
from collections import Counter

import pytest

from core.evaluate.aer import corpus_aer
from core.evaluate.alignment import Alignment, read_talp
from core.evaluate.baseline import Dictionary, align_with_training, build_dictionary

WPT = "gold-en-fr-wpt03-trial"
N_TRAIN = 10_000  # 20k gives gdfa AER ~0.10 but takes ~2x as long


def _lower_tokens(path, n=None):
    with open(path, encoding="utf-8") as f:
        return [line.lower().split() for line in itertools.islice(f, n)]


@pytest.mark.slow
def test_eflomal_aer_on_wpt_trial(shared):
    en = _lower_tokens(shared("hansards-en-fr-300k", "train.en"), N_TRAIN)
    fr = _lower_tokens(shared("hansards-en-fr-300k", "train.fr"), N_TRAIN)
    gen = _lower_tokens(shared(WPT, "trial.en"))
    gfr = _lower_tokens(shared(WPT, "trial.fr"))
    gold = read_talp(shared(WPT, "trial.talp"), src_tokens=gen, tgt_tokens=gfr)
    gold_al, train_al = align_with_training(en, fr, gen, gfr, n_samplers=1)
    assert len(gold_al.forward) == 37 and len(train_al.forward) == N_TRAIN
    # the forward model links each French (target) word to at most one English word
    for a in gold_al.forward:
        tgt = [t for _, t in a.links]
        assert len(tgt) == len(set(tgt))
    inter = corpus_aer(gold_al.symmetrized("intersection"), gold)
    union = corpus_aer(gold_al.symmetrized("union"), gold)
    gdfa = corpus_aer(gold_al.symmetrized("grow-diag-final-and"), gold)
    # measured ~0.12 (gdfa), 0.11 (intersection); a poor aligner scores > 0.35
    assert gdfa.aer < 0.35
    assert inter.precision > union.precision and union.recall > inter.recall
    # dictionary from the training corpus alignments
    d = build_dictionary(en, fr, train_al.symmetrized("intersection"))
    assert d.best("government") == "gouvernement"
    assert d.best("minister") == "ministre"


def test_dictionary_hand_case(tmp_path):
    src = [["the", "house"], ["the", "house", "votes"], ["house"]]
    tgt = [["la", "chambre"], ["la", "chambre", "vote"], ["maison"]]
    als = [Alignment.of({(0, 0), (1, 1)}), Alignment.of({(0, 0), (1, 1), (2, 2)}),
           Alignment.of({(0, 0)})]
    d = build_dictionary(src, tgt, als)
    # house: chambre x2, maison x1
    assert d.counts["house"] == Counter({"chambre": 2, "maison": 1})
    assert d.best("house") == "chambre" and d.best("dog") is None
    back = Dictionary.load(d.save(tmp_path / "dict.tsv"))
    assert (tmp_path / "dict.tsv").read_text().splitlines()[0] == "house\tchambre\t2\t3"
    assert back.best("votes") == "vote" and len(back) == 3
    assert d.as_dict() == {"the": "la", "house": "chambre", "votes": "vote"}
    assert d.as_dict(min_count=2) == {"the": "la", "house": "chambre"}

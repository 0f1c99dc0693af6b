"""How a run reads a gold set of a language pair (core.evaluate.goldsets): as it is,
from the other side (a run of the reversed pair), or not at all (another pair); and the
symmetrisation with a reverse-direction run's links given in that run's orientation."""
from __future__ import annotations

import pytest

from core.errors import ConfigError
from core.evaluate.aer import corpus_aer
from core.evaluate.alignment import Alignment
from core.evaluate.attention_aer import gold_for_run, symmetrize_with_reverse
from core.evaluate.goldsets import (
    NO_MATCH,
    REVERSED,
    SAME,
    GoldSet,
    gold_orientation,
    orientation_note,
)

GOLD = GoldSet("wpt", [["the", "house"], ["yes"]], [["la", "maison", "bleue"], ["oui"]],
               [Alignment({(0, 0), (1, 1)}, {(1, 2)}), Alignment({(0, 0)})], "en", "fr")


@pytest.mark.parametrize("run, gold, found", [
    (("en", "fr"), ("en", "fr"), SAME), (("fr", "en"), ("en", "fr"), REVERSED),
    (("es", "en"), ("en", "fr"), NO_MATCH), (("en", "es"), ("en", "fr"), NO_MATCH),
    (("FR ", "en"), ("en", "fr"), REVERSED),  # as typed on import
    (("", ""), ("en", "fr"), SAME), (("es", "en"), ("", ""), SAME),  # not known: as it is
])
def test_gold_orientation(run, gold, found):
    assert gold_orientation(run, gold) == found


def test_gold_for_run_reads_the_gold_from_the_run_side():
    assert gold_for_run(GOLD, ("en", "fr")) is GOLD
    rev = gold_for_run(GOLD, ("fr", "en"))
    assert (rev.src_lang, rev.tgt_lang) == ("fr", "en")
    assert rev.src_tokens == GOLD.tgt_tokens and rev.tgt_tokens == GOLD.src_tokens
    assert rev.alignments[0].sure == {(0, 0), (1, 1)} and rev.alignments[0].possible == {
        (0, 0), (1, 1), (2, 1)}
    # the same AER either way round
    pred = [Alignment.of({(0, 0), (1, 2)}), Alignment.of({(0, 0)})]
    assert corpus_aer(pred, GOLD.alignments).aer == pytest.approx(
        corpus_aer([p.swapped() for p in pred], rev.alignments).aer)
    with pytest.raises(ConfigError, match="es -> en run; gold set wpt is en -> fr: give a "
                       "gold set of es -> en"):
        gold_for_run(GOLD, ("es", "en"))


def test_orientation_note():
    assert orientation_note(("es", "en"), "wpt03-trial", ("en", "fr")) == \
        "es -> en run; gold set wpt03-trial is en -> fr"


def test_symmetrize_with_reverse_turns_the_reverse_links_round():
    fwd = [Alignment.of({(0, 0), (1, 1), (2, 1)})]  # (src, tgt)
    rev = [{(0, 0), (1, 1), (1, 2)}]  # the reverse run's (its src = our tgt, its tgt = our src)
    assert symmetrize_with_reverse(fwd, rev, "intersection")[0].sure == {(0, 0), (1, 1),
                                                                         (2, 1)}
    assert symmetrize_with_reverse(fwd, [{(1, 0)}], "intersection")[0].sure == set()
    assert symmetrize_with_reverse(fwd, [{(1, 0)}], "union")[0].sure == {(0, 0), (1, 1),
                                                                         (2, 1), (0, 1)}

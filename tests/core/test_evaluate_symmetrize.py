"""Symmetrisation heuristics on a hand-worked example, plus properties on random input."""
from __future__ import annotations

import random

import pytest

from core.evaluate.symmetrize import symmetrize

# 5 source x 5 target words, links (src, tgt).
# fwd (src->tgt model, each target word has <= 1 source word):
FWD = {(0, 0), (1, 1), (2, 2), (4, 3)}
# rev (tgt->src model turned to (src, tgt), each source word has <= 1 target word):
REV = {(0, 0), (1, 1), (3, 0), (4, 4)}
#
#          tgt 0  1  2  3  4
#   src 0      B  .  .  .  .      B = both, F = fwd only, R = rev only
#   src 1      .  B  .  .  .
#   src 2      .  .  F  .  .
#   src 3      R  .  .  .  .
#   src 4      .  .  .  F  R
#
# intersection = {(0,0), (1,1)}; union = all six points.
# grow (side neighbours only): no union point touches (0,0) or (1,1) horizontally or
#   vertically -> stays the intersection.
# grow-diag: (1,1)'s diagonal neighbour (2,2) is in the union and src 2 is unaligned
#   -> added; (2,2) has no further union neighbour; (3,0), (4,3), (4,4) touch nothing.
#   -> {(0,0), (1,1), (2,2)}
# grow-diag-final: FINAL(fwd): (4,3) src 4 unaligned -> added. FINAL(rev): (3,0) src 3
#   unaligned -> added (tgt 0 is aligned, but OR); (4,4) tgt 4 unaligned -> added.
#   -> union
# grow-diag-final-and: FINAL(fwd): (4,3) both words unaligned -> added. FINAL(rev):
#   (3,0) tgt 0 aligned -> no; (4,4) src 4 now aligned -> no.
#   -> {(0,0), (1,1), (2,2), (4,3)}
EXPECTED = {
    "intersection": {(0, 0), (1, 1)},
    "union": {(0, 0), (1, 1), (2, 2), (3, 0), (4, 3), (4, 4)},
    "grow": {(0, 0), (1, 1)},
    "grow-diag": {(0, 0), (1, 1), (2, 2)},
    "grow-diag-final": {(0, 0), (1, 1), (2, 2), (3, 0), (4, 3), (4, 4)},
    "grow-diag-final-and": {(0, 0), (1, 1), (2, 2), (4, 3)},
}


@pytest.mark.parametrize("heuristic", sorted(EXPECTED))
def test_worked_example(heuristic):
    assert symmetrize(FWD, REV, heuristic).links == EXPECTED[heuristic]


def test_grow_side_neighbour_and_chain():
    # fwd = {(0,0), (0,1), (2,2)}, rev = {(0,0), (1,1), (2,2)}
    # intersection {(0,0), (2,2)}; union adds (0,1), (1,1).
    # grow: (0,0)'s side neighbour (0,1) is in the union, tgt 1 unaligned -> added;
    #   then (0,1)'s side neighbour (1,1): src 1 unaligned -> added in the same sweep
    #   (points added to a row are visited later in the sweep).
    fwd, rev = {(0, 0), (0, 1), (2, 2)}, {(0, 0), (1, 1), (2, 2)}
    assert symmetrize(fwd, rev, "grow").links == {(0, 0), (0, 1), (1, 1), (2, 2)}


def test_unknown_heuristic():
    with pytest.raises(ValueError, match="grow-diag-final-and"):
        symmetrize(FWD, REV, "grow-diagonal")


def _random_directional(rng: random.Random, n_src: int, n_tgt: int):
    fwd = {(rng.randrange(n_src), t) for t in range(n_tgt) if rng.random() < 0.8}
    rev = {(s, rng.randrange(n_tgt)) for s in range(n_src) if rng.random() < 0.8}
    return fwd, rev


def test_heuristics_are_nested_on_random_alignments():
    rng = random.Random(7)
    for _ in range(200):
        fwd, rev = _random_directional(rng, rng.randint(1, 8), rng.randint(1, 8))
        res = {h: symmetrize(fwd, rev, h).links for h in EXPECTED}
        assert res["intersection"] == fwd & rev
        assert res["union"] == fwd | rev
        # The chain that holds by construction (growing and FINAL only add union points).
        # Not asserted: grow <= grow-diag and gdfa <= gdf, which order effects can break
        # (a point added early can leave a later candidate with both words aligned).
        assert res["intersection"] <= res["grow-diag"] <= res["grow-diag-final"] <= res["union"]
        assert res["grow-diag"] <= res["grow-diag-final-and"] <= res["union"]
        assert res["intersection"] <= res["grow"] <= res["union"]
        # FINAL leaves no word of fwd or rev unaligned that a point could have covered
        gdf = res["grow-diag-final"]
        src_al, tgt_al = {s for s, _ in gdf}, {t for _, t in gdf}
        for s, t in fwd | rev:
            assert s in src_al and t in tgt_al

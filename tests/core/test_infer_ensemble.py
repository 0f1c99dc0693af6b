"""Ensembles decode through the unchanged search and forced decoding."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.errors import ConfigError
from core.infer.beam import beam_search
from core.infer.ensemble import Ensemble
from core.infer.forced import score_targets
from core.infer.greedy import greedy
from tests.core.toy_models import ToyAttnModel

SRC = torch.tensor([[4, 5, 6, 7, 8], [5, 6, 7, 0, 0], [9, 4, 10, 11, 0]])
LENS = torch.tensor([5, 3, 4])


@pytest.fixture(scope="module")
def pair():
    return ToyAttnModel(seed=3, with_positions=True), ToyAttnModel(seed=4, with_positions=True)


def test_ensemble_of_one_is_the_model(pair):
    model = pair[0]
    ens = Ensemble([model])
    for got, want in zip(beam_search(ens, SRC, LENS, beam=3, n_best=2),
                         beam_search(model, SRC, LENS, beam=3, n_best=2), strict=True):
        assert [h.tokens for h in got] == [h.tokens for h in want]
        assert [h.score for h in got] == [h.score for h in want]
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g.attention, w.attention)
            np.testing.assert_array_equal(g.positions, w.positions)


def test_ensemble_of_two_differs_and_averages(pair):
    a, b = pair
    ens = Ensemble([a, b])
    outs = [greedy(m, SRC, LENS) for m in (ens, a, b)]
    assert [h.tokens for h in outs[0]] != [h.tokens for h in outs[1]]
    assert [h.tokens for h in outs[0]] != [h.tokens for h in outs[2]]
    # forced scores: the ensemble's token log-probs are log-softmax of the mean of the
    # members' log-probs, and its attention is their mean
    tgt = [[5, 6], [7], [8, 9, 4]]
    tgt_in = torch.tensor([[2, 5, 6, 0], [2, 7, 0, 0], [2, 8, 9, 4]])
    with torch.inference_mode():
        la, lb = a(SRC, LENS, tgt_in), b(SRC, LENS, tgt_in)
    mixed = torch.log_softmax((la.log_probs + lb.log_probs) / 2, -1)
    forced = score_targets(ens, SRC, LENS, tgt)
    for i, ids in enumerate(tgt):
        gold = [*ids, 3]
        want = [float(mixed[i, t, y]) for t, y in enumerate(gold)]
        np.testing.assert_allclose(forced[i].token_log_probs, want, atol=1e-5)
        att = ((la.attention + lb.attention) / 2)[i, : len(gold), : int(LENS[i])]
        np.testing.assert_allclose(forced[i].attention, att.numpy(), atol=1e-6)
        np.testing.assert_allclose(forced[i].attention.sum(1), 1.0, atol=1e-5)


def test_ensemble_beam_matches_forced_and_greedy(pair):
    ens = Ensemble(list(pair))
    g = greedy(ens, SRC, LENS)
    b = beam_search(ens, SRC, LENS, beam=1)
    assert [h.tokens for h in g] == [h[0].tokens for h in b]
    top = [h[0] for h in beam_search(ens, SRC, LENS, beam=4)]
    forced = score_targets(ens, SRC, LENS, [h.tokens for h in top])
    for h, f in zip(top, forced, strict=True):
        assert h.log_prob == pytest.approx(f.log_prob, abs=1e-4)
        np.testing.assert_allclose(h.attention, f.attention, atol=1e-5)


def test_members_must_share_target_vocabulary():
    with pytest.raises(ConfigError, match="target vocabulary"):
        Ensemble([ToyAttnModel(tgt_vocab=12), ToyAttnModel(tgt_vocab=13)])
    with pytest.raises(ConfigError):
        Ensemble([])

"""Every real model family through greedy, beam search, forced decoding and ensembles
(small random-initialised models: the properties hold for any weights)."""
from __future__ import annotations

import numpy as np
import pytest

from core.errors import ConfigError
from core.infer.beam import beam_search
from core.infer.ensemble import Ensemble
from core.infer.forced import score_targets
from core.infer.greedy import greedy
from core.models.registry import build_model
from tests.core.family_models import NAMES, VOCAB, family_config, inputs, model_for


@pytest.mark.parametrize("name", NAMES)
def test_search_properties_for_every_variant(name):
    model = model_for(name)
    src, lens, extra = inputs()
    g = greedy(model, src, lens, max_len_ratio=1.0, **extra)
    b1 = beam_search(model, src, lens, beam=1, max_len_ratio=1.0, **extra)
    for gh, (bh,) in zip(g, b1, strict=True):
        assert gh.tokens == bh.tokens
        assert gh.score == pytest.approx(bh.score, abs=1e-6)
    nbest = beam_search(model, src, lens, beam=3, n_best=3, max_len_ratio=1.0, **extra)
    attends = family_config(name).attention != "none"
    for b, hyps in enumerate(nbest):
        assert len(hyps) == 3
        assert len({tuple(h.tokens) for h in hyps}) == 3
        assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
        assert hyps[0].score >= g[b].score - 1e-5
        n = len(hyps)
        rep = {k: v[b : b + 1].expand(n, -1) if v.dim() == 2 else v[b : b + 1].expand(n)
               for k, v in extra.items()}
        forced = score_targets(model, src[b : b + 1].expand(n, -1), lens[b : b + 1].expand(n),
                               [h.tokens for h in hyps], **rep)
        for h, f in zip(hyps, forced, strict=True):
            assert h.log_prob == pytest.approx(f.log_prob, abs=1e-4)
            assert h.attention.shape == (len(h.tokens) + 1, int(lens[b]))
            np.testing.assert_allclose(h.attention, f.attention, atol=1e-5)
            if attends:
                np.testing.assert_allclose(h.attention.sum(1), 1.0, atol=1e-5)
            else:
                assert not h.attention.any()
            if f.positions is not None:
                np.testing.assert_allclose(h.positions, f.positions, atol=1e-4)
    # the second sentence alone (no padding) decodes the same
    alone = beam_search(model, src[1:2, :4], lens[1:2], beam=3, n_best=3, max_len_ratio=1.0,
                        **{k: v[1:2] for k, v in extra.items()})[0]
    assert [h.tokens for h in alone] == [h.tokens for h in nbest[1]]
    np.testing.assert_allclose([h.score for h in alone], [h.score for h in nbest[1]], atol=1e-5)


def test_ensemble_across_families_scores_like_forced():
    members = [model_for("luong-local-p-general", 1), model_for("rnnsearch", 2),
               model_for("transformer", 3)]
    ens = Ensemble(members)
    src, lens, extra = inputs()
    top = [h[0] for h in beam_search(ens, src, lens, beam=3, max_len_ratio=1.0, **extra)]
    forced = score_targets(ens, src, lens, [h.tokens for h in top], **extra)
    for h, f in zip(top, forced, strict=True):
        assert h.log_prob == pytest.approx(f.log_prob, abs=1e-4)
        np.testing.assert_allclose(h.attention, f.attention, atol=1e-5)
        np.testing.assert_allclose(h.attention.sum(1), 1.0, atol=1e-5)
        assert h.positions is not None  # from the local-p member
    single = [greedy(m, src, lens, max_len_ratio=1.0, **extra) for m in members]
    ens_g = greedy(ens, src, lens, max_len_ratio=1.0, **extra)
    for s in single:
        assert [h.tokens for h in s] != [h.tokens for h in ens_g] or [
            h.score for h in s] != pytest.approx([h.score for h in ens_g], abs=1e-4)


def test_ensemble_refuses_different_target_vocabularies():
    with pytest.raises(ConfigError, match="same target vocabulary"):
        Ensemble([build_model(family_config("luong-global-dot"), VOCAB, VOCAB),
                  build_model(family_config("transformer"), VOCAB, VOCAB + 1)])

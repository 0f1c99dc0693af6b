"""Forced decoding of the Transformer families reports every decoder layer's and head's
cross-attention (`ForcedResult.layer_attention`, layers x heads x tgt x src), cut like
the averaged attention, whose definition (last layer, mean over heads) stays as it was;
RNN models and ensembles give None."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.config import ModelConfig
from core.infer.ensemble import Ensemble
from core.infer.forced import score_targets, teacher_forcing_tensors
from core.models.registry import build_model, variant_config
from tests.core.family_models import inputs

TRANSFORMERS = ["transformer", "concat", "context_transformer"]
LAYERS, HEADS, VOCAB = 3, 4, 20
TARGETS = [[5, 6, 7, 8, 9], [10, 11], [12, 13, 14]]


def model_for(name: str, seed: int = 0):
    torch.manual_seed(seed)
    if name in TRANSFORMERS:
        cfg = ModelConfig(family=name, d_model=16, ff_size=32, heads=HEADS, enc_layers=2,
                          dec_layers=LAYERS, ctx_layers=1, dropout=0.0)
    else:
        cfg = variant_config(name, emb_size=16, hidden_size=16, layers=1, dropout=0.0,
                             window=2, max_src_len=12)
    return build_model(cfg, VOCAB, VOCAB).eval()


@pytest.mark.parametrize("family", TRANSFORMERS)
def test_forced_layer_attention_shape_rows_and_mean(family):
    model, (src, lens, extra) = model_for(family), inputs()
    results = score_targets(model, src, lens, TARGETS, **extra)
    # the padded forward pass: zero on padded sources, heads' mean = the averaged attention
    tgt_in, _ = teacher_forcing_tensors(TARGETS, torch.device("cpu"))
    with torch.no_grad():
        out = model(src, lens, tgt_in, **extra)
    layers = out.layer_attention
    assert layers.shape == (LAYERS, 3, HEADS, tgt_in.size(1), 7)
    pad = torch.arange(7)[None, :] >= lens[:, None]  # batch x src
    assert torch.all(layers.masked_select(pad[None, :, None, None, :]) == 0)
    assert torch.equal(layers[-1].mean(dim=1), out.attention)
    assert torch.equal(layers, model.last_cross_attention)
    for b, (res, ids) in enumerate(zip(results, TARGETS, strict=True)):
        n, s = len(ids) + 1, int(lens[b])
        la = res.layer_attention
        assert la.shape == (LAYERS, HEADS, n, s) and la.dtype == np.float32
        np.testing.assert_allclose(la.sum(-1), 1.0, atol=1e-5)
        assert np.all(la > 0)  # no padding left, softmax weights of real tokens
        # the averaged attention is still today's: the last layer's mean over heads
        np.testing.assert_array_equal(res.attention, out.attention[b, :n, :s].numpy())
        np.testing.assert_allclose(la[-1].mean(0), res.attention, atol=1e-6)
        # and the heads differ (a real per-head view, not the average repeated)
        assert not np.allclose(la[0, 0], la[0, 1], atol=1e-3)
        assert not np.allclose(la[0], la[-1], atol=1e-3)


def test_concat_layer_attention_is_the_sentence_slice_renormalised_per_head():
    model, (src, lens, extra) = model_for("concat"), inputs()
    results = score_targets(model, src, lens, TARGETS, **extra)
    full = model.last_cross_attention_full  # layers x batch x heads x T x (ctx + break + src)
    offsets = extra["ctx_lens"] + 1
    for b, (res, ids) in enumerate(zip(results, TARGETS, strict=True)):
        n, s, start = len(ids) + 1, int(lens[b]), int(offsets[b])
        piece = full[:, b, :, :n, start:start + s]
        piece = (piece / piece.sum(-1, keepdim=True)).numpy()
        np.testing.assert_allclose(res.layer_attention, piece, atol=1e-5)


@pytest.mark.parametrize("name", ["luong-global-general", "luong-local-p-general", "rnnsearch"])
def test_rnn_forced_results_have_no_layer_attention(name):
    model, (src, lens, _) = model_for(name), inputs()
    results = score_targets(model, src, lens, TARGETS)
    assert all(r.layer_attention is None for r in results)
    assert all(r.attention.shape == (len(t) + 1, int(n)) for r, t, n in
               zip(results, TARGETS, lens, strict=True))


def test_ensemble_forced_results_have_no_layer_attention():
    ens = Ensemble([model_for("transformer", 1), model_for("transformer", 2)])
    src, lens, _ = inputs()
    results = score_targets(ens, src, lens, TARGETS)
    assert all(r.layer_attention is None for r in results)

"""`runs import` of an OpenNMT-py 3.x Transformer (core.services.onmt_tf): the imported
`transformer` run (pre-norm, LayerNorm eps 1e-6, a generator bias) scores, translates and
attends as OpenNMT-py 3.5.1 does on the same checkpoint and sentences
(tests/fixtures/onmt/transformer, made by experiments/onmt_fixtures.sh: 2 + 2 layers,
d_model 24, 4 heads, feed-forward 48, OpenNMT-py's default of no q/k/v and feed-forward
biases, 160 words a side, weights stored as float16; the 200 Tatoeba es->en test
sentences of the RNN kinds); what
it cannot compute is refused naming the option. The existing transformer runs compute as
before: the new options default to post-norm, eps 1e-5, no generator bias
(tests/core/test_models*.py)."""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest
import torch

from core.config import ModelConfig
from core.errors import ConfigError
from core.infer.scoring import ForcedScorer
from core.infer.translate import translate_sentences
from core.models.transformer import Transformer
from core.services.model_import import import_model
from core.train.artifacts import load_model
from core.workspace.store import Workspace
from tests.core import onmt_logs
from tests.core.onmt_logs import FIXTURES

KIND = "transformer"
TOL = 1e-4  # OpenNMT-py prints scores with 4 decimals


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """The imported run's LoadedModel."""
    with Workspace.open(tmp_path_factory.mktemp("ws")) as ws:
        run = import_model(ws, FIXTURES / KIND / "model.pt", name=KIND)
        yield load_model(ws.run_dir(run), "last")


def _scorer(m) -> ForcedScorer:
    return ForcedScorer(m.model, m.src_vocab, m.tgt_vocab, m.src_pre, m.tgt_pre)


def test_the_run_is_a_pre_norm_transformer_with_onmt_options(loaded):
    model = loaded.config.model
    assert (model.family, model.pre_norm, model.norm_eps, model.generator_bias) == \
        ("transformer", True, 1e-6, True)
    assert (model.d_model, model.heads, model.ff_size, model.enc_layers, model.dec_layers,
            model.tie_embeddings) == (24, 4, 48, 2, 2, False)
    assert isinstance(loaded.model, Transformer)
    assert loaded.tgt_vocab.itos[:4] == ["<pad>", "<unk>", "<s>", "</s>"]


def test_gold_scores_match_onmt_translate(loaded):
    """Each sentence's log-probability of its reference is OpenNMT-py's GOLD SCORE."""
    src, ref = onmt_logs.sentences()
    scorer = _scorer(loaded)
    ours = np.array([r.log_prob for r in scorer.score(
        [scorer.item(s, t) for s, t in zip(src, ref, strict=True)])])
    theirs = np.array([line.gold_score for line in onmt_logs.beam_log(KIND)])
    assert len(ours) == len(theirs) == 200
    assert np.abs(ours - theirs).max() <= TOL


def test_beam5_translations_match_onmt_translate(loaded):
    """Beam 5 in OpenNMT-py's style gives its translations and PRED SCOREs; a different
    translation must be a tie (the same score to 1e-4), counted."""
    src, _ = onmt_logs.sentences()
    logged = onmt_logs.beam_log(KIND)
    m = loaded
    ours = translate_sentences(m.model, m.src_vocab, m.tgt_vocab, m.src_pre, m.tgt_pre, src,
                               beam=5, max_len_ratio=100.0, max_len_abs=99, onmt_style=True)
    assert onmt_logs.beam_ties(ours, logged, _scorer(m), TOL) == 0


def test_greedy_translations_and_attention_match_attn_debug(loaded):
    """Greedy decoding gives OpenNMT-py's 200 greedy translations; -attn_debug prints the
    last decoder layer's FIRST head for a Transformer: the forced pass's
    layer_attention[-1, 0] equals it to 1e-4 on the first 100 (the fixture keeps those);
    the mean over heads, what the workbench shows by default, does not."""
    src, _ = onmt_logs.sentences()
    greedy = onmt_logs.lines(KIND, "greedy.txt")
    matrices = onmt_logs.attention_log(KIND)
    m = loaded
    ours = translate_sentences(m.model, m.src_vocab, m.tgt_vocab, m.src_pre, m.tgt_pre, src,
                               beam=1, max_len_ratio=100.0, max_len_abs=99)
    assert [" ".join(t.target_tokens) for t in ours] == greedy
    scorer = _scorer(m)
    forced = scorer.score([scorer.item(s, t) for s, t in zip(src, greedy, strict=True)])
    assert len(forced) == 200 and len(matrices) == 100
    worst_mean = 0.0
    for result, theirs in zip(forced[:100], matrices, strict=True):
        first_head = result.layer_attention[-1, 0]
        assert first_head.shape == theirs.shape
        assert np.abs(first_head - theirs).max() <= TOL
        worst_mean = max(worst_mean, float(np.abs(result.attention - theirs).max()))
    assert worst_mean > 0.01


def _altered(tmp_path: Path, **options) -> Path:
    with torch.serialization.safe_globals([argparse.Namespace]):
        raw = torch.load(FIXTURES / KIND / "model.pt", weights_only=True, map_location="cpu")
    for key, value in options.items():
        setattr(raw["opt"], key, value)
    path = tmp_path / "altered.pt"
    torch.save(raw, path)
    return path


@pytest.mark.parametrize("options, named", [
    (dict(max_relative_positions=16), "max_relative_positions 16"),
    (dict(max_relative_positions=-1), "max_relative_positions -1"),
    (dict(position_encoding_type="SinusoidalConcat"), "position_encoding_type 'SinusoidalConcat'"),
    (dict(position_encoding=False), "position_encoding false"),
    (dict(layer_norm="rms"), "layer_norm 'rms'"),
    (dict(pos_ffn_activation_fn="gelu"), "pos_ffn_activation_fn 'gelu'"),
    (dict(self_attn_type="average"), "self_attn_type 'average'"),
    (dict(num_kv=2), "num_kv 2"),
    (dict(parallel_residual=True), "parallel_residual"),
    (dict(copy_attn=True), "copy_attn"),
    (dict(decoder_type="rnn"), "encoder_type 'transformer' / decoder_type 'rnn'"),
    (dict(transforms=["sentencepiece"], _all_transform={"sentencepiece"}),
     "transforms ['sentencepiece']"),
])
def test_what_cannot_be_computed_is_refused_naming_the_option(tmp_path, options, named):
    path = _altered(tmp_path, **options)
    with Workspace.open(tmp_path / "ws") as ws:
        with pytest.raises(ConfigError, match="altered.pt: ") as info:
            import_model(ws, path)
        assert named in str(info.value) and "not imported" in str(info.value)
        assert ws.list_runs() == []


def test_biases_map_by_name_and_shared_decoder_embeddings_tie(tmp_path):
    """The fixture has OpenNMT-py's default -add_qkvbias / -add_ffnbias off: its
    transformer's biases are zeros (and match OpenNMT-py's numbers above). With them on,
    each lands on its own weight; -share_decoder_embeddings ties the generator to the
    target embeddings (one matrix)."""
    with torch.serialization.safe_globals([argparse.Namespace]):
        raw = torch.load(FIXTURES / KIND / "model.pt", weights_only=True, map_location="cpu")
    with Workspace.open(tmp_path / "ws") as ws:
        plain = load_model(ws.run_dir(import_model(ws, FIXTURES / KIND / "model.pt")), "last")
    for name in ("encoder.0.self_attn.q_proj.bias", "decoder.1.cross_attn.out_proj.bias",
                 "decoder.0.ff.0.bias", "encoder.1.ff.3.bias"):
        assert torch.count_nonzero(plain.model.state_dict()[name]) == 0
    biases = {
        "encoder.transformer.0.self_attn.linear_query.bias": "encoder.0.self_attn.q_proj.bias",
        "encoder.transformer.1.feed_forward.w_2.bias": "encoder.1.ff.3.bias",
        "decoder.transformer_layers.1.context_attn.final_linear.bias":
            "decoder.1.cross_attn.out_proj.bias",
        "decoder.transformer_layers.0.self_attn.linear_values.bias":
            "decoder.0.self_attn.v_proj.bias",
        "decoder.transformer_layers.0.feed_forward.w_1.bias": "decoder.0.ff.0.bias"}
    generator = torch.Generator().manual_seed(0)
    for theirs, ours in biases.items():
        raw["model"][theirs] = torch.randn(plain.model.state_dict()[ours].shape,
                                           generator=generator)
    raw["generator"]["weight"] = raw["model"]["decoder." + "embeddings.make_embedding."
                                              "emb_luts.0.weight"].clone()
    raw["opt"].share_decoder_embeddings = True
    torch.save(raw, tmp_path / "biased.pt")
    with Workspace.open(tmp_path / "ws") as ws:
        m = load_model(ws.run_dir(import_model(ws, tmp_path / "biased.pt")), "last")
    weights = m.model.state_dict()
    for theirs, ours in biases.items():
        assert torch.equal(weights[ours], raw["model"][theirs].float())
    assert m.config.model.tie_embeddings
    assert m.model.generator.weight is m.model.tgt_embed.weight
    assert torch.count_nonzero(weights["generator.bias"]) > 0


def test_default_options_keep_the_post_norm_transformer():
    """The new options default to today's model: post-norm layers, eps 1e-5, no final
    norms, no generator bias: the same state dict names as before."""
    config = ModelConfig(family="transformer", d_model=16, heads=2, ff_size=32,
                         enc_layers=1, dec_layers=1, dropout=0.0)
    model = Transformer(config, 20, 20)
    names = set(model.state_dict())
    assert not any("encoder_norm" in n or "decoder_norm" in n for n in names)
    assert "generator.bias" not in names and model.encoder[0].norm1.eps == 1e-5
    with pytest.raises(ConfigError, match="model.pre_norm is read by the families"):
        ModelConfig(family="luong", pre_norm=True).validate()


def test_a_stored_position_table_must_be_the_sin_cos_one(tmp_path):
    """OpenNMT-py saves its position table (the fixture's copy dropped it); one that is
    not the sin/cos table the workbench computes is refused, a true one imports."""
    from core.errors import CheckpointError
    from core.models.transformer import SinusoidalPositions

    with torch.serialization.safe_globals([argparse.Namespace]):
        raw = torch.load(FIXTURES / KIND / "model.pt", weights_only=True, map_location="cpu")
    table = SinusoidalPositions(24, max_len=1)._make(300)[:, None]  # rows x 1 x d
    name = "decoder.embeddings.make_embedding.pe.pe"
    with Workspace.open(tmp_path / "ws") as ws:
        for stored, ok in ((table, True), (table * 1.01, False)):
            raw["model"][name] = stored
            torch.save(raw, tmp_path / "pe.pt")
            if ok:
                import_model(ws, tmp_path / "pe.pt")
                continue
            with pytest.raises(CheckpointError, match=f"pe.pt: its position table '{name}'"):
                import_model(ws, tmp_path / "pe.pt")
        assert len(ws.list_runs()) == 1

"""Typed configuration: presets reproduce the papers; typos are errors, not defaults."""
from __future__ import annotations

import pytest

from core.config import RunConfig, list_presets, load_config, load_preset
from core.errors import ConfigError


def test_every_preset_loads_and_validates():
    names = list_presets()
    assert {"luong-paper", "bahdanau-paper", "spa-eng-tutorial", "transformer-thesis"} <= set(names)
    for name in names:
        cfg = load_preset(name)
        assert cfg.name == name


def test_luong_paper_preset_has_the_papers_settings():
    cfg = load_preset("luong-paper")
    m, d, t = cfg.model, cfg.data, cfg.train
    assert (m.family, m.layers, m.hidden_size, m.attention, m.score) == ("luong", 4, 1000, "local-p", "general")
    assert m.window == 10 and m.input_feeding and m.reverse_source and m.dropout == 0.2
    assert (t.optimizer, t.lr, t.lr_decay, t.decay_start_epoch, t.epochs) == ("sgd", 1.0, 0.5, 8, 12)
    assert (d.batch_size, d.src_vocab_size, d.max_len, t.clip_norm) == (128, 50000, 50, 5.0)


def test_bahdanau_paper_preset():
    cfg = load_preset("bahdanau-paper")
    assert (cfg.model.family, cfg.model.hidden_size, cfg.train.optimizer, cfg.data.batch_size) == (
        "rnnsearch", 1000, "adadelta", 80)


def test_unknown_key_names_key_and_file(tmp_path):
    path = tmp_path / "typo.toml"
    path.write_text('[model]\nfamly = "luong"\n')
    with pytest.raises(ConfigError, match=r"typo\.toml.*famly"):
        load_config(path)


def test_bad_value_and_bad_toml(tmp_path):
    with pytest.raises(ConfigError, match="attention"):
        RunConfig.from_dict({"model": {"attention": "local-x"}})
    path = tmp_path / "broken.toml"
    path.write_text("[model\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path)
    with pytest.raises(ConfigError, match="no preset named 'nope'"):
        load_preset("nope")


def test_round_trip_through_dict():
    cfg = load_preset("luong-cpu")
    again = RunConfig.from_dict(cfg.to_dict())
    assert again == cfg


def test_ctx_following_defaults_to_0_and_is_validated():
    assert load_preset("context-ws-cpu").model.ctx_following == 0
    cfg = RunConfig.from_dict({"model": {"family": "context_transformer", "ctx_following": 2}})
    assert cfg.model.ctx_following == 2
    with pytest.raises(ConfigError, match=r"ctx_following must be in \[0, 100\], not -1"):
        RunConfig.from_dict({"model": {"family": "context_transformer", "ctx_following": -1}})
    # concat prepends previous sentences only: following ones are refused, not ignored
    with pytest.raises(ConfigError, match=r"ctx_following must be 0 for family 'concat'"):
        RunConfig.from_dict({"model": {"family": "concat", "ctx_following": 1}})


def test_target_context_two_stage_preset_matches_its_stage1_size():
    tgt, stage1 = load_preset("context-tgt-ts-cpu"), load_preset("transformer-cpu")
    m = tgt.model
    assert (m.family, m.strategy, m.ctx_side, tgt.train.stage) == ("context_transformer", "ts", "target", 2)
    # stage 2 copies the stage-1 weights: the shared sizes must be the same
    for key in ("d_model", "ff_size", "heads", "enc_layers", "dec_layers"):
        assert getattr(m, key) == getattr(stage1.model, key), key
    assert (tgt.data.src_vocab_size, tgt.data.tgt_vocab_size) == (
        stage1.data.src_vocab_size, stage1.data.tgt_vocab_size)

"""Two-stage (ts) training inside a workspace: stage-2 configs are checked up front,
stage 2 reuses the stage-1 run's vocabularies, and a run never stays 'running'."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import DataConfig, ModelConfig, RunConfig, TrainConfig, load_preset
from core.errors import ConfigError
from core.jobs import RecordingContext
from core.services.training import create_run, train_run

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"
SIZES = dict(d_model=16, ff_size=32, heads=2, enc_layers=1, dec_layers=1, ctx_layers=1,
             dropout=0.0)


def tiny_config(family: str, strategy: str = "ws", stage: int = 0, init_from: str = "",
                vocab_size: int = 300, steps: int = 4) -> RunConfig:
    return RunConfig(
        name=f"{family}-{stage}",
        model=ModelConfig(family=family, strategy=strategy, **SIZES),
        data=DataConfig(src_vocab_size=vocab_size, tgt_vocab_size=vocab_size, batch_size=32,
                        dev_sample=4),
        train=TrainConfig(optimizer="adam", lr=3e-3, max_steps=steps, valid_every=steps, seed=3,
                          device="cpu", epochs=100, stage=stage, init_from=init_from))


def test_stage2_with_weight_sharing_is_a_config_error():
    with pytest.raises(ConfigError, match="model.strategy = 'ts'"):
        tiny_config("context_transformer", "ws", stage=2).validate()


@pytest.mark.parametrize("family", ["transformer", "concat", "luong"])
def test_stage2_of_another_family_is_a_config_error(family):
    with pytest.raises(ConfigError, match="context_transformer"):
        tiny_config(family, "ts", stage=2).validate()


def test_stage_out_of_range_is_a_config_error():
    with pytest.raises(ConfigError, match="train.stage must be"):
        tiny_config("transformer", stage=3).validate()


def test_stage2_config_from_toml_and_preset_still_load():
    assert tiny_config("context_transformer", "ts", stage=2).validate().train.stage == 2
    assert load_preset("context-ts-cpu").train.stage == 2
    raw = tiny_config("context_transformer", "ws", stage=2).to_dict()
    with pytest.raises(ConfigError, match="strategy"):
        RunConfig.from_dict(raw)


def test_unexpected_exception_marks_the_run_failed(workspace, monkeypatch):
    import core.services.training as run_module

    def explode(*args, **kwargs):
        raise ValueError("something nobody expected")

    monkeypatch.setattr(run_module, "train_model", explode)
    run_id = create_run(workspace, "demo", tiny_config("transformer"))
    ctx = RecordingContext()
    with pytest.raises(ValueError):
        train_run(workspace, run_id, ctx)
    info = workspace.get_run(run_id)
    assert info.status == "failed"
    assert info.error == "ValueError: something nobody expected"
    assert ctx.of_kind("failed")[0].data["message"] == info.error


def test_bad_stored_config_marks_the_run_failed(workspace):
    run_id = create_run(workspace, "demo", tiny_config("transformer"))
    raw = tiny_config("context_transformer", "ws", stage=2).to_dict()  # invalid, stored anyway
    workspace.update_run(run_id, config=raw)
    with pytest.raises(ConfigError):
        train_run(workspace, run_id, RecordingContext())
    info = workspace.get_run(run_id)
    assert info.status == "failed" and "model.strategy = 'ts'" in info.error


def test_stage2_reuses_the_stage1_vocabularies(workspace):
    stage1 = create_run(workspace, "demo", tiny_config("transformer", stage=1, vocab_size=300))
    assert train_run(workspace, stage1, RecordingContext()).status == "finished"
    # stage 2's data section would build other (smaller, lowercased) vocabularies
    cfg = tiny_config("context_transformer", "ts", stage=2, init_from=workspace.get_run(stage1).name,
                      vocab_size=60)
    cfg.data.lowercase = True
    stage2 = create_run(workspace, "demo", cfg)
    ctx = RecordingContext()
    result = train_run(workspace, stage2, ctx)
    assert result.status == "finished" and workspace.get_run(stage2).status == "finished"
    one, two = workspace.run_dir(stage1), workspace.run_dir(stage2)
    for name in ("src.vocab", "tgt.vocab", "preprocess.json"):
        assert (two / name).read_text(encoding="utf-8") == (one / name).read_text(encoding="utf-8")
    assert len(json.loads((two / "src.vocab").read_text(encoding="utf-8"))["itos"]) > 60
    assert any("reusing the vocabularies and preprocessing of run" in e.data["message"]
               for e in ctx.of_kind("log"))
    # the stage-2 run loads back with the stage-1 ids
    from core.train.artifacts import load_model

    loaded = load_model(two, "best")
    assert loaded.config.model.family == "context_transformer"
    assert loaded.src_vocab.itos == load_model(one, "best").src_vocab.itos


def test_stage2_from_a_non_transformer_run_fails_with_a_reason(workspace):
    luong = RunConfig(name="luong", model=ModelConfig(family="luong", emb_size=8, hidden_size=8,
                                                      layers=1),
                      data=DataConfig(src_vocab_size=100, tgt_vocab_size=100, batch_size=32,
                                      dev_sample=0),
                      train=TrainConfig(max_steps=1, valid_every=0, device="cpu", epochs=1))
    create_run(workspace, "demo", luong)
    with pytest.raises(ConfigError, match="'luong' run; stage 2 starts from a sentence-level "
                       "'transformer' run"):  # refused before a run is made
        create_run(workspace, "demo",
                   tiny_config("context_transformer", "ts", stage=2, init_from="luong"))
    assert [r.name for r in workspace.list_runs()] == ["luong"]

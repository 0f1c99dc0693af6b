"""The training form's context-model fields (strategy, stage, stage-1 run, context encoder
depth, K previous sentences): round trips, concat as a Transformer, and a two-stage
stage-2 run started from the form."""
from __future__ import annotations

import pytest

from app import workers
from app.main_window import MainWindow
from core.config import load_preset
from tests.app.conftest import start_run

SIZES = dict(d_model=16, ff_size=32, heads=2, enc_layers=1, dec_layers=1, dropout=0.0)


def tiny_transformer(family: str, name: str, steps: int = 4):
    cfg = load_preset("context-ts-cpu" if family == "context_transformer" else "transformer-cpu")
    cfg.name = name
    cfg.model.family = family
    for key, value in SIZES.items():
        setattr(cfg.model, key, value)
    cfg.data.vocab, cfg.data.src_vocab_size, cfg.data.tgt_vocab_size = "word", 300, 300
    cfg.data.batch_tokens, cfg.data.batch_size, cfg.data.dev_sample = 0, 32, 4
    cfg.train.max_steps, cfg.train.valid_every, cfg.train.device = steps, steps, "cpu"
    cfg.train.stage = 1 if family == "transformer" else cfg.train.stage
    return cfg


@pytest.fixture
def stage1_ws(demo_ws, tiny):
    """A demo workspace with a finished tiny transformer run 'sent' (stage 1) and a
    finished luong run 'rnn' (not a stage-1 candidate)."""
    from core.jobs import JobContext
    from core.services.training import create_run, train_run
    from core.workspace.store import Workspace

    ws = Workspace.open(demo_ws)
    for cfg in (tiny_transformer("transformer", "sent"), tiny("rnn", 2)):
        assert train_run(ws, create_run(ws, "demo", cfg), JobContext()).status == "finished"
    ws.close()
    return demo_ws


def _panel(qtbot, root):
    window = MainWindow(root)
    qtbot.addWidget(window)
    panel = window.training
    panel.corpus.setCurrentIndex(panel.corpus.findData(1))
    return window, panel


def test_stage1_runs_are_the_finished_transformer_runs(qtbot, stage1_ws):
    window, panel = _panel(qtbot, stage1_ws)
    items = [(panel.context.init_from.itemText(i), panel.context.init_from.itemData(i))
             for i in range(panel.context.init_from.count())]
    assert [data for _, data in items] == ["", "sent"]
    assert items[1][0].startswith("1: sent")
    window.close()


def test_form_round_trips_a_two_stage_context_config(qtbot, stage1_ws):
    window, panel = _panel(qtbot, stage1_ws)
    cfg = tiny_transformer("context_transformer", "ctx")
    cfg.model.ctx_layers, cfg.model.ctx_sentences, cfg.model.ctx_following = 3, 2, 1
    cfg.train.init_from = "sent"
    panel.set_config(cfg)
    assert not panel.context.isHidden()
    assert panel.context.form.isRowVisible(panel.context.init_from) and panel.context.init_from.isEnabled()
    assert panel.context.strategy.currentData() == "ts" and panel.context.stage.currentData() == 2
    assert panel.context.init_from.currentData() == "sent"
    out = panel.config()
    assert (out.model.family, out.model.strategy, out.train.stage, out.train.init_from,
            out.model.ctx_layers, out.model.ctx_sentences, out.model.ctx_following) == (
        "context_transformer", "ts", 2, "sent", 3, 2, 1)
    assert out.to_dict() == cfg.to_dict()
    # a stage-1 run that is not listed (a run id, or a run of another workspace) is kept
    cfg.train.init_from = "7"
    panel.set_config(cfg)
    assert panel.config().train.init_from == "7"
    # weight sharing has no stage 2: picking ws drops it, picking stage 2 picks ts
    panel.context.strategy.setCurrentIndex(panel.context.strategy.findData("ws"))
    assert panel.context.stage.currentData() == 0 and not panel.context.init_from.isEnabled()
    out = panel.config()
    assert (out.model.strategy, out.train.stage, out.train.init_from) == ("ws", 0, "")
    panel.context.stage.setCurrentIndex(panel.context.stage.findData(2))
    assert panel.context.strategy.currentData() == "ts"
    window.close()


def test_context_fields_follow_the_family(qtbot, demo_ws):
    window, panel = _panel(qtbot, demo_ws)
    panel.family.setCurrentText("luong")
    assert panel.context.isHidden()
    panel.family.setCurrentText("concat")
    assert not panel.context.isHidden()
    assert panel.context.form.isRowVisible(panel.context.ctx_sentences)
    assert not panel.context.form.isRowVisible(panel.context.strategy)
    assert not panel.context.form.isRowVisible(panel.context.init_from)
    panel.family.setCurrentText("context_transformer")
    assert all(panel.context.form.isRowVisible(w) for w in
               (panel.context.strategy, panel.context.stage, panel.context.init_from, panel.context.ctx_layers))
    window.close()


def test_concat_round_trips_its_transformer_sizes(qtbot, demo_ws):
    window, panel = _panel(qtbot, demo_ws)
    cfg = load_preset("concat-cpu")
    cfg.model.d_model, cfg.model.ff_size = 48, 96
    cfg.model.enc_layers = cfg.model.dec_layers = 2
    cfg.model.ctx_sentences = 2
    cfg.model.emb_size, cfg.model.hidden_size, cfg.model.layers = 40, 80, 1
    panel.set_config(cfg)
    assert (panel.emb.value(), panel.hidden.value(), panel.layers.value()) == (48, 96, 2)
    assert not panel.attention.isEnabled()  # a Transformer: no RNN attention settings
    out = panel.config()
    assert (out.model.d_model, out.model.ff_size, out.model.enc_layers, out.model.dec_layers,
            out.model.ctx_sentences) == (48, 96, 2, 2, 2)
    assert (out.model.emb_size, out.model.hidden_size, out.model.layers) == (40, 80, 1)
    assert out.to_dict() == cfg.to_dict()
    window.close()


def test_two_stage_preset_without_a_stage1_run_says_what_to_do(qtbot, demo_ws, errors):
    window, panel = _panel(qtbot, demo_ws)
    panel.preset.setCurrentIndex(panel.preset.findData("context-ts-cpu"))
    assert panel.context.stage.currentData() == 2 and panel.context.init_from.currentData() == ""
    assert panel.start() is None
    assert errors and "Stage-1 run" in errors[-1][1]
    assert window.workspace.list_runs() == []
    # switching to another family drops the context_transformer-only stage 2
    panel.family.setCurrentText("transformer")
    assert panel.config().train.stage == 0
    window.close()


def test_stage2_run_started_from_the_form_finishes(qtbot, stage1_ws, errors):
    window, panel = _panel(qtbot, stage1_ws)
    panel.set_config(tiny_transformer("context_transformer", "ctx-stage2"))
    panel.context.init_from.setCurrentIndex(panel.context.init_from.findData("sent"))
    job = start_run(qtbot, panel)
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    assert job.state == workers.FINISHED, (job.error, errors)
    ws = window.workspace
    run = [r for r in ws.list_runs() if r.name == "ctx-stage2"][0]
    assert run.status == "finished" and run.steps == 4
    assert run.config["train"]["init_from"] == "sent" and run.config["train"]["stage"] == 2
    sent = ws.get_run("sent")
    for name in ("src.vocab", "tgt.vocab"):
        assert (ws.run_dir(run.id) / name).read_bytes() == (ws.run_dir(sent.id) / name).read_bytes()
    assert panel.runs_table.item(2, 3).text() == "finished"
    window.close()


def test_picking_a_stage1_run_copies_its_sizes(qtbot, stage1_ws):
    """Stage 2 must have the stage-1 transformer's sizes: choosing the run sets them."""
    window, panel = _panel(qtbot, stage1_ws)
    panel.preset.setCurrentText("context-ts-cpu")  # d_model 128, FF 512, 3 layers, 4+ heads
    before = panel.config_or_none() or panel._config
    assert (before.model.d_model, before.model.enc_layers) != (16, 1)
    panel.context.init_from.setCurrentIndex(panel.context.init_from.findData("sent"))
    panel.context.init_from.activated.emit(panel.context.init_from.currentIndex())  # as a user's choice
    assert (panel.emb.value(), panel.hidden.value(), panel.layers.value()) == (16, 32, 1)
    out = panel.config()
    assert (out.model.d_model, out.model.ff_size, out.model.heads, out.model.enc_layers,
            out.model.dec_layers) == (16, 32, 2, 1, 1)
    assert out.train.init_from == "sent" and out.train.stage == 2
    window.close()


def test_the_context_side_round_trips_and_rules_out_following_sentences(qtbot, demo_ws):
    window, panel = _panel(qtbot, demo_ws)
    panel.family.setCurrentText("concat")  # concat prepends source context: no choice
    assert not panel.context.form.isRowVisible(panel.context.ctx_side)
    assert panel.config().model.ctx_side == "source"
    panel.set_config(load_preset("context-tgt-cpu"))
    assert panel.context.form.isRowVisible(panel.context.ctx_side)
    assert panel.context.ctx_side.currentData() == "target"
    assert not panel.context.ctx_following.isEnabled()
    cfg = panel.config()
    assert (cfg.model.ctx_side, cfg.model.ctx_following) == ("target", 0)
    panel.context.ctx_side.setCurrentIndex(panel.context.ctx_side.findData("source"))
    assert panel.context.ctx_following.isEnabled()
    panel.context.ctx_following.setValue(2)
    assert (panel.config().model.ctx_side, panel.config().model.ctx_following) == ("source", 2)
    panel.context.ctx_side.setCurrentIndex(panel.context.ctx_side.findData("target"))
    assert panel.context.ctx_following.value() == 0
    window.close()

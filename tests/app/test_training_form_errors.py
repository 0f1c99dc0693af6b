"""The training form refuses what the CLI refuses, with the same message."""
from __future__ import annotations

import pytest

from app.main_window import MainWindow
from core.config import RunConfig, load_preset
from core.errors import ConfigError
from core.workspace.store import Workspace


def _panel(qtbot, root):
    window = MainWindow(root)
    qtbot.addWidget(window)
    panel = window.training
    panel.corpus.setCurrentIndex(panel.corpus.findData(1))
    return panel


def test_the_form_shows_the_config_error_of_the_core(qtbot, demo_ws, errors):
    panel = _panel(qtbot, demo_ws)
    cfg = load_preset("transformer-cpu")
    cfg.name = "bad-heads"
    cfg.model.heads = 7  # the form shows d_model (as its size field), not the heads
    panel.set_config(cfg)
    panel.emb.setValue(30)
    with pytest.raises(ConfigError) as core_error:
        RunConfig.from_dict({**cfg.to_dict(), "model": {**cfg.to_dict()["model"], "d_model": 30}})
    assert panel.start() is None
    assert errors and errors[-1][1] == str(core_error.value)
    assert "must be a multiple of model.heads = 7" in errors[-1][1]

    cfg = load_preset("demo")
    cfg.train.label_smoothing = 5.0  # kept from a preset the form does not show
    panel.set_config(cfg)
    assert panel.start() is None
    assert errors[-1][1] == "train.label_smoothing must be in [0, 1), not 5.0; e.g. 0.1"
    with Workspace.open(demo_ws) as ws:
        assert ws.list_runs() == []


def test_the_forms_number_boxes_stay_within_the_core_limits(qtbot, demo_ws):
    """Every number the Training and Translate screens let a user pick is one the core
    accepts (round 2, item 9): the boxes' ranges lie inside the config's RULES and the
    beam limit, so the form never offers what training then refuses."""
    from core import limits
    from core.config import RULES

    window = MainWindow(demo_ws)
    qtbot.addWidget(window)
    panel = window.training
    boxes = {
        "model.emb_size": panel.emb, "model.d_model": panel.emb, "model.hidden_size": panel.hidden,
        "model.ff_size": panel.hidden, "model.layers": panel.layers,
        "model.enc_layers": panel.layers, "model.dec_layers": panel.layers,
        "model.window": panel.window, "model.dropout": panel.dropout,
        "train.epochs": panel.epochs, "train.max_steps": panel.max_steps,
        "train.max_minutes": panel.max_minutes, "data.batch_size": panel.batch_size,
        "train.valid_every": panel.valid_every, "data.dev_sample": panel.dev_sample,
        "train.sampled_softmax": panel.sampled_softmax,
        "train.guided_alignment": panel.guided_weight,
        "model.ctx_layers": panel.context.ctx_layers,
        "model.ctx_following": panel.context.ctx_following,
    }
    for key, box in boxes.items():
        rule = RULES[key]
        assert rule.lo is None or box.minimum() >= rule.lo, key
        assert rule.hi is None or box.maximum() <= rule.hi, key
    assert panel.context.ctx_sentences.maximum() <= RULES["model.ctx_sentences"].hi
    beam = window.translate.beam
    assert (beam.minimum(), beam.maximum()) == (1, limits.MAX_BEAM)

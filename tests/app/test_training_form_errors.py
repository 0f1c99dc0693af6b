"""The training form refuses what the CLI refuses, with the same message (#13 item 12)."""
from __future__ import annotations

import pytest

from app.main_window import MainWindow
from core.config import RunConfig, load_preset
from core.errors import ConfigError
from core.store import Workspace


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

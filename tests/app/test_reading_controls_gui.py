"""The Attention screen's "Choose readings" (app/panels/reading_controls.py): each checked
run's reading is chosen without gold by the anchor words of its training pairs (the
core's choice, stored with the run), the screen switches to "each run's best" and the
heatmap follows; a run the anchors cannot judge is left as it was, with the reason."""
from __future__ import annotations

import shutil

import numpy as np

from app import workers
from app.panels.attention import AttentionPanel
from core.config import RunConfig
from core.evaluate.goldsets import load_gold_set
from core.evaluate.readings import read_attention
from core.infer.session import TranslationSession
from core.services import reading_anchors
from core.train.artifacts import load_model
from tests.app.conftest import compute_on_gold, shown_panel


def _anchor_choice(ws, run_id: int) -> tuple[str, dict[str, float], int]:
    info = ws.get_run(run_id)
    loaded = load_model(ws.run_dir(run_id), "best", run_config=info.config)
    src, tgt = reading_anchors.training_token_pairs(ws, run_id, loaded, 2000)
    table, total = reading_anchors.reading_anchor_table(loaded, src, tgt)
    return reading_anchors.best_reading(table), table, total


def test_choose_readings_stores_the_anchor_choice_and_shows_it(qtbot, trained_ws, tmp_path,
                                                               errors):
    root = tmp_path / "ws"
    shutil.copytree(trained_ws, root)
    panel = next(shown_panel(qtbot, AttentionPanel, root, 1400, 900))
    ws = panel.workspace
    runs = {r.name: r.id for r in ws.list_runs()}
    expected = {name: _anchor_choice(ws, run_id) for name, run_id in runs.items()}
    assert all(total >= reading_anchors.MIN_ANCHORS for _r, _t, total in expected.values())
    panel.reading.setCurrentIndex(panel.reading.findData("shift"))
    compute_on_gold(qtbot, panel, [runs["glob"], runs["locp"]], errors)
    panel.pair_list.setCurrentRow(0)

    panel.readings.choose_button.click()
    chooser = panel.readings.job
    qtbot.waitUntil(lambda: chooser.done, timeout=120000)
    assert chooser.state == workers.FINISHED, (chooser.error, errors)
    for name, run_id in runs.items():
        best, table, total = expected[name]
        assert RunConfig.from_dict(ws.get_run(run_id).config).alignment_reading == best
        assert f"{name}: '{best}' ({100 * table[best]:.0f} % of {total} anchor words" in \
            panel.readings.note.text()
    assert panel.readings.choose_button.isEnabled()
    # the shared sessions were dropped: the Evaluation screen reads the new reading too
    fresh = panel.sessions.get(ws, [runs["glob"]]).first.config
    assert fresh.alignment_reading == expected["glob"][0]
    # the screen now reads each run at its stored reading
    assert panel.reading.currentData() == "default"
    gold = load_gold_set(ws, "demo-gold")
    i = panel.order[0]
    forced = TranslationSession.open(ws, [runs["glob"]]).force(
        " ".join(gold.src_tokens[i]), " ".join(gold.tgt_tokens[i]))
    chosen = expected["glob"][0]
    # the predicting step is drawn with its EOS row, every other reading without
    shown = forced.attention if chosen == "predict" else read_attention(forced.attention, chosen)
    assert np.allclose(panel.heatmaps[0].image.image, shown, atol=1e-5)


def test_a_run_the_anchors_cannot_judge_is_left_with_the_reason(qtbot, trained_ws, tmp_path,
                                                               errors, monkeypatch):
    root = tmp_path / "ws"
    shutil.copytree(trained_ws, root)
    monkeypatch.setattr(reading_anchors, "MIN_ANCHORS", 10_000)
    panel = next(shown_panel(qtbot, AttentionPanel, root, 1400, 900))
    ws = panel.workspace
    glob = ws.run_id("glob")
    assert panel.readings.choose(ws, []) is None
    assert "Check the models" in panel.readings.note.text()
    panel.models.set_checked([glob])
    job = panel.readings.choose(ws, panel.models.checked())
    qtbot.waitUntil(lambda: job.done, timeout=120000)
    assert job.state == workers.FINISHED and not errors
    assert "glob: unchanged (run 'glob': only" in panel.readings.note.text()
    assert "fewer than 10000" in panel.readings.note.text()
    assert ws.get_run(glob).config["alignment_reading"] == ""


def test_a_cancelled_choice_gives_the_button_back(qtbot, trained_ws, tmp_path, errors,
                                                  monkeypatch):
    import time

    def until_cancelled(ws, run_id, ctx=None, **_kw):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ctx.check_cancelled()  # raises JobCancelled once the user cancels
            time.sleep(0.01)
        raise AssertionError("never cancelled")

    monkeypatch.setattr(reading_anchors, "choose_by_anchors", until_cancelled)
    root = tmp_path / "ws"
    shutil.copytree(trained_ws, root)
    panel = next(shown_panel(qtbot, AttentionPanel, root, 1400, 900))
    job = panel.readings.choose(panel.workspace, [panel.workspace.run_id("glob")])
    assert not panel.readings.choose_button.isEnabled()
    qtbot.waitUntil(lambda: job.started, timeout=10000)
    job.cancel()
    qtbot.waitUntil(lambda: job.done, timeout=30000)
    assert job.state == workers.CANCELLED and not errors
    assert panel.readings.choose_button.isEnabled()
    assert "cancelled" in panel.readings.note.text()

"""The Training screen's "Alignment head" button: a new run over the selected
finished run, trained with the run's weights untouched, shown by the Attention screen's
"alignment head" reading; refused, with the reason, for a run that cannot have one."""
from __future__ import annotations

import shutil

import torch

from app import workers
from tests.app.conftest import shown_panel, training_job


def test_head_button_trains_a_head_over_the_selected_run(qtbot, trained_ws, tmp_path,
                                                         monkeypatch, errors):
    from app.panels.training import TrainingPanel
    from core.services import training
    from core.train.artifacts import load_model

    full = training.alignment_head_config
    monkeypatch.setattr(training, "alignment_head_config",
                        lambda ws, run: full(ws, run, steps=12))  # 3000 by default
    root = tmp_path / "ws"
    shutil.copytree(trained_ws, root)
    panel = next(shown_panel(qtbot, TrainingPanel, root, 1400, 900))
    ws = panel.workspace
    panel.runs_table.selectRow(0)  # glob
    assert panel.head_button.isEnabled()
    panel.head_button.click()
    job = training_job(qtbot, panel, panel.creating, 60000)
    qtbot.waitUntil(lambda: job.done, timeout=120000)
    assert job.state == workers.FINISHED, (job.error, errors)
    head = ws.get_run("glob-head")
    assert head.status == "finished" and head.steps == 12
    assert head.config["model"]["alignment_head"] and head.config["train"]["init_from"] == "glob"
    base = load_model(ws.run_dir(ws.run_id("glob")), "best").model.state_dict()
    headed = load_model(ws.run_dir(head.id), "best").model.state_dict()
    assert all(torch.equal(headed[k], v) for k, v in base.items())
    # a head over a head is refused with the reason
    panel.refresh()
    row = next(r for r in range(panel.runs_table.rowCount())
               if panel.runs_table.item(r, 0).text().endswith("glob-head"))
    panel.runs_table.selectRow(row)
    panel.head_button.click()
    qtbot.waitUntil(lambda: panel.creating.done, timeout=30000)
    assert errors and "has an alignment head already" in errors[-1][1]
    panel.jobs.shutdown()
    ws.close()

"""Buttons that can do nothing are disabled until they can (and enabled again then), and
a failed job's progress bar does not stay at its partial value."""
from __future__ import annotations

from app import workers
from app.panels.corpora import CorporaPanel
from app.panels.evaluation import EvaluationPanel
from core.workspace.store import Workspace


def test_store_split_is_enabled_only_with_a_corpus_selected(qtbot, tmp_path, demo_ws):
    jobs = workers.JobManager()
    panel = CorporaPanel(jobs)
    qtbot.addWidget(panel)
    assert not panel.split_button.isEnabled()  # no workspace
    empty = Workspace.open(tmp_path / "empty", create=True)
    panel.set_workspace(empty)
    assert panel.corpus_list.count() == 0 and not panel.split_button.isEnabled()
    demo = Workspace.open(demo_ws)
    panel.set_workspace(demo)
    assert panel.corpus_list.currentItem() is not None and panel.split_button.isEnabled()
    panel.corpus_list.setCurrentItem(None)
    assert not panel.split_button.isEnabled()
    assert panel.store_split() is None
    panel.corpus_list.setCurrentRow(0)
    assert panel.split_button.isEnabled()
    panel.set_workspace(empty)
    assert not panel.split_button.isEnabled()
    jobs.shutdown()
    empty.close()
    demo.close()


def test_export_heatmaps_is_enabled_only_with_runs_selected(qtbot, trained_ws, demo_ws):
    jobs = workers.JobManager()
    panel = EvaluationPanel(jobs)
    qtbot.addWidget(panel)
    assert not panel.heatmaps_button.isEnabled()  # no workspace
    trained = Workspace.open(trained_ws)
    panel.set_workspace(trained)  # every row selected
    assert panel.selected_run_ids() and panel.heatmaps_button.isEnabled()
    assert panel.evaluate_button.isEnabled()
    panel.table.clearSelection()
    assert not panel.heatmaps_button.isEnabled() and not panel.evaluate_button.isEnabled()
    panel.table.selectRow(0)
    assert panel.heatmaps_button.isEnabled() and panel.evaluate_button.isEnabled()
    demo = Workspace.open(demo_ws)  # no runs: nothing to draw or evaluate
    panel.set_workspace(demo)
    assert panel.table.rowCount() == 0 and not panel.heatmaps_button.isEnabled()
    assert not panel.evaluate_button.isEnabled()
    jobs.shutdown()
    trained.close()
    demo.close()


def test_a_failed_evaluation_leaves_no_partial_progress(qtbot, trained_ws, monkeypatch, errors):
    from core.errors import WorkbenchError

    def failing(*args, ctx, **kwargs):
        ctx.emit("progress", done=1, total=3)
        raise WorkbenchError("the test split is empty")

    monkeypatch.setattr("app.panels.evaluation.evaluate_runs", failing)
    jobs = workers.JobManager()
    panel = EvaluationPanel(jobs)
    qtbot.addWidget(panel)
    ws = Workspace.open(trained_ws)
    panel.set_workspace(ws)
    job = panel.evaluate_selected()
    qtbot.waitUntil(lambda: job.done, timeout=10000)
    assert job.state == workers.FAILED
    assert [e[1] for e in errors] == ["the test split is empty"]
    assert panel.progress.value() < panel.progress.minimum() and panel.progress.text() == ""
    assert panel.evaluate_button.isEnabled()
    jobs.shutdown()
    ws.close()

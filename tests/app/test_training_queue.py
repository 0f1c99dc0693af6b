"""The Training screen's queue and run list: a queued run waits for every run training
before it (also one started with Start), a queued run cancelled before it starts is
listed 'cancelled' (never 'queued' with nothing left to start it), and the run buttons
follow the selection when a refresh drops the selected run."""
from __future__ import annotations

import threading

import pytest

from app import workers
from app.panels import manage
from app.panels.training import TrainingPanel
from core.services import training as service
from core.services.training import create_run
from tests.app.conftest import shown_panel, start_run


@pytest.fixture
def panel(qtbot, demo_ws):
    yield from shown_panel(qtbot, TrainingPanel, demo_ws, 1400)


@pytest.fixture
def hold_first_run(panel, monkeypatch):
    """The first run trained waits in its job's thread until the yielded event is set
    (at the latest when the test ends, before the panel's jobs are shut down); the others
    train at once."""
    release, calls = threading.Event(), []
    real = service.train_model

    def held(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            assert release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "train_model", held)
    yield release
    release.set()


def _status(panel, run_id: int) -> str:
    for row in range(panel.runs_table.rowCount()):
        if panel.runs_table.item(row, 0).text().startswith(f"{run_id}:"):
            return panel.runs_table.item(row, 3).text()
    raise AssertionError(f"run {run_id} not listed")


def _run_id(panel, job) -> int:
    return next(rid for rid, j in panel.run_jobs.items() if j is job)


def test_a_queued_run_cancelled_before_it_starts_is_listed_cancelled(qtbot, panel, tiny,
                                                                      errors, hold_first_run):
    release = hold_first_run
    panel.set_config(tiny("first", 3))
    first = start_run(qtbot, panel, queue=True)
    panel.set_config(tiny("second", 3))
    second = start_run(qtbot, panel, queue=True)
    qtbot.waitUntil(lambda: first.state == workers.RUNNING, timeout=20000)
    second_id = _run_id(panel, second)
    assert _status(panel, second_id) == "queued"
    panel.runs_table.selectRow(1)  # the controls act on the selected run
    assert panel.current is second
    panel.cancel_button.click()
    qtbot.waitUntil(lambda: second.done, timeout=5000)
    assert second.state == workers.CANCELLED
    assert _status(panel, second_id) == "cancelled"
    assert panel.workspace.get_run(second_id).status == "cancelled"
    release.set()
    qtbot.waitUntil(lambda: first.done, timeout=30000)
    assert first.state == workers.FINISHED, errors
    # the cancelled run never trained, and stays listed as cancelled
    assert panel.workspace.get_run(second_id).steps == 0
    assert not panel.workspace.curves(second_id, "train")
    assert _status(panel, second_id) == "cancelled"
    assert errors == []


def test_a_queued_run_waits_for_a_run_started_before_it(qtbot, panel, tiny, errors,
                                                        hold_first_run):
    release = hold_first_run
    panel.set_config(tiny("started", 3))
    started = start_run(qtbot, panel)  # Start: trains at once
    qtbot.waitUntil(lambda: started.state == workers.RUNNING, timeout=20000)
    panel.set_config(tiny("queued", 3))
    queued = start_run(qtbot, panel, queue=True)
    qtbot.wait(300)  # time enough for a wrongly started job to report 'running'
    assert queued.state == workers.QUEUED and not queued.started
    assert _status(panel, _run_id(panel, queued)) == "queued"
    assert panel.current is started  # the progress follows the run training
    release.set()
    qtbot.waitUntil(lambda: queued.done, timeout=30000)
    assert started.state == workers.FINISHED and queued.state == workers.FINISHED, errors
    runs = {r.name: r for r in panel.workspace.list_runs()}
    assert runs["queued"].started >= runs["started"].finished  # one after the other
    assert errors == []


def test_deleting_the_selected_run_disables_the_run_buttons(qtbot, panel, tiny, errors,
                                                           monkeypatch):
    for name in ("keep", "gone"):
        create_run(panel.workspace, "demo", tiny(name, 3))
    panel.refresh()
    panel.runs_table.selectRow(1)
    assert panel.selected_runs() == [2]
    assert panel.continue_button.isEnabled() and panel.head_button.isEnabled()
    monkeypatch.setattr(manage, "confirm", lambda *args: True)
    panel.delete_action.trigger()
    assert [r.name for r in panel.workspace.list_runs()] == ["keep"]
    assert panel.selected_runs() == []
    assert not panel.continue_button.isEnabled()
    assert not panel.head_button.isEnabled()
    assert errors == []


def test_the_learning_rate_keeps_what_is_typed(qtbot):
    """A typed 1.5e-5 stays 1.5e-5 in the run's config (five decimals turned it into
    2e-5, and anything under 1e-5 into 1e-5); the arrows double and halve it."""
    from PySide6.QtCore import Qt

    from app.widgets.number_fields import RateSpinBox

    spin = RateSpinBox(1e-9, 10, 0.001)
    qtbot.addWidget(spin)
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin, "1.5e-5")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert spin.value() == 1.5e-5 and spin.text() == "1.5e-05"
    spin.setValue(3e-7)
    assert spin.value() == 3e-7 and spin.text() == "3e-07"
    spin.stepBy(1)
    assert spin.value() == 6e-7
    spin.stepBy(-2)
    assert spin.value() == pytest.approx(1.5e-7)
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin, "abc")  # refused as typed
    assert spin.value() == pytest.approx(1.5e-7)

"""The screens write no file and create no run on the GUI thread: Start (create_run),
the Translate screen's export and the Evaluation screen's HTML report run as jobs, the
buttons disabled meanwhile; their results and their errors still reach the screen."""
from __future__ import annotations

import threading

import pytest

from app import workers
from app.panels.training import TrainingPanel
from core.errors import ConfigError
from tests.app.conftest import shown_panel


def _recording(monkeypatch, module, name: str, threads: list, hold: threading.Event | None = None,
               fail: Exception | None = None):
    """Replace module.name by a wrapper noting the thread it runs in (and waiting for
    `hold`, raising `fail`)."""
    real = getattr(module, name)

    def wrapper(*args, **kwargs):
        threads.append(threading.current_thread())
        if hold is not None:
            assert hold.wait(20)
        if fail is not None:
            raise fail
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)


@pytest.fixture
def training(qtbot, demo_ws):
    yield from shown_panel(qtbot, TrainingPanel, demo_ws, 1400)


def test_start_creates_the_run_off_the_gui_thread_with_the_buttons_disabled(
        qtbot, training, tiny, monkeypatch, errors):
    from core.services import training as service

    threads, hold = [], threading.Event()
    _recording(monkeypatch, service, "create_run", threads, hold)
    training.set_config(tiny("offthread", 3))
    creating = training.start()
    qtbot.waitUntil(lambda: len(threads) == 1, timeout=10000)
    assert threads[0] is not threading.main_thread()
    assert not training.start_button.isEnabled() and not training.queue_button.isEnabled()
    assert training.start() is None  # no second run while this one is created
    hold.set()
    qtbot.waitUntil(lambda: creating.done, timeout=10000)
    assert training.start_button.isEnabled() and training.queue_button.isEnabled()
    job = training.run_jobs[creating.result]
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    assert job.state == workers.FINISHED, errors
    run = training.workspace.get_run(creating.result)
    assert (run.name, run.status, run.steps) == ("offthread", "finished", 3)
    assert len(threads) == 1 and errors == []


def test_a_run_the_core_refuses_is_shown_under_training_and_not_created(
        qtbot, training, tiny, monkeypatch, errors):
    from core.services import training as service

    threads = []
    _recording(monkeypatch, service, "create_run", threads,
               fail=ConfigError("train.device 'cuda': no GPU here; choose cpu"))
    training.set_config(tiny("refused", 3))
    creating = training.start()
    qtbot.waitUntil(lambda: creating.done, timeout=10000)
    assert creating.state == workers.FAILED
    assert errors == [("Training", "train.device 'cuda': no GPU here; choose cpu", "")]
    assert threads[0] is not threading.main_thread()
    assert training.workspace.list_runs() == [] and training.run_jobs == {}
    assert training.start_button.isEnabled()


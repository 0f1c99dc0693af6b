"""The screens write no file and create no run on the GUI thread: Start (create_run),
the Translate screen's export and the Evaluation screen's HTML report run as jobs, the
buttons disabled meanwhile; their results and their errors still reach the screen."""
from __future__ import annotations

import threading

import pytest

from app import workers
from app.panels.training import TrainingPanel
from core.errors import ConfigError
from tests.app.conftest import job_result, shown_panel


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



@pytest.fixture
def translate(qtbot, demo_ws):
    from app.panels.translate import TranslatePanel

    yield from shown_panel(qtbot, TranslatePanel, demo_ws, 1400)


def test_the_translation_export_is_written_off_the_gui_thread(qtbot, translate, tmp_path,
                                                              monkeypatch, errors):
    from core.services import translation

    threads, hold = [], threading.Event()
    _recording(monkeypatch, translation, "export", threads, hold)
    translate.set_sentences(["Hola.", "Adiós."], ["Hello.", "Goodbye."])
    translate.table.item(0, 1).setText("Hi.")
    job = translate.export(tmp_path / "out.txt")
    qtbot.waitUntil(lambda: len(threads) == 1, timeout=10000)
    assert threads[0] is not threading.main_thread()
    assert not translate.export_button.isEnabled()
    translate.table.item(1, 1).setText("Bye.")  # edited while the file is written
    hold.set()
    assert job_result(qtbot, job) == [tmp_path / "out.txt"]
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").splitlines() == ["Hi.", "Goodbye."]
    assert translate.export_button.isEnabled()
    assert translate.status.text() == f"Exported to {tmp_path / 'out.txt'}"
    assert translate.edited_rows() == [1]  # the edit made meanwhile is not in the file
    assert errors == []


def test_an_export_that_cannot_be_written_is_shown_without_a_traceback(qtbot, translate,
                                                                       tmp_path, errors):
    translate.set_sentences(["Hola."], ["Hello."])
    translate.table.item(0, 1).setText("Hi.")
    (tmp_path / "out.txt").mkdir()  # a folder where the file should go
    job = translate.export(tmp_path / "out.txt")
    qtbot.waitUntil(lambda: job.done, timeout=10000)
    assert job.state == workers.FAILED
    [(title, message, details)] = errors
    assert title == "Export failed" and str(tmp_path / "out.txt") in message
    assert details == ""  # the user's error: no traceback
    assert translate.edited_rows() == [0]  # the edit is still not in a file
    assert translate.export_button.isEnabled()


@pytest.fixture
def evaluation(qtbot, demo_ws):
    from app.panels.evaluation import EvaluationPanel

    yield from shown_panel(qtbot, EvaluationPanel, demo_ws, 1400)


def test_the_html_report_is_written_off_the_gui_thread(qtbot, evaluation, tmp_path,
                                                       monkeypatch, errors):
    from core.services import eval_scores

    threads, hold = [], threading.Event()
    _recording(monkeypatch, eval_scores, "write_html_report", threads, hold)
    job = evaluation.write_report(tmp_path / "report.html")
    qtbot.waitUntil(lambda: len(threads) == 1, timeout=10000)
    assert threads[0] is not threading.main_thread()
    assert not evaluation.report_button.isEnabled()
    hold.set()
    assert job_result(qtbot, job) == tmp_path / "report.html"
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<title>Evaluation — ws</title>" in page
    assert page.count('src="data:image/png;base64,') == 3  # the three plots, embedded
    assert evaluation.report_button.isEnabled() and errors == []


def test_a_report_that_cannot_be_written_is_shown_with_its_path(qtbot, evaluation, tmp_path,
                                                                errors):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    path = tmp_path / "file" / "report.html"  # under a file
    job = evaluation.write_report(path)
    qtbot.waitUntil(lambda: job.done, timeout=10000)
    assert job.state == workers.FAILED
    [(title, message, details)] = errors
    assert title == "Report failed" and message.startswith(f"{path}: ") and details == ""
    assert evaluation.report_button.isEnabled()

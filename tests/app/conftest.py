"""Qt tests run offscreen, with QSettings in a temp folder (never the user's config)
and the error dialog replaced by a recorder."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402


@pytest.fixture(scope="package", autouse=True)
def gc_on_gui_thread(qapp):
    """As in the workbench (app/gc_guard.py): cycles are collected on the GUI thread only,
    so a job's thread never destroys a Qt object. Automatic collection is back on for the
    Qt-free tests after these."""
    from app.gc_guard import MainThreadCollector

    collector = MainThreadCollector()
    collector.start()
    yield collector
    collector.stop()


@pytest.fixture
def workbench_style(qapp):
    """The workbench's look (app.main_window.apply_style: Qt style, font, style sheet,
    pyqtgraph's foreground and antialiasing) for one test, and the test session's back
    after it: the style is process-wide, and the pixel tests after it draw unstyled."""
    import pyqtgraph as pg

    from app.main_window import apply_style

    before = (qapp.style().name(), qapp.font(), qapp.styleSheet(),
              {k: pg.getConfigOption(k) for k in ("foreground", "antialias")})
    apply_style(qapp)
    yield qapp
    style, font, sheet, options = before
    qapp.setStyleSheet(sheet)
    qapp.setFont(font)
    qapp.setStyle(style)
    pg.setConfigOptions(**options)


@pytest.fixture(autouse=True)
def temp_settings(tmp_path_factory):
    folder = tmp_path_factory.mktemp("qsettings")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    QSettings().clear()
    yield folder


@pytest.fixture(autouse=True)
def no_blocking_dialogs(monkeypatch, request):
    """An error dialog no test asked for (through `errors`) fails that test with the
    dialog's text, instead of a modal box that waits forever offscreen; so does any other
    modal dialog, and Qt's static file and input dialogs, unless the test stubs them
    itself. Tests marked `real_dialogs` stub QMessageBox themselves."""
    shown: list[tuple[str, str]] = []
    # Qt's static file and input dialogs block in C++: answered 'cancel' and failing the
    # test (tests marked real_dialogs too: they stub message boxes only)
    from PySide6.QtWidgets import QDialog, QFileDialog, QInputDialog, QMessageBox

    from app import workers

    def cancelled(kind, answer):
        def record(*args, **kwargs):
            texts = [a for a in args if isinstance(a, str)]
            shown.append((kind, " | ".join(texts)))
            return answer
        return staticmethod(record)

    for kind, answer in (("getOpenFileName", ("", "")), ("getOpenFileNames", ([], "")),
                         ("getSaveFileName", ("", "")), ("getExistingDirectory", "")):
        monkeypatch.setattr(QFileDialog, kind, cancelled(kind, answer))
    for kind, answer in (("getText", ("", False)), ("getItem", ("", False)),
                         ("getInt", (0, False)), ("getDouble", (0.0, False)),
                         ("getMultiLineText", ("", False))):
        monkeypatch.setattr(QInputDialog, kind, cancelled(kind, answer))
    if request.node.get_closest_marker("real_dialogs"):
        yield
        if shown:
            pytest.fail(f"unexpected modal dialog(s): {shown}")
        return
    monkeypatch.setattr(workers, "show_error",
                        lambda parent, title, message, details="": shown.append((title, message)))
    # any other modal dialog would wait forever offscreen: it is answered 'no' and fails
    # the test, unless the test stubs that dialog itself

    def modal(kind):
        def record(*args, **kwargs):
            texts = [a for a in args if isinstance(a, str)]
            shown.append((kind, " | ".join(texts) or type(args[0]).__name__))
            return QMessageBox.StandardButton.No if kind == "question" else 0
        return record

    for kind in ("information", "warning", "critical", "question", "about"):
        monkeypatch.setattr(QMessageBox, kind, staticmethod(modal(kind)))
    monkeypatch.setattr(QDialog, "exec", modal("exec"))
    monkeypatch.setattr(QMessageBox, "exec", modal("exec"))
    yield
    if shown:
        pytest.fail(f"unexpected modal dialog(s): {shown}")


@pytest.fixture
def errors(monkeypatch, no_blocking_dialogs):
    """Every error the GUI would show in a message box: (title, message, details)."""
    shown: list[tuple[str, str, str]] = []
    from app import workers

    monkeypatch.setattr(workers, "show_error",
                        lambda parent, title, message, details="": shown.append(
                            (title, message, details)))
    return shown


# --- a demo workspace with two tiny trained runs (trained once per session) -------------------
DEMO = __import__("pathlib").Path(__file__).resolve().parents[2] / "resources" / "demo"


def make_demo_workspace(root):
    """A workspace with the bundled demo corpus ('demo') and gold set ('demo-gold')."""
    from core.data.readers import read_parallel
    from core.evaluate.goldsets import import_gold_set
    from core.workspace.store import Workspace

    ws = Workspace.open(root, create=True)
    corpus = read_parallel(DEMO / "demo.es", DEMO / "demo.en", "es", "en",
                           docids_path=DEMO / "demo.docids", name="demo")
    ws.add_corpus(corpus, "demo", format="parallel")
    import_gold_set(ws, "demo-gold", DEMO / "gold.es", DEMO / "gold.en", DEMO / "gold.links",
                    src_lang="es", tgt_lang="en")
    return ws


def tiny_config(name: str, steps: int, attention: str = "global", score: str = "general"):
    from core.config import load_preset

    cfg = load_preset("demo")
    cfg.name = name
    cfg.model.emb_size, cfg.model.hidden_size = 24, 24
    cfg.model.attention, cfg.model.score = attention, score
    cfg.train.max_steps, cfg.train.valid_every, cfg.train.device = steps, max(1, steps // 2), "cpu"
    cfg.data.dev_sample = 5
    return cfg


@pytest.fixture(scope="session")
def trained_ws(tmp_path_factory):
    """Path of a demo workspace with two finished tiny runs: 'glob' (global/general)
    and 'locp' (local-p/general), 60 steps each."""
    from core.jobs import JobContext
    from core.services.training import create_run, train_run

    root = tmp_path_factory.mktemp("trained") / "ws"
    ws = make_demo_workspace(root)
    for name, attention in (("glob", "global"), ("locp", "local-p")):
        run_id = create_run(ws, "demo", tiny_config(name, 60, attention))
        assert train_run(ws, run_id, JobContext()).status == "finished"
    ws.close()
    return root


@pytest.fixture
def demo_ws(tmp_path):
    """Path of a fresh demo workspace (corpus and gold set, no runs)."""
    make_demo_workspace(tmp_path / "ws").close()
    return tmp_path / "ws"


@pytest.fixture
def tiny():
    return tiny_config


def shown_panel(qtbot, panel_class, root, width: int, height: int = 800):
    """Generator for a fixture: a `panel_class(JobManager)` screen shown on the workspace
    at `root`; shuts the jobs down and closes the workspace afterwards."""
    from app import workers
    from core.workspace.store import Workspace

    jobs = workers.JobManager()
    widget = panel_class(jobs)
    qtbot.addWidget(widget)
    ws = Workspace.open(root)
    widget.set_workspace(ws)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    jobs.shutdown()
    ws.close()


def wait_for_pairs(qtbot, panel, timeout: int = 15000) -> None:
    """Wait until the Attention screen has read its pairs (a gold set or the test split
    is read in a job) and listed them."""
    qtbot.waitUntil(lambda: not panel.loading_pairs and bool(panel.pairs), timeout=timeout)


def training_job(qtbot, panel, creating, timeout: int = 30000):
    """The training job of the run the Training screen's job `creating` creates (Start,
    Queue, Alignment head create the run in a job, then submit its training)."""
    from app import workers

    assert creating is not None
    qtbot.waitUntil(lambda: creating.done, timeout=timeout)
    assert creating.state == workers.FINISHED, creating.error
    return panel.run_jobs[creating.result]


def start_run(qtbot, panel, queue: bool = False, on_event=None):
    """Press Start (or Queue, `queue`) on the Training screen; -> the new run's training
    job. `on_event(kind, data)` gets every event of that job, from its first."""
    def hook():  # the training job is submitted when its creation ends: connect at once
        for job in panel.jobs.jobs:
            if job not in known and job.name.startswith("Train "):
                known.add(job)
                job.event.connect(on_event)

    known = set(panel.jobs.jobs)
    if on_event is not None:
        panel.jobs.jobs_changed.connect(hook)
    try:
        return training_job(qtbot, panel, panel.start(queue=queue))
    finally:
        if on_event is not None:
            panel.jobs.jobs_changed.disconnect(hook)


def job_result(qtbot, job, timeout: int = 30000):
    """Wait for `job` (e.g. an export or a report the screen writes in a job) to finish;
    -> its result."""
    from app import workers

    assert job is not None
    qtbot.waitUntil(lambda: job.done, timeout=timeout)
    assert job.state == workers.FINISHED, job.error
    return job.result


def export_chosen(qtbot, panel) -> None:
    """Press Export… on the Translate screen (its save dialog stubbed by the test) and
    wait for the file to be written (an export runs in a job)."""
    before = panel.export_job
    panel._choose_export()
    job = panel.export_job
    if job is not before:  # not refused in the dialog
        qtbot.waitUntil(lambda: job.done, timeout=30000)


def compute_on_gold(qtbot, panel, run_ids, errors=None, gold: str = "demo-gold"):
    """The Attention screen `panel` with `run_ids` checked computes the attention of gold
    set `gold`'s pairs: the pairs read, the job finished (`errors`, the recorded error
    dialogs, shown when it did not). Returns the job."""
    from app import workers

    panel.models.set_checked(list(run_ids))
    panel.pair_source.setCurrentText("Gold set")
    panel.gold_set.setCurrentText(gold)
    wait_for_pairs(qtbot, panel)
    job = panel.compute()
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    assert job.state == workers.FINISHED, errors
    return job


@pytest.fixture
def glob_on_gold(qtbot, trained_ws, errors):
    """The main window on `trained_ws` whose Attention screen has run 'glob' computed on
    the demo gold set, its first listed pair shown; -> (window, attention screen)."""
    from app.main_window import MainWindow

    window = MainWindow(trained_ws)
    qtbot.addWidget(window)
    panel = window.attention
    compute_on_gold(qtbot, panel, [window.workspace.run_id("glob")], errors)
    panel.pair_list.setCurrentRow(0)
    qtbot.waitUntil(lambda: panel.heatmaps[0].matrix.size > 0, timeout=10000)
    yield window, panel
    window.close()


@pytest.fixture
def glob_attention(glob_on_gold):
    """The Attention screen of `glob_on_gold`: run 'glob' computed on the demo gold set,
    its first listed pair shown."""
    return glob_on_gold[1]


@pytest.fixture
def copied_ws(tmp_path, trained_ws):
    """A copy of the trained workspace (corpus 'demo', runs 1: glob, 2: locp) plus an
    unused corpus 'spare'."""
    import shutil

    from core.data.readers import read_parallel
    from core.workspace.store import Workspace

    root = tmp_path / "ws"
    shutil.copytree(trained_ws, root)
    with Workspace.open(root) as ws:
        ws.add_corpus(read_parallel(DEMO / "gold.es", DEMO / "gold.en", "es", "en",
                                    name="spare"), "spare", format="parallel")
    return root


def shown_heatmap(qtbot, src, tgt, matrix=None, size=(520, 420)):
    """An AttentionHeatmap shown at `size` (width, height) with `matrix` (len(tgt) x
    len(src); zeros when None) over the tokens `src` (columns) and `tgt` (rows)."""
    import numpy as np

    from app.widgets.heatmap import AttentionHeatmap

    h = AttentionHeatmap()
    qtbot.addWidget(h)
    h.resize(*size)
    h.show()
    qtbot.waitExposed(h)
    h.set_matrix(np.zeros((len(tgt), len(src))) if matrix is None else matrix, src, tgt)
    return h


@pytest.fixture
def save_dialog(monkeypatch):
    """Replace the save dialog by the user's answers: append (typed name, chosen filter)
    to the first list, one per dialog; the second records the folder each dialog opened
    in. An export's dpi question is answered 96."""
    from PySide6.QtWidgets import QFileDialog

    answers: list[tuple[str, str]] = []
    opened_in: list[str] = []

    def fake(parent, caption, start, filters, selected="", *args):
        opened_in.append(start)
        return answers.pop(0)

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake))
    monkeypatch.setattr("app.panels.figures.QInputDialog.getInt",
                        staticmethod(lambda *a, **k: (96, True)))
    return answers, opened_in

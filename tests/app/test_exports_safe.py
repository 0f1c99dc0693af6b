"""Exports never overwrite a file the user did not agree to replace, and a failed
export is reported in a dialog, not lost as a traceback."""
from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QMessageBox

from app import workers
from app.panels.translate import TranslatePanel
from tests.app.conftest import export_chosen


def test_a_suffix_added_after_the_dialog_asks_before_replacing_that_file(qtbot, tmp_path,
                                                                          monkeypatch, errors):
    """The user types 'doc' and chooses TMX: the dialog confirmed overwriting 'doc' (which
    does not exist), but 'doc.tmx' is written; an existing doc.tmx is replaced only when
    the user says so."""
    (tmp_path / "doc.tmx").write_text("my earlier export", encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(
        lambda *a, **k: (str(tmp_path / "doc"), "TMX 1.4 (*.tmx)")))
    asked: list[str] = []
    answer = [QMessageBox.StandardButton.No]
    monkeypatch.setattr(QMessageBox, "question", staticmethod(
        lambda parent, title, text, *a, **k: asked.append(text) or answer[0]))
    jobs = workers.JobManager()
    panel = TranslatePanel(jobs)
    qtbot.addWidget(panel)
    panel.set_sentences(["Hola."], ["Hello."])
    export_chosen(qtbot, panel)
    assert len(asked) == 1 and str(tmp_path / "doc.tmx") in asked[0]
    assert (tmp_path / "doc.tmx").read_text(encoding="utf-8") == "my earlier export"
    answer[0] = QMessageBox.StandardButton.Yes
    export_chosen(qtbot, panel)
    assert len(asked) == 2
    assert "<tmx" in (tmp_path / "doc.tmx").read_text(encoding="utf-8")
    # a name the dialog itself confirmed (its suffix unchanged) is not asked about twice
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(
        lambda *a, **k: (str(tmp_path / "doc.tmx"), "TMX 1.4 (*.tmx)")))
    export_chosen(qtbot, panel)
    assert len(asked) == 2
    assert errors == []
    jobs.shutdown()


def test_heatmaps_that_cannot_be_written_open_an_error_dialog(qtbot, tmp_path, trained_ws,
                                                              errors):
    """The heatmaps are written when their job ends, in the GUI thread: a folder that
    cannot be written there (here a file took its name) gives the error dialog naming
    the file, not a traceback on the terminal and a screen that says nothing."""
    from app.main_window import MainWindow

    window = MainWindow(trained_ws)
    qtbot.addWidget(window)
    panel = window.evaluation
    panel.table.selectAll()
    folder = tmp_path / "maps"
    job = panel.export_heatmaps(folder, 2)
    folder.write_text("not a folder", encoding="utf-8")  # e.g. the folder went meanwhile
    qtbot.waitUntil(lambda: job.done, timeout=30000)
    assert job.state == workers.FINISHED
    assert len(errors) == 1
    title, message, _ = errors[0]
    assert title == "Export heatmaps failed"
    assert str(folder) in message and "cannot be written" in message
    assert panel.last_heatmaps == []
    assert folder.read_text(encoding="utf-8") == "not a folder"
    window.close()


def test_heatmaps_replace_earlier_files_only_when_the_user_agrees(qtbot, tmp_path, trained_ws,
                                                                  monkeypatch, errors):
    """"Export heatmaps" writes <run>-<name>-NNN.png: a second export into the same folder
    silently replaced the first (and a figure the user had changed since). Now, when any
    file it would write exists, it asks once (default No); No writes nothing."""
    from app.panels.evaluation import EvaluationPanel
    from tests.app.conftest import shown_panel

    panel = next(shown_panel(qtbot, EvaluationPanel, trained_ws, 1200))
    panel.table.selectAll()
    folder = tmp_path / "maps"
    job = panel.export_heatmaps(folder, 2)  # nothing there yet: nobody is asked
    qtbot.waitUntil(lambda: job.done, timeout=30000)
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == 2 * len(panel.selected_run_ids()) and names[0].endswith("-001.png")
    mine = folder / names[0]
    mine.write_bytes(b"my retouched figure")
    asked: list[tuple] = []
    answer = [QMessageBox.StandardButton.No]
    monkeypatch.setattr(QMessageBox, "question", staticmethod(
        lambda parent, title, text, buttons, default: asked.append((text, default))
        or answer[0]))
    jobs_before = list(panel.jobs.jobs)
    assert panel.export_heatmaps(folder, 2) is None
    assert len(asked) == 1
    text, default = asked[0]
    assert f"{len(names)} of the heatmap files already exist in {folder}" in text
    assert names[0] in text and default == QMessageBox.StandardButton.No
    assert panel.jobs.jobs == jobs_before  # nothing computed, nothing written
    assert mine.read_bytes() == b"my retouched figure"
    answer[0] = QMessageBox.StandardButton.Yes
    job = panel.export_heatmaps(folder, 2)
    qtbot.waitUntil(lambda: job.done, timeout=30000)
    assert len(asked) == 2
    assert mine.read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in folder.iterdir()) == names
    assert errors == []
    panel.jobs.shutdown()
    panel.workspace.close()

"""Exports never overwrite a file the user did not agree to replace, and a failed
export is reported in a dialog, not lost as a traceback."""
from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QMessageBox

from app import workers
from app.panels.translate import TranslatePanel


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
    panel._choose_export()
    assert len(asked) == 1 and str(tmp_path / "doc.tmx") in asked[0]
    assert (tmp_path / "doc.tmx").read_text(encoding="utf-8") == "my earlier export"
    answer[0] = QMessageBox.StandardButton.Yes
    panel._choose_export()
    assert len(asked) == 2
    assert "<tmx" in (tmp_path / "doc.tmx").read_text(encoding="utf-8")
    # a name the dialog itself confirmed (its suffix unchanged) is not asked about twice
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(
        lambda *a, **k: (str(tmp_path / "doc.tmx"), "TMX 1.4 (*.tmx)")))
    panel._choose_export()
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

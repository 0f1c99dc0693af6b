"""Issue 48 item 7, the smaller faults of the Translate screen and the main window: stale
status lines after another document, the runs last used forgotten after a restart, the
comparison's mark not following an edit, the model list squeezed by a long status, a
shortcut missing from the shortcuts dialog."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
from PySide6.QtCore import QSettings

from app import workers
from app.panels.translate import TranslatePanel
from app.panels.translate_compare import BASELINE, DIFFERS, MARK, TARGET
from app.widgets.diff_view import RICH_ROLE
from core.infer.translate import Translation
from core.services.translation import Comparison
from core.workspace.store import Workspace


def fake(source: str, text: str, log_prob: float = -1.5) -> Translation:
    """A Translation as a model gives it (one attention row per output token + EOS)."""
    src, tgt = source.split(), text.split()
    attention = np.full((len(tgt) + 1, len(src)), 1.0 / len(src), dtype=np.float32)
    return Translation(source, src, list(range(len(tgt))), tgt, text, score=log_prob,
                       log_prob=log_prob, attention=attention)


@pytest.fixture
def panel(qtbot):
    p = TranslatePanel(workers.JobManager())
    qtbot.addWidget(p)
    p.resize(1280, 700)
    p.show()
    qtbot.waitExposed(p)
    return p


def test_another_document_clears_the_sentence_note_and_the_progress(panel):
    sources = [f"frase {k} ." for k in range(9)]
    panel.set_sentences(sources)
    panel.progress.setRange(0, 9)
    panel.progress.setValue(9)
    panel.show_translations([fake(s, f"sentence {k} .") for k, s in enumerate(sources)])
    panel.show_attention(8)
    assert panel.note.text().startswith("sentence 9: log p = -1.50")
    assert panel.progress.text() == "100%"
    panel.set_sentences(["otra frase ."])  # what opening another document does
    assert "log p" not in panel.note.text()
    assert panel.progress.text() != "100%" and panel.progress.value() < 9


def test_a_long_status_does_not_squeeze_the_model_list(panel, qtbot):
    panel.status.setText("ok")
    qtbot.wait(20)
    width = panel.models.width()
    panel.status.setText("Exported to " + "/a/very/long/folder/name" * 12 + "/translation.tmx")
    panel.layout().activate()
    qtbot.wait(20)
    assert panel.models.width() == width
    assert panel.status.toolTip().endswith("translation.tmx")  # the whole text, on hover


def test_editing_a_compared_target_updates_its_mark_and_the_filter(panel):
    sources = ["la casa .", "el perro ."]
    main = [fake(sources[0], "the house ."), fake(sources[1], "the dog .")]
    base = [fake(sources[0], "the home ."), fake(sources[1], "the dog .")]
    panel.set_sentences(sources)
    panel.show_comparison(Comparison(main, base, "ctx", "sent"))
    table = panel.table
    assert [table.item(r, MARK).text() for r in range(2)] == [DIFFERS, ""]
    table.item(0, TARGET).setText("the home .")  # the user's edit, as the editor sets it
    table.item(1, TARGET).setText("a dog .")
    assert [table.item(r, MARK).text() for r in range(2)] == ["", DIFFERS]
    assert table.item(1, TARGET).data(RICH_ROLE)[0] == "a dog ."  # highlights follow
    assert "<b" in table.item(1, TARGET).data(RICH_ROLE)[1]
    assert "<b" in table.item(1, BASELINE).data(RICH_ROLE)[1]
    panel.compare.only_differing.setChecked(True)
    assert [table.isRowHidden(r) for r in range(2)] == [True, False]


def test_the_runs_last_translated_with_are_checked_after_a_restart(qtbot, trained_ws,
                                                                   tmp_path, errors):
    root = tmp_path / "ws"
    shutil.copytree(trained_ws, root)
    ws = Workspace.open(root)
    glob, locp = ws.run_id("glob"), ws.run_id("locp")
    # the newest run was cancelled after 176 steps; it has a last checkpoint
    stopped = ws.create_run("stopped", ws.get_run(glob).config, ws.get_run(glob).corpus_id)
    ws.update_run(stopped, status="cancelled", steps=176)
    shutil.copy(ws.run_dir(glob) / "last.pt", ws.run_dir(stopped) / "last.pt")
    first = TranslatePanel(workers.JobManager())
    qtbot.addWidget(first)
    first.set_workspace(ws)
    assert first.models.checked() == [locp]  # the newest finished, not the cancelled one
    first.models.set_checked([glob])
    first.set_sentences(["hola ."])
    job = first.translate()
    qtbot.waitUntil(lambda: job.done, timeout=30000)
    assert first.translated_by == [glob] and not errors
    # the workbench restarts: a new screen on the same workspace
    again = TranslatePanel(workers.JobManager())
    qtbot.addWidget(again)
    again.set_workspace(ws)
    assert again.models.checked() == [glob]
    assert QSettings().value("translate/last_runs")  # kept in the settings
    ws.delete_run(glob)  # the remembered run is gone: the newest finished one again
    again.models.set_checked([])
    again.refresh()
    assert again.models.checked() == [locp]
    first.jobs.shutdown()
    ws.close()


def test_the_shortcuts_dialog_lists_translate_text(qtbot, demo_ws, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from app.main_window import MainWindow

    window = MainWindow(demo_ws)
    qtbot.addWidget(window)
    listed: list[str] = []
    monkeypatch.setattr(QMessageBox, "information",
                        staticmethod(lambda parent, title, text: listed.append(text)))
    window._show_shortcuts()
    assert "<b>Ctrl+Shift+Return</b></td><td>&nbsp;&nbsp;Translate: Translate text" in listed[0]
    window.close()

"""File -> Import model...: the same service as `runs import`, in a job; the imported
run then appears in the Translate and Attention screens' run lists."""
from __future__ import annotations

import pytest

from app import model_import
from app.main_window import MainWindow
from tests.core.marian_folder import make_marian_folder

pytest.importorskip("transformers")


def test_import_model_menu_adds_a_usable_run(qtbot, tmp_path, monkeypatch):
    folder = make_marian_folder(tmp_path / "opus-mt-es-en")
    monkeypatch.setattr(model_import, "ask_folder", lambda *a: str(folder))
    monkeypatch.setattr(model_import.QInputDialog, "getItem",
                        lambda *a: (model_import.CHOICES[0], True))
    monkeypatch.setattr(model_import.QInputDialog, "getText",  # the name; no languages
                        lambda *a: ("" if "Languages" in a[2] else "opus es-en", True))
    window = MainWindow(tmp_path / "ws")
    qtbot.addWidget(window)
    action = next(a for m in window.menuBar().actions() if m.text() == "&File"
                  for a in m.menu().actions() if a.text() == "Import &model…")
    action.trigger()
    qtbot.waitUntil(lambda: [r.status for r in window.workspace.list_runs()] == ["finished"],
                    timeout=60000)
    run = window.workspace.list_runs()[0]
    assert (run.name, run.family, run.status) == ("opus es-en", "marian", "finished")
    qtbot.waitUntil(lambda: window.translate.models.run_ids() == [run.id], timeout=15000)
    assert window.attention.models.run_ids() == [run.id]
    window.close()


def test_import_model_menu_takes_an_onmt_checkpoint_file(qtbot, tmp_path, monkeypatch):
    """Choosing 'OpenNMT-py checkpoint' asks for a file (not a folder); the run is named
    after the file without its suffix and is a luong run."""
    from tests.core.onmt_logs import FIXTURES

    asked = []
    monkeypatch.setattr(model_import, "ask_folder", lambda *a: asked.append("folder"))
    monkeypatch.setattr(model_import, "ask_open_path",
                        lambda *a: asked.append(a[-1]) or
                        str(FIXTURES / "lstm-general-feed" / "model.pt"))
    monkeypatch.setattr(model_import.QInputDialog, "getItem",
                        lambda *a: (model_import.CHOICES[1], True))
    monkeypatch.setattr(model_import.QInputDialog, "getText", lambda *a: (a[-1], True))
    window = MainWindow(tmp_path / "ws")
    qtbot.addWidget(window)
    action = next(a for m in window.menuBar().actions() if m.text() == "&File"
                  for a in m.menu().actions() if a.text() == "Import &model…")
    action.trigger()
    qtbot.waitUntil(lambda: [r.status for r in window.workspace.list_runs()] == ["finished"],
                    timeout=60000)
    run = window.workspace.list_runs()[0]
    assert (run.name, run.family) == ("model", "luong")
    assert asked == ["OpenNMT-py checkpoints (*.pt);;All files (*)"]
    window.close()


def test_the_languages_typed_at_import_are_the_runs(qtbot, tmp_path, monkeypatch):
    """The import asks which languages the model translates: 'es-en' typed there makes an
    OpenNMT-py run (whose file names none) es -> en; three codes are refused unimported."""
    from core.services.alignment_runs import run_languages
    from tests.core.onmt_logs import FIXTURES

    model = str(FIXTURES / "lstm-general-feed" / "model.pt")
    monkeypatch.setattr(model_import, "ask_open_path", lambda *a: model)
    monkeypatch.setattr(model_import.QInputDialog, "getItem",
                        lambda *a: (model_import.CHOICES[1], True))
    warned = []
    monkeypatch.setattr(model_import.QMessageBox, "warning", lambda *a: warned.append(a[2]))
    window = MainWindow(tmp_path / "ws")
    qtbot.addWidget(window)
    for typed in ("es en fr", "es-en"):
        monkeypatch.setattr(model_import.QInputDialog, "getText",
                            lambda *a, typed=typed: (typed if "Languages" in a[2] else a[-1],
                                                     True))
        job = model_import.ask_and_import(window, window.jobs, window.workspace, lambda: None)
        if typed == "es en fr":
            assert job is None and "give two language codes" in warned[0]
            continue
        qtbot.waitUntil(lambda job=job: job.done, timeout=60000)
    runs = window.workspace.list_runs()
    assert [run_languages(window.workspace, r) for r in runs] == [("es", "en")]
    window.close()

"""The main window and its workspace: five screens and five menus, the device named; a
corpus imported from the Corpora screen is listed, searched and counted, and a split of
it stored; an import without a language code, a new split under trained runs, a last
workspace that is gone and an emptied database are refused in a message; the last
workspace is remembered; a closed window leaves no top-level widget; `gui` takes the
workspace before or after its name."""
from __future__ import annotations

import gc

import pytest
from PySide6.QtCore import QEvent, QSettings
from PySide6.QtWidgets import QApplication, QMessageBox

from app import workers
from app.main_window import MainWindow


def _flush_deletes() -> None:
    """Run pending deleteLater()s (earlier tests' windows) and the garbage collector."""
    gc.collect()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    gc.collect()


def _wait_done(qtbot, job):
    qtbot.waitUntil(lambda: job.done, timeout=15000)


def test_the_window_opens_with_five_screens_five_menus_and_the_device(qtbot, tmp_path):
    window = MainWindow(tmp_path / "ws")
    qtbot.addWidget(window)
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert titles == ["Corpora", "Training", "Translate", "Attention", "Evaluation"]
    assert window.workspace is not None and (tmp_path / "ws").is_dir()
    menus = [a.text() for a in window.menuBar().actions()]
    assert menus == ["&File", "&Edit", "&View", "&Run", "&Help"]
    assert window.device_label.text()  # e.g. "CPU, 2 threads"
    window.close()


def _window_and_files(qtbot, tmp_path, src_text: str, tgt_text: str):
    """A window on a new workspace, and two line-parallel files c.en / c.fr to import."""
    src, tgt = tmp_path / "c.en", tmp_path / "c.fr"
    src.write_text(src_text, encoding="utf-8")
    tgt.write_text(tgt_text, encoding="utf-8")
    window = MainWindow(tmp_path / "ws")
    qtbot.addWidget(window)
    return src, tgt, window


def test_an_imported_corpus_is_listed_searched_and_counted_in_the_histogram(qtbot, tmp_path):
    src, tgt, window = _window_and_files(qtbot, tmp_path, "a house\nthe green house is big\nhello\n",
                                         "une maison\nla maison verte est grande\nbonjour\n")
    job = window.corpora.import_corpus("parallel", [str(src), str(tgt)], "en", "fr",
                                       {"lenient": False}, "tiny")
    _wait_done(qtbot, job)
    assert job.state == workers.FINISHED
    assert window.corpora.corpus_list.count() == 1
    qtbot.waitUntil(lambda: window.corpora.model.rowCount() == 3, timeout=10000)
    assert window.corpora.model.data(window.corpora.model.index(1, 3)) == "la maison verte est grande"
    # histogram: source lengths 2, 5, 1 -> with 5-token bins: [0,5): 2 pairs, [5,10): 1
    bars = window.corpora.histogram_bars[0]
    assert list(bars.opts["height"]) == [2, 1]
    window.corpora.search.setText("VERTE")
    assert window.corpora.model.rowCount() == 1
    assert window.training.corpus.count() == 1  # the training form sees the new corpus
    window.close()


@pytest.mark.real_dialogs
def test_import_error_shows_a_message_box(qtbot, tmp_path, monkeypatch):
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append(box.text()) or 0)
    src, tgt = tmp_path / "bad.en", tmp_path / "bad.fr"
    src.write_text("one\ntwo\nthree\n", encoding="utf-8")
    tgt.write_text("un\ndeux\n", encoding="utf-8")
    window = MainWindow(tmp_path / "ws")
    qtbot.addWidget(window)
    job = window.corpora.import_corpus("parallel", [str(src), str(tgt)], "en", "fr", {}, "bad")
    _wait_done(qtbot, job)
    qtbot.waitUntil(lambda: len(shown) == 1, timeout=5000)
    assert job.state == workers.FAILED
    assert "bad." in shown[0] and "line 3" in shown[0]  # names the file and the line
    assert window.corpora.corpus_list.count() == 0
    window.close()


def test_settings_remember_last_workspace(qtbot, tmp_path, temp_settings):
    window = MainWindow(tmp_path / "ws1")
    qtbot.addWidget(window)
    window.close()
    assert QSettings().value("workspace/last") == str((tmp_path / "ws1").resolve())
    assert str(temp_settings) in QSettings().fileName()  # never the user's config
    again = MainWindow(None)
    qtbot.addWidget(again)
    assert again.workspace.root == (tmp_path / "ws1").resolve()
    again.close()


def test_a_closed_window_leaves_no_top_level_widget(qtbot, tmp_path):
    app = QApplication.instance()
    _flush_deletes()
    before = len(app.topLevelWidgets())
    window = MainWindow(tmp_path / "ws")
    window.show()
    qtbot.waitExposed(window)
    assert len(app.topLevelWidgets()) > before
    window.close()
    window.deleteLater()
    del window
    _flush_deletes()
    assert len(app.topLevelWidgets()) == before


def test_split_from_the_corpora_screen_is_stored(qtbot, tmp_path):
    src, tgt = tmp_path / "c.en", tmp_path / "c.fr"
    src.write_text("".join(f"sentence {i}\n" for i in range(20)), encoding="utf-8")
    tgt.write_text("".join(f"phrase {i}\n" for i in range(20)), encoding="utf-8")
    window = MainWindow(tmp_path / "ws")
    qtbot.addWidget(window)
    _wait_done(qtbot, window.corpora.import_corpus("parallel", [str(src), str(tgt)], "en", "fr",
                                                   {"lenient": False}, "twenty"))
    panel = window.corpora
    panel.split_seed.setValue(7)
    for spin, value in zip(panel.split_ratios, (0.7, 0.2, 0.1), strict=True):
        spin.setValue(value)
    job = panel.store_split()
    _wait_done(qtbot, job)
    assert job.state == workers.FINISHED
    stored = window.workspace.load_split("twenty")
    assert {k: len(v) for k, v in stored.assignment.items()} == {"train": 14, "dev": 4, "test": 2}
    assert panel.split_label.text() == "train 14 · dev 4 · test 2"
    window.close()


def test_a_new_split_under_trained_runs_is_refused_in_a_message(qtbot, tmp_path, trained_ws,
                                                                 errors):
    """The Corpora screen's Store split on a corpus that runs trained on: the service's
    refusal reaches the user in a message box and the stored split stays."""
    import shutil

    root = tmp_path / "ws"
    shutil.copytree(trained_ws, root)
    window = MainWindow(root)
    qtbot.addWidget(window)
    panel = window.corpora
    panel.corpus_list.setCurrentRow(0)
    before = window.workspace.load_split("demo").assignment
    panel.split_seed.setValue(4242)
    for spin, value in zip(panel.split_ratios, (0.5, 0.25, 0.25), strict=True):
        spin.setValue(value)
    job = panel.store_split()
    _wait_done(qtbot, job)
    assert job.state == workers.FAILED
    assert len(errors) == 1
    assert "corpus 'demo' is used by runs glob, locp" in errors[0][1]
    assert window.workspace.load_split("demo").assignment == before
    window.close()


def test_an_import_without_a_language_code_is_refused_in_a_message(qtbot, tmp_path, errors):
    """The import dialog lets a language field be left empty: the service refuses it and
    the user sees why; nothing is stored."""
    src, tgt, window = _window_and_files(qtbot, tmp_path, "one\ntwo\n", "un\ndeux\n")
    job = window.corpora.import_corpus("parallel", [str(src), str(tgt)], "", "fr",
                                       {"lenient": False}, "nolang")
    _wait_done(qtbot, job)
    assert job.state == workers.FAILED
    assert len(errors) == 1 and "source language '': give a language code" in errors[0][1]
    assert window.workspace.list_corpora() == []
    window.close()


def test_a_last_workspace_that_is_gone_is_not_made_again_empty(qtbot, tmp_path, errors):
    """The remembered workspace's folder is gone (a drive not mounted, a folder moved):
    the workbench says so and opens none, instead of making a new empty workspace there
    (which would then hide or clash with the real one)."""
    MainWindow(tmp_path / "ws1").close()
    gone = tmp_path / "ws1"
    import shutil

    shutil.rmtree(gone)
    window = MainWindow(None)
    qtbot.addWidget(window)
    assert not gone.exists()
    assert window.workspace is None
    assert len(errors) == 1 and errors[0][0] == "Cannot open workspace"
    assert errors[0][1].startswith(f"{gone.resolve()}: no such folder")
    assert window.corpora.import_button.isEnabled() is False
    window.close()


def test_an_emptied_database_is_refused_with_the_command_lines_message(qtbot, tmp_path, errors):
    """A workspace whose database was emptied beside its corpora: the dialog says what the
    command line says (and how to rebuild), and no folder is deleted."""
    from core.data.corpus import Corpus, SentencePair
    from core.errors import StoreError
    from core.workspace.paths import CORPUS_META
    from core.workspace.store import Workspace

    with Workspace.open(tmp_path / "ws") as ws:
        ws.add_corpus(Corpus([SentencePair("hola", "hello", None, 1)], "es", "en", name="c"))
    db = tmp_path / "ws" / "workspace.sqlite"
    db.write_bytes(b"")
    with pytest.raises(StoreError) as err:
        Workspace.open(tmp_path / "ws")
    window = MainWindow(tmp_path / "ws")
    qtbot.addWidget(window)
    assert window.workspace is None
    assert errors == [("Cannot open workspace", str(err.value), "")]
    assert "workspace rebuild" in errors[0][1]
    assert (tmp_path / "ws" / "corpora" / "1" / CORPUS_META).is_file()
    window.close()


def test_gui_takes_workspace_before_or_after_its_name(monkeypatch):
    import main as entry
    from app import main_window

    opened = []
    monkeypatch.setattr(main_window, "launch",
                        lambda workspace=None, demo=False: opened.append((workspace, demo)) or 0)
    assert entry.main(["gui", "--workspace", "/data/ws"]) == 0
    assert entry.main(["--workspace", "/data/a", "gui", "--demo"]) == 0
    assert entry.main(["--workspace", "/data/a", "gui", "--workspace", "/data/b"]) == 0
    assert opened == [("/data/ws", False), ("/data/a", True), ("/data/b", False)]

"""What the workbench remembers from one session to the next (QSettings; in the tests a
temporary folder): the window's size, splitters and screen; the import dialog's language
pair; the folder each kind of file dialog last opened in (documents, figures)."""
from __future__ import annotations


def test_window_size_splitters_and_tab_come_back(qtbot, demo_ws):
    from app.main_window import MainWindow

    first = MainWindow(demo_ws)
    qtbot.addWidget(first)
    first.resize(1000, 650)
    first.show()
    qtbot.waitExposed(first)
    first.tabs.setCurrentWidget(first.attention)
    splitter = first._splitters()["Attention/1"]
    splitter.setSizes([500, sum(splitter.sizes()) - 500])
    qtbot.wait(20)
    sizes = splitter.sizes()
    first.close()

    second = MainWindow(demo_ws)
    qtbot.addWidget(second)
    second.show()
    qtbot.waitExposed(second)
    # the height comes back (a new window is 1400 x 900); the width is clamped to the
    # test's offscreen screen, 800 pixels wide, so is the window's minimum either way
    assert second.height() == 650
    assert second.tabs.currentWidget() is second.attention
    assert second._splitters()["Attention/1"].sizes() == sizes
    second.close()


def test_import_dialog_offers_the_last_language_pair(qtbot, tmp_path):
    from app.panels.import_dialog import ImportDialog

    first = ImportDialog(("parallel",), languages=("de", "en"))  # the newest corpus: de-en
    qtbot.addWidget(first)
    assert (first.src_lang.text(), first.tgt_lang.text()) == ("de", "en")
    first.src_lang.setText("es")
    first.tgt_lang.setText("en")
    for picker, name in zip(first.pickers, ("a.es", "a.en"), strict=False):
        (tmp_path / name).write_text("hola\n", encoding="utf-8")
        picker.edit.setText(str(tmp_path / name))
    first.accept()
    second = ImportDialog(("parallel",), languages=("de", "en"))
    qtbot.addWidget(second)
    assert (second.src_lang.text(), second.tgt_lang.text()) == ("es", "en")


def test_file_dialogs_open_in_the_last_folder_for_their_purpose(qtbot, tmp_path,
                                                                monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    from app import file_dialogs

    opened: list[str] = []
    docs, figs = tmp_path / "docs", tmp_path / "figs"
    docs.mkdir()
    figs.mkdir()
    answers = iter([(str(docs / "a.txt"), ""), (str(docs / "b.txt"), "")])
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda parent, title, start, *a: (opened.append(start),
                                                                       next(answers))[1]))
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda parent, title, start, *a: (opened.append(start),
                                                                       (str(figs / "f.svg"), ""))[1]))
    file_dialogs.ask_open_path(None, "Open document", "documents")
    file_dialogs.ask_save_path(None, "Export figure", "figures", "fig.png", "SVG (*.svg)")
    file_dialogs.ask_open_path(None, "Open document", "documents")
    file_dialogs.ask_save_path(None, "Export figure", "figures", "fig.png", "SVG (*.svg)")
    import os

    assert opened[0] != os.getcwd() and opened[0] == str(__import__("pathlib").Path.home())
    assert opened[2] == str(docs)  # documents: where the last document was
    assert opened[3] == str(figs / "fig.png")  # figures: their own last folder

"""The import dialog refuses what cannot be imported while it is still open: the user
fixes the field instead of filling the whole form again after a puzzling job error."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QDialog

from app.panels.import_dialog import ImportDialog


def _dialog(qtbot, fmt: str = "parallel") -> ImportDialog:
    dialog = ImportDialog(("parallel", "tsv", "tmx", "docs"))
    qtbot.addWidget(dialog)
    dialog.format.setCurrentIndex(dialog.format.findData(fmt))
    dialog.show()
    return dialog


def _read(qtbot, dialog: ImportDialog) -> ImportDialog:
    """Wait for the preview (and TSV column guess) the dialog reads in a job."""
    qtbot.waitUntil(lambda: not dialog.reading_preview, timeout=10000)
    return dialog


def test_an_empty_required_file_keeps_the_dialog_open_and_names_the_field(qtbot, tmp_path,
                                                                          errors):
    source = tmp_path / "a.es"
    source.write_text("hola\n", encoding="utf-8")
    dialog = _dialog(qtbot)
    dialog.pickers[0].edit.setText(str(source))
    dialog.accept()  # the target file left empty
    assert dialog.isVisible() and dialog.result() != QDialog.DialogCode.Accepted
    assert errors == [("Import corpus",
                       "Target file: choose a file (Browse\u2026) or type its path.", "")]
    assert dialog.pickers[0].path() == str(source)  # what the user typed stays


def test_a_missing_file_and_bad_language_codes_are_refused_in_the_dialog(qtbot, tmp_path,
                                                                         errors):
    dialog = _dialog(qtbot, "tsv")
    dialog.pickers[0].edit.setText(str(tmp_path / "gone.tsv"))
    dialog.accept()
    assert errors[-1][1] == f"TSV file: {tmp_path / 'gone.tsv'}: no such file; check the path."
    dialog.pickers[0].edit.setText(str(tmp_path))
    dialog.accept()
    assert errors[-1][1] == f"TSV file: {tmp_path}: is a folder; choose a file in it."
    good = tmp_path / "pairs.tsv"
    good.write_text("hello\thola\n", encoding="utf-8")
    dialog.pickers[0].edit.setText(str(good))
    dialog.src_lang.setText("")
    dialog.accept()
    assert "source language ''" in errors[-1][1]
    assert dialog.isVisible() and len(errors) == 3
    dialog.src_lang.setText("en")
    dialog.accept()
    assert dialog.result() == QDialog.DialogCode.Accepted and len(errors) == 3
    # the optional document-id file may stay empty
    dialog = _dialog(qtbot)
    dialog.pickers[0].edit.setText(str(good))
    dialog.pickers[1].edit.setText(str(good))
    dialog.accept()
    assert dialog.result() == QDialog.DialogCode.Accepted and len(errors) == 3


def _demo_lines(lang: str) -> list[str]:
    return (Path(__file__).resolve().parents[2] / "resources" / "demo" / f"demo.{lang}"
            ).read_text(encoding="utf-8").splitlines()


def _headers_and_first_row(dialog: ImportDialog) -> tuple[list[str], list[str]]:
    table = dialog.preview_table
    return ([table.horizontalHeaderItem(k).text() for k in range(2)],
            [table.item(0, k).text() for k in range(2)])


def test_tsv_preview_shows_the_guessed_columns_under_their_languages(qtbot, tmp_path):
    spanish, english = _demo_lines("es"), _demo_lines("en")
    en_es, es_en = tmp_path / "en-es.tsv", tmp_path / "es-en.tsv"
    en_es.write_text("".join(f"{e}\t{s}\n" for e, s in zip(english, spanish, strict=True)),
                     encoding="utf-8")
    es_en.write_text("".join(f"{s}\t{e}\n" for e, s in zip(english, spanish, strict=True)),
                     encoding="utf-8")
    dialog = _dialog(qtbot, "tsv")
    dialog.src_lang.setText("es")
    dialog.tgt_lang.setText("en")
    assert dialog.preview_table.isVisible() and not dialog.preview.isVisible()
    for path, es_col in ((es_en, 0), (en_es, 1)):
        dialog.pickers[0].edit.setText(str(path))
        _read(qtbot, dialog)
        assert (dialog.src_col.value(), dialog.tgt_col.value()) == (es_col, 1 - es_col)
        assert _headers_and_first_row(dialog) == (
            [f"Spanish (es): source, column {es_col}",
             f"English (en): target, column {1 - es_col}"], [spanish[0], english[0]])
        assert dialog.preview_table.rowCount() == 8
        assert dialog.guess_label.text() == (
            f"Columns guessed from the text: column {es_col} is Spanish (es) (source), "
            f"column {1 - es_col} is English (en) (target): 199 of 200 sampled lines agree")
        assert dialog.request()["options"] == {"lenient": False, "src_col": es_col,
                                               "tgt_col": 1 - es_col}
    # the user swaps the columns of en-es.tsv: kept, the headers follow, a warning says
    # the text disagrees; the languages edited afterwards do not undo the user's choice
    dialog.src_col.setValue(0)
    dialog.tgt_col.setValue(1)
    assert _headers_and_first_row(dialog) == (
        ["Spanish (es): source, column 0", "English (en): target, column 1"],
        [english[0], spanish[0]])
    assert dialog.guess_label.text().startswith(
        "Warning: column 0 is read as es (source) and column 1 as en (target), but the "
        "text says the opposite: column 1 looks like es")
    dialog.tgt_lang.setText("eng")
    _read(qtbot, dialog)
    assert (dialog.src_col.value(), dialog.tgt_col.value()) == (0, 1)


def test_an_unsure_tsv_guess_keeps_the_columns_and_warns(qtbot, tmp_path):
    english = _demo_lines("en")
    twice = tmp_path / "twice.tsv"  # English in both columns
    twice.write_text("".join(f"{a}\t{b}\n" for a, b in zip(english[1:], english, strict=False)),
                     encoding="utf-8")
    dialog = _dialog(qtbot, "tsv")
    dialog.src_lang.setText("es")
    dialog.tgt_lang.setText("en")
    dialog.pickers[0].edit.setText(str(twice))
    _read(qtbot, dialog)
    assert (dialog.src_col.value(), dialog.tgt_col.value()) == (1, 0)
    assert dialog.guess_label.text() == (
        "Warning: could not tell which column is es and which en (both columns look like "
        "English (en)); kept column 1 as es and column 0 as en: check the pairs, or set "
        "the TSV columns")
    assert _headers_and_first_row(dialog)[1] == [english[0], english[1]]


def test_the_preview_and_column_guess_are_read_off_the_gui_thread(qtbot, tmp_path,
                                                                  monkeypatch):
    """Reading the file and guessing its columns happen in a job; Import waits for them
    (the guess may set the columns), then the guessed columns reach the dialog."""
    import threading

    from core.services import corpora

    spanish, english = _demo_lines("es"), _demo_lines("en")
    en_es = tmp_path / "en-es.tsv"
    en_es.write_text("".join(f"{e}\t{s}\n" for e, s in zip(english, spanish, strict=True)),
                     encoding="utf-8")
    threads, release = [], threading.Event()
    real_lines, real_guess = corpora.first_lines, corpora.guess_tsv_columns

    def held_lines(path, *args):
        threads.append(threading.current_thread())
        assert release.wait(10)
        return real_lines(path, *args)

    def guess(*args, **kwargs):
        threads.append(threading.current_thread())
        return real_guess(*args, **kwargs)

    monkeypatch.setattr(corpora, "first_lines", held_lines)
    monkeypatch.setattr(corpora, "guess_tsv_columns", guess)
    dialog = _dialog(qtbot, "tsv")
    dialog.src_lang.setText("es")
    dialog.tgt_lang.setText("en")
    dialog.pickers[0].edit.setText(str(en_es))
    qtbot.waitUntil(lambda: len(threads) == 1, timeout=5000)
    assert dialog.reading_preview and not dialog.import_button.isEnabled()
    release.set()
    _read(qtbot, dialog)
    assert dialog.import_button.isEnabled()
    assert len(threads) == 2 and threading.main_thread() not in threads
    assert (dialog.src_col.value(), dialog.tgt_col.value()) == (1, 0)
    assert _headers_and_first_row(dialog)[1] == [spanish[0], english[0]]


def test_a_preview_that_crashes_is_reported_and_the_dialog_stays_usable(qtbot, tmp_path,
                                                                        monkeypatch, errors):
    from core.services import corpora

    def broken(path, *args):
        raise RuntimeError("decoder exploded")

    monkeypatch.setattr(corpora, "first_lines", broken)
    source = tmp_path / "a.es"
    source.write_text("hola\n", encoding="utf-8")
    dialog = _dialog(qtbot)
    dialog.pickers[0].edit.setText(str(source))
    _read(qtbot, dialog)
    assert [e[:2] for e in errors] == [("Preview import failed",
                                        "RuntimeError: decoder exploded")]
    assert "Traceback" in errors[0][2]  # a programming error: its traceback under details
    assert dialog.preview.toPlainText() == "cannot preview: RuntimeError: decoder exploded"
    assert dialog.import_button.isEnabled()

"""The import dialog refuses what cannot be imported while it is still open: the user
fixes the field instead of filling the whole form again after a puzzling job error."""
from __future__ import annotations

from PySide6.QtWidgets import QDialog

from app.panels.import_dialog import ImportDialog


def _dialog(qtbot, fmt: str = "parallel") -> ImportDialog:
    dialog = ImportDialog(("parallel", "tsv", "tmx", "docs"))
    qtbot.addWidget(dialog)
    dialog.format.setCurrentIndex(dialog.format.findData(fmt))
    dialog.show()
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

"""The Translate screen gives the translated document back in its own form, under the
name the user typed (in the chosen type's format when the name has no suffix), and copies
targets to the clipboard."""
from __future__ import annotations

import docx
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app import workers
from app.panels.translate import TranslatePanel
from core.services import translation
from tests.app.conftest import export_chosen


def panel_with(qtbot, document: translation.Document, targets: list[str]) -> TranslatePanel:
    panel = TranslatePanel(workers.JobManager())
    qtbot.addWidget(panel)
    panel.set_sentences(document.sentences, targets, document=document)
    return panel


def save_as(monkeypatch, path, chosen_filter: str) -> None:
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(
        lambda *a, **k: (str(path), chosen_filter)))


def test_a_typed_docx_name_is_written_as_the_translated_docx(qtbot, tmp_path, monkeypatch):
    """The translator opened informe.docx, typed 'informe_en.docx' and left the TMX type
    chosen: the translated Word document is written there, not 'informe_en.docx.tmx'."""
    d = docx.Document()
    d.add_heading("Hola.", level=1)
    d.add_paragraph("La casa es verde. El perro come.")
    d.save(tmp_path / "informe.docx")
    document = translation.read_document(tmp_path / "informe.docx", "es")
    panel = panel_with(qtbot, document, ["Hello.", "The house is green.", "The dog eats."])
    save_as(monkeypatch, tmp_path / "informe_en.docx", "TMX 1.4 (*.tmx)")
    export_chosen(qtbot, panel)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["informe.docx", "informe_en.docx"]
    out = docx.Document(tmp_path / "informe_en.docx")
    assert [(p.style.name, p.text) for p in out.paragraphs] == [
        ("Heading 1", "Hello."), ("Normal", "The house is green. The dog eats.")]


def test_an_unknown_typed_suffix_is_not_doubled_without_asking(qtbot, tmp_path, monkeypatch):
    document = translation.Document.of_lines(["Hola."])
    panel = panel_with(qtbot, document, ["Hello."])
    save_as(monkeypatch, tmp_path / "informe.odt", "TMX 1.4 (*.tmx)")
    asked: list[str] = []
    answer = [QMessageBox.StandardButton.No]
    monkeypatch.setattr(QMessageBox, "question", staticmethod(
        lambda parent, title, text, *a, **k: asked.append(text) or answer[0]))
    export_chosen(qtbot, panel)
    assert len(asked) == 1 and "informe.odt ends in .odt" in asked[0]
    assert "informe.odt.tmx" in asked[0]
    assert list(tmp_path.iterdir()) == []  # refused: nothing written
    answer[0] = QMessageBox.StandardButton.Yes
    export_chosen(qtbot, panel)
    assert [p.name for p in tmp_path.iterdir()] == ["informe.odt.tmx"]


def test_a_text_export_keeps_the_paragraphs_and_blank_lines(qtbot, tmp_path, monkeypatch):
    source = tmp_path / "carta.txt"
    source.write_text("Hola. El perro come.\n\nLa casa es verde.\n", encoding="utf-8")
    document = translation.read_document(source, "es")
    panel = panel_with(qtbot, document, ["Hello.", "The dog eats.", "The house is green."])
    panel.table.item(1, 1).setText("The dog is eating.")  # an edit is exported too
    save_as(monkeypatch, tmp_path / "carta_en.txt", "Plain text (*.txt *.md)")
    export_chosen(qtbot, panel)
    assert (tmp_path / "carta_en.txt").read_text(encoding="utf-8") == \
        "Hello. The dog is eating.\n\nThe house is green.\n"


def test_selected_targets_go_to_the_clipboard_in_row_order(qtbot):
    document = translation.Document.of_lines(["Uno.", "Dos.", "Tres.", "Cuatro."])
    panel = panel_with(qtbot, document, ["One.", "Two.", "Three.", "Four."])
    QGuiApplication.clipboard().setText("")
    model, selection = panel.table.model(), panel.table.selectionModel()
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    for row in (3, 0, 2):  # selected out of order, with Ctrl
        selection.select(model.index(row, 0), flags)
    panel.show()  # a shortcut needs its window active and the table focused
    qtbot.waitExposed(panel)
    panel.activateWindow()
    panel.table.setFocus()
    qtbot.waitUntil(lambda: panel.table.hasFocus())
    qtbot.keyClick(panel.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "One.\nThree.\nFour."
    panel.copy_button.click()  # every target
    assert QGuiApplication.clipboard().text() == "One.\nTwo.\nThree.\nFour."
    assert "Copied 4 targets" in panel.status.text()


def test_translation_export_follows_the_chosen_filter(qtbot, tmp_path, save_dialog,
                                                      errors):
    answers, _ = save_dialog
    jobs = workers.JobManager()
    panel = TranslatePanel(jobs)
    qtbot.addWidget(panel)
    panel.set_sentences(["Hola."], ["Hello."])
    answers.append((str(tmp_path / "doc"), "XLIFF 1.2 (*.xlf *.xliff)"))
    export_chosen(qtbot, panel)
    assert errors == []
    assert b"<xliff" in (tmp_path / "doc.xlf").read_bytes()
    jobs.shutdown()

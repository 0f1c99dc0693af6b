"""Nothing the user made is lost: target sentences edited on the Translate screen are
replaced (by translating again, opening another document, translating typed text) only
after the user agreed to discard them; without edits nobody is asked."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from app import workers
from app.panels.translate import TranslatePanel
from tests.app.conftest import job_result, shown_panel

YES, NO = QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No


@pytest.fixture
def panel(qtbot, trained_ws):
    yield from shown_panel(qtbot, TranslatePanel, trained_ws, 1200)


class Questions:
    """QMessageBox.question replaced: each question asked (title, text, buttons, default)
    goes into `asked`, and is answered `answer`."""

    def __init__(self, monkeypatch, answer: QMessageBox.StandardButton):
        self.asked: list[tuple] = []
        self.answer = answer
        monkeypatch.setattr(QMessageBox, "question", staticmethod(
            lambda parent, title, text, buttons, default: self.asked.append(
                (title, text, buttons, default)) or self.answer))


def _run(qtbot, job: workers.Job | None) -> None:
    assert job is not None
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    assert job.state == workers.FINISHED


def _glob(panel: TranslatePanel) -> int:
    return next(r.id for r in panel.workspace.list_runs() if r.name == "glob")


def test_translating_again_asks_before_replacing_edited_targets(qtbot, panel, monkeypatch,
                                                                errors):
    panel.models.set_checked([_glob(panel)])
    panel.set_sentences(["La casa es verde.", "Mi hermana vive en Madrid."])
    _run(qtbot, panel.translate())
    machine = panel.targets()
    panel.table.item(1, 1).setText("My sister lives in Madrid.")  # the user's edit
    questions = Questions(monkeypatch, NO)
    asked = questions.asked
    jobs_before = list(panel.jobs.jobs)
    assert panel.translate() is None
    assert len(asked) == 1
    title, text, buttons, default = asked[0]
    assert title == "Discard edited translations?"
    assert "1 sentence (row 2)" in text and "Translating again" in text
    assert buttons == YES | NO and default == NO
    assert panel.jobs.jobs == jobs_before  # nothing started
    assert panel.targets() == [machine[0], "My sister lives in Madrid."]
    assert len(panel.translations) == 2
    questions.answer = YES
    _run(qtbot, panel.translate())
    assert len(asked) == 2
    assert panel.targets() == machine  # the model's translation again
    _run(qtbot, panel.translate())  # no edits now: no question
    assert len(asked) == 2
    assert errors == []


def test_an_edit_beside_a_compared_baseline_is_asked_about_too(qtbot, panel, monkeypatch,
                                                               errors):
    """In a comparison the editable column is still the model's: an edit there is kept
    unless the user agrees; the comparison's own output is no edit."""
    locp = next(r.id for r in panel.workspace.list_runs() if r.name == "locp")
    panel.models.set_checked([_glob(panel)])
    panel.compare.enabled.setChecked(True)
    panel.compare.baseline.setCurrentIndex(panel.compare.baseline.findData(locp))
    panel.set_sentences(["La casa es verde.", "Hola."])
    _run(qtbot, panel.translate())
    assert panel.comparison is not None
    _run(qtbot, panel.translate())  # nothing edited: translated again, unasked
    panel.table.item(0, 1).setText("The green house.")
    questions = Questions(monkeypatch, NO)
    asked = questions.asked
    assert panel.translate() is None
    assert len(asked) == 1 and "row 1" in asked[0][1]
    assert panel.targets()[0] == "The green house."
    assert panel.comparison is not None and panel.table.columnCount() == 4
    assert errors == []


def test_opening_a_document_or_typed_text_asks_before_replacing_edited_targets(
        qtbot, tmp_path, panel, monkeypatch, errors):
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("La casa es verde. Hola.\n", encoding="utf-8")
    second.write_text("El perro come.\n", encoding="utf-8")
    panel.set_sentences(["Hola."], ["Hello."])  # targets the screen wrote: no edit
    _run(qtbot, panel.open_document(first))  # unasked
    assert panel.sources() == ["La casa es verde.", "Hola."]
    panel.table.item(0, 1).setText("The house is green.")
    questions = Questions(monkeypatch, NO)
    asked = questions.asked
    assert panel.open_document(second) is None
    panel.typed.setPlainText("Mi hermana vive en Madrid.")
    assert panel.translate_typed() is None
    assert len(asked) == 2
    assert "Opening second.txt would lose it." in asked[0][1]
    assert "Translating the typed text would lose it." in asked[1][1]
    assert panel.sources() == ["La casa es verde.", "Hola."]
    assert panel.targets() == ["The house is green.", ""]
    assert panel.document_path == first
    assert panel.typed.toPlainText() == "Mi hermana vive en Madrid."
    questions.answer = YES
    _run(qtbot, panel.open_document(second))
    assert len(asked) == 3
    assert panel.sources() == ["El perro come."] and panel.targets() == [""]
    assert errors == []


def test_closing_or_leaving_the_workspace_asks_before_losing_edited_targets(
        qtbot, tmp_path, monkeypatch, errors):
    """The main window's close and Open Workspace go through the Translate screen's
    question too: No keeps the window, the workspace and the edits."""
    from app.main_window import MainWindow

    window = MainWindow(tmp_path / "first")
    qtbot.addWidget(window)
    window.show()
    screen = window.translate
    screen.set_sentences(["Hola.", "Adiós."], ["Hello.", "Goodbye."])
    screen.table.item(0, 1).setText("Hi.")  # the user's edit
    questions = Questions(monkeypatch, NO)
    assert not window.open_workspace(tmp_path / "second")
    assert window.workspace.root == tmp_path / "first" and not (tmp_path / "second").exists()
    assert "Opening another workspace would lose it." in questions.asked[0][1]
    assert not window.close()  # the close event was ignored
    assert window.isVisible() and window.workspace is not None
    assert "Closing the workbench would lose it." in questions.asked[1][1]
    assert screen.targets() == ["Hi.", "Goodbye."]
    questions.answer = YES
    assert window.open_workspace(tmp_path / "second")
    assert window.workspace.root == tmp_path / "second" and screen.targets() == ["", ""]
    assert len(questions.asked) == 3
    assert window.close()  # nothing edited any more: no question
    assert len(questions.asked) == 3 and errors == []


def test_edits_exported_to_a_file_are_not_asked_about(qtbot, tmp_path, monkeypatch, errors):
    """Edits are lost only until they are exported: then closing asks nothing; a new
    edit after the export asks again."""
    from app.main_window import MainWindow

    window = MainWindow(tmp_path / "ws")
    qtbot.addWidget(window)
    window.show()
    screen = window.translate
    screen.set_sentences(["Hola.", "Adiós."], ["Hello.", "Goodbye."])
    screen.table.item(0, 1).setText("Hi.")
    questions = Questions(monkeypatch, NO)
    assert job_result(qtbot, screen.export(tmp_path / "out.txt")) == [tmp_path / "out.txt"]
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").splitlines() == ["Hi.", "Goodbye."]
    assert screen.edited_rows() == []
    screen.table.item(1, 1).setText("Bye.")
    assert screen.edited_rows() == [1]
    assert not window.close() and "1 sentence (row 2)" in questions.asked[0][1]
    job_result(qtbot, screen.export(tmp_path / "out.txt"))
    assert window.close() and len(questions.asked) == 1 and errors == []


def test_targets_cannot_be_edited_while_a_translation_runs(qtbot, panel, errors):
    """The running translation's result fills the targets: an edit made meanwhile would
    be overwritten, so the column takes none until the job ends."""
    from PySide6.QtWidgets import QAbstractItemView

    editable = panel.table.editTriggers()
    assert editable != QAbstractItemView.EditTrigger.NoEditTriggers
    panel.models.set_checked([_glob(panel)])
    panel.set_sentences(["La casa es verde.", "Mi hermana vive en Madrid."])
    job = panel.translate()
    assert not job.done
    assert panel.table.editTriggers() == QAbstractItemView.EditTrigger.NoEditTriggers
    _run(qtbot, job)
    assert panel.table.editTriggers() == editable
    assert errors == []

"""What the translator and the researcher expected on the Translate and Evaluation
screens: undo / redo of target edits (Edit menu), rows flagged where the
output may invent or drop content, and the decoding settings in the exports' metadata
and the HTML report's header."""
from __future__ import annotations

import re
from html import unescape

import pytest
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMessageBox

from app import workers
from app.main_window import MainWindow
from app.panels.evaluation import EvaluationPanel
from app.panels.translate import TranslatePanel
from app.panels.translate_checks import FLAG, TINT, flagged_rows
from core.evaluate.output_checks import check_translations
from core.formats.export import read_translations
from core.infer.decoding import KEYS
from core.workspace.store import Workspace
from tests.app.conftest import job_result, shown_panel


@pytest.fixture
def panel(qtbot, trained_ws):
    yield from shown_panel(qtbot, TranslatePanel, trained_ws, 1200)


def _run(qtbot, job) -> None:
    assert job is not None
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    assert job.state == workers.FINISHED


def _glob(panel: TranslatePanel) -> int:
    return next(r.id for r in panel.workspace.list_runs() if r.name == "glob")


def _no_questions(monkeypatch) -> list:
    asked: list = []
    monkeypatch.setattr(QMessageBox, "question", staticmethod(
        lambda *a: asked.append(a) or QMessageBox.StandardButton.No))
    return asked


# --- undo / redo -------------------------------------------------------------------------
def test_undo_restores_the_previous_target_and_its_unedited_state(qtbot, panel, monkeypatch,
                                                                  errors):
    panel.models.set_checked([_glob(panel)])
    panel.set_sentences(["La casa es verde.", "Mi hermana vive en Madrid."])
    _run(qtbot, panel.translate())
    machine = panel.targets()
    stack = panel.history.stack
    assert stack.count() == 0  # the screen's own writes are no edits
    panel.table.item(1, 1).setText("My sister lives in Madrid.")
    panel.table.item(1, 1).setText("My sister lives in Madrid, Spain.")
    assert panel.edited_rows() == [1] and stack.count() == 2
    stack.undo()
    assert panel.targets() == [machine[0], "My sister lives in Madrid."]
    assert panel.edited_rows() == [1]
    stack.undo()
    assert panel.targets() == machine and panel.edited_rows() == []
    asked = _no_questions(monkeypatch)
    assert panel.may_discard_edits("Translating again") and asked == []  # nothing to lose
    stack.redo()
    assert panel.targets()[1] == "My sister lives in Madrid." and panel.edited_rows() == [1]
    assert not panel.may_discard_edits("Translating again") and len(asked) == 1
    assert stack.undoText() == "edit of row 2"
    monkeypatch.setattr(QMessageBox, "question",
                        staticmethod(lambda *a: QMessageBox.StandardButton.Yes))
    _run(qtbot, panel.translate())  # new targets: a new history
    assert panel.targets() == machine and stack.count() == 0
    assert errors == []


def test_the_edit_menu_undoes_and_redoes_on_the_translate_screen_only(qtbot, tmp_path):
    window = MainWindow(tmp_path / "ws")
    qtbot.addWidget(window)
    menus = {a.text(): a.menu() for a in window.menuBar().actions()}
    assert [a.text() for a in menus["&Edit"].actions()][:2] == ["&Undo", "&Redo"]
    assert window.undo_action.shortcut() == QKeySequence("Ctrl+Z")
    assert {k.toString() for k in window.redo_action.shortcuts()} >= {"Ctrl+Shift+Z", "Ctrl+Y"}
    panel = window.translate
    window.tabs.setCurrentWidget(panel)
    panel.set_sentences(["Hola.", "Adiós."], ["Hello.", "Goodbye."])
    assert not window.undo_action.isEnabled()
    panel.table.item(0, 1).setText("Hi.")
    assert window.undo_action.isEnabled() and window.undo_action.text() == "&Undo edit of row 1"
    window.undo_action.trigger()
    assert panel.targets() == ["Hello.", "Goodbye."] and panel.edited_rows() == []
    window.redo_action.trigger()
    assert panel.targets() == ["Hi.", "Goodbye."] and panel.edited_rows() == [0]
    window.tabs.setCurrentWidget(window.corpora)  # another screen: nothing to undo there
    assert not window.undo_action.isEnabled()
    window.undo_action.trigger()
    assert panel.targets() == ["Hi.", "Goodbye."]
    window.tabs.setCurrentWidget(panel)
    assert window.undo_action.isEnabled()
    window.undo_action.trigger()  # nothing edited now: closing asks nothing
    assert panel.edited_rows() == []
    window.close()


# --- warnings ------------------------------------------------------------------------------
def test_rows_whose_output_may_drop_content_are_flagged_with_why(qtbot, panel, errors):
    sources = ["La casa de Pedro tiene 3 ventanas.", "Hola."]
    panel.models.set_checked([_glob(panel)])
    panel.set_sentences(sources)
    _run(qtbot, panel.translate())
    # the machine's rows: flagged as the core's rules say
    expected = [row for row, found in enumerate(check_translations(
        sources, panel.targets(), "es", "en")) if found]
    assert flagged_rows(panel.table) == expected
    panel.table.item(0, 1).setText("The house has windows.")  # the user's edit is checked
    item = panel.table.item(0, 1)
    assert item.toolTip() == ("Check this translation:\n"
                              "\u2022 the number 3 of the source is not in the output\n"
                              "\u2022 the name 'Pedro' of the source is not in the output")
    assert item.background().color() == TINT
    assert panel.table.verticalHeaderItem(0).text() == f"{FLAG} 1"
    assert 0 in flagged_rows(panel.table)
    panel.table.item(0, 1).setText("Pedro's house has 3 windows.")
    assert item.toolTip() == "" and 0 not in flagged_rows(panel.table)
    assert panel.table.verticalHeaderItem(0).text() == "1"
    panel.history.stack.undo()  # the flag follows an undo too
    assert panel.targets()[0] == "The house has windows." and 0 in flagged_rows(panel.table)
    panel.set_sentences(["Otra frase."])  # another document: no flag left
    assert flagged_rows(panel.table) == []
    assert errors == []


# --- decoding settings ------------------------------------------------------------------------
def test_an_export_records_how_the_screen_translated(qtbot, panel, tmp_path, errors):
    panel.models.set_checked([_glob(panel)])
    panel.beam.setValue(3)
    panel.unk.setChecked(True)
    panel.set_sentences(["La casa es verde.", "Hola."])
    _run(qtbot, panel.translate())
    panel.table.item(1, 1).setText("Hello there.")
    session = panel.sessions.get(panel.workspace, [_glob(panel)])
    used = {"runs": ["glob"], "checkpoints": [session.first.checkpoint.name],
            "steps": [session.first.step], "beam": 3, "length_penalty": 0.0,
            "precision": "fp32", "device": "cpu", "shortlist": None, "unk_replace": True,
            "target_context": False}
    for name in ("out.tmx", "out.xlf", "out.jsonl"):
        [path] = job_result(qtbot, panel.export(tmp_path / name))
        back = read_translations(path)
        assert [r.translation for r in back] == panel.targets()
        assert [r.meta["decoding"] for r in back] == [used, used], name
    assert read_translations(tmp_path / "out.jsonl")[1].meta["edited"] is True
    assert errors == []


def test_the_evaluation_report_header_lists_each_rows_decoding(qtbot, tmp_path):
    ws = Workspace.open(tmp_path / "ws", create=True)
    old = ws.create_run("old", {"model": {"family": "luong"}}, None)
    new = ws.create_run("new", {"model": {"family": "luong"}}, None)
    for run in (old, new):
        ws.update_run(run, status="finished")
    ws.add_evaluation([old], "demo:test", {"bleu": 20.0, "beam": 5})  # stored before
    settings = {"runs": ["new"], "checkpoints": ["best-00000400.pt"], "steps": [400],
                "beam": 4, "length_penalty": 0.0, "precision": "fp32", "device": "cpu",
                "shortlist": "50,100", "unk_replace": False, "target_context": False}
    ws.add_evaluation([new], "demo:test", {"bleu": 25.0, "beam": 4, "decoding": settings})
    panel = EvaluationPanel(workers.JobManager())
    qtbot.addWidget(panel)
    panel.set_workspace(ws)
    page = job_result(qtbot, panel.write_report(tmp_path / "report.html")).read_text(
        encoding="utf-8")
    head = page[page.index("<header>"):page.index("</header>")]
    rows = [[unescape(c) for c in re.findall(r"<t[dh]>(.*?)</t[dh]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", head)]
    assert rows[0] == ["system", *KEYS]
    assert sorted(rows[1:]) == sorted([
        [f"{new}: new on demo:test", "new", "best-00000400.pt", "400", "4", "0.0", "fp32",
         "cpu", "50,100", "no", "no"],
        [f"{old}: old on demo:test", "not recorded", *["–"] * (len(KEYS) - 1)]])
    ws.close()

"""Renaming and deleting runs and corpora from the Training and Corpora screens: the
confirmation names what goes and what stays, Cancel keeps everything, a run still training
or a corpus a run uses is refused with the reason, a taken name is refused with the
store's message, and a renamed corpus keeps its runs."""
from __future__ import annotations

import pytest

from tests.app.conftest import shown_panel


@pytest.fixture
def dialogs(monkeypatch):
    """The manage dialogs replaced: answers to give, texts shown."""
    from app.panels import manage

    seen: dict[str, list[str]] = {"confirm": [], "refuse": []}
    answers = {"confirm": True, "name": None}
    monkeypatch.setattr(manage, "confirm", lambda parent, title, text: (
        seen["confirm"].append(text), answers["confirm"])[1])
    monkeypatch.setattr(manage, "refuse", lambda parent, title, text: seen["refuse"].append(text))
    monkeypatch.setattr(manage, "ask_name", lambda parent, title, current: answers["name"])
    return seen, answers


def _table_names(panel) -> list[str]:
    return [panel.runs_table.item(r, 0).text() for r in range(panel.runs_table.rowCount())]


def test_delete_a_run_names_what_goes_and_touches_nothing_else(qtbot, copied_ws,
                                                               dialogs):
    from app.panels.training import TrainingPanel

    seen, answers = dialogs
    panel = next(shown_panel(qtbot, TrainingPanel, copied_ws, 1400, 900))
    ws = panel.workspace
    glob, locp = ws.get_run("glob"), ws.get_run("locp")
    glob_files = sorted(p.name for p in glob.path.iterdir())
    panel.runs_table.selectRow(1)
    answers["confirm"] = False  # Cancel: nothing goes
    panel.delete_action.trigger()
    assert "locp" in seen["confirm"][0] and locp.path.is_dir()
    answers["confirm"] = True
    panel.delete_action.trigger()
    text = seen["confirm"][1]
    assert "\u201clocp\u201d" in text and "checkpoints" in text and "corpus and the other runs stay" in text
    assert _table_names(panel) == ["1: glob"]
    assert not locp.path.exists()
    assert sorted(p.name for p in glob.path.iterdir()) == glob_files
    assert [c.name for c in ws.list_corpora()] == ["demo", "spare"]
    panel.jobs.shutdown()
    ws.close()


def test_a_training_run_is_not_deleted(qtbot, copied_ws, dialogs):
    from app.panels.training import TrainingPanel

    seen, _ = dialogs
    panel = next(shown_panel(qtbot, TrainingPanel, copied_ws, 1400, 900))
    ws = panel.workspace
    ws.update_run("glob", status="running")
    panel.refresh()
    panel.runs_table.selectRow(0)
    panel.delete_action.trigger()
    assert seen["confirm"] == [] and "is training" in seen["refuse"][0]
    assert "Cancel it first" in seen["refuse"][0]
    assert _table_names(panel) == ["1: glob", "2: locp"] and ws.get_run("glob").path.is_dir()
    panel.jobs.shutdown()
    ws.close()


def test_rename_a_run_and_a_corpus(qtbot, copied_ws, dialogs, errors):
    from app.panels.corpora import CorporaPanel
    from app.panels.training import TrainingPanel

    _, answers = dialogs
    panel = next(shown_panel(qtbot, TrainingPanel, copied_ws, 1400, 900))
    panel.runs_table.selectRow(0)
    answers["name"] = "locp"  # taken: refused with the store's reason
    panel.rename_action.trigger()
    assert errors and "already exists" in errors[0][1]
    answers["name"] = "global-general"
    panel.rename_action.trigger()
    assert _table_names(panel) == ["1: global-general", "2: locp"]
    panel.jobs.shutdown()
    panel.workspace.close()

    corpora = next(shown_panel(qtbot, CorporaPanel, copied_ws, 1400, 900))
    corpora.corpus_list.setCurrentRow(1)
    answers["name"] = "spare pairs"
    corpora.rename_action.trigger()
    assert corpora.corpus_list.item(1).text().startswith("spare pairs\n")
    assert corpora.workspace.get_run(2).corpus_id == 1  # the runs keep their corpus
    corpora.jobs.shutdown()
    corpora.workspace.close()


def test_delete_a_corpus_only_when_no_run_uses_it(qtbot, copied_ws, dialogs):
    from app.panels.corpora import CorporaPanel

    seen, _ = dialogs
    panel = next(shown_panel(qtbot, CorporaPanel, copied_ws, 1400, 900))
    ws = panel.workspace
    panel.corpus_list.setCurrentRow(0)  # demo: used by both runs
    panel.delete_action.trigger()
    assert seen["confirm"] == []
    assert "used by 2 runs (1: glob, 2: locp)" in seen["refuse"][0]
    assert panel.corpus_list.count() == 2
    panel.corpus_list.setCurrentRow(1)  # spare: no run
    panel.delete_action.trigger()
    assert "\u201cspare\u201d" in seen["confirm"][0] and "No run uses it" in seen["confirm"][0]
    assert [panel.corpus_list.item(i).text().split("\n")[0]
            for i in range(panel.corpus_list.count())] == ["demo"]
    assert [r.name for r in ws.list_runs()] == ["glob", "locp"]
    panel.jobs.shutdown()
    ws.close()

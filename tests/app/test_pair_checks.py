"""Screens that pair a run with data: each run gets data of its own language pair. A
workspace with an es->en run ('fwd'), an en->fr run ('enfr') and a fr->en run ('fren'),
the es->en demo gold ('demo-gold') and the en->fr WPT-03 trial gold ('wpt03-trial'):
Export heatmaps draws each run on the gold set of its pair (else its own test split),
never a view not computed; test-split pairs carry their corpus's languages (a run of
another pair is skipped, one of the reversed pair reads them from the other side); the
Attention screen opens on the gold set of its first checked run; Compare with baseline
offers only baselines of the checked run's pair, and core refuses another."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
from PySide6.QtCore import QItemSelectionModel

from app.panels.attention import AttentionPanel
from app.panels.evaluation import EvaluationPanel
from app.panels.translate import TranslatePanel
from app.widgets.heatmap import AttentionHeatmap
from core.errors import ConfigError
from core.evaluate.alignment import Alignment
from core.evaluate.goldsets import delete_gold_set, load_gold_set
from core.jobs import JobContext
from core.services.attention_set import attention_views, pairs_attention_job, pairs_job
from core.services.attention_view import PairInput, PairView, skipped_view
from core.services.translation import SessionCache
from core.services.translation_jobs import compare_job
from core.workspace.store import Workspace
from tests.app.conftest import make_demo_workspace, shown_panel, tiny_config, wait_for_pairs


@pytest.fixture(scope="module")
def three_pairs_ws(tmp_path_factory):
    """Path of the workspace of the module's docstring (runs 1 fwd, 2 enfr, 3 fren)."""
    from core.services.demo import DEMO_CORPORA, DEMO_GOLDS, import_demo_corpus, import_demo_gold
    from core.services.training import create_run, train_run

    root = tmp_path_factory.mktemp("three") / "ws"
    ws = make_demo_workspace(root)
    for demo in DEMO_CORPORA[1:]:  # 'demo-en-fr', 'demo-fr-en'
        import_demo_corpus(ws, demo=demo)
    import_demo_gold(ws, gold=DEMO_GOLDS[1])  # 'wpt03-trial', en->fr
    for name, corpus in (("fwd", "demo"), ("enfr", "demo-en-fr"), ("fren", "demo-fr-en")):
        assert train_run(ws, create_run(ws, corpus, tiny_config(name, 20)),
                         JobContext()).status == "finished"
    ws.close()
    return root


def select_runs(panel: EvaluationPanel, run_ids: list[int]) -> None:
    """Select the Evaluation table's rows of exactly `run_ids`, in run order."""
    panel.table.sortItems(0)  # by label: "1: fwd" first
    panel.table.clearSelection()
    model = panel.table.selectionModel()
    for row in range(panel.table.rowCount()):
        if panel.table.item(row, 0).data(0x0100)[0][0] in run_ids:  # Qt.UserRole
            model.select(panel.table.model().index(row, 0),
                         QItemSelectionModel.SelectionFlag.Select
                         | QItemSelectionModel.SelectionFlag.Rows)
    assert panel.selected_run_ids() == sorted(run_ids)


def test_export_heatmaps_draws_each_run_on_the_gold_set_of_its_pair(
        qtbot, three_pairs_ws, tmp_path, errors, monkeypatch):
    """With the es->en and the en->fr run selected, every heatmap was of the es->en gold
    set: the en->fr run's views were skipped, and drawing the first of them divided by
    zero (1 of 4 files written). Now each run is drawn on the gold of its own pair."""
    drawn: list[list[str]] = []
    set_matrix = AttentionHeatmap.set_matrix

    def recording(self, matrix, src_tokens, tgt_tokens):
        drawn.append(list(src_tokens))
        set_matrix(self, matrix, src_tokens, tgt_tokens)

    monkeypatch.setattr(AttentionHeatmap, "set_matrix", recording)
    panel = next(shown_panel(qtbot, EvaluationPanel, three_pairs_ws, 1200))
    select_runs(panel, [1, 2])
    job = panel.export_heatmaps(tmp_path, 2)
    qtbot.waitUntil(lambda: job.done and hasattr(panel, "last_heatmaps"), timeout=120000)
    assert errors == []
    assert sorted(p.name for p in panel.last_heatmaps) == [
        "1-fwd-001.png", "1-fwd-002.png", "2-enfr-001.png", "2-enfr-002.png"]
    es_en, en_fr = load_gold_set(panel.workspace, "demo-gold"), \
        load_gold_set(panel.workspace, "wpt03-trial")
    # sentence by sentence, run by run: the Spanish gold, then the English of en->fr
    assert drawn == [es_en.src_tokens[0], en_fr.src_tokens[0],
                     es_en.src_tokens[1], en_fr.src_tokens[1]]
    assert panel.last_skipped == []
    panel.jobs.shutdown()
    panel.workspace.close()


def test_a_run_whose_pair_has_no_gold_set_is_drawn_on_its_own_test_split(
        three_pairs_ws, tmp_path):
    """The first run selected had no gold set: every run was forced onto its test split
    (es->en sentences through an en->fr run). Now the en->fr run reads its own test
    split, the es->en run the es->en gold set."""
    root = tmp_path / "ws"
    shutil.copytree(three_pairs_ws, root)
    with Workspace.open(root, create=False) as ws:
        delete_gold_set(ws, "wpt03-trial")
        pairs, views = pairs_attention_job(ws, SessionCache(), [(2, "enfr"), (1, "fwd")], 2,
                                           True, JobContext())
        gold = load_gold_set(ws, "demo-gold")
    assert [(p.langs, p.gold_name, p.gold) for p in pairs[2]] == \
        [(("en", "fr"), "demo-en-fr:test", None)] * 2
    assert [p.gold_src for p in pairs[1]] == gold.src_tokens[:2]
    assert sorted(views) == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert not any(v.skipped for v in views.values())
    assert views[(0, 2)].src_tokens[:3] == pairs[2][0].source.split()[:3]


def test_a_view_not_computed_is_not_drawn_but_named(qtbot, tmp_path, errors):
    """A skipped view (an empty matrix) crashed the export (ZeroDivisionError in
    set_matrix): it is left out and its note kept for the message."""
    from app import workers

    jobs = workers.JobManager()
    panel = EvaluationPanel(jobs)
    qtbot.addWidget(panel)
    src, tgt = ["a", "b"], ["x", "y"]
    drawn = PairView(1, "1: fwd", np.full((3, 2), 0.5, dtype=np.float32), src, tgt)
    note = "es -> en run; gold set wpt03-trial is en -> fr"
    pairs = [PairInput("a b", "x y", Alignment(sure={(0, 0)}))]
    written = panel._write_heatmaps({(0, 1): drawn, (0, 2): skipped_view(2, "2: enfr", note)},
                                    {1: pairs, 2: pairs}, tmp_path, 72, {1: "fwd", 2: "enfr"})
    jobs.shutdown()
    assert errors == []
    assert [p.name for p in written] == ["1-fwd-001.png"]
    assert panel.last_skipped == [f"2: enfr: {note}"]


def test_test_split_pairs_carry_their_languages(three_pairs_ws):
    """Test-split pairs had no languages: every checked run was computed on the first
    one's split as if it were of its pair. Now an es->en run is skipped on the en->fr
    split with a note, and the fr->en run reads the pairs from the other side."""
    with Workspace.open(three_pairs_ws, create=False) as ws:
        pairs = pairs_job(ws, None, 2, 3, JobContext())
        assert {p.langs for p in pairs} == {("en", "fr")}
        views = attention_views(ws, SessionCache(), [(1, "fwd"), (2, "enfr"), (3, "fren")],
                                list(enumerate(pairs)), True, JobContext())
    fwd, enfr, fren = views[(0, 1)], views[(0, 2)], views[(0, 3)]
    assert fwd.skipped and fwd.note == "es -> en run; test split demo-en-fr:test is en -> fr"
    assert not enfr.skipped and not enfr.reversed
    assert fren.reversed and fren.note.endswith("test pairs read from the other side")
    # its source is the pair's French reference, its target the English source
    assert (fren.src_tokens, fren.tgt_tokens) == (enfr.tgt_tokens, enfr.src_tokens)
    assert enfr.src_tokens[:2] == pairs[0].source.split()[:2]


def test_the_attention_screen_opens_on_the_gold_set_of_its_first_checked_run(
        qtbot, three_pairs_ws, errors):
    """The two newest runs (en->fr, fr->en) are checked; the gold set box showed the
    first set by name, the es->en 'demo-gold', and every view was skipped. Now it shows
    the en->fr set, and follows the checked runs until the user picks a set: that one
    stays."""
    panel = next(shown_panel(qtbot, AttentionPanel, three_pairs_ws, 1400))
    wait_for_pairs(qtbot, panel)
    assert panel.models.checked() == [2, 3]
    assert panel.gold_set.currentText() == "wpt03-trial"
    assert len(panel.pairs) == len(load_gold_set(panel.workspace, "wpt03-trial"))
    panel.models.set_checked([1])  # es->en: the default follows
    assert panel.gold_set.currentText() == "demo-gold"
    wait_for_pairs(qtbot, panel)
    assert len(panel.pairs) == len(load_gold_set(panel.workspace, "demo-gold"))
    panel.gold_set.setCurrentText("wpt03-trial")  # the user's choice
    panel.models.set_checked([1, 3])
    panel.refresh()
    assert panel.gold_set.currentText() == "wpt03-trial"
    panel.set_workspace(panel.workspace)  # reopened: the default again
    assert panel.gold_set.currentText() == "wpt03-trial"
    wait_for_pairs(qtbot, panel)
    assert errors == []
    panel.jobs.shutdown()
    panel.workspace.close()


def test_compare_offers_only_baselines_of_the_checked_runs_pair(qtbot, three_pairs_ws):
    """Every run was offered as the baseline (es->en text went through an en->fr run);
    now only the runs of the checked run's pair, and the list follows the check."""
    panel = next(shown_panel(qtbot, TranslatePanel, three_pairs_ws, 1200))
    box = panel.compare.baseline

    def offered() -> list[int]:
        return [box.itemData(i) for i in range(box.count())]

    panel.models.set_checked([1])
    assert offered() == [1] and panel.compare.baseline_id() == 1
    panel.models.set_checked([3])
    assert offered() == [3] and panel.compare.baseline_id() == 3
    panel.jobs.shutdown()
    panel.workspace.close()


def test_core_refuses_a_baseline_of_another_pair(three_pairs_ws):
    with Workspace.open(three_pairs_ws, create=False) as ws:
        cache = SessionCache()
        with pytest.raises(ConfigError, match="baseline 'enfr' translates en -> fr, 'fwd' "
                                              "es -> en: choose a baseline run of es -> en"):
            compare_job(ws, cache, [1], 2, ["La casa es verde."], 1, False, JobContext())
        assert not cache._sessions  # refused before a model was loaded
        same = compare_job(ws, cache, [1], 1, ["La casa es verde."], 1, False, JobContext())
    assert same.n_differ() == 0 and len(same.main) == 1


def test_a_document_is_split_by_the_rules_of_the_checked_runs_source_language(
        qtbot, three_pairs_ws, tmp_path, monkeypatch):
    """A run without a corpus (imported, or a bundled one) splits a document by the source
    language its preprocessing was saved with, not English."""
    root = tmp_path / "ws"
    shutil.copytree(three_pairs_ws, root)
    with Workspace.open(root, create=False) as ws:
        enfr = ws.get_run("fren")
        alone = ws.create_run("fren-alone", enfr.config, None)
        for path in ws.run_dir(enfr.id).iterdir():
            if path.is_file():
                shutil.copy2(path, ws.run_dir(alone) / path.name)
        ws.update_run(alone, status="finished")
    from core.services import translation

    asked, read = [], translation.read_document
    monkeypatch.setattr(translation, "read_document",
                        lambda path, lang: asked.append(lang) or read(path, lang))
    doc = tmp_path / "doc.txt"
    doc.write_text("Il est venu. Elle est partie.\n", encoding="utf-8")
    panel = next(shown_panel(qtbot, TranslatePanel, root, 1200))
    panel.models.set_checked([alone])
    assert panel._source_lang() == "fr"
    job = panel.open_document(doc)
    qtbot.waitUntil(lambda: job.done, timeout=10000)
    assert asked == ["fr"] and panel.table.rowCount() == 2
    panel.jobs.shutdown()
    panel.workspace.close()

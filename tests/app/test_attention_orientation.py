"""The Attention screen on gold sets of several language pairs, with an es->en and an
en->es run: a run of the gold set's reversed pair reads it from the other side (rows =
its own target words, gold links swapped, the same AER as `align` prints on the gold set
stored its way round); a run of another pair is not computed (a note in its place);
"Symmetrise with" offers the reverse-direction run and adds the row of the symmetrised
links (their numbers are core.evaluate.attention_aer.score_gold's, `align
--reverse-run`'s too: tests/core/test_attention_view.py)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from app import workers
from app.main_window import MainWindow
from core.cli import run_cli
from core.evaluate.aer import sentence_aer
from core.evaluate.attention_aer import reverse_gold
from core.evaluate.goldsets import load_gold_set
from tests.app.conftest import DEMO, make_demo_workspace, tiny_config, wait_for_pairs


@pytest.fixture(scope="module")
def pairs_ws(tmp_path_factory):
    """The demo workspace plus the demo corpus imported reversed (en->es), the demo gold
    stored both ways round ('demo-gold' es->en, 'demo-gold-rev' en->es), the WPT-03 trial
    gold (en->fr) and two tiny runs: 'fwd' (es->en) and 'rev' (en->es)."""
    from core.data.readers import read_parallel
    from core.evaluate.goldsets import import_gold_set
    from core.jobs import JobContext
    from core.services.demo import DEMO_GOLDS, import_demo_gold
    from core.services.training import create_run, train_run

    root = tmp_path_factory.mktemp("pairs") / "ws"
    ws = make_demo_workspace(root)
    ws.add_corpus(read_parallel(DEMO / "demo.en", DEMO / "demo.es", "en", "es",
                                docids_path=DEMO / "demo.docids", name="demo-rev"),
                  "demo-rev", format="parallel")
    import_gold_set(ws, "demo-gold-rev", DEMO / "gold.en", DEMO / "gold.es",
                    DEMO / "gold.links", swap=True, src_lang="en", tgt_lang="es")
    import_demo_gold(ws, gold=DEMO_GOLDS[1])  # 'wpt03-trial', en->fr
    for name, corpus in (("fwd", "demo"), ("rev", "demo-rev")):
        assert train_run(ws, create_run(ws, corpus, tiny_config(name, 30)),
                         JobContext()).status == "finished"
    ws.close()
    return root


def cli_aer(root, capsys, *args: str) -> dict[str, float]:
    """`align ARGS` on workspace `root`: {system: AER %} of the table it prints."""
    assert run_cli(["--workspace", str(root), "align", *args]) == 0
    out = capsys.readouterr().out
    rows = [line.split("|")[1:3] for line in out.splitlines() if line.startswith("| ")]
    return {name.strip(): float(aer) for name, aer in rows[1:]
            if re.fullmatch(r"\s*[\d.]+\s*", aer)}


def screen(qtbot, root, gold_set: str, checked: list[str]):
    window = MainWindow(root)
    qtbot.addWidget(window)
    panel, ws = window.attention, window.workspace
    ids = {r.name: r.id for r in ws.list_runs()}
    panel.models.set_checked([ids[n] for n in checked])
    panel.pair_source.setCurrentText("Gold set")
    panel.gold_set.setCurrentText(gold_set)
    wait_for_pairs(qtbot, panel)
    return window, panel, ws, ids


def computed(qtbot, panel, errors) -> None:
    job = panel.compute()
    qtbot.waitUntil(lambda: job.done, timeout=120000)
    assert job.state == workers.FINISHED, (job.error, errors)


def table(panel) -> dict[str, list[str]]:
    t = panel.corpus_table
    return {t.item(r, 0).text(): [t.item(r, c).text() for c in range(1, t.columnCount())]
            for r in range(t.rowCount())}


def test_a_reversed_run_reads_the_gold_from_the_other_side(qtbot, pairs_ws, errors, capsys):
    window, panel, ws, ids = screen(qtbot, pairs_ws, "demo-gold", ["fwd", "rev"])
    computed(qtbot, panel, errors)
    gold = load_gold_set(ws, "demo-gold")
    k = panel.order[0]
    panel.pair_list.setCurrentRow(0)
    fwd_view, rev_view = panel.shown
    # the en->es run: its source is the gold's target, its rows its own (Spanish) words
    assert rev_view.src_tokens == gold.tgt_tokens[k] and rev_view.tgt_tokens == gold.src_tokens[k]
    assert fwd_view.src_tokens == gold.src_tokens[k]
    heat = panel.heatmaps[1]
    assert heat.tgt_tokens[: len(gold.src_tokens[k])] == gold.src_tokens[k]
    assert heat.matrix.shape[1] == len(gold.tgt_tokens[k])
    assert heat.gold_sure == {(t, s) for s, t in gold.alignments[k].sure}  # swapped
    assert panel.heatmaps[0].gold_sure == gold.alignments[k].sure
    # its AER: its links against the swapped gold links
    assert rev_view.aer == pytest.approx(sentence_aer(rev_view.predicted,
                                                      gold.alignments[k].swapped()).aer)
    rows = table(panel)
    rev_row = rows[f"{ids['rev']}: rev"]
    assert rev_row[0] == str(len(gold)) and rev_row[-1] == "gold read from the other side"
    # the pair list scores each run in its own orientation too
    assert panel._aer(k, ids["rev"]) == pytest.approx(rev_view.aer)
    window.close()
    # the same AER as `align` prints on the gold set stored en->es, and from either side
    own = cli_aer(pairs_ws, capsys, "--run", "rev", "--gold-set", "demo-gold-rev")
    other = cli_aer(pairs_ws, capsys, "--run", "rev", "--gold-set", "demo-gold")
    assert own == other and list(own.values())[0] == pytest.approx(float(rev_row[1]),
                                                                   abs=0.05)


def test_a_run_of_another_pair_is_not_computed(qtbot, pairs_ws, errors, capsys, monkeypatch):
    from core.services import attention_set

    def refuse(*_a, **_k):
        raise AssertionError("a run of another language pair must not be decoded")

    monkeypatch.setattr(attention_set, "pair_view", refuse)
    monkeypatch.setattr(attention_set, "force_gold", refuse)
    window, panel, ws, ids = screen(qtbot, pairs_ws, "wpt03-trial", ["fwd", "rev"])
    computed(qtbot, panel, errors)
    assert not panel.sessions._sessions  # no model was even loaded
    panel.pair_list.setCurrentRow(0)
    note = "es -> en run; gold set wpt03-trial is en -> fr"
    assert panel.shown[0].skipped and panel.shown[0].note == note
    assert note in panel.heatmaps[0].plot.titleLabel.text
    assert panel.heatmaps[0].gold_sure == set()
    assert panel.aer_table.item(0, 1).text() == "–" and panel.aer_table.item(0, 4).text() == note
    rows = table(panel)
    assert rows[f"{ids['fwd']}: fwd"] == ["0", "–", "–", "–", note]
    assert rows[f"{ids['rev']}: rev"][-1] == "en -> es run; gold set wpt03-trial is en -> fr"
    window.close()
    assert run_cli(["--workspace", str(pairs_ws), "align", "--run", "fwd", "--gold-set",
                    "wpt03-trial"]) == 2
    assert f"{note}: give a gold set of es -> en" in capsys.readouterr().err


@pytest.mark.parametrize("forward, reverse", [("fwd", "rev"), ("rev", "fwd")])
def test_symmetrise_with_adds_the_symmetrised_row(qtbot, pairs_ws, errors, forward, reverse):
    window, panel, ws, ids = screen(qtbot, pairs_ws, "demo-gold", [forward])
    computed(qtbot, panel, errors)
    control = panel.symmetrize
    offered = [control.run.itemData(i) for i in range(control.run.count())]
    assert offered == [None, ids[reverse]]  # only the reversed pair's run
    plain = panel.shown[0].predicted
    control.run.setCurrentIndex(1)  # the reverse run is computed for its links
    qtbot.waitUntil(lambda: panel.job.done and (0, ids[reverse]) in panel.views, timeout=120000)
    panel.pair_list.setCurrentRow(0)
    label = f"{ids[forward]}: {forward}"
    for heuristic in ("intersection", "grow-diag-final-and"):
        control.heuristic.setCurrentText(heuristic)
        rows = table(panel)
        sym_label = f"{heuristic}: {label} + {ids[reverse]}: {reverse}"
        assert list(rows)[:2] == [label, sym_label]
        assert rows[sym_label][0] == rows[label][0] == str(len(panel.pairs))
    shown = panel.shown[0]
    assert "links: grow-diag-final-and with" in shown.note
    # intersection keeps a subset of the run's own links; the heatmap shows the chosen ones
    control.heuristic.setCurrentText("intersection")
    assert panel.shown[0].predicted <= plain and panel.shown[0].predicted <= shown.predicted
    assert np.isfinite(panel.shown[0].aer)
    window.close()



def test_the_eflomal_baseline_of_a_reversed_model_1_is_in_the_gold_orientation(
        qtbot, pairs_ws, errors, monkeypatch):
    """Model 1 translates en->es, the gold set is es->en: eflomal, trained on model 1's
    corpus, is given the gold pairs from the other side (English first, as its training
    text) and its links come back swapped, in the gold's orientation; a run of another
    pair gets no baseline. (eflomal seeds itself: it is replaced by a recorder that
    answers the gold links as the run reads them.)"""
    from core.errors import ConfigError
    from core.jobs import JobContext
    from core.services.attention_set import gold_baseline, gold_pairs

    asked = []

    def recorder(ws, run_id, src_words, tgt_words):
        asked.append((src_words, tgt_words))
        return list(reverse_gold(load_gold_set(ws, "demo-gold")).alignments), 412

    monkeypatch.setattr("core.services.alignment_runs.run_baseline_alignments", recorder)
    window, panel, ws, ids = screen(qtbot, pairs_ws, "demo-gold", ["rev"])
    panel.baseline.setChecked(True)
    computed(qtbot, panel, errors)
    qtbot.waitUntil(lambda: panel.baseline_job is not None and panel.baseline_job.done,
                    timeout=120000)
    assert panel.baseline_job.state == workers.FINISHED, errors
    gold = load_gold_set(ws, "demo-gold")
    assert asked == [(gold.tgt_tokens, gold.src_tokens)]
    assert panel.baseline_alignments == gold.alignments
    row = table(panel)["eflomal grow-diag-final-and"]
    assert row[:2] == [str(len(gold)), "0.0"]
    assert row[-1] == ("trained on 412 pairs + the gold's: too few for a fair baseline (under "
                       "1,000); align a corpus of the pair with `align --baseline-corpus`")
    with pytest.raises(ConfigError, match="es -> en run; gold set wpt03-trial is en -> fr"):
        gold_baseline(ws, ids["fwd"], [(["a"], ["b"])], JobContext(),
                     pairs=gold_pairs(ws, "wpt03-trial", 1))
    window.close()


def test_the_evaluation_reads_each_run_on_the_gold_set_of_its_pair(pairs_ws, capsys, tmp_path):
    """evaluate_runs (the Evaluation screen's Evaluate): the en->es run reads the es->en
    demo gold from the other side, at the AER `align` prints, even when another pair's
    set is asked for; in a workspace whose only gold set is of another pair, a run gets no
    AER rather than a meaningless one."""
    import shutil

    from core.evaluate.goldsets import delete_gold_set
    from core.jobs import JobContext
    from core.services.eval_scores import evaluate_runs
    from core.services.translation import SessionCache
    from core.workspace.store import Workspace

    with Workspace.open(pairs_ws, create=False) as ws:
        [eval_id] = evaluate_runs(ws, SessionCache(), [ws.run_id("rev")], 1, "wpt03-trial",
                                  JobContext(), limit=3)
        metrics = next(e.metrics for e in ws.evaluations() if e.id == eval_id)
    assert metrics["aer_gold"] == "demo-gold" and metrics["aer_sentences"] == 56
    align = cli_aer(pairs_ws, capsys, "--run", "rev", "--gold-set", "demo-gold")
    assert 100 * metrics["aer"] == pytest.approx(list(align.values())[0], abs=0.05)
    other = tmp_path / "only-en-fr"
    shutil.copytree(pairs_ws, other)
    with Workspace.open(other, create=False) as ws:
        for name in ("demo-gold", "demo-gold-rev"):
            delete_gold_set(ws, name)
        [eval_id] = evaluate_runs(ws, SessionCache(), [ws.run_id("fwd")], 1, None,
                                  JobContext(), limit=3)
        metrics = next(e.metrics for e in ws.evaluations() if e.id == eval_id)
    assert "aer" not in metrics and "aer_gold" not in metrics and metrics["sentences"] == 3

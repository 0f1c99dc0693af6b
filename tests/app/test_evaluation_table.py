"""The Evaluation screen's table and HTML report: each header says what its column holds (and
explains it on hover), a column nothing fills is hidden, AER is in percent with one decimal
as the command line's `align` and `demo` tables print it, and the report is one
self-contained file with its figures inside."""
from __future__ import annotations

import pytest

from tests.app.conftest import job_result, shown_panel


@pytest.fixture
def scored_ws(demo_ws, tiny):
    from core.workspace.store import Workspace

    with Workspace.open(demo_ws) as ws:
        run = ws.create_run("scored", tiny("scored", 5).to_dict(), 1)
        ws.update_run(run, status="finished", device="cpu")
        ws.add_evaluation(run, "test", {"bleu": 12.345, "chrf": 40.0, "ter": 80.5,
                                        "perplexity": 35.5, "best_dev_ppl": 31.25,
                                        "aer": 0.70312, "sentences": 46})
    return demo_ws


def test_headers_aer_in_percent_and_a_self_contained_report(qtbot, scored_ws, tmp_path):
    from app.panels.evaluation import METRIC_KEYS, OPTIONAL_KEYS, EvaluationPanel
    from core.evaluate.aer import percent_text
    from core.workspace.store import Workspace

    panel = next(shown_panel(qtbot, EvaluationPanel, scored_ws, 1600, 900))
    optional = [2 + METRIC_KEYS.index(k) for k in OPTIONAL_KEYS]
    assert all(panel.table.isColumnHidden(c) for c in optional)  # nothing fills them yet
    with Workspace.open(scored_ws) as ws:  # a contrastive evaluation and its gates
        run = ws.list_runs()[0].id
        ws.add_evaluation(run, "contrastive:pron.json", {"contrastive_accuracy": 62.5,
                                                         "examples": 8})
        ws.add_evaluation(run, "gates:pron.json", {"mean_gate watched words": 0.41234,
                                                   "mean_gate other words": 0.9})
    panel.refresh()
    header = panel.table.horizontalHeader()
    texts = [panel.table.horizontalHeaderItem(c).text() for c in range(panel.table.columnCount())]
    assert texts == ["Run", "Test set", "BLEU (test)", "chrF (test)", "TER (test)",
                     "test perplexity", "best dev perplexity", "AER % (gold set)",
                     "contrastive %", "gate: watched / other", "test sentences"]
    for c, text in enumerate(texts):  # each header is drawn whole, with an explanation
        assert header.sectionSize(c) >= header.fontMetrics().horizontalAdvance(text)
        assert panel.table.horizontalHeaderItem(c).toolTip()
    by_test = {panel.table.item(r, 1).text(): {t: panel.table.item(r, c).text()
                                                for c, t in enumerate(texts)}
               for r in range(panel.table.rowCount())}
    cells = by_test["test"]
    assert cells["AER % (gold set)"] == "70.3" == percent_text(0.70312)
    assert cells["best dev perplexity"] == "31.25" and cells["test perplexity"] == "35.50"
    assert by_test["contrastive:pron.json"]["contrastive %"] == "62.50"
    assert by_test["gates:pron.json"]["gate: watched / other"] == "0.412 / 0.900"
    assert not any(panel.table.isColumnHidden(c) for c in range(len(texts)))
    assert by_test["gates:pron.json"]["BLEU (test)"] == "–"
    # the HTML report: the same numbers, one file with its figures inside
    folder = tmp_path / "out"
    folder.mkdir()
    report = job_result(qtbot, panel.write_report(folder / "report.html"))
    assert [p.name for p in folder.iterdir()] == ["report.html"]
    html = report.read_text(encoding="utf-8")
    assert "<th>AER % (gold set)</th>" in html and "<td>70.3</td>" in html
    assert html.count('src="data:image/png;base64,') == 3
    panel.jobs.shutdown()
    panel.workspace.close()


def test_cli_tables_use_the_same_aer_convention(demo_ws):
    """`align` and `demo` print aer_table: AER, precision and recall in %, one decimal."""
    from core.evaluate.attention_aer import aer_table
    from core.evaluate.goldsets import load_gold_set
    from core.workspace.store import Workspace

    with Workspace.open(demo_ws) as ws:
        gold = load_gold_set(ws, "demo-gold")
    table = aer_table({"gold itself": gold.alignments}, gold)
    assert "| gold itself | 0.0 | 100.0 | 100.0 |" in table.to_markdown()
    assert "<td>0.0</td><td>100.0</td><td>100.0</td>" in table.to_html()


def test_numbers_keep_their_decimals_and_sort_by_value(qtbot):
    """A whole AER reads '34.0' (Qt wrote '34'), and cells sort as numbers: '9.50' before
    '10.00', which text order would put after."""
    from app.panels.evaluation import NumberItem

    assert NumberItem(34.0, 1).text() == "34.0" and NumberItem(35.5, 2).text() == "35.50"
    assert NumberItem(1000, 2).text() == "1000"
    assert NumberItem(9.5, 2) < NumberItem(10.0, 2)
    assert not NumberItem(10.0, 2) < NumberItem(9.5, 2)



def test_the_dev_bleu_plot_says_what_its_points_are(qtbot, scored_ws):
    """The Dev BLEU curves are greedy BLEU on each run's first dev sentences while it
    trained, not the table's test BLEU: the plot's tooltip says so, with each selected
    run's number of dev sentences (a run without dev BLEU points is not listed)."""
    from app.panels.evaluation import EvaluationPanel
    from core.workspace.store import Workspace

    with Workspace.open(scored_ws) as ws:
        run = ws.list_runs()[0]
        for step, bleu in ((100, 12.0), (200, 18.5)):
            ws.log_metrics(run.id, step, "valid", {"dev_ppl": 30.0, "dev_bleu": bleu})
        sample = run.config["data"]["dev_sample"]
    panel = next(shown_panel(qtbot, EvaluationPanel, scored_ws, 1600, 900))
    panel.table.selectAll()
    tip = panel.bleu_curves.plot.toolTip()
    assert tip.startswith("Greedy BLEU of the first dev sentences at each validation")
    assert "not comparable with the table's test BLEU" in tip
    assert tip.endswith(f"Dev sentences scored: {run.id}: scored: {sample}")

"""BLEU by length shows how many sentences each bucket holds, and marks a bucket of
fewer than 10: under the bars and in the HTML report."""
from __future__ import annotations

from html.parser import HTMLParser

from app import workers
from app.panels.evaluation import EvaluationPanel
from core.evaluate.metrics import FEW_SENTENCES
from core.workspace.store import Workspace
from tests.app.conftest import job_result


class Tables(HTMLParser):
    """Every <table> of a page as rows of cell texts."""

    def __init__(self):
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append("".join(self.cell))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def test_buckets_show_their_sentences_and_small_ones_are_marked(qtbot, tmp_path):
    ws = Workspace.open(tmp_path / "ws", create=True)
    run = ws.create_run("luong", {"model": {"family": "luong"}}, None)
    ws.update_run(run, status="finished")
    ws.add_evaluation([run], "test", {
        "bleu": 30.0, "beam": 5, "sentences": 167,
        "bleu_by_length": {"0-9": 31.5, "10-19": 27.25, "20+": 8.0},
        "bucket_sizes": {"0-9": 120, "10-19": 43, "20+": 4}})
    panel = EvaluationPanel(workers.JobManager())
    qtbot.addWidget(panel)
    panel.set_workspace(ws)
    panel.table.selectAll()
    ticks = [label for _x, label in panel.by_length.getAxis("bottom")._tickLevels[0]]
    assert ticks == ["0-9\nn=120", "10-19\nn=43", "20+\nn=4*"]
    small = [b for b in panel.bars if b.opts["brush"].alpha() < 255]
    assert len(small) == 1 and list(small[0].opts["height"]) == [8.0]  # 20+ drawn faint
    page = Tables()
    page.feed(job_result(qtbot, panel.write_report(tmp_path / "report.html")).read_text(
        encoding="utf-8"))
    by_length = next(t for t in page.tables if t[0][:2] == ["bucket", "sentences"])
    assert by_length[0] == ["bucket", "sentences", f"{run}: luong", "note"]
    assert by_length[1:] == [["0-9", "120", "31.50", ""], ["10-19", "43", "27.25", ""],
                             ["20+", "4", "8.00", FEW_SENTENCES]]
    ws.close()


def test_the_bars_caption_is_whole_at_1280x720(qtbot, qapp, workbench_style, tmp_path):
    """The caption under the bars fits its plot in a 1280 x 720 window (it was 546
    pixels wide under a 363-pixel axis, cut at both ends); what it leaves out is in the
    plot's tooltip."""
    from app.main_window import MainWindow
    Workspace.open(tmp_path / "ws", create=True).close()
    window = MainWindow(tmp_path / "ws")
    qtbot.addWidget(window)
    window.resize(1280, 720)
    window.show()
    qtbot.waitExposed(window)
    window.tabs.setCurrentWidget(window.evaluation)
    for _ in range(20):
        qapp.processEvents()
    axis = window.evaluation.by_length.getAxis("bottom")
    assert 0 < axis.label.boundingRect().width() <= axis.geometry().width()
    assert "their BLEU means little" in window.evaluation.by_length.toolTip()
    window.close()

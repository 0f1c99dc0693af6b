"""Every screen is usable at 1280 x 720: each table and list has
room for three rows, each table column is whole and at least as wide as its header;
on the Attention screen four models' heatmaps get fair shares of the room (at 1400 x 900
too), no title clipped; File › Export figure writes all of them as one figure, the SVG
and PDF as the PNG.

The window shows the demo workspace with the toy runs and a fourth, a small Transformer
(app.screenshots.comparison_run: the four-model picture of `make screenshots`), all four
computed on the demo gold set."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QAbstractItemView, QComboBox, QHeaderView, QTableView

from app.widgets.heatmap_grid import MIN_CELL
from app.widgets.heatmap_legend import GOLD
from tests.app.pictures import coarse_difference, colour_mask, exported_pixels, overlap, pixels

TOY_MODELS = Path(__file__).resolve().parents[1] / "fixtures" / "toy-models"
SIZES = ((1400, 900), (1280, 720))


@pytest.fixture(scope="module")
def four_runs_ws(tmp_path_factory):
    """A demo workspace (toy runs) with a fourth run, a small Transformer."""
    from app.screenshots import comparison_run
    from core.services.demo import ensure_demo_workspace
    from core.workspace.store import Workspace

    root = ensure_demo_workspace(tmp_path_factory.mktemp("layout") / "demo",
                                 models_dir=TOY_MODELS)
    with Workspace.open(root) as ws:
        comparison_run(ws)
        assert len(ws.list_runs()) == 4
    return root


def _settle(qapp, job=None, timeout: float = 300.0) -> None:
    start = time.monotonic()
    while job is not None and not job.done:
        qapp.processEvents()
        time.sleep(0.02)
        assert time.monotonic() - start < timeout, job.name
    for _ in range(20):
        qapp.processEvents()
    assert job is None or not job.error, job.error


@pytest.fixture
def window(qtbot, qapp, workbench_style, four_runs_ws, tmp_path):
    """The main window on a copy of the workspace; the Attention screen shows pair 4 of
    demo-gold under all four runs."""
    from app.main_window import MainWindow
    root = tmp_path / "ws"
    shutil.copytree(four_runs_ws, root)
    window = MainWindow(root)
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    att = window.attention
    window.tabs.setCurrentWidget(att)
    att.pair_source.setCurrentText("Gold set")
    att.gold_set.setCurrentText("demo-gold")
    _settle(qapp, att.load_pairs())
    att.models.set_checked([r.id for r in window.workspace.list_runs()])
    _settle(qapp, att.compute())
    att.pair_list.setCurrentRow(3)
    _settle(qapp)
    yield window
    window.close()


def _shown_at(qapp, window, size, panel) -> None:
    window.resize(*size)
    window.tabs.setCurrentWidget(panel)
    for _ in range(20):
        qapp.processEvents()
    assert (window.width(), window.height()) == size


def _row_height(view: QAbstractItemView) -> int:
    if view.model() is not None and view.model().rowCount() > 0:
        return view.sizeHintForRow(0) if not isinstance(view, QTableView) else view.rowHeight(0)
    if isinstance(view, QTableView):
        return view.verticalHeader().defaultSectionSize()
    return view.fontMetrics().height() + 4


def layout_faults(window) -> list[str]:
    """What is cramped on the current screen: a table or list with room for fewer than
    three rows, a table column narrower on screen than its header needs, a table that
    scrolls sideways (a column cut off)."""
    faults = []
    panel = window.tabs.currentWidget()
    for view in panel.findChildren(QAbstractItemView):
        if (isinstance(view, QHeaderView) or isinstance(view.parent(), QComboBox)
                or not view.isVisible() or view.window() is not window):
            continue
        name = f"{type(panel).__name__}.{type(view).__name__}"
        rows = view.viewport().height() / _row_height(view)
        if rows < 3:
            faults.append(f"{name}: room for {rows:.1f} rows")
        if not isinstance(view, QTableView):
            continue
        if view.horizontalScrollBar().maximum() > 0:
            faults.append(f"{name}: scrolls sideways by {view.horizontalScrollBar().maximum()}")
        header = view.horizontalHeader()
        width = view.viewport().width()
        for c in range(header.count()):
            if header.isSectionHidden(c):
                continue
            left = header.sectionViewportPosition(c)
            shown = max(0, min(left + header.sectionSize(c), width) - max(left, 0))
            needed = header.sectionSizeFromContents(c).width()
            text = view.model().headerData(c, Qt.Orientation.Horizontal)
            if shown < needed:
                faults.append(f"{name}: column {text!r} {shown} px, its header needs {needed}")
    return faults


def test_every_screen_at_1280x720_shows_three_rows_and_whole_columns(qapp, window):
    checked = 0
    for panel in window.panels.values():
        _shown_at(qapp, window, (1280, 720), panel)
        assert layout_faults(window) == [], type(panel).__name__
        checked += len([v for v in panel.findChildren(QTableView) if v.isVisible()])
    assert checked >= 5  # corpora, training, translate, attention (2), evaluation
    # the Attention screen's model list shows all four runs
    att = window.attention
    _shown_at(qapp, window, (1280, 720), att)
    assert att.models.viewport().height() >= 4 * att.models.sizeHintForRow(0)
    # the Corpora screen's target column is as wide as the source column
    _shown_at(qapp, window, (1280, 720), window.corpora)
    header = window.corpora.table.horizontalHeader()
    assert header.sectionSize(3) >= header.sectionSize(2) - 1 >= 200


def _title_fits(heatmap) -> bool:
    label = heatmap.plot.titleLabel
    return label.item.boundingRect().width() <= label.boundingRect().width() + 1


@pytest.mark.parametrize("size", SIZES)
def test_four_heatmaps_get_fair_shares_and_whole_titles(qapp, window, size):
    att = window.attention
    _shown_at(qapp, window, size, att)
    heatmaps = [h for h in att.heatmaps if h.isVisibleTo(att)]
    assert len(heatmaps) == 4
    assert att.heatmap_grid.shape == (2, 2)  # wrapped: two by two, not four strips
    plots = np.array([(h.plot.vb.width(), h.plot.vb.height()) for h in heatmaps])
    cells = np.array([(h.width(), h.height()) for h in heatmaps])
    # the same share each: plot areas as wide, as high within 1.5x (the Transformer's
    # heatmap gives its "Layer / head" row some height, local-p's key has a second
    # row), none a strip
    assert plots[:, 0].max() <= 1.1 * plots[:, 0].min(), plots
    assert plots[:, 1].max() <= 1.5 * plots[:, 1].min(), plots
    assert plots.min(axis=0).tolist() >= [200, 80], plots
    assert (cells[:, 0] >= MIN_CELL.width() - 10).all(), cells
    for h in heatmaps:
        assert _title_fits(h), h.plot.titleLabel.text


def test_three_models_share_one_row(qapp, window):
    att = window.attention
    ids = [r.id for r in window.workspace.list_runs()]
    att.models.set_checked(ids[:3])
    _shown_at(qapp, window, (1400, 900), att)
    heatmaps = [h for h in att.heatmaps if h.isVisibleTo(att)]
    assert len(heatmaps) == 3 and att.heatmap_grid.shape == (1, 3)
    widths = [h.plot.vb.width() for h in heatmaps]
    assert max(widths) <= 1.1 * min(widths) and min(widths) > 150, widths
    assert len({h.y() for h in heatmaps}) == 1


def test_comparison_figure_holds_every_heatmap_and_vector_formats_match(qapp, window,
                                                                        tmp_path):
    att = window.attention
    _shown_at(qapp, window, (1400, 900), att)
    grid = att.heatmap_grid
    parts = grid.parts()
    assert len(parts) == 4
    png, svg, pdf = exported_pixels(grid.export_comparison, tmp_path)
    # each heatmap, where the screen has it: its crop of the figure is its own export
    # and, closely, what the screen shows (its grab)
    for heatmap, part in zip(grid.visible_heatmaps(), parts, strict=True):
        x, y = round(part.at.x()), round(part.at.y())
        w, h = round(part.source.width()), round(part.source.height())
        crop = png[y:y + h, x:x + w]
        heatmap.export(tmp_path / "one.png", 96)
        own = pixels(QImage(str(tmp_path / "one.png")))
        assert crop.shape == own.shape
        assert np.abs(crop - own).mean() < 1.0
        grab = pixels(heatmap.graphics.grab().toImage())[:h, :w]
        assert coarse_difference(crop[:grab.shape[0], :grab.shape[1]], grab) < 6.0
        assert colour_mask(crop, GOLD).sum() > 300  # its gold markers and key
    # arranged as on the screen, two by two, none over another
    first, second, third, fourth = parts
    assert second.at.x() >= first.at.x() + first.source.width()
    assert third.at.y() >= first.at.y() + first.source.height()
    assert fourth.at.x() >= third.at.x() + third.source.width()
    # the SVG and the PDF show what the PNG shows, as closely as each heatmap's own do
    own_differences = []
    for i, heatmap in enumerate(grid.visible_heatmaps()):
        (tmp_path / str(i)).mkdir()
        one_png, one_svg, one_pdf = exported_pixels(heatmap.export, tmp_path / str(i))
        own_differences += [coarse_difference(one_svg, one_png),
                            coarse_difference(one_pdf, one_png)]
    gold = colour_mask(png, GOLD)
    for name, shown in (("svg", svg), ("pdf", pdf)):
        assert shown.shape == png.shape, name
        assert overlap(colour_mask(shown, GOLD), gold) > 0.8, name
        difference = coarse_difference(shown, png)
        assert difference < 2.0 and difference <= max(own_differences) + 0.1, \
            (name, difference, own_differences)


def test_export_figure_offers_all_checked_models_as_one_figure(qapp, window, tmp_path,
                                                               monkeypatch):
    from PySide6.QtWidgets import QInputDialog

    from app.panels import attention_heatmaps, figures

    asked = []

    def choose(parent, title, label, items, *args):
        asked.append(list(items))
        return attention_heatmaps.ALL_MODELS, True

    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(choose))
    target = tmp_path / "comparison.svg"
    monkeypatch.setattr(figures, "ask_save_path", lambda *a, **k: str(target))
    att = window.attention
    _shown_at(qapp, window, (1400, 900), att)
    att.export_figure()
    assert asked and asked[0][0] == attention_heatmaps.ALL_MODELS and len(asked[0]) == 5
    svg = target.read_text(encoding="utf-8")
    assert svg == (att.heatmap_grid.export_comparison(tmp_path / "direct.svg")
                   .read_text(encoding="utf-8"))
    for view in att.shown:  # every model's title is in the one figure
        assert view.label.split(": ")[1] in svg

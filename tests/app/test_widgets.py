"""The workbench's widgets on their own: the attention heatmap (target rows x source
columns, token ticks, hover readout, gold markers on their links, the p_t line, PNG at
its dpi, SVG and PDF exports, BMP refused), the curves (runs overlaid, bad values
skipped, the debiased moving average) and the pair table (rows served on demand,
filtered, a million rows in chunks)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QImage

from app.widgets.curves import CurvesPlot
from app.widgets.heatmap import AttentionHeatmap
from app.widgets.pair_table import PairTableModel
from core.data.corpus import SentencePair

SRC = ["the", "green", "house", "."]
TGT = ["la", "casa", "verde", "."]


def _matrix() -> np.ndarray:
    # tgt x src; a hand-made alignment with a crossing (green/verde, house/casa)
    return np.array([[0.9, 0.05, 0.05, 0.0],
                     [0.1, 0.1, 0.8, 0.0],
                     [0.0, 0.7, 0.3, 0.0],
                     [0.0, 0.0, 0.1, 0.9]], dtype=np.float32)


@pytest.fixture
def heatmap(qtbot):
    h = AttentionHeatmap()
    qtbot.addWidget(h)
    h.resize(500, 420)
    h.show()
    h.set_matrix(_matrix(), SRC, TGT)
    return h


def test_image_is_tgt_by_src_and_ticks_are_tokens(heatmap):
    image = heatmap.image.image
    assert image.shape == (len(TGT), len(SRC))
    assert image[1, 2] == pytest.approx(0.8)  # row = target 'casa', column = source 'house'
    values = heatmap.x_axis.tickValues(0, len(SRC), 400)[0][1]
    assert values == [0.5, 1.5, 2.5, 3.5]
    assert heatmap.x_axis.tickStrings(values, 1, 1) == SRC
    values = heatmap.y_axis.tickValues(0, len(TGT), 400)[0][1]
    assert heatmap.y_axis.tickStrings(values, 1, 1) == TGT
    assert heatmap.plot.getViewBox().yInverted()  # first target word on top


def test_mismatched_tokens_are_refused(heatmap):
    with pytest.raises(ValueError, match="4 x 3"):
        heatmap.set_matrix(_matrix(), SRC[:3], TGT)


def test_hover_readout_names_both_tokens(heatmap):
    vb = heatmap.plot.getViewBox()
    scene_pos = vb.mapViewToScene(QPointF(2.5, 1.5))  # centre of cell (t=1, s=2)
    assert heatmap.cell_at(scene_pos) == (1, 2)
    heatmap._on_mouse_moved(scene_pos)
    assert heatmap.readout.text() == "target 'casa' \u2190 source 'house': 0.80"


def test_gold_overlay_markers_sit_on_the_links(heatmap):
    sure = {(0, 0), (2, 1), (3, 3)}
    possible = {(1, 2), (0, 0)}  # (0, 0) is sure too: drawn once, filled
    heatmap.set_gold(sure, possible)
    filled = {(x - 0.5, y - 0.5) for x, y in zip(*heatmap.sure_item.getData(), strict=True)}
    outline = {(x - 0.5, y - 0.5) for x, y in zip(*heatmap.possible_item.getData(), strict=True)}
    assert filled == {(0, 0), (2, 1), (3, 3)}
    assert outline == {(1, 2)}
    assert heatmap.sure_item.opts["brush"].style() == Qt.BrushStyle.SolidPattern  # filled
    assert heatmap.possible_item.opts["brush"].style() == Qt.BrushStyle.NoBrush  # outline


def test_two_heatmaps_show_two_matrices(qtbot):
    a, b = AttentionHeatmap(), AttentionHeatmap()
    for h in (a, b):
        qtbot.addWidget(h)
    m2 = np.eye(4, dtype=np.float32)[::-1]
    a.set_matrix(_matrix(), SRC, TGT)
    b.set_matrix(m2, SRC, TGT)
    assert not np.array_equal(a.image.image, b.image.image)
    assert np.array_equal(b.image.image, m2)


def test_positions_line_follows_p_t(heatmap):
    heatmap.set_positions(np.array([0.0, 2.0, 1.0, 3.0]), window=1)
    xs, ys = heatmap.position_line.getData()
    # one vertical segment per target row, at p_t + 0.5, from the row's top to its bottom
    assert list(xs) == [0.5, 0.5, 2.5, 2.5, 1.5, 1.5, 3.5, 3.5]
    assert list(ys) == [0, 1, 1, 2, 2, 3, 3, 4]
    band = heatmap.window_band.polygon()
    # left edge: window [p_t - 1, p_t + 1] clipped to the 4 source words, per row
    assert band.count() == 16
    assert [band.at(i).x() for i in range(0, 8, 2)] == [0, 1, 0, 2]
    assert [band.at(15 - i).x() for i in range(0, 8, 2)] == [2, 4, 3, 4]


def test_heatmap_exports_png_at_its_dpi_svg_and_pdf_and_refuses_bmp(heatmap, tmp_path):
    small, big = tmp_path / "a.png", tmp_path / "b.png"
    heatmap.export(small, dpi=96)
    heatmap.export(big, dpi=192)
    for path in (small, big):
        data = path.read_bytes()
        assert data[:4] == b"\x89PNG" and len(data) > 1024
    a, b = QImage(str(small)), QImage(str(big))
    assert b.width() == pytest.approx(2 * a.width(), abs=1)
    assert b.height() == pytest.approx(2 * a.height(), abs=1)
    svg = tmp_path / "c.svg"
    heatmap.export(svg)
    root = ET.fromstring(svg.read_bytes())
    assert root.tag.endswith("svg")
    pdf = tmp_path / "d.pdf"
    heatmap.export(pdf)
    data = pdf.read_bytes()
    assert data[:5] == b"%PDF-" and len(data) > 1024
    with pytest.raises(ValueError):
        heatmap.export(tmp_path / "e.bmp")


def test_curves_overlay_runs_and_skip_bad_values(qtbot):
    plot = CurvesPlot(log_y=True)
    qtbot.addWidget(plot)
    plot.add_points("run A", "loss", [1, 2], [5.0, 4.0])
    plot.add_points("run A", "loss", [3], [3.5])
    plot.add_points("run B", "loss", [1, 2, 3], [6.0, float("nan"), 0.0])
    assert plot.series("run A", "loss") == ([1, 2, 3], [5.0, 4.0, 3.5])
    assert plot.series("run B", "loss") == ([1], [6.0])  # NaN and 0 cannot be drawn on log y
    assert plot.colour_of("run A") != plot.colour_of("run B")
    assert len(plot.legend.items) == 2


def _pairs(n: int) -> list[SentencePair]:
    return [SentencePair(f"source {i}", f"cible {i}", doc_id=f"d{i // 3}", line=i + 1)
            for i in range(n)]


def test_pair_table_serves_rows_on_demand_and_filters(qtbot):
    model = PairTableModel(_pairs(10))
    assert model.rowCount() == 10 and model.columnCount() == 4
    assert model.data(model.index(4, 2)) == "source 4"
    assert model.data(model.index(4, 1)) == "d1"
    model.set_filter("CIBLE 1")  # case-insensitive, target side: 1
    assert [model.data(model.index(r, 0)) for r in range(model.rowCount())] == ["2"]
    model.set_filter("")
    assert model.rowCount() == 10


def test_pair_table_filters_a_million_rows_in_chunks(qtbot):
    pairs = _pairs(1_000_000)
    model = PairTableModel(pairs)
    assert model.rowCount() == 1_000_000
    with qtbot.waitSignal(model.filter_finished, timeout=30000) as blocker:
        model.set_filter("source 99999")
        assert model.filtering  # big corpora filter in the background
    # 99999 and 999990..999999
    assert blocker.args == [11]
    assert model.pair_index(0) == 99999


def test_smoothed_curve_is_the_debiased_moving_average(qtbot):
    from app.widgets.curves import ema

    # w = 0.5: s1 = 0.5 * 1 / (1 - 0.5) = 1;  s2 = (0.25 + 1.5) / (1 - 0.25) = 7/3
    assert list(ema([1.0, 3.0], 0.5)) == pytest.approx([1.0, 7 / 3])
    plot = CurvesPlot(smoothing=0.5)
    qtbot.addWidget(plot)
    plot.add_points("run", "loss", [1, 2], [1.0, 3.0])
    assert plot.series("run", "loss") == ([1, 2], [1.0, 3.0])  # raw points kept
    _xs, ys = plot._items[("run", "loss")].getData()
    assert list(ys) == pytest.approx([1.0, 7 / 3])

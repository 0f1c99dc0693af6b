"""Exported figures show what the screen shows: the SVG (rendered by Qt's SVG renderer)
and the PDF (rendered by QtPdf) of a heatmap or a bar plot are compared, pixel for
pixel after scaling to the same size, with the PNG of the same figure. The save dialog's
chosen type decides the format of a name typed without a suffix (a typed suffix wins).
And the Evaluation screen's "Export heatmaps" writes a figure for every view."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QSize
from PySide6.QtGui import QColor, QImage

from app import workers
from app.panels.evaluation import EvaluationPanel
from app.panels.figures import export_item
from app.widgets.heatmap import AttentionHeatmap
from app.widgets.heatmap_legend import GOLD
from core.evaluate.alignment import Alignment
from core.services.attention_view import PairInput, PairView
from tests.app.conftest import shown_heatmap
from tests.app.pictures import (
    coarse_difference,
    colour_mask,
    exported_pixels,
    overlap,
    pixels,
    svg_pixels,
)

BAR = QColor(200, 60, 40)


def _matrix() -> np.ndarray:
    """9 target x 8 source rows of attention, each row summing to 1."""
    m = np.random.default_rng(0).random((9, 8)).astype(np.float32)
    return m / m.sum(axis=1, keepdims=True)


@pytest.fixture
def heatmap(qtbot):
    h = AttentionHeatmap()
    qtbot.addWidget(h)
    h.resize(720, 560)
    h.show()
    h.set_matrix(_matrix(), [f"src{i}" for i in range(8)], [f"tgt{i}" for i in range(9)])
    h.set_gold({(0, 0), (3, 4), (7, 8)}, {(2, 2)})
    h.set_predicted({(1, 1), (5, 5)})
    return h


@pytest.fixture
def bar_plot(qtbot):
    w = pg.PlotWidget(background="w")
    qtbot.addWidget(w)
    w.resize(600, 400)
    w.show()
    w.plotItem.addItem(pg.BarGraphItem(x=np.arange(5), width=0.6, brush=BAR,
                                       height=[10.0, 25.0, 17.0, 30.0, 8.0]))
    w.plotItem.setTitle("BLEU by source length")
    return w


# --- reading the labels --------------------------------------------------------------------
def _ink(pixels: np.ndarray) -> np.ndarray:
    """Text, axes and ticks: grey to black, not white and not coloured."""
    return (pixels.max(axis=2) < 190) & (np.ptp(pixels, axis=2) < 30)


def _label_centres(pixels: np.ndarray, region: tuple[int, int, int, int], axis: int) -> list:
    """Centres of the runs of text in `region` (x0, y0, x1, y1) of the figure along
    `axis` (0: rows, the left axis' labels; 1: columns, the top axis' labels)."""
    x0, y0, x1, y1 = region
    profile = _ink(pixels[y0:y1, x0:x1]).any(axis=1 - axis)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], profile.astype(int), [0]])))
    return [(a + b - 1) / 2 for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _plot_area(plot_item, figure) -> tuple[int, int, int, int]:
    """The plot's data area (its ViewBox) in the figure's pixels at 96 dpi."""
    r = plot_item.getViewBox().sceneBoundingRect().translated(-figure.left(), -figure.top())
    return round(r.left()), round(r.top()), round(r.right()), round(r.bottom())


def _assert_labels_match(shown: np.ndarray, png: np.ndarray, left: tuple, other: tuple,
                         other_axis: int, name: str) -> None:
    for region, axis in ((left, 0), (other, other_axis)):
        want, got = _label_centres(png, region, axis), _label_centres(shown, region, axis)
        assert len(want) >= 4, (name, want)
        assert len(got) == len(want), (name, want, got)
        assert np.abs(np.array(got) - np.array(want)).max() <= 2, (name, want, got)


# --- the tests ---------------------------------------------------------------------------------
def test_heatmap_svg_and_pdf_show_what_the_png_shows(heatmap, tmp_path):
    png, svg, pdf = exported_pixels(heatmap.export, tmp_path)
    x0, y0, x1, y1 = _plot_area(heatmap.plot, heatmap.graphics.ci.sceneBoundingRect())
    gold = colour_mask(png, GOLD)
    assert gold.sum() > 1500  # three sure, one possible marker and the key's swatches
    for name, shown in (("svg", svg), ("pdf", pdf)):
        # the gold markers on their cells, the labels and axes where they are, the cells
        assert overlap(colour_mask(shown, GOLD), gold) > 0.8, name
        # the token labels along the left and the top, where the PNG has them
        _assert_labels_match(shown, png, (0, y0 + 2, x0 - 4, y1 - 2),
                             (x0 + 2, 0, x1 - 2, y0 - 4), 1, name)
        assert coarse_difference(shown, png) < 1.5, name
    # the colour bar's darkest end (1.0) at the top of its axis, in all three
    dark = [np.argwhere(colour_mask(p, QColor(8, 48, 107), 20)) for p in (png, svg, pdf)]
    assert all(len(d) > 50 for d in dark)
    png_top, png_left = dark[0].min(axis=0)
    for d in dark[1:]:
        top, left = d.min(axis=0)
        assert abs(top - png_top) <= 2 and abs(left - png_left) <= 2


def test_bar_plot_svg_and_pdf_keep_the_bars_on_the_axes(bar_plot, tmp_path):
    png, svg, pdf = exported_pixels(lambda path, dpi: export_item(bar_plot.plotItem, path, dpi),
                             tmp_path)
    x0, y0, x1, y1 = _plot_area(bar_plot.plotItem, bar_plot.plotItem.sceneBoundingRect())
    bars = colour_mask(png, BAR)
    assert bars.sum() > 20000
    rows, cols = np.nonzero(bars)
    for name, shown in (("svg", svg), ("pdf", pdf)):
        assert overlap(colour_mask(shown, BAR), bars) > 0.9, name
        r, c = np.nonzero(colour_mask(shown, BAR))
        # the bars' extent (the tallest bar's top, the first's left edge, the baseline)
        assert abs(r.min() - rows.min()) <= 2 and abs(r.max() - rows.max()) <= 2, name
        assert abs(c.min() - cols.min()) <= 2 and abs(c.max() - cols.max()) <= 2, name
        # the axes' numbers along the left and the bottom, where the PNG has them
        _assert_labels_match(shown, png, (0, y0 + 2, x0 - 4, y1 - 2),
                             (x0 + 2, y1 + 6, x1 - 2, png.shape[0]), 1, name)
        assert coarse_difference(shown, png) < 0.6, name


def test_svg_strokes_are_right_where_vector_effect_is_not_supported(heatmap, tmp_path):
    """librsvg ignores `vector-effect: non-scaling-stroke`: drawn without it, a marker's
    1-pixel outline was one cell wide. Qt's renderer fed the file without that
    attribute must still draw the markers where the PNG has them."""
    png, _, _ = exported_pixels(heatmap.export, tmp_path)
    svg = (tmp_path / "f.svg").read_bytes()
    stripped = re.sub(rb'\s*vector-effect="non-scaling-stroke"', b"", svg)
    shown = svg_pixels(stripped, QSize(png.shape[1], png.shape[0]))
    assert overlap(colour_mask(shown, GOLD), colour_mask(png, GOLD)) > 0.8
    assert coarse_difference(shown, png) < 1.5


def test_svg_cells_stay_sharp_in_a_viewer_that_smooths_images(heatmap, tmp_path):
    """A viewer that smooths enlarged images (librsvg, ignoring image-rendering) must
    still show each cell as one flat colour, not a gradient into its neighbours."""
    heatmap.set_gold(set(), set())
    heatmap.set_predicted(set())
    heatmap.export(tmp_path / "f.svg")
    svg = (tmp_path / "f.svg").read_bytes().replace(b'image-rendering="optimizeSpeed"', b"")
    vb = heatmap.plot.getViewBox()
    figure = heatmap.graphics.ci.sceneBoundingRect()
    scale = 4
    size = QSize(round(figure.width()) * scale, round(figure.height()) * scale)
    shown = svg_pixels(svg, size, smooth=True)
    matrix = _matrix()
    for t, s in ((0, 0), (4, 3), (8, 7), (2, 5)):
        cell = vb.mapViewToScene(pg.QtCore.QPointF(s, t))
        end = vb.mapViewToScene(pg.QtCore.QPointF(s + 1, t + 1))
        x0, y0 = (cell.x() - figure.left()) * scale, (cell.y() - figure.top()) * scale
        x1, y1 = (end.x() - figure.left()) * scale, (end.y() - figure.top()) * scale
        # the cell's middle 80 %: one colour, the one the colour map gives its weight
        inner = shown[round(y0 + 0.1 * (y1 - y0)):round(y1 - 0.1 * (y1 - y0)),
                      round(x0 + 0.1 * (x1 - x0)):round(x1 - 0.1 * (x1 - x0))]
        assert np.ptp(inner, axis=(0, 1)).max() <= 3, (t, s)
        expected = np.array(heatmap.image.getColorMap().map(matrix[t, s], mode="byte")[:3])
        assert np.abs(inner.mean(axis=(0, 1)) - expected).max() <= 3, (t, s)


def test_export_heatmaps_writes_views_with_and_without_an_eos_row(qtbot, tmp_path, errors,
                                                                  monkeypatch):
    """Word-level views (subword attention summed to the gold words) have no </s> row:
    the export labelled every matrix with an extra </s> and refused them all
    ('attention matrix is (9, 8), tokens give 10 x 8'), writing nothing."""
    rows_drawn = []
    set_matrix = AttentionHeatmap.set_matrix

    def recording(self, matrix, src_tokens, tgt_tokens):
        rows_drawn.append(list(tgt_tokens))
        set_matrix(self, matrix, src_tokens, tgt_tokens)

    monkeypatch.setattr(AttentionHeatmap, "set_matrix", recording)
    jobs = workers.JobManager()
    panel = EvaluationPanel(jobs)
    qtbot.addWidget(panel)
    src, tgt = [f"s{i}" for i in range(8)], [f"t{i}" for i in range(9)]
    words = PairView(1, "1: bpe", _matrix(), src, tgt)  # 9 x 8: no </s> row
    with_eos = np.vstack([_matrix(), np.full((1, 8), 0.125, dtype=np.float32)])
    tokens = PairView(2, "2: word", with_eos, src, tgt)  # 10 x 8: the last row is </s>
    pairs = [PairInput("a", "b", Alignment(sure={(0, 0), (7, 8)}))]
    written = panel._write_heatmaps({(0, 1): words, (0, 2): tokens}, {1: pairs, 2: pairs},
                                    tmp_path, 96,
                                    {1: "bpe", 2: "word"})
    jobs.shutdown()
    assert errors == []
    assert [p.name for p in written] == ["1-bpe-001.png", "2-word-001.png"]
    assert rows_drawn == [tgt, tgt + ["</s>"]]
    for path in written:  # real figures: the gold markers are drawn on them
        assert path.read_bytes()[:4] == b"\x89PNG"
        assert colour_mask(pixels(QImage(str(path))), GOLD).sum() > 300


def test_flattened_strokes_keep_their_place_under_nested_transforms():
    """A stroked shape under two transforms (and one of its own) is rewritten in page
    coordinates; the transform it gets undoes only its parents'."""
    from app.widgets.svg_strokes import flatten_non_scaling_strokes

    svg = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">'
           b'<g transform="matrix(10,0,0,5,20,0)"><g transform="matrix(1,0,0,1,1,2)">'
           b'<path vector-effect="non-scaling-stroke" transform="matrix(2,0,0,2,0,0)" '
           b'd="M0,0 L1,0 L1,1 Z"/>'
           b'<rect vector-effect="non-scaling-stroke" x="0" y="0" width="1" height="2"/>'
           b'<text x="1" y="1">kept</text></g></g></svg>')
    out = flatten_non_scaling_strokes(svg).decode()
    # path: (x, y) -> own (2x, 2y) -> (2x + 1, 2y + 2) -> (10 (2x + 1) + 20, 5 (2y + 2))
    assert 'd="M30,10 L50,10 L50,20 Z"' in out
    # rect: corners through the parents' transforms, as a path
    assert 'd="M30,10 L40,10 L40,20 L30,20 Z"' in out
    # both drawn unscaled: the inverse of the parents' (10, 5) scaling and (30, 10) shift
    assert out.count('transform="matrix(0.1,0,0,0.2,-3,-2)"') == 2
    assert '<text x="1" y="1">kept</text>' in out
    assert flatten_non_scaling_strokes(b'<svg xmlns="http://www.w3.org/2000/svg"/>') == \
        b'<svg xmlns="http://www.w3.org/2000/svg"/>'


def test_export_follows_the_chosen_filter(qtbot, tmp_path, save_dialog, errors):
    from app.panels.figures import export_dialog

    answers, opened_in = save_dialog
    h = shown_heatmap(qtbot, ["a", "b"], ["x", "y"])
    answers += [(str(tmp_path / "typed"), "SVG (*.svg)"),              # no suffix: SVG
                (str(tmp_path / "attention.png"), "PDF (*.pdf)"),     # the default's: PDF
                (str(tmp_path / "named.pdf"), "SVG (*.svg)"),         # the typed name wins
                (str(tmp_path / "plain"), "PNG image (*.png)")]
    written = [export_dialog(h, h.export, "attention") for _ in range(4)]
    assert errors == []
    assert written == [tmp_path / "typed.svg", tmp_path / "attention.pdf",
                       tmp_path / "named.pdf", tmp_path / "plain.png"]
    assert ET.fromstring((tmp_path / "typed.svg").read_bytes()).tag.endswith("svg")
    assert (tmp_path / "attention.pdf").read_bytes()[:5] == b"%PDF-"
    assert (tmp_path / "named.pdf").read_bytes()[:5] == b"%PDF-"
    assert (tmp_path / "plain.png").read_bytes()[:4] == b"\x89PNG"
    assert not (tmp_path / "attention.png").exists()
    # the next dialog for figures opens where the last figure went (item 12)
    assert opened_in[-1].startswith(str(tmp_path))

"""What the attention heatmap draws, read from its pixels: the key naming the overlays (gold
links, extracted alignment, p_t and its window) under the plot, on screen and in the
exported figure, below a context model's gate strip; every token label, a long word elided
on the axis and named whole by the hover readout; local-p's window band and p_t line on
their own cells; a long title wrapped instead of widening the plot past its place."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QImage

from app.widgets.gate_strip import GateStrip
from app.widgets.heatmap import AttentionHeatmap
from app.widgets.heatmap_legend import GOLD, POSITION, PREDICTED
from tests.app.conftest import shown_heatmap
from tests.app.pictures import colour_count


def _pixel(h: AttentionHeatmap, image, x: float, y: float) -> QColor:
    """The colour drawn at view coordinates (x = source, y = target) of the heatmap."""
    scene = h.plot.getViewBox().mapViewToScene(QPointF(x, y))
    point = h.graphics.mapFromScene(scene)
    return image.pixelColor(point.x(), point.y())


def test_legend_names_the_overlays_on_screen_and_in_the_export(qtbot, tmp_path):
    h = AttentionHeatmap()
    qtbot.addWidget(h)
    h.resize(560, 460)
    h.show()
    qtbot.waitExposed(h)
    src, tgt = ["la", "casa", "verde", "."], ["the", "green", "house", ".", "</s>"]
    h.set_matrix(np.full((5, 4), 0.1), src, tgt)
    assert h.legend.labels() == []  # nothing drawn, nothing explained
    h.set_gold({(0, 0), (3, 3)}, {(0, 0), (1, 2)})
    h.set_predicted({(0, 0), (2, 1)})
    h.set_positions(np.array([0.0, 1.0, 2.0, 3.0, 3.0]), window=1)
    qtbot.wait(50)
    assert h.legend.labels() == ["gold link: sure", "gold link: possible", "extracted alignment",
                                 "predicted position p_t", "window p_t \u00b1 D"]
    # drawn under the heatmap: its glyphs in the overlay colours, in the window ...
    legend_rect = h.graphics.mapFromScene(h.legend.sceneBoundingRect()).boundingRect()
    plot_rect = h.graphics.mapFromScene(h.plot.sceneBoundingRect()).boundingRect()
    assert legend_rect.top() >= plot_rect.bottom() - 1 and legend_rect.height() >= 16
    screen = h.graphics.grab().toImage()
    for colour in (GOLD, PREDICTED, POSITION):
        assert colour_count(screen, QRectF(legend_rect), colour) > 3, colour.name()
    # ... and in the exported figure (PNG at 96 dpi: scene pixels = image pixels)
    path = h.export(tmp_path / "fig.png", dpi=96)
    exported = QImage(str(path))
    figure = h.graphics.ci.sceneBoundingRect()
    in_export = h.legend.sceneBoundingRect().translated(-figure.left(), -figure.top())
    for colour in (GOLD, PREDICTED, POSITION):
        assert colour_count(exported, in_export, colour) > 3, colour.name()
    # a context model's gate strip sits between the heatmap and the key
    strip = GateStrip(h)
    strip.set_gates(np.array([1.0, 0.5, 0.2, 0.9]), src)
    qtbot.wait(50)
    assert strip.plot.scene() is h.graphics.scene()
    assert h.legend.sceneBoundingRect().top() >= strip.plot.sceneBoundingRect().bottom() - 1
    # unchecking an overlay removes its entry
    h.set_predicted(set())
    assert "extracted alignment" not in h.legend.labels()


def test_long_first_source_word_has_its_label(qtbot):
    src = ["Internationalisierungsbestrebungen", "a", "b", "c"]
    tgt = ["Donaudampfschifffahrtsgesellschaftskapitän", "x", "y"]
    h = shown_heatmap(qtbot, src, tgt)
    qtbot.wait(50)
    image = h.graphics.grab().toImage()

    def dark_pixels(axis, index) -> int:
        """Text-coloured pixels in the axis band of token `index`."""
        vb = h.plot.getViewBox()
        if axis is h.x_axis:
            a = h.graphics.mapFromScene(vb.mapViewToScene(QPointF(index + 0.1, 0)))
            b = h.graphics.mapFromScene(vb.mapViewToScene(QPointF(index + 0.9, 0)))
            rect = h.graphics.mapFromScene(axis.sceneBoundingRect()).boundingRect()
            xs, ys = range(a.x(), b.x()), range(rect.top(), rect.bottom())
        else:
            a = h.graphics.mapFromScene(vb.mapViewToScene(QPointF(0, index + 0.1)))
            b = h.graphics.mapFromScene(vb.mapViewToScene(QPointF(0, index + 0.9)))
            rect = h.graphics.mapFromScene(axis.sceneBoundingRect()).boundingRect()
            xs, ys = range(rect.left(), rect.right()), range(a.y(), b.y())
        return sum(1 for x in xs for y in ys if image.pixelColor(x, y).value() < 110)

    for i in range(len(src)):
        assert dark_pixels(h.x_axis, i) > 5, f"source label {i} not drawn"
    for i in range(len(tgt)):
        assert dark_pixels(h.y_axis, i) > 5, f"target label {i} not drawn"
    # a long word is elided on the axis; the hover readout names it in full
    assert h.x_axis.height() <= h.x_axis.MAX_LABEL + 14
    assert h.y_axis.width() <= h.y_axis.MAX_LABEL + 14
    assert "Internationalisierungsbestrebungen" in h.describe(0, 0)
    assert "Donaudampfschifffahrtsgesellschaftskapitän" in h.describe(0, 0)


def test_window_band_and_p_t_cover_their_rows(qtbot):
    src = [f"s{i}" for i in range(6)]
    h = shown_heatmap(qtbot, src, ["t0", "t1", "t2"], size=(600, 420))
    # p_t: row 0 -> 0.3 (window cells 0-1), row 1 -> 2.6 (cells 2-4), row 2 -> 4.0 (3-5)
    h.set_positions(np.array([0.3, 2.6, 4.0]), window=1)
    qtbot.wait(50)
    image = h.graphics.grab().toImage()

    def tinted(x: float, y: float) -> bool:
        c = _pixel(h, image, x, y)
        return c.green() - c.red() > 8  # the green band (or line) over the white matrix

    # each row's band covers the row's whole height and exactly its window's cells
    assert tinted(1.9, 0.08) and tinted(0.1, 0.92)      # row 0: cells 0-1, top to bottom
    assert not tinted(2.2, 0.5)                          # cell 2 is outside row 0's window
    assert tinted(4.8, 1.5) and tinted(2.2, 1.08)        # row 1: cells 2-4
    assert not tinted(1.8, 1.5) and not tinted(5.5, 1.5)
    assert tinted(5.8, 2.92) and not tinted(2.8, 2.5)    # row 2: cells 3-5, bottom edge
    # the p_t line crosses each row at p_t + 0.5, over the whole row
    for t, p in enumerate((0.3, 2.6, 4.0)):
        c = _pixel(h, image, p + 0.5, t + 0.08)
        assert c.green() > 100 and c.red() < 120, (t, c.getRgb())


def test_a_long_title_never_widens_a_heatmap_past_its_place(qtbot):
    """A model name and AER in the title used to set the plot's minimum width: in a
    322-pixel heatmap the scene grew to 422 pixels and its last column, colour bar and key
    were cut off. Now everything drawn lies inside the visible view."""
    from app.widgets.heatmap import AttentionHeatmap

    h = AttentionHeatmap()
    qtbot.addWidget(h)
    h.resize(322, 470)
    h.show()
    h.set_title("1: tatoeba-luong-guided-alignment · layer 2 (mean of heads) · AER 83.3 %")
    src = "La trajeron el lunes por la mañana .".split()
    h.set_matrix(np.random.default_rng(0).random((8, 8)), src,
                 "They brought it on Monday morning . </s>".split())
    h.set_gold({(7, 6)}, {(1, 2)})
    qtbot.waitUntil(lambda: h.graphics.ci.geometry().width() <= h.graphics.viewport().width(),
                    timeout=3000)
    view = h.graphics.viewport().width()
    assert h.colorbar.sceneBoundingRect().right() <= view + 1
    assert h.legend.sceneBoundingRect().right() <= view + 1
    vb = h.plot.getViewBox()
    last_column = vb.mapViewToScene(pg.Point(8.0, 0.0)).x()  # the right edge of '.'
    assert last_column <= vb.sceneBoundingRect().right() + 1 <= view + 1
    assert h.plot.titleLabel.text.count("<br>") == 2  # one line per ' · ' part

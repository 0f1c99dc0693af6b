"""Issue #19 items 8-15: what a finished desktop tool offers, seen in the rendered widgets."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage

from app.widgets.heatmap import AttentionHeatmap
from app.widgets.heatmap_legend import GOLD, POSITION, PREDICTED


def _near(c: QColor, ref: QColor, tol: int = 40) -> bool:
    return abs(c.red() - ref.red()) + abs(c.green() - ref.green()) + abs(c.blue() - ref.blue()) < tol


def _count(image: QImage, rect: QRectF, ref: QColor) -> int:
    r = rect.toAlignedRect().intersected(image.rect())
    return sum(1 for x in range(r.left(), r.right()) for y in range(r.top(), r.bottom())
               if _near(image.pixelColor(x, y), ref))


# --- 11. legends: the gold squares, the red dots and the band are named ---------------------
def test_item11_legend_names_the_overlays_on_screen_and_in_the_export(qtbot, tmp_path):
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
        assert _count(screen, QRectF(legend_rect), colour) > 3, colour.name()
    # ... and in the exported figure (PNG at 96 dpi: scene pixels = image pixels)
    path = h.export(tmp_path / "fig.png", dpi=96)
    exported = QImage(str(path))
    figure = h.graphics.ci.sceneBoundingRect()
    in_export = h.legend.sceneBoundingRect().translated(-figure.left(), -figure.top())
    for colour in (GOLD, PREDICTED, POSITION):
        assert _count(exported, in_export, colour) > 3, colour.name()
    # unchecking an overlay removes its entry
    h.set_predicted(set())
    assert "extracted alignment" not in h.legend.labels()

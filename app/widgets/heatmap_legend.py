"""OverlayLegend: the key under an attention heatmap, naming each overlay it draws (gold
sure / possible links, the extracted alignment, local-p's p_t and window). It is an item
of the heatmap's graphics scene, so exported figures carry it too. Entries wrap onto
more lines when the heatmap is narrow."""
from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPen

GOLD = QColor(230, 120, 20)
PREDICTED = QColor(200, 30, 45)
POSITION = QColor(30, 150, 60)

# key -> text of the entry, in drawing order
ENTRIES = {
    "sure": "gold link: sure",
    "possible": "gold link: possible",
    "predicted": "extracted alignment",
    "position": "predicted position p_t",
    "window": "window p_t \u00b1 D",
}
GLYPH = 11  # pixels
GAP = 14  # between entries
LINE = 16  # height of one line of entries


class OverlayLegend(pg.GraphicsWidget):
    """The key under a heatmap: which mark is a gold sure / possible link, an extracted one."""
    def __init__(self):
        super().__init__()
        self.keys: list[str] = []
        self.font = QFont()
        self.font.setPointSize(8)
        self._lines = 0
        self.set_keys([])

    def set_keys(self, keys: Sequence[str]) -> None:
        """Show the entries of `keys` (see ENTRIES), in ENTRIES' order."""
        self.keys = [k for k in ENTRIES if k in set(keys)]
        self._fit()
        self.update()

    def labels(self) -> list[str]:
        """The entries shown, in order."""
        return [ENTRIES[k] for k in self.keys]

    def _places(self, width: float) -> list[tuple[str, float, int]]:
        """(key, x, line) of every entry, wrapped to `width`."""
        fm = QFontMetrics(self.font)
        out, x, line = [], 4.0, 0
        for key in self.keys:
            w = GLYPH + 4 + fm.horizontalAdvance(ENTRIES[key])
            if x > 4.0 and x + w > width:
                x, line = 4.0, line + 1
            out.append((key, x, line))
            x += w + GAP
        return out

    def _fit(self) -> None:
        places = self._places(max(self.size().width(), 100.0))
        lines = (places[-1][2] + 1) if places else 0
        if lines != self._lines:
            self._lines = lines
            self.setFixedHeight(lines * LINE + (4 if lines else 0))

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()

    def boundingRect(self) -> QRectF:  # noqa: N802
        return QRectF(0, 0, self.size().width(), self.size().height())

    def paint(self, p, *args) -> None:
        p.setRenderHint(p.RenderHint.Antialiasing)
        p.setFont(self.font)
        fm = QFontMetrics(self.font)
        for key, x, line in self._places(self.size().width()):
            cy = 2 + line * LINE + LINE / 2
            glyph = QRectF(x, cy - GLYPH / 2, GLYPH, GLYPH)
            _draw_glyph(p, key, glyph)
            p.setPen(QPen(QColor(40, 40, 40)))
            p.drawText(QPointF(x + GLYPH + 4, cy + fm.ascent() / 2 - 1), ENTRIES[key])


def _draw_glyph(p, key: str, r: QRectF) -> None:
    if key == "sure":
        p.setPen(QPen(GOLD, 1))
        p.setBrush(QBrush(GOLD))
        p.drawRect(r.adjusted(1, 1, -1, -1))
    elif key == "possible":
        p.setPen(QPen(GOLD, 1.5))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(r.adjusted(1, 1, -1, -1))
    elif key == "predicted":
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QBrush(PREDICTED))
        p.drawEllipse(r.center(), 3.0, 3.0)
    elif key == "position":
        p.setPen(QPen(POSITION, 2))
        p.drawLine(QPointF(r.center().x(), r.top()), QPointF(r.center().x(), r.bottom()))
    elif key == "window":
        band = QColor(POSITION)
        band.setAlpha(60)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QBrush(band))
        p.drawRect(r)

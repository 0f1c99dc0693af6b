"""AttentionHeatmap: one attention matrix (target x source) drawn like the papers'
figures: source words along the top, target words down the left, first target word on
top, darker = more attention. Optional overlays: gold links (sure = filled square,
possible = outlined square), predicted links (dots), local-p positions p_t with the
window [p_t - D, p_t + D]; a key under the heatmap names the overlays drawn.

Cell (t, s) occupies [s, s+1] x [t, t+1] in view coordinates, so its centre is
(s + 0.5, t + 0.5).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import QGraphicsPolygonItem, QLabel, QVBoxLayout, QWidget

from app.widgets.figure_export import CellImage, export_scene
from app.widgets.heatmap_legend import GOLD, POSITION, PREDICTED, OverlayLegend

# white -> deep blue, like a printed figure
ATTENTION_CMAP = pg.ColorMap([0.0, 0.5, 1.0], [(255, 255, 255), (107, 174, 214), (8, 48, 107)])

Link = tuple[int, int]  # (source index, target index)


class TokenAxis(pg.AxisItem):
    """An axis whose ticks sit at cell centres and whose labels are tokens. On the top
    axis, labels are drawn vertically so long sentences stay readable. Every token in
    view gets its label (pyqtgraph would drop one whose text passes the axis' end, such
    as a long first word); a word longer than MAX_LABEL pixels is elided, its full text
    is in the heatmap's hover readout."""

    MAX_LABEL = 150  # pixels

    def __init__(self, orientation: str, **kwargs):
        super().__init__(orientation, **kwargs)
        self.tokens: list[str] = []
        self.vertical = orientation in ("top", "bottom")
        self.setStyle(tickLength=-3)
        self.setTextPen(pg.mkPen(QColor(40, 40, 40)))
        self.setPen(pg.mkPen(QColor(150, 150, 150)))

    def set_tokens(self, tokens: Sequence[str]) -> None:
        """Label the axis with `tokens`, smaller for long sentences."""
        self.tokens = list(tokens)
        size = 10 if len(self.tokens) <= 25 else 8 if len(self.tokens) <= 50 else 7
        font = QFont()
        font.setPointSize(size)
        self.setTickFont(font)
        width = max((QFontMetrics(font).horizontalAdvance(t) for t in self.tokens), default=10)
        width = min(width, self.MAX_LABEL)
        if self.vertical:
            self.setHeight(width + 14)
        else:
            self.setWidth(width + 14)
        self.picture = None
        self.update()

    def tickValues(self, minVal: float, maxVal: float, size: float):
        lo, hi = min(minVal, maxVal), max(minVal, maxVal)
        return [(1.0, [i + 0.5 for i in range(len(self.tokens)) if lo <= i + 0.5 <= hi])]

    def tickStrings(self, values, scale, spacing):
        return [self.tokens[int(v)] if 0 <= int(v) < len(self.tokens) else "" for v in values]

    def label_positions(self) -> list[tuple[int, float]]:
        """(token index, position along the axis in its own coordinates) of every token
        whose cell centre is in view; pyqtgraph's value -> pixel mapping."""
        r0, r1 = self.range
        if r1 == r0 or not self.tokens:
            return []
        rect = self.mapRectFromParent(self.geometry())
        length = rect.width() if self.vertical else rect.height()
        out = []
        for i in range(len(self.tokens)):
            v = i + 0.5
            if not min(r0, r1) <= v <= max(r0, r1):
                continue
            frac = (v - r0) / (r1 - r0)
            out.append((i, frac * length if self.vertical else (1.0 - frac) * length))
        return out

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        super().drawPicture(p, axisSpec, tickSpecs, [])
        if self.style["tickFont"] is not None:
            p.setFont(self.style["tickFont"])
        p.setPen(self.textPen())
        fm = QFontMetrics(p.font())
        bounds = self.mapRectFromParent(self.geometry())
        room = (bounds.height() if self.vertical else bounds.width()) - 10
        for i, pos in self.label_positions():
            text = fm.elidedText(self.tokens[i], Qt.TextElideMode.ElideRight, int(max(room, 8)))
            p.save()
            if self.orientation == "top":
                p.translate(pos + fm.ascent() / 2 - 1, bounds.bottom() - 6)
                p.rotate(-90)
                p.drawText(QPointF(0, 0), text)
            elif self.orientation == "bottom":
                p.translate(pos - fm.ascent() / 2 + 1, bounds.top() + 6)
                p.rotate(90)
                p.drawText(QPointF(0, 0), text)
            else:  # left: right-aligned against the plot
                p.drawText(QPointF(bounds.right() - 6 - fm.horizontalAdvance(text),
                                   pos + fm.ascent() / 2 - 1), text)
            p.restore()


class AttentionHeatmap(QWidget):
    """A heatmap of one attention matrix with token axes, colour bar and overlays."""

    hovered = Signal(int, int, float)  # target index, source index, weight
    view_changed = Signal(object)  # (x_range, y_range): lets several heatmaps move together

    def __init__(self, parent: QWidget | None = None, title: str = ""):
        super().__init__(parent)
        self.matrix = np.zeros((0, 0), dtype=np.float32)  # tgt x src
        self.src_tokens: list[str] = []
        self.tgt_tokens: list[str] = []
        self.gold_sure: set[Link] = set()
        self.gold_possible: set[Link] = set()

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.x_axis = TokenAxis("top")
        self.y_axis = TokenAxis("left")
        self.plot = self.graphics.addPlot(axisItems={"top": self.x_axis, "left": self.y_axis})
        # pyqtgraph gives a title label its text's width as minimum width on every text
        # change and resize: a long title would widen the heatmap past its place and clip
        # its last columns, colour bar and key. The title keeps its height, not its width.
        label = self.plot.titleLabel
        keep_height = label.updateMin

        def title_min_height_only() -> None:
            keep_height()
            label.setMinimumWidth(0)

        label.updateMin = title_min_height_only
        self.plot.showAxis("top")
        self.plot.hideAxis("bottom")
        self.plot.setMenuEnabled(False)
        if title:
            self.set_title(title)
        vb = self.plot.getViewBox()
        vb.invertY(True)
        vb.setAspectLocked(False)
        vb.setDefaultPadding(0.0)
        self.image = CellImage(axisOrder="row-major")
        self.image.setColorMap(ATTENTION_CMAP)
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=ATTENTION_CMAP, width=12,
                                        interactive=False, label="attention")
        self.colorbar.setImageItem(self.image)
        self.graphics.addItem(self.colorbar)
        # the key to the overlays drawn, under the heatmap (and in its exports)
        self.legend = OverlayLegend()
        self.graphics.addItem(self.legend, row=3, col=0, colspan=2)  # rows 1-2: gate strips
        self._overlays: dict[str, bool] = {}

        # overlays; pxMode=False -> marker sizes are in cells, so they scale on zoom
        self.sure_item = pg.ScatterPlotItem(pxMode=False, symbol="s", size=0.42,
                                            brush=pg.mkBrush(GOLD), pen=pg.mkPen(GOLD, width=1))
        self.possible_item = pg.ScatterPlotItem(pxMode=False, symbol="s", size=0.42,
                                                brush=pg.mkBrush(None),
                                                pen=pg.mkPen(GOLD, width=1.5))
        self.predicted_item = pg.ScatterPlotItem(pxMode=False, symbol="o", size=0.18,
                                                 brush=pg.mkBrush(PREDICTED), pen=None)
        self.position_line = pg.PlotDataItem(pen=pg.mkPen(POSITION, width=2))
        self.window_band = QGraphicsPolygonItem()
        band = QColor(POSITION)
        band.setAlpha(40)
        self.window_band.setBrush(QBrush(band))
        self.window_band.setPen(QPen(Qt.PenStyle.NoPen))
        for item in (self.window_band, self.position_line, self.possible_item, self.sure_item,
                     self.predicted_item):
            self.plot.addItem(item)

        self.readout = QLabel(" ")
        self.readout.setObjectName("heatmapReadout")
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.readout)

        self.graphics.scene().sigMouseMoved.connect(self._on_mouse_moved)
        vb.sigRangeChangedManually.connect(lambda *_: self.view_changed.emit(vb.viewRange()))
        self.setMinimumSize(200, 220)  # four side by side fit a 1280-pixel screen

    def set_title(self, text: str, color: str = "#222222") -> None:
        """The title above the heatmap, one line per ' · ' part. pyqtgraph makes a
        title's text width the plot's minimum width; here it has none (see __init__), and
        short lines keep a long title readable in a narrow heatmap."""
        html = "<br>".join(part.strip() for part in text.split(" · ") if part.strip())
        self.plot.setTitle(html, size="11pt", color=color)

    # --- data -----------------------------------------------------------------
    def set_matrix(self, matrix: np.ndarray, src_tokens: Sequence[str],
                   tgt_tokens: Sequence[str]) -> None:
        """matrix: tgt_len x src_len attention weights in [0, 1]."""
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape != (len(tgt_tokens), len(src_tokens)):
            raise ValueError(f"attention matrix is {matrix.shape}, tokens give "
                             f"{len(tgt_tokens)} x {len(src_tokens)}")
        self.matrix = matrix
        self.src_tokens, self.tgt_tokens = list(src_tokens), list(tgt_tokens)
        self.image.setImage(matrix, autoLevels=False, levels=(0.0, 1.0))
        self.image.setRect(QRectF(0, 0, matrix.shape[1], matrix.shape[0]))
        self.x_axis.set_tokens(self.src_tokens)
        self.y_axis.set_tokens(self.tgt_tokens)
        self.set_gold(set(), set())
        self.set_predicted([])
        self.set_positions(None)
        self.reset_view()

    def clear(self) -> None:
        """Show nothing (no sentence selected)."""
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.src_tokens, self.tgt_tokens = [], []
        self.image.clear()
        self.x_axis.set_tokens([])
        self.y_axis.set_tokens([])
        self.set_gold(set(), set())
        self.set_predicted([])
        self.set_positions(None)

    def reset_view(self) -> None:
        """Show the whole matrix."""
        src, tgt = max(1, len(self.src_tokens)), max(1, len(self.tgt_tokens))
        self.plot.getViewBox().setRange(xRange=(0, src), yRange=(0, tgt), padding=0)

    def set_view(self, ranges) -> None:
        """Show the same region as another heatmap (synchronised navigation)."""
        (x0, x1), (y0, y1) = ranges
        self.plot.getViewBox().setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)

    def set_gold(self, sure: Iterable[Link], possible: Iterable[Link] = ()) -> None:
        """Gold links as (source index, target index); a sure link is also possible,
        so it is drawn only once, filled."""
        self.gold_sure = set(sure)
        self.gold_possible = set(possible) - self.gold_sure
        self.sure_item.setData(pos=_centres(self.gold_sure))
        self.possible_item.setData(pos=_centres(self.gold_possible))
        self._show_in_legend(sure=bool(self.gold_sure), possible=bool(self.gold_possible))

    def set_predicted(self, links: Iterable[Link]) -> None:
        """Mark the extracted links (target, source) on the matrix."""
        links = set(links)
        self.predicted_item.setData(pos=_centres(links))
        self._show_in_legend(predicted=bool(links))

    def _show_in_legend(self, **shown: bool) -> None:
        self._overlays.update(shown)
        self.legend.set_keys([k for k, on in self._overlays.items() if on])

    def set_positions(self, positions: np.ndarray | None, window: int = 0) -> None:
        """local-p: positions[t] = p_t (a real source position) of target row t, window D.
        The p_t line crosses each row at x = p_t + 0.5 (source word s is the cell
        [s, s+1]); the band covers exactly the cells of each row's window, the words
        round(p_t) - D .. round(p_t) + D clipped to the sentence, over the row's whole
        height [t, t+1]."""
        if positions is None or len(positions) == 0:
            self.position_line.setData([], [])
            self.window_band.setPolygon(QPolygonF())
            self._show_in_legend(position=False, window=False)
            return
        p = np.asarray(positions, dtype=float)
        n_src = max(1, len(self.src_tokens))
        rows = np.arange(len(p), dtype=float)
        # a vertical segment through each row at p_t, joined row to row
        xs = np.repeat(p + 0.5, 2)
        ys = np.column_stack([rows, rows + 1.0]).ravel()
        self.position_line.setData(xs, ys)
        centre = np.minimum(np.round(p), n_src - 1)
        lo = np.clip(centre - window, 0, n_src)
        hi = np.clip(centre + window + 1, 0, n_src)
        left = [QPointF(x, y) for x, t in zip(lo, rows, strict=True) for y in (t, t + 1.0)]
        right = [QPointF(x, y) for x, t in zip(hi, rows, strict=True) for y in (t, t + 1.0)]
        self.window_band.setPolygon(QPolygonF(left + right[::-1]))
        self._show_in_legend(position=True, window=True)

    # --- hover ------------------------------------------------------------------
    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        """The (target, source) cell under `scene_pos`, or None."""
        if not self.plot.sceneBoundingRect().contains(scene_pos) or self.matrix.size == 0:
            return None
        point = self.plot.getViewBox().mapSceneToView(scene_pos)
        s, t = int(math.floor(point.x())), int(math.floor(point.y()))
        if 0 <= t < self.matrix.shape[0] and 0 <= s < self.matrix.shape[1]:
            return t, s
        return None

    def describe(self, t: int, s: int) -> str:
        """The tooltip of cell (`t`, `s`): the two tokens and the weight."""
        return (f"target '{self.tgt_tokens[t]}' \u2190 source '{self.src_tokens[s]}': "
                f"{self.matrix[t, s]:.2f}")

    def _on_mouse_moved(self, scene_pos) -> None:
        cell = self.cell_at(scene_pos)
        if cell is None:
            self.readout.setText(" ")
            return
        t, s = cell
        self.readout.setText(self.describe(t, s))
        self.hovered.emit(t, s, float(self.matrix[t, s]))

    # --- export -------------------------------------------------------------------
    def export(self, path: str | Path, dpi: int = 150) -> Path:
        """Write the figure as PNG, SVG or PDF (by the file suffix), scaled for `dpi`
        (the on-screen figure counts as 96 dpi)."""
        # the whole figure, colour bar included
        return export_scene(self.graphics.scene(), self.graphics.ci.sceneBoundingRect(), path, dpi)


def _centres(links: Iterable[Link]) -> np.ndarray:
    pts = [(s + 0.5, t + 0.5) for s, t in links]
    return np.array(pts, dtype=float).reshape(-1, 2)

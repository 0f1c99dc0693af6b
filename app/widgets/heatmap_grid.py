"""HeatmapGrid: the Attention screen's 2-4 heatmaps, each a fair share of the room.

Each heatmap sits in a cell (its "Layer / head" row over it); the cells fill a grid of
equal columns and rows in a scroll area. As many cells go in a row as fit at
`MIN_CELL` width; more wrap to a second row (four models: two by two, not three and
one); when the rows are taller together than the room, the grid scrolls. No heatmap
is squeezed into a strip because another's title or selector is wider.

`parts()` places every shown heatmap's figure where it is on the screen, so
`export_comparison` writes them as one figure (app.widgets.figure_export).
"""
from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import QPoint, QPointF, QSize
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.widgets.figure_export import Part, export_parts
from app.widgets.heatmap import AttentionHeatmap

MIN_CELL = QSize(300, 280)  # a heatmap with its title, axes, key and selector, readable


def arrangement(count: int, width: int) -> tuple[int, int]:
    """(rows, columns) for `count` cells in `width` pixels: as many per row as fit at
    MIN_CELL's width, the rows then filled evenly (4 -> 2 x 2 rather than 3 + 1)."""
    count = max(1, count)
    columns = min(count, max(1, width // MIN_CELL.width()))
    rows = math.ceil(count / columns)
    return rows, math.ceil(count / rows)


class HeatmapGrid(QScrollArea):
    """Up to `size` heatmaps (`heatmaps`, with `layer_boxes` and `layer_labels`);
    `show_count(n)` shows the first n."""

    def __init__(self, size: int = 4, parent: QWidget | None = None):
        super().__init__(parent)
        self.host = QWidget()
        self.grid = QGridLayout(self.host)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(6)
        self.heatmaps = [AttentionHeatmap() for _ in range(size)]
        self.layer_boxes = [QComboBox() for _ in range(size)]
        self.layer_labels = [QLabel("Layer / head") for _ in range(size)]
        # every cell is the host's child, laid out or not (a parentless one would outlive it)
        self.cells = [self._cell(i) for i in range(size)]
        self.count = min(2, size)
        self.shape = (0, 0)  # (rows, columns) laid out
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidget(self.host)
        self._arrange()

    def _cell(self, i: int) -> QWidget:
        box = self.layer_boxes[i]
        box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        box.setMinimumContentsLength(16)  # a long entry does not widen its heatmap
        cell = QWidget(self.host)
        # the cells' hints are ignored: equal stretch gives each the same share
        cell.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        cell.setMinimumSize(MIN_CELL)
        layout = QVBoxLayout(cell)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        row = QHBoxLayout()
        row.addWidget(self.layer_labels[i])
        row.addWidget(box)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(self.heatmaps[i], 1)
        return cell

    def show_count(self, count: int) -> None:
        """Show the first `count` heatmaps, laid out for the room there is."""
        self.count = max(1, min(count, len(self.cells)))
        self._arrange()

    def visible_heatmaps(self) -> list[AttentionHeatmap]:
        """The heatmaps in use (the first `count`)."""
        return self.heatmaps[:self.count]

    def _room(self) -> int:
        """The width the cells share; the vertical scroll bar's place is kept for it, so
        its coming and going does not change the arrangement."""
        return self.width() - 2 * self.frameWidth() - self.verticalScrollBar().sizeHint().width()

    def _arrange(self) -> None:
        shape = arrangement(self.count, self._room())
        shown = [c.isVisibleTo(self) for c in self.cells]
        if shape == self.shape and shown == [i < self.count for i in range(len(self.cells))]:
            return
        self.shape = shape
        rows, columns = shape
        for cell in self.cells:
            self.grid.removeWidget(cell)
        for i, cell in enumerate(self.cells):
            cell.setVisible(i < self.count)
            if i < self.count:
                self.grid.addWidget(cell, i // columns, i % columns)
        for k in range(len(self.cells)):
            self.grid.setColumnStretch(k, 1 if k < columns else 0)
            self.grid.setRowStretch(k, 1 if k < rows else 0)
        self.host.updateGeometry()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._arrange()

    # --- one figure of all shown heatmaps --------------------------------------------
    def parts(self) -> list[Part]:
        """Each shown heatmap's figure (title, axes, colour bar, key) where the screen
        has it, relative to the first one's top left corner."""
        placed = []
        for heatmap in self.visible_heatmaps():
            source = heatmap.graphics.ci.sceneBoundingRect()
            corner = heatmap.graphics.mapTo(
                self.host, heatmap.graphics.mapFromScene(source.topLeft()))
            placed.append((heatmap.graphics.scene(), source, corner))
        left = min(c.x() for _, _, c in placed)
        top = min(c.y() for _, _, c in placed)
        return [Part(scene, source, QPointF(c - QPoint(left, top)))
                for scene, source, c in placed]

    def export_comparison(self, path: str | Path, dpi: int = 150) -> Path:
        """The shown heatmaps as one figure, arranged as on the screen (PNG, SVG or PDF
        by the suffix; PNG scaled for `dpi`)."""
        return export_parts(self.parts(), path, dpi)

"""GateStrip: a context model's gate values lambda, one cell per source token, drawn as a
one-row strip under an AttentionHeatmap, column for column.

lambda is the weight of the sentence's own representation in the gated merge
(O' = lambda * O + (1 - lambda) * O_ctx, averaged over d_model by core): 1 = the token
kept its own meaning, 0 = it was replaced by what the context said. The strip lives in the
heatmap's own graphics layout (a second row, its x axis linked to the heatmap's), so it
lines up with the source columns at every zoom and is part of the heatmap's export.
It leaves the layout for models without gates.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QFont

from app.widgets.figure_export import CellImage
from app.widgets.heatmap import AttentionHeatmap

# purple (drew on the context) -> white (half and half) -> green (the sentence itself)
GATE_CMAP = pg.ColorMap([0.0, 0.5, 1.0], [(118, 42, 131), (247, 247, 247), (27, 120, 55)])
STRIP_HEIGHT = 44  # pixels of the strip row (the cells and their values)


def describe_gate(token: str, value: float) -> str:
    """The hover text of one cell."""
    return (f"gate \u03bb of source '{token}': {value:.2f} \u2014 {value:.0%} from the sentence "
            f"itself, {1 - value:.0%} from the context")


class GateStrip:
    """A gate row of one AttentionHeatmap. `set_gates(values, tokens)` shows it,
    `clear()` hides it (and takes it out of the figure). `row` 1 is the first strip under
    the heatmap, 2 a second one (e.g. a compared baseline's), titled `label`."""

    def __init__(self, heatmap: AttentionHeatmap, row: int = 1, label: str = "gate \u03bb"):
        self.heatmap = heatmap
        self.row = row
        self.values = np.zeros(0, dtype=np.float32)  # lambda per source token
        self.tokens: list[str] = []
        self.plot = pg.PlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        for side in ("top", "right", "bottom"):
            self.plot.hideAxis(side)
        self.axis = self.plot.getAxis("left")
        self.axis.setTicks([[(0.5, label)]])
        self.axis.setStyle(tickLength=0)
        self.axis.setTextPen(pg.mkPen(QColor(40, 40, 40)))
        self.axis.setPen(pg.mkPen(QColor(150, 150, 150)))
        vb = self.plot.getViewBox()
        vb.setMouseEnabled(x=False, y=False)  # zoom and pan come from the heatmap
        vb.setDefaultPadding(0.0)
        vb.setYRange(0.0, 1.0, padding=0.0)
        vb.setXLink(heatmap.plot.getViewBox())
        self.image = CellImage(axisOrder="row-major")
        self.image.setColorMap(GATE_CMAP)
        self.plot.addItem(self.image)
        self.labels: list[pg.TextItem] = []
        self.colorbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=GATE_CMAP, width=12,
                                        interactive=False, label="\u03bb")
        self.colorbar.setImageItem(self.image)
        self.colorbar.axis.setTicks([[(0.0, "0"), (1.0, "1")]])
        # The items live in the heatmap's layout (so its scene owns and deletes them with
        # the widget; orphan graphics items crash PySide6 at interpreter exit) and are
        # collapsed to zero height while there are no gates.
        layout = heatmap.graphics.ci
        self._spacing = layout.layout.rowSpacing(row - 1)
        layout.addItem(self.plot, row=row, col=0)
        layout.addItem(self.colorbar, row=row, col=1)
        self._attached = True
        self._collapse()
        heatmap.graphics.scene().sigMouseMoved.connect(self._on_mouse_moved)

    # --- showing -------------------------------------------------------------------
    @property
    def visible(self) -> bool:
        """Whether the strip is shown under its heatmap."""
        return self._attached

    def set_gates(self, values: Sequence[float] | np.ndarray, tokens: Sequence[str]) -> None:
        """values: one lambda in [0, 1] per source token, in the heatmap's column order."""
        values = np.asarray(values, dtype=np.float32).reshape(-1)
        if len(values) != len(tokens):
            raise ValueError(f"{len(values)} gate values for {len(tokens)} source tokens")
        self.values, self.tokens = values, list(tokens)
        self._attach()
        self.image.setImage(values[None, :], autoLevels=False, levels=(0.0, 1.0))
        self.image.setRect(QRectF(0, 0, len(values), 1))
        self._write_values()
        self.align()

    def clear(self) -> None:
        """No gates (a sentence-level model, or nothing selected): the strip goes away."""
        self.values, self.tokens = np.zeros(0, dtype=np.float32), []
        self.image.clear()
        self._write_values()
        self._detach()

    def align(self) -> None:
        """Give the strip's left axis the heatmap's token-axis width, so both plot areas
        start at the same x (the x ranges are linked)."""
        width = self.heatmap.y_axis.fixedWidth
        self.axis.setWidth(int(width) if width else None)

    def _write_values(self) -> None:
        for label in self.labels:
            self.plot.removeItem(label)
        self.labels = []
        if len(self.values) > 40:  # too narrow for numbers: colour and hover only
            return
        font = QFont()
        font.setPointSize(8 if len(self.values) <= 20 else 7)
        for s, value in enumerate(self.values.tolist()):
            dark = abs(value - 0.5) > 0.3  # white text on the saturated ends
            label = pg.TextItem(f"{value:.2f}", anchor=(0.5, 0.5),
                                color=QColor(255, 255, 255) if dark else QColor(30, 30, 30))
            label.setFont(font)
            label.setPos(s + 0.5, 0.5)
            self.plot.addItem(label)
            self.labels.append(label)

    def _attach(self) -> None:
        """Show the strip: full height under the heatmap."""
        if self._attached:
            return
        # keeps the bars' end labels apart
        self.heatmap.graphics.ci.layout.setRowSpacing(self.row - 1, 12)
        for item in (self.plot, self.colorbar):
            item.setMinimumHeight(STRIP_HEIGHT)
            item.setMaximumHeight(STRIP_HEIGHT)
            item.show()
        self._attached = True

    def _detach(self) -> None:
        """Hide the strip: zero height, not drawn, not exported."""
        if self._attached:
            self._collapse()

    def _collapse(self) -> None:
        for item in (self.plot, self.colorbar):
            item.hide()
            item.setMinimumHeight(0)
            item.setMaximumHeight(0)
        self.heatmap.graphics.ci.layout.setRowSpacing(self.row - 1, self._spacing)
        self._attached = False

    # --- hover -----------------------------------------------------------------------
    def cell_at(self, scene_pos) -> int | None:
        """The source position under `scene_pos`, or None."""
        if not self._attached or not len(self.values) \
                or not self.plot.sceneBoundingRect().contains(scene_pos):
            return None
        x = self.plot.getViewBox().mapSceneToView(scene_pos).x()
        s = int(math.floor(x))
        return s if 0 <= s < len(self.values) else None

    def _on_mouse_moved(self, scene_pos) -> None:
        s = self.cell_at(scene_pos)
        if s is None:
            self.plot.setToolTip("")
            return
        text = describe_gate(self.tokens[s], float(self.values[s]))
        self.heatmap.readout.setText(text)
        self.plot.setToolTip(text)

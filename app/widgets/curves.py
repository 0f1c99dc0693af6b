"""CurvesPlot: learning curves of several runs overlaid (one colour per run, the run's
own: app/widgets/run_colours.py; one line style per metric), appendable live while a
run trains."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.widgets.run_colours import PALETTE, label_colour

STYLES = [Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine,
          Qt.PenStyle.DashDotLine]
FEW_POINTS = 30  # a series with this many points or fewer gets a marker on each point


#: mantissas labelled per decade on a log axis, densest first: all, 1-2-5, decades only
MANTISSAS = ((1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 5), (1,))
LABEL_PIXELS = 22  # the room one value label needs along a vertical axis


def plain_number(value: float) -> str:
    """A tick label as people write it: 30, 0.05, 2000, 20k (never 3·10¹)."""
    if value >= 10_000:
        return f"{value / 1000:g}k"
    if value >= 0.001:
        return f"{float(f'{value:.3g}'):g}"
    return f"{value:.0e}"


def log_ticks(low: float, high: float, pixels: float) -> list[float]:
    """Values (not logs) to label on a log axis showing 10**low .. 10**high on `pixels`:
    the densest mantissa set whose labels fit, never fewer than two values in range when
    any set gives two. Half a label's room is kept free at each end (pyqtgraph drops a
    label that would stick out of the axis)."""
    fits = max(2, int(pixels // LABEL_PIXELS))
    margin = (high - low) * min(0.25, LABEL_PIXELS / 2 / max(pixels, 1.0))
    low, high = low + margin, high - margin
    choices = []
    for mantissas in MANTISSAS:
        values = [m * 10.0 ** k for k in range(int(np.floor(low)), int(np.ceil(high)) + 1)
                  for m in mantissas]
        inside = [v for v in values if low <= np.log10(v) <= high]
        choices.append(inside)
        if len(inside) <= fits:
            break
    enough = [c for c in choices if len(c) >= 2]
    if len(choices[-1]) >= 2 or not enough:
        return choices[-1]
    return enough[-1]  # the sparsest set that still labels two values


class ValueAxis(pg.AxisItem):
    """A value axis in plain numbers: no SI scale factor ("BLEU (x0.001)" over 0-350),
    and in log mode the labels of log_ticks (1-2-5 or decades as room allows, at least
    two, written as plain_number)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.enableAutoSIPrefix(False)

    def tickValues(self, minVal, maxVal, size):  # noqa: N802 (pyqtgraph's name)
        if not self.logMode:
            return super().tickValues(minVal, maxVal, size)
        low, high = sorted((minVal, maxVal))
        return [(None, [float(np.log10(v)) for v in log_ticks(low, high, size)])]

    def logTickStrings(self, values, scale, spacing):  # noqa: N802
        return [plain_number(10.0 ** v * scale) for v in values]


class CurvesPlot(QWidget):
    """Named series keyed by (run, metric name); x = training step."""

    def __init__(self, title: str = "", y_label: str = "", log_y: bool = False,
                 parent: QWidget | None = None, smoothing: float = 0.0):
        super().__init__(parent)
        # > 0: draw an exponential moving average (weight `smoothing` on the past) over
        # a faint line of the raw points, as noisy per-step losses need
        self.smoothing = smoothing
        self.plot_widget = pg.PlotWidget(background="w", axisItems={"left": ValueAxis("left")})
        self.plot = self.plot_widget.getPlotItem()
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.plot.setLabel("bottom", "step")
        if y_label:
            self.plot.setLabel("left", y_label)
        if title:
            self.plot.setTitle(title, size="11pt")
        self.legend = self.plot.addLegend(offset=(-10, 10), labelTextSize="9pt",
                                          brush=(255, 255, 255, 210), pen=(200, 200, 200))
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setTextPen(pg.mkPen(QColor(60, 60, 60)))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot_widget)
        self._data: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
        self._items: dict[tuple[str, str], pg.PlotDataItem] = {}
        self._raw_items: dict[tuple[str, str], pg.PlotDataItem] = {}
        self._run_colour: dict[str, str] = {}
        self._metric_style: dict[str, Qt.PenStyle] = {}
        self.set_log_y(log_y)

    def set_log_y(self, on: bool) -> None:
        """A logarithmic (or linear) y axis."""
        self.log_y = on
        self.plot.setLogMode(x=False, y=on)

    def add_points(self, run: str, name: str, steps: Sequence[float],
                   values: Sequence[float]) -> None:
        """Append points to the series (run, name), creating it on first use."""
        key = (run, name)
        xs, ys = self._data.setdefault(key, ([], []))
        for x, y in zip(steps, values, strict=True):
            if y is None or not np.isfinite(y) or (self.log_y and y <= 0):
                continue  # a NaN or non-positive value cannot be drawn (log scale)
            xs.append(float(x))
            ys.append(float(y))
        item = self._items.get(key)
        if item is None:
            colour = self._run_colour.setdefault(  # a run's own colour (by its id)
                run, label_colour(run) or PALETTE[len(self._run_colour) % len(PALETTE)])
            style = self._metric_style.setdefault(name, STYLES[len(self._metric_style) % len(STYLES)])
            pen = pg.mkPen(colour, width=2, style=style)
            if self.smoothing > 0:
                faint = QColor(colour)
                faint.setAlpha(60)
                self._raw_items[key] = self.plot.plot([], [], pen=pg.mkPen(faint, width=1))
            item = self.plot.plot([], [], pen=pen, name=f"{run} \u00b7 {name}")
            self._items[key] = item
        if self.smoothing > 0:
            self._raw_items[key].setData(np.asarray(xs), np.asarray(ys))
            item.setData(np.asarray(xs), ema(ys, self.smoothing))
        else:
            item.setData(np.asarray(xs), np.asarray(ys))
        self._mark_points(item, run, len(xs))
        self._place_legend()

    def _place_legend(self) -> None:
        """The legend in the right-hand corner away from the newest points: at the bottom
        while they sit in the upper half of the data's range (a rising BLEU), else at the
        top (a falling loss), so it never covers where a live curve grows."""
        ys = [y for _xs, values in self._data.values() for y in values]
        newest = [values[-1] for _xs, values in self._data.values() if values]
        if not newest:
            return
        scale = np.log10 if self.log_y else np.asarray
        low, high = float(np.min(scale(ys))), float(np.max(scale(ys)))
        share = float(np.mean((scale(newest) - low) / (high - low))) if high > low else 0.0
        self.legend.setOffset((-10, -10) if share > 0.5 else (-10, 10))

    def _mark_points(self, item: pg.PlotDataItem, run: str, n: int) -> None:
        """Markers on the points of a short series (a line through one point is
        invisible; a dev curve has few points), none on long ones."""
        if n > FEW_POINTS:
            item.setSymbol(None)
            return
        colour = self._run_colour[run]
        item.setSymbol("o")
        item.setSymbolSize(7)
        item.setSymbolBrush(pg.mkBrush(colour))
        item.setSymbolPen(pg.mkPen("w", width=1))

    def series(self, run: str, name: str) -> tuple[list[float], list[float]]:
        """The (x, y) points drawn for curve `name` of `run`."""
        xs, ys = self._data.get((run, name), ([], []))
        return list(xs), list(ys)

    def runs(self) -> list[str]:
        """The runs drawn, in the order they were added."""
        return list(self._run_colour)

    def colour_of(self, run: str) -> str | None:
        """The colour of `run`'s curves, or None when it is not drawn."""
        return self._run_colour.get(run)

    def remove_run(self, run: str) -> None:
        """Remove every curve of `run`."""
        for key in [k for k in self._items if k[0] == run]:
            self.plot.removeItem(self._items.pop(key))
            if key in self._raw_items:
                self.plot.removeItem(self._raw_items.pop(key))
            self._data.pop(key, None)

    def clear(self) -> None:
        """Remove every curve."""
        for item in [*self._items.values(), *self._raw_items.values()]:
            self.plot.removeItem(item)
        self._items.clear()
        self._raw_items.clear()
        self._data.clear()
        self._run_colour.clear()


def ema(values: Sequence[float], weight: float) -> np.ndarray:
    """Exponential moving average, debiased so the first points are not pulled to 0:
    s_t = w s_{t-1} + (1 - w) v_t, divided by 1 - w^t."""
    out = np.empty(len(values), dtype=float)
    acc = 0.0
    for t, v in enumerate(values, start=1):
        acc = weight * acc + (1 - weight) * v
        out[t - 1] = acc / (1 - weight ** t)
    return out

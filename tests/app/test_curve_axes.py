"""The training and evaluation curves as drawn: a series of one point is visible; the axes
show plain numbers, no SI scale factor, at least two labels on a log axis; the legend
stays away from the newest points. The labels checked are the ones pyqtgraph draws (AxisItem.generateDrawSpecs)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QImage, QPainter

from app.widgets.curves import CurvesPlot, log_ticks, plain_number


def drawn_labels(plot: CurvesPlot, name: str = "left") -> list[str]:
    """The tick labels the axis draws now."""
    axis = plot.plot.getAxis(name)
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _rect, _flags, text in specs[2]]


def shown(qtbot, plot: CurvesPlot, width: int = 420, height: int = 300) -> CurvesPlot:
    qtbot.addWidget(plot)
    plot.resize(width, height)
    plot.show()
    qtbot.waitExposed(plot)
    plot.plot.vb.autoRange()
    return plot


def test_small_dev_bleu_reads_in_bleu_points_without_a_scale_factor(qtbot):
    plot = CurvesPlot("Dev BLEU", "BLEU")
    plot.add_points("run", "dev_bleu", [100, 200, 300, 400], [0.0, 0.1, 0.25, 0.35])
    shown(qtbot, plot)
    labels = drawn_labels(plot)
    assert "(x0.001)" not in plot.plot.getAxis("left").labelString()
    assert "BLEU" in plot.plot.getAxis("left").labelString()
    values = sorted(float(t) for t in labels)
    assert values[0] >= 0 and values[-1] <= 0.4  # 0 .. 0.35, not 0 .. 350
    assert "0.1" in labels and "0.2" in labels


def test_log_axis_labels_are_plain_numbers(qtbot):
    plot = CurvesPlot("Dev perplexity", "perplexity", log_y=True)
    plot.add_points("run", "dev_ppl", [100, 200, 300], [300.0, 80.0, 30.0])
    shown(qtbot, plot)
    labels = drawn_labels(plot)
    assert not any("\u00b7" in t or "\u00b9" in t or "e" in t for t in labels), labels
    assert {"50", "100", "200"} <= set(labels)


def test_a_loss_within_one_decade_gets_several_labels_on_a_short_plot(qtbot):
    # the training screen's loss plot at 1280 x 720 is this short; the loss falls from
    # 9.5 to 0.8: only '1' was labelled, 10 fell off the axis
    plot = CurvesPlot("Training loss", "loss", log_y=True, smoothing=0.9)
    plot.add_points("run", "loss", list(range(1, 500)), list(np.geomspace(9.5, 0.8, 499)))
    shown(qtbot, plot, height=150)
    labels = drawn_labels(plot)
    assert len(labels) >= 2, labels
    assert {"1", "2", "5"} <= set(labels)
    plot.clear()
    plot.add_points("run", "loss", list(range(1, 500)), list(np.geomspace(6, 2.2, 499)))
    plot.plot.vb.autoRange()
    assert set(drawn_labels(plot)) >= {"3", "4"}


def test_log_ticks_thin_to_decades_and_numbers_stay_plain():
    # 1.5 to 12 on 400 pixels: every integer; 0.5 to 2000 on 150: the decades only
    assert log_ticks(np.log10(1.5), np.log10(12), 400) == [2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert log_ticks(np.log10(0.5), np.log10(2000), 150) == [1, 10, 100, 1000]
    assert [plain_number(v) for v in (30, 0.05, 2000, 20000, 3.5)] == [
        "30", "0.05", "2000", "20k", "3.5"]


def _legend_covers(plot: CurvesPlot, x: float, y: float) -> bool:
    view_y = np.log10(y) if plot.log_y else y
    point = plot.plot.vb.mapViewToScene(QPointF(x, view_y))
    return plot.legend.sceneBoundingRect().contains(point)


def test_legend_leaves_the_newest_points_free(qtbot):
    rising = CurvesPlot("Dev BLEU", "BLEU")
    for run, top in (("run A", 30.0), ("run B", 28.0)):
        rising.add_points(run, "dev_bleu", [1000, 2000, 3000, 4000], [2.0, 12.0, 22.0, top])
    shown(qtbot, rising)
    qtbot.wait(50)
    assert not _legend_covers(rising, 4000, 30.0)
    assert not _legend_covers(rising, 4000, 28.0)
    falling = CurvesPlot("Dev perplexity", "perplexity", log_y=True)
    falling.add_points("run A", "dev_ppl", [1000, 2000, 3000, 4000], [400.0, 90.0, 30.0, 12.0])
    shown(qtbot, falling)
    qtbot.wait(50)
    assert not _legend_covers(falling, 4000, 12.0)


def test_single_point_series_is_drawn(qtbot):
    plot = CurvesPlot("Dev perplexity", "perplexity", log_y=True)
    qtbot.addWidget(plot)
    plot.resize(400, 300)
    plot.show()
    qtbot.waitExposed(plot)
    plot.add_points("1: tiny", "dev_ppl", [15], [42.0])
    qtbot.wait(50)
    colour = QColor(plot.colour_of("1: tiny"))
    image = plot.plot_widget.grab().toImage()
    view = plot.plot.getViewBox()
    centre = plot.plot_widget.mapFromScene(view.mapViewToScene(QPointF(15, np.log10(42.0))))
    near = [image.pixelColor(centre.x() + dx, centre.y() + dy)
            for dx in range(-2, 3) for dy in range(-2, 3)]
    assert any(abs(c.red() - colour.red()) + abs(c.green() - colour.green())
               + abs(c.blue() - colour.blue()) < 40 for c in near)

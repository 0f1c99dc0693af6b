"""The Training screen's curves: training loss, dev perplexity and dev BLEU side by side,
several runs overlaid (one colour per run). A running run's points are buffered and
drawn a few times a second (`flush`), so a fast run never floods the GUI thread; a
stored run's curves are read from the workspace."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QWidget

from app.widgets.curves import CurvesPlot
from core.workspace.store import Workspace


class TrainingCurves(QSplitter):
    """The three CurvesPlots (`plots`: "loss", "dev_ppl", "dev_bleu") in a horizontal
    splitter."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.loss_plot = CurvesPlot("Training loss (smoothed)", "loss", log_y=True, smoothing=0.9)
        self.ppl_plot = CurvesPlot("Dev perplexity", "perplexity", log_y=True)
        self.bleu_plot = CurvesPlot("Dev BLEU", "BLEU")
        self.plots = {"loss": self.loss_plot, "dev_ppl": self.ppl_plot, "dev_bleu": self.bleu_plot}
        for plot in self.plots.values():
            self.addWidget(plot)
        self._pending: list[tuple[str, str, int, float | None]] = []  # (plot, label, step, value)

    def add_point(self, plot: str, label: str, step: int, value: float | None) -> None:
        """Buffer one point of curve `label` on plot `plot` (drawn at the next flush;
        None is drawn as a gap)."""
        self._pending.append((plot, label, step, value))

    def flush(self) -> None:
        """Draw the buffered points, one call per plot and curve."""
        if not self._pending:
            return
        grouped: dict[tuple[str, str], tuple[list[int], list[float]]] = {}
        for plot, label, step, value in self._pending:
            xs, ys = grouped.setdefault((plot, label), ([], []))
            xs.append(step)
            ys.append(float("nan") if value is None else float(value))
        self._pending.clear()
        for (plot, label), (xs, ys) in grouped.items():
            self.plots[plot].add_points(label, plot, xs, ys)

    def clear(self) -> None:
        """Every plot empty (the buffered points stay, for the next flush)."""
        for plot in self.plots.values():
            plot.clear()

    def show_stored(self, workspace: Workspace, labels: dict[int, str]) -> None:
        """Replace the curves by the stored ones of the runs `labels` names (run id ->
        curve label, in drawing order)."""
        self.clear()
        for run_id, label in labels.items():
            train = workspace.curves(run_id, "train")
            valid = workspace.curves(run_id, "valid")
            for key, curves in (("loss", train), ("dev_ppl", valid), ("dev_bleu", valid)):
                if key in curves:
                    self.plots[key].add_points(label, key, *curves[key])

    def figures(self) -> dict[str, object]:
        """{title: pyqtgraph plot} for File > Export figure."""
        return {"Training loss": self.loss_plot.plot, "Dev perplexity": self.ppl_plot.plot,
                "Dev BLEU": self.bleu_plot.plot}

"""Evaluation screen: runs with their scores (BLEU/chrF/TER/ppl/AER), learning curves
of several runs, BLEU by sentence length; export of plots."""
from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.core_bridge import require
from app.widgets.curves import PALETTE, CurvesPlot

COLUMNS = ("Run", "Test set", "BLEU", "chrF", "TER", "ppl", "AER")
METRIC_KEYS = ("bleu", "chrf", "ter", "ppl", "aer")


class EvaluationPanel(QWidget):
    def __init__(self, jobs: workers.JobManager, parent: QWidget | None = None):
        super().__init__(parent)
        self.jobs = jobs
        self.workspace: Any = None
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._show_selected)
        self.curves = CurvesPlot("Dev perplexity", "perplexity", log_y=True)
        self.by_length = pg.PlotWidget(background="w")
        self.by_length.setTitle("BLEU by source length", size="10pt")
        self.by_length.setLabel("bottom", "source length bucket")
        self.by_length.setLabel("left", "BLEU")
        self.by_length.addLegend(offset=(-5, 5), labelTextSize="8pt")
        self.export_button = QPushButton("Export plot…")
        self.export_button.clicked.connect(self.export_figure)
        self.report_button = QPushButton("HTML report…")
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        bar = QHBoxLayout()
        bar.addWidget(self.refresh_button)
        bar.addStretch(1)
        bar.addWidget(self.export_button)
        bar.addWidget(self.report_button)
        plots = QSplitter(Qt.Orientation.Horizontal)
        plots.addWidget(self.curves)
        plots.addWidget(self.by_length)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(plots)
        splitter.setSizes([300, 500])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)
        self.html_report = require([self.report_button], "core.evaluate.report", "write_html_report")

    def set_workspace(self, workspace: Any) -> None:
        self.workspace = workspace
        self.refresh()

    def refresh(self) -> None:
        self.table.setSortingEnabled(False)
        self.table.setRowCount(0)
        if self.workspace is None:
            return
        names = {r.id: r.name for r in self.workspace.list_runs()}
        rows: list[tuple[list[int], str, dict[str, Any]]] = [
            (e.run_ids, e.test_name, e.metrics) for e in self.workspace.evaluations()]
        evaluated = {i for ids, _, _ in rows for i in ids}
        rows += [([rid], "", {}) for rid in names if rid not in evaluated]
        self.table.setRowCount(len(rows))
        for row, (run_ids, test, metrics) in enumerate(rows):
            label = " + ".join(f"{i}:{names.get(i, '?')}" for i in run_ids)
            cells: list[Any] = [label, test] + [metrics.get(k) for k in METRIC_KEYS]
            for col, value in enumerate(cells):
                item = QTableWidgetItem()
                if isinstance(value, int | float):
                    item.setData(Qt.ItemDataRole.DisplayRole, round(float(value), 2))
                else:
                    item.setText("–" if value is None else str(value))
                item.setData(Qt.ItemDataRole.UserRole, (run_ids, metrics))
                self.table.setItem(row, col, item)
        self.table.setSortingEnabled(True)
        self.table.resizeColumnsToContents()

    def _show_selected(self) -> None:
        if self.workspace is None:
            return
        self.curves.clear()
        self.by_length.clear()
        seen: set[int] = set()
        rows = sorted({i.row() for i in self.table.selectedItems()})
        for n, row in enumerate(rows):
            run_ids, metrics = self.table.item(row, 0).data(Qt.ItemDataRole.UserRole)
            for rid in run_ids:
                if rid in seen:
                    continue
                seen.add(rid)
                valid = self.workspace.curves(rid, "valid")
                if "dev_ppl" in valid:
                    self.curves.add_points(f"run {rid}", "dev_ppl", *valid["dev_ppl"])
            buckets = metrics.get("bleu_by_length")  # {bucket label: bleu}
            if isinstance(buckets, dict) and buckets:
                xs = list(range(len(buckets)))
                width = 0.8 / max(1, len(rows))
                bars = pg.BarGraphItem(x0=[x + n * width for x in xs], width=width,
                                       height=[float(v) for v in buckets.values()],
                                       brush=PALETTE[n % len(PALETTE)], pen=None)
                self.by_length.addItem(bars)
                axis = self.by_length.getAxis("bottom")
                axis.setTicks([[(x + 0.4, str(k)) for x, k in zip(xs, buckets, strict=True)]])

    def export_figure(self) -> None:
        import pyqtgraph.exporters as exporters
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getSaveFileName(self, "Export plot", "curves.png",
                                              "PNG image (*.png);;SVG (*.svg)")
        if not path:
            return
        try:
            kind = exporters.SVGExporter if path.endswith(".svg") else exporters.ImageExporter
            kind(self.curves.plot).export(path)
        except (OSError, ValueError) as exc:
            workers.show_error(self, "Export failed", f"{path}: {exc}")

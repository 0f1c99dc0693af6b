"""Attention screen: one sentence pair under 2-4 models, heatmaps side by side with
synchronised navigation, gold links overlaid, AER per model (core.evaluate)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.core_bridge import find, require
from app.panels.translate import LOAD_SESSION
from app.widgets.heatmap import AttentionHeatmap


@dataclass
class ModelView:
    """What one model says about the shown pair."""

    label: str
    matrix: np.ndarray  # tgt x src (word level, no EOS)
    src_tokens: list[str]
    tgt_tokens: list[str]
    positions: np.ndarray | None = None


class AttentionPanel(QWidget):
    def __init__(self, jobs: workers.JobManager, parent: QWidget | None = None):
        super().__init__(parent)
        self.jobs = jobs
        self.workspace: Any = None
        self.gold: Any = None
        self.views: list[ModelView] = []

        self.pair_source = QComboBox()
        self.pair_source.addItems(["Typed pair", "Gold set", "Test set"])
        self.src_edit, self.tgt_edit = QLineEdit(), QLineEdit()
        self.src_edit.setPlaceholderText("source sentence")
        self.tgt_edit.setPlaceholderText("target sentence (forced decoding) — empty: translate")
        self.forced = QCheckBox("forced decoding")
        self.forced.setChecked(True)
        self.show_gold = QCheckBox("gold links")
        self.show_gold.setChecked(True)
        self.show_gold.toggled.connect(lambda _=None: self._apply_overlays())
        self.show_pred = QCheckBox("predicted links")
        self.show_pred.setChecked(True)
        self.show_pred.toggled.connect(lambda _=None: self._apply_overlays())
        self.n_models = QSpinBox()
        self.n_models.setRange(2, 4)
        self.n_models.valueChanged.connect(self._layout_heatmaps)
        self.run_button = QPushButton("Show attention")
        self.models = QListWidget()
        self.models.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        self.models.setMaximumHeight(90)
        top = QGridLayout()
        top.addWidget(QLabel("Pair from"), 0, 0)
        top.addWidget(self.pair_source, 0, 1)
        top.addWidget(self.src_edit, 0, 2)
        top.addWidget(self.tgt_edit, 1, 2)
        top.addWidget(QLabel("Models"), 0, 3)
        top.addWidget(self.models, 0, 4, 2, 1)
        options = QHBoxLayout()
        for w in (self.forced, self.show_gold, self.show_pred, QLabel("Side by side"),
                  self.n_models, self.run_button):
            options.addWidget(w)
        options.addStretch(1)
        top.addLayout(options, 1, 0, 1, 2)
        top.setColumnStretch(2, 1)

        self.heatmaps = [AttentionHeatmap() for _ in range(4)]
        for h in self.heatmaps:
            h.view_changed.connect(lambda ranges, src=h: self._sync(src, ranges))
        self.grid_host = QWidget()
        self.grid = QHBoxLayout(self.grid_host)
        self.grid.setContentsMargins(0, 0, 0, 0)
        for h in self.heatmaps:
            self.grid.addWidget(h)

        self.aer_table = QTableWidget(0, 4)
        self.aer_table.setHorizontalHeaderLabels(["Model", "AER (this pair)", "Precision", "Recall"])
        self.aer_table.verticalHeader().setVisible(False)
        self.aer_table.horizontalHeader().setStretchLastSection(True)
        self.aer_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.aer_table.setSortingEnabled(True)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.grid_host)
        splitter.addWidget(self.aer_table)
        splitter.setSizes([640, 160])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        self._layout_heatmaps()

        self.load_session = require([self.run_button, self.models], *LOAD_SESSION)
        self.sentence_aer = find("core.evaluate.aer", "sentence_aer")
        self.argmax_alignment = find("core.evaluate.extract", "argmax_alignment")
        # gold/test pickers need a gold-set store API (pending)
        self.pair_source.model().item(1).setEnabled(False)
        self.pair_source.model().item(2).setEnabled(False)
        self.pair_source.setToolTip("Gold/test pickers pending: needs a gold-set API in core.store")

    def set_workspace(self, workspace: Any) -> None:
        self.workspace = workspace
        self.refresh()

    def refresh(self) -> None:
        self.models.clear()
        if self.workspace is None:
            return
        for run in self.workspace.list_runs(status="finished"):
            self.models.addItem(f"{run.id}: {run.name}")

    def _layout_heatmaps(self) -> None:
        for i, h in enumerate(self.heatmaps):
            h.setVisible(i < self.n_models.value())

    def _sync(self, source: AttentionHeatmap, ranges) -> None:
        for h in self.heatmaps:
            if h is not source and h.isVisibleTo(self):
                h.set_view(ranges)

    # --- showing --------------------------------------------------------------------------
    def show_views(self, views: list[ModelView], gold: Any = None) -> None:
        """Draw each model's matrix (up to 4) with the gold alignment (an
        core.evaluate.alignment.Alignment or None) and fill the AER table."""
        self.views, self.gold = list(views[:4]), gold
        self.n_models.setValue(max(2, len(self.views)))
        for h, view in zip(self.heatmaps, self.views, strict=False):
            h.plot.setTitle(view.label, size="10pt")
            h.set_matrix(view.matrix, view.src_tokens, view.tgt_tokens)
            if view.positions is not None:
                h.set_positions(view.positions)
        self._apply_overlays()
        self._fill_aer()

    def predicted(self, view: ModelView) -> set[tuple[int, int]]:
        if self.argmax_alignment is None:
            return set()
        return set(self.argmax_alignment(view.matrix).sure)

    def _apply_overlays(self) -> None:
        for h, view in zip(self.heatmaps, self.views, strict=False):
            if self.gold is not None and self.show_gold.isChecked():
                h.set_gold(self.gold.sure, self.gold.possible)
            else:
                h.set_gold(set(), set())
            h.set_predicted(self.predicted(view) if self.show_pred.isChecked() else set())

    def _fill_aer(self) -> None:
        self.aer_table.setSortingEnabled(False)
        self.aer_table.setRowCount(len(self.views))
        for row, view in enumerate(self.views):
            values: list[Any] = [view.label, None, None, None]
            if self.gold is not None and self.sentence_aer is not None:
                counts = self.sentence_aer(self.predicted(view), self.gold)
                values[1:] = [counts.aer, counts.precision, counts.recall]
            for col, value in enumerate(values):
                item = QTableWidgetItem()
                if isinstance(value, float):
                    item.setData(Qt.ItemDataRole.DisplayRole, round(value, 4))
                else:
                    item.setText("–" if value is None else str(value))
                self.aer_table.setItem(row, col, item)
        self.aer_table.setSortingEnabled(True)

    def export_figure(self) -> None:
        from app.panels.figures import export_dialog

        export_dialog(self, self.heatmaps[0].export, "attention")

"""Translate screen: open a document, translate it in a worker, edit the target side
by side with the source, see a sentence's attention, export the result."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.core_bridge import require
from app.widgets.heatmap import AttentionHeatmap

# The glue the GUI needs from core (documented in the report):
READ_DOCUMENT = ("core.formats.documents", "read_document")  # path -> list[str] sentences
LOAD_SESSION = ("core.infer.session", "load_session")  # (workspace, run_id) -> session
EXPORT = ("core.formats.export", "write_translations")  # (path, sources, targets, ...)


class TranslatePanel(QWidget):
    def __init__(self, jobs: workers.JobManager, parent: QWidget | None = None):
        super().__init__(parent)
        self.jobs = jobs
        self.workspace: Any = None
        self.translations: list[Any] = []
        self.job: workers.Job | None = None

        self.open_button = QPushButton("Open document…")
        self.model = QComboBox()
        self.model.setMinimumWidth(220)
        self.translate_button = QPushButton("Translate")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: self.job and self.job.cancel())
        self.export_button = QPushButton("Export…")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(240)
        bar = QHBoxLayout()
        bar.addWidget(self.open_button)
        bar.addSpacing(12)
        bar.addWidget(QLabel("Model"))
        bar.addWidget(self.model)
        bar.addWidget(self.translate_button)
        bar.addWidget(self.cancel_button)
        bar.addStretch(1)
        bar.addWidget(self.progress)
        bar.addWidget(self.export_button)

        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Source", "Target (editable)"])
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setColumnWidth(0, 560)
        self.table.setWordWrap(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.currentCellChanged.connect(lambda row, *_: self.show_attention(row))
        self.heatmap = AttentionHeatmap(title="Attention of the selected sentence")
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.heatmap)
        splitter.setSizes([480, 360])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)

        self.read_document = require([self.open_button], *READ_DOCUMENT)
        self.load_session = require([self.translate_button, self.model], *LOAD_SESSION)
        self.export_fn = require([self.export_button], *EXPORT)

    def set_workspace(self, workspace: Any) -> None:
        self.workspace = workspace
        self.refresh()

    def refresh(self) -> None:
        self.model.clear()
        if self.workspace is None:
            return
        for run in self.workspace.list_runs(status="finished"):
            self.model.addItem(f"{run.id}: {run.name} ({run.family})", run.id)

    def set_sentences(self, sources: list[str], targets: list[str] | None = None) -> None:
        self.table.setRowCount(len(sources))
        for row, text in enumerate(sources):
            item = QTableWidgetItem(text)
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            self.table.setItem(row, 0, item)
            self.table.setItem(row, 1, QTableWidgetItem(targets[row] if targets else ""))

    def show_translations(self, translations: list[Any]) -> None:
        """core.infer.translate.Translation objects, in input order."""
        self.translations = translations
        for row, tr in enumerate(translations):
            self.table.setItem(row, 1, QTableWidgetItem(tr.text))
        self.show_attention(self.table.currentRow() if self.table.currentRow() >= 0 else 0)

    def show_attention(self, row: int) -> None:
        if not 0 <= row < len(self.translations):
            return
        tr = self.translations[row]
        tgt_tokens = list(tr.target_tokens) + ["</s>"]  # the last attention row is EOS
        self.heatmap.set_matrix(tr.attention, tr.source_tokens, tgt_tokens)
        if tr.positions is not None:
            self.heatmap.set_positions(tr.positions)

    def targets(self) -> list[str]:
        return [(self.table.item(r, 1).text() if self.table.item(r, 1) else "")
                for r in range(self.table.rowCount())]

    def export_figure(self) -> None:
        from app.panels.figures import export_dialog

        export_dialog(self, self.heatmap.export, "attention")

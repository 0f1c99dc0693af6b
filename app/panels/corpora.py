"""Corpora screen: the workspace's corpora, their sentence pairs (fast table with a
search filter, documents as groups), statistics and the sentence-length histogram."""
from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.panels.import_dialog import ImportDialog
from app.panels.manage import install_corpus_actions
from app.widgets.pair_table import PairTableModel
from core.data.readers import FORMATS
from core.services.corpora import import_corpus, load_job, split_job
from core.textsafe import printable
from core.workspace.store import Workspace


class CorporaPanel(QWidget):
    """The Corpora screen (see the module's docstring); `corpora_changed` when a corpus is
    imported, renamed or deleted."""
    corpora_changed = Signal()

    def __init__(self, jobs: workers.JobManager, parent: QWidget | None = None):
        super().__init__(parent)
        self.jobs = jobs
        self.workspace: Workspace | None = None
        self.corpus: Any = None
        self._loads = 0  # load jobs asked for: only the latest one's result is shown
        self.last_import: workers.Job | None = None
        splitter = QSplitter(Qt.Orientation.Horizontal)
        for w in (self._build_corpus_list(), self._build_pairs_view(), self._build_statistics()):
            splitter.addWidget(w)
        splitter.setSizes([220, 800, 340])
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(splitter)
        self._formats = FORMATS
        self.import_button.setEnabled(False)
        self.import_button.setToolTip("Open a workspace first.")

    def _build_corpus_list(self) -> QWidget:
        """The workspace's corpora (rename / delete on them) over Import corpus…."""
        self.import_button = QPushButton("Import corpus…")
        self.import_button.clicked.connect(self.open_import_dialog)
        self.corpus_list = QListWidget()
        self.corpus_list.currentItemChanged.connect(self._on_corpus_selected)
        self.rename_action, self.delete_action = install_corpus_actions(self)
        self.corpus_list.setToolTip("Right-click (or F2 / Delete): rename or delete a corpus")
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(QLabel("<b>Corpora</b>"))
        left_layout.addWidget(self.corpus_list, 1)
        left_layout.addWidget(self.import_button)
        return left

    def _build_pairs_view(self) -> QWidget:
        """The corpus's pairs (PairTableModel, filtered by the search field, Ctrl+F) under
        the search field and the count of matches."""
        self.model = PairTableModel(parent=self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setAlternatingRowColors(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setWordWrap(False)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        self.table.setColumnWidth(0, 70)
        self.table.setColumnWidth(1, 110)
        # source and target share the width: both stay in view at 1280 x 720
        for col in (2, 3):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search source and target…")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.model.set_filter)
        QShortcut(QKeySequence("Ctrl+F"), self, activated=self.search.setFocus)
        self.count_label = QLabel("")
        self.count_label.setObjectName("hint")
        self.model.filter_finished.connect(self._update_count)
        middle = QWidget()
        mid_layout = QVBoxLayout(middle)
        mid_layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.count_label)
        mid_layout.addLayout(top)
        mid_layout.addWidget(self.table, 1)
        return middle

    def _build_statistics(self) -> QWidget:
        """The corpus's statistics, its sentence-length histogram and its split."""
        self.stats_label = QLabel("Select a corpus.")
        self.stats_label.setTextFormat(Qt.TextFormat.RichText)
        self.stats_label.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.stats_label.setWordWrap(True)
        self.histogram = pg.PlotWidget(background="w")
        self.histogram.setTitle("Sentence length (tokens)", size="9pt")
        self.histogram.setLabel("left", "pairs")
        self.histogram.addLegend(offset=(-5, 5), labelTextSize="8pt")
        self.histogram.setMinimumHeight(220)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(QLabel("<b>Statistics</b>"))
        right_layout.addWidget(self.stats_label)
        right_layout.addWidget(self.histogram, 1)
        right_layout.addWidget(self._split_box())
        return right

    def _split_box(self) -> QWidget:
        """Seed and train/dev/test ratios of the corpus's one stored split (documents are
        kept whole); training runs use it."""
        box = QWidget()
        grid = QGridLayout(box)
        grid.setContentsMargins(0, 6, 0, 0)
        grid.addWidget(QLabel("<b>Split</b>"), 0, 0, 1, 4)
        self.split_seed = QSpinBox()
        self.split_seed.setRange(0, 2**31 - 1)
        self.split_seed.setValue(1234)
        self.split_ratios = []
        grid.addWidget(QLabel("seed"), 1, 0)
        grid.addWidget(self.split_seed, 1, 1, 1, 3)
        for col, (name, value) in enumerate((("train", 0.8), ("dev", 0.1), ("test", 0.1))):
            spin = QDoubleSpinBox()
            spin.setRange(0.0, 1.0)
            spin.setSingleStep(0.05)
            spin.setDecimals(3)
            spin.setValue(value)
            spin.setToolTip(f"share of the {name} set")
            self.split_ratios.append(spin)
            grid.addWidget(spin, 2, col + 1)
        grid.addWidget(QLabel("train/dev/test"), 2, 0)
        self.split_button = QPushButton("Store split")
        self.split_button.setEnabled(False)  # until a corpus is selected
        self.split_button.clicked.connect(self.store_split)
        self.split_label = QLabel("")
        self.split_label.setObjectName("hint")
        grid.addWidget(self.split_button, 3, 0)
        grid.addWidget(self.split_label, 3, 1, 1, 3)
        return box

    def store_split(self) -> workers.Job | None:
        """Split the shown corpus (in a worker) and store it in the workspace."""
        if self.workspace is None or self.corpus_list.currentItem() is None:
            return None
        corpus_id = self.corpus_list.currentItem().data(Qt.ItemDataRole.UserRole)
        ratios = tuple(round(s.value(), 6) for s in self.split_ratios)
        job = self.jobs.submit(split_job, self.workspace, corpus_id, self.split_seed.value(),
                               ratios, name="Split corpus")
        job.finished.connect(self._show_split)
        return job

    def _show_split(self, sizes: dict[str, int]) -> None:
        self.split_label.setText(" · ".join(f"{k} {v:,}" for k, v in sizes.items()))

    # --- workspace -------------------------------------------------------------------------
    def set_workspace(self, workspace: Workspace | None) -> None:
        """Show `workspace`'s corpora (none and Import disabled without one)."""
        self.workspace = workspace
        self.import_button.setEnabled(workspace is not None)
        self.import_button.setToolTip("")
        self.refresh()

    def refresh(self, select_id: int | None = None) -> None:
        """List the workspace's corpora, selecting `select_id` (else the first), which loads it
        in a job."""
        self.corpus_list.clear()
        if self.workspace is None:
            return
        for info in self.workspace.list_corpora():
            item = QListWidgetItem(f"{printable(info.name)}\n{printable(info.src_lang)}\u2192"
                                   f"{printable(info.tgt_lang)} · "
                                   f"{info.n_pairs:,} pairs")
            item.setData(Qt.ItemDataRole.UserRole, info.id)
            self.corpus_list.addItem(item)
            if info.id == select_id:
                self.corpus_list.setCurrentItem(item)
        if self.corpus_list.currentItem() is None and self.corpus_list.count():
            self.corpus_list.setCurrentRow(0)  # never open on an empty table

    # --- import ------------------------------------------------------------------------------
    def open_import_dialog(self) -> None:
        """Ask what to import (ImportDialog, offering the newest corpus's languages) and import
        it."""
        if self.workspace is None:
            return
        corpora = self.workspace.list_corpora()
        newest = (corpora[-1].src_lang, corpora[-1].tgt_lang) if corpora else None
        dialog = ImportDialog(tuple(self._formats), self, languages=newest, jobs=self.jobs)
        if dialog.exec():
            self.import_corpus(**dialog.request())
        dialog.deleteLater()

    def import_corpus(self, fmt: str, paths: list[str], src_lang: str, tgt_lang: str,
                      options: dict[str, Any], name: str) -> workers.Job:
        """Import in a worker; a reader error (file, line, reason) opens a message box."""
        job = self.jobs.submit(import_corpus, self.workspace, fmt, paths, src_lang, tgt_lang,
                               name, options, name=f"Import {name}")
        job.finished.connect(self._on_imported)
        self.last_import = job
        return job

    def _on_imported(self, corpus_id: int) -> None:
        self.refresh(select_id=corpus_id)
        self.corpora_changed.emit()

    # --- showing a corpus -----------------------------------------------------------------------
    def _on_corpus_selected(self, item: QListWidgetItem | None, _previous=None) -> None:
        self.split_button.setEnabled(item is not None and self.workspace is not None)
        if item is None or self.workspace is None:  # e.g. the last corpus was deleted
            self.corpus = None
            self.model.set_pairs([])
            self._update_count(0)
            self.stats_label.setText("Select a corpus.")
            return
        corpus_id = item.data(Qt.ItemDataRole.UserRole)
        self._loads += 1
        asked = (self._loads, self.workspace, corpus_id)
        # a failure is reported here, not by the manager: a stale load (another corpus or
        # workspace chosen since, or this corpus deleted meanwhile) ends silently
        job = self.jobs.submit(load_job, self.workspace, corpus_id, name="Load corpus",
                               report_errors=False)
        job.finished.connect(lambda result: self._show_corpus(result, asked))
        job.failed.connect(lambda message, tb: self._load_failed(message, tb, asked))

    def _is_current(self, asked: tuple[int, Workspace | None, int]) -> bool:
        """Whether the load `asked` (serial, workspace, corpus id) is still what the
        screen shows: the latest load, of this workspace, of the selected corpus."""
        serial, workspace, corpus_id = asked
        item = self.corpus_list.currentItem()
        selected = None if item is None else item.data(Qt.ItemDataRole.UserRole)
        return (serial == self._loads and workspace is self.workspace
                and workspace is not None and corpus_id == selected)

    def _load_failed(self, message: str, tb: str, asked: tuple[int, Workspace | None, int]) -> None:
        if self._is_current(asked):
            self.stats_label.setText(f"Cannot load the corpus: {message}")
            workers.show_error(self, "Load corpus failed", message, tb)

    def _show_corpus(self, result: tuple[Any, Any],
                     asked: tuple[int, Workspace | None, int]) -> None:
        if not self._is_current(asked):
            return  # the user chose another corpus or workspace meanwhile
        corpus, stats = result
        self.corpus = corpus
        self.model.set_pairs(corpus.pairs)
        self.search.clear()
        self._update_count(len(corpus.pairs))
        self._show_stats(corpus, stats)

    def _update_count(self, n: int) -> None:
        total = len(self.corpus.pairs) if self.corpus is not None else n
        self.count_label.setText(f"{n:,} of {total:,} pairs" if n != total else f"{total:,} pairs")

    def _show_stats(self, corpus: Any, stats: Any) -> None:
        self.histogram.clear()
        if stats is None:
            self.stats_label.setText(f"{len(corpus):,} pairs (statistics pending: "
                                     "core.data.stats.corpus_stats)")
            return
        s, t = stats.src, stats.tgt
        self.stats_label.setText(
            "<table cellspacing=4>"
            f"<tr><td></td><td><b>{corpus.src_lang}</b></td><td><b>{corpus.tgt_lang}</b></td></tr>"
            f"<tr><td>tokens</td><td>{s.tokens:,}</td><td>{t.tokens:,}</td></tr>"
            f"<tr><td>types</td><td>{s.types:,}</td><td>{t.types:,}</td></tr>"
            f"<tr><td>mean length</td><td>{s.mean_len:.1f}</td><td>{t.mean_len:.1f}</td></tr>"
            f"<tr><td>longest</td><td>{s.max_len}</td><td>{t.max_len}</td></tr>"
            f"</table><p>{stats.pairs:,} pairs · {stats.documents:,} documents</p>")
        for side, colour, shift, lang in ((s, "#0072B2", 0.0, corpus.src_lang),
                                          (t, "#D55E00", 0.5, corpus.tgt_lang)):
            edges = np.asarray(side.hist_edges, dtype=float)
            if len(edges) < 2:
                continue
            width = (edges[1] - edges[0]) / 2
            bars = pg.BarGraphItem(x0=edges[:-1] + shift * 2 * width, width=width,
                                   height=np.asarray(side.hist_counts, dtype=float),
                                   brush=colour, pen=None, name=lang)
            self.histogram.addItem(bars)  # named: the legend picks it up
        self.histogram_bars = [i for i in self.histogram.getPlotItem().items
                               if isinstance(i, pg.BarGraphItem)]

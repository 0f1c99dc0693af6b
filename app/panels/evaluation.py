"""Evaluation screen: runs with their scores (BLEU/chrF/TER/ppl/AER) from the store,
evaluation of runs on their test split (in a worker), BLEU by sentence length of
several systems, learning curves of several runs, plot export (PNG at a chosen DPI,
SVG, PDF), batch export of attention heatmaps, and an HTML report."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.file_dialogs import ask_folder, ask_save_path
from app.panels.evaluation_table import (
    AER_COLUMN,
    COLUMNS,
    HEADER_TIPS,
    METRIC_KEYS,
    OPTIONAL_KEYS,
    aer_tooltip,
    bucket_tick,
    heatmap_path,
    length_systems,
    shown_cells,
)
from app.panels.figures import export_plot_dialog, figure_png
from app.widgets.curves import CurvesPlot
from app.widgets.heatmap import AttentionHeatmap
from app.widgets.run_colours import PALETTE, label_colour
from core.evaluate.aer import PERCENT_FORMAT, percent_text
from core.evaluate.metrics import (
    MIN_BUCKET_SENTENCES,
    bucket_start,
    length_table,
)
from core.evaluate.report import Table
from core.services.attention_set import pairs_attention_job
from core.services.attention_view import PairInput, view_gold
from core.services.eval_scores import evaluate_runs, write_report_job
from core.services.translation import SessionCache
from core.workspace.store import Workspace


def dev_bleu_tip(samples: list[str]) -> str:
    """The Dev BLEU plot's tooltip: what its points are (not the table's test BLEU) and
    how many dev sentences each run scored (`samples`: 'run: N' lines)."""
    tip = ("Greedy BLEU of the first dev sentences at each validation while training "
           "(data.dev_sample; tokenised BLEU for a pre-tokenised corpus): a training "
           "curve, not comparable with the table's test BLEU (beam, whole test split, "
           "the corpus's text convention)")
    return tip + ("\nDev sentences scored: " + "; ".join(samples) if samples else "")


class NumberItem(QTableWidgetItem):
    """A number shown with a fixed number of decimals ('34.0', not Qt's '34' for a
    float), right-aligned, sorted by its value."""

    def __init__(self, value: int | float, digits: int):
        text = str(value) if isinstance(value, int) else f"{float(value):.{digits}f}"
        super().__init__(text)
        self.value = float(value)
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, NumberItem):
            return self.value < other.value
        return super().__lt__(other)


class EvaluationPanel(QWidget):
    """The Evaluation screen (see the module's docstring): the stored scores of the workspace's
    runs, their curves and BLEU by length, the exports."""
    def __init__(self, jobs: workers.JobManager, sessions: SessionCache | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.jobs = jobs
        self.sessions = sessions or SessionCache()
        self.workspace: Workspace | None = None
        self.job: workers.Job | None = None
        self.report_job: workers.Job | None = None  # the latest HTML report written
        self._build_table()
        self._build_plots()
        self._build_buttons()
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self._plots())
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([200, 640])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(self._button_bar())
        layout.addWidget(splitter, 1)

    def _build_table(self) -> None:
        """The runs' scores, one row per evaluation, sortable, a tooltip per column."""
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        for col, tip in enumerate(HEADER_TIPS):
            self.table.horizontalHeaderItem(col).setToolTip(tip)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.setSortingEnabled(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(70)
        self.table.itemSelectionChanged.connect(self._show_selected)

    def _build_plots(self) -> None:
        """Dev perplexity and dev BLEU curves of the selected runs, and their BLEU by
        source length as bars."""
        self.curves = CurvesPlot("Dev perplexity", "perplexity", log_y=True)
        self.bleu_curves = CurvesPlot("Dev BLEU", "BLEU")
        self.by_length = pg.PlotWidget(background="w")
        self.by_length.setTitle("BLEU by source length", size="11pt")
        # short enough for the plot's third of a 1280-pixel window; the rest in the tooltip
        self.by_length.setLabel("bottom", "source length (tokens); n = sentences; "
                                f"*: under {MIN_BUCKET_SENTENCES}")
        self.by_length.setToolTip(f"n = sentences of the bucket; * = fewer than "
                                  f"{MIN_BUCKET_SENTENCES} sentences, drawn faint: their "
                                  "BLEU means little")
        self.by_length.setLabel("left", "BLEU")
        self.by_length.showGrid(y=True, alpha=0.15)
        self.by_length_legend = self.by_length.addLegend(offset=(10, 8), labelTextSize="9pt",
                                                         colCount=2)
        self.bars: list[pg.BarGraphItem] = []

    def _build_buttons(self) -> None:
        """Evaluate selected runs (with its beam and progress), Refresh, Export plot…,
        Export heatmaps… and HTML report…."""
        self.evaluate_button = QPushButton("Evaluate selected runs")
        self.evaluate_button.setToolTip("Translate each run's test split; BLEU, chrF, TER, "
                                        "BLEU by length and AER on the gold set")
        self.evaluate_button.clicked.connect(self.evaluate_selected)
        self.beam = QSpinBox()
        self.beam.setRange(1, 50)
        self.beam.setValue(5)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(180)
        self.export_button = QPushButton("Export plot…")
        self.export_button.clicked.connect(self.export_figure)
        self.heatmaps_button = QPushButton("Export heatmaps…")
        self.heatmaps_button.setToolTip("Attention heatmaps of the first N gold (or test) "
                                        "sentences for the selected runs, one PNG each")
        self.heatmaps_button.clicked.connect(self._choose_heatmaps)
        self.heatmaps_button.setEnabled(False)  # until runs are selected
        self.evaluate_button.setEnabled(False)  # likewise
        self.table.itemSelectionChanged.connect(self._update_selection_buttons)
        self.report_button = QPushButton("HTML report…")
        self.report_button.clicked.connect(self._choose_report)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)

    def _button_bar(self) -> QHBoxLayout:
        """[Evaluate, beam, progress, Refresh | Export plot, Export heatmaps, HTML report]."""
        bar = QHBoxLayout()
        bar.addWidget(self.evaluate_button)
        bar.addWidget(QLabel("beam"))
        bar.addWidget(self.beam)
        bar.addWidget(self.progress)
        bar.addWidget(self.refresh_button)
        bar.addStretch(1)
        for b in (self.export_button, self.heatmaps_button, self.report_button):
            bar.addWidget(b)
        return bar

    def _plots(self) -> QSplitter:
        """The three plots side by side."""
        plots = QSplitter(Qt.Orientation.Horizontal)
        for w in (self.curves, self.bleu_curves, self.by_length):
            plots.addWidget(w)
        return plots

    def set_workspace(self, workspace: Workspace | None) -> None:
        """Show `workspace`'s stored scores; sessions of the previous one are dropped."""
        self.workspace = workspace
        self.sessions.clear()
        self.refresh()

    # --- the table ------------------------------------------------------------------------------
    def rows(self) -> list[tuple[list[int], str, dict[str, Any]]]:
        """(run ids, test name, metrics): every evaluation, then runs never evaluated
        (with their best dev perplexity), newest evaluation per (runs, test) only."""
        if self.workspace is None:
            return []
        latest: dict[tuple[tuple[int, ...], str], dict[str, Any]] = {}
        for e in self.workspace.evaluations():
            latest[(tuple(e.run_ids), e.test_name)] = e.metrics
        out = [(list(ids), test, m) for (ids, test), m in latest.items()]
        evaluated = {i for ids, _, _ in out for i in ids}
        for run in self.workspace.list_runs():
            if run.id in evaluated:
                continue
            ppls = self.workspace.curves(run.id, "valid").get("dev_ppl", ([], []))[1]
            out.append(([run.id], "", {"best_dev_ppl": min(ppls)} if ppls else {}))
        return out

    def refresh(self) -> None:
        """Fill the scores table from the workspace's stored evaluations (a column shown only
        when some row has a value)."""
        self.table.setSortingEnabled(False)
        self.table.setRowCount(0)
        self._update_selection_buttons()
        if self.workspace is None:
            return
        names = {r.id: r.name for r in self.workspace.list_runs()}
        rows = self.rows()
        self.table.setRowCount(len(rows))
        filled: set[int] = set()  # columns some row has a value in
        for row, (run_ids, test, metrics) in enumerate(rows):
            label = " + ".join(f"{i}: {names.get(i, '?')}" for i in run_ids)
            cells: list[Any] = [label, test or "–"] + shown_cells(metrics)
            filled.update(col for col, value in enumerate(cells) if value is not None)
            for col, value in enumerate(cells):
                if isinstance(value, int | float):
                    digits = 1 if COLUMNS[col] == AER_COLUMN else 2  # AER: in %, one decimal
                    item = NumberItem(value, digits)
                else:
                    item = QTableWidgetItem("–" if value is None else str(value))
                item.setData(Qt.ItemDataRole.UserRole, (run_ids, metrics, label))
                if COLUMNS[col] == AER_COLUMN and value is not None:
                    item.setToolTip(aer_tooltip(metrics))
                self.table.setItem(row, col, item)
        # the context-model columns only when some evaluation has them
        for key in OPTIONAL_KEYS:
            col = 2 + METRIC_KEYS.index(key)
            self.table.setColumnHidden(col, col not in filled)
        self.table.setSortingEnabled(True)
        if rows and not self.table.selectedItems():
            self.table.selectAll()

    def _update_selection_buttons(self) -> None:
        """Export heatmaps and Evaluate work on the selected runs: enabled while some are
        selected (Evaluate not while an evaluation runs)."""
        runs = bool(self.selected_run_ids())
        self.heatmaps_button.setEnabled(runs)
        self.evaluate_button.setEnabled(runs and (self.job is None or self.job.done))

    def selected(self) -> list[tuple[list[int], dict[str, Any], str]]:
        """The selected rows as (run ids, metrics, test set name)."""
        rows = sorted({i.row() for i in self.table.selectedItems()})
        return [self.table.item(r, 0).data(Qt.ItemDataRole.UserRole) for r in rows]

    def selected_run_ids(self) -> list[int]:
        """The run ids of the selected rows, in order, each once."""
        out: list[int] = []
        for run_ids, _, _ in self.selected():
            out += [r for r in run_ids if r not in out]
        return out

    # --- plots ------------------------------------------------------------------------------------
    def _show_selected(self) -> None:
        if self.workspace is None:
            return
        self.curves.clear()
        self.bleu_curves.clear()
        for item in self.bars:
            self.by_length.removeItem(item)
        self.bars = []
        self.by_length_legend.clear()
        runs = {r.id: r for r in self.workspace.list_runs()}
        samples = []
        for rid in self.selected_run_ids():
            valid = self.workspace.curves(rid, "valid")
            label = f"{rid}: {runs[rid].name if rid in runs else '?'}"
            if "dev_ppl" in valid:
                self.curves.add_points(label, "dev_ppl", *valid["dev_ppl"])
            if "dev_bleu" in valid:
                self.bleu_curves.add_points(label, "dev_bleu", *valid["dev_bleu"])
                dev = (runs[rid].config.get("data") or {}) if rid in runs else {}
                samples.append(f"{label}: {dev.get('dev_sample', '?')}")
        self.bleu_curves.plot.setToolTip(dev_bleu_tip(samples))
        self.draw_bleu_by_length(length_systems(self.selected()))

    def draw_bleu_by_length(self, systems: list[tuple[str, dict[str, float], dict[str, int]]]
                            ) -> None:
        """Grouped bars: one group per length bucket that has sentences, one colour per
        system (an empty bucket's BLEU is None: no bar); under each group its sentences
        (n=...), and a bucket of fewer than MIN_BUCKET_SENTENCES drawn faint, marked '*'."""
        systems = [(label, {b: v for b, v in values.items() if v is not None}, sizes)
                   for label, values, sizes in systems]
        buckets = sorted({b for _, values, _ in systems for b in values}, key=bucket_start)
        width = 0.8 / max(1, len(systems))
        for n, (label, values, sizes) in enumerate(systems):
            colour = label_colour(label) or PALETTE[n % len(PALETTE)]
            for small in (False, True):
                keys = [k for k, b in enumerate(buckets) if b in values
                        and (0 < sizes.get(b, MIN_BUCKET_SENTENCES) < MIN_BUCKET_SENTENCES)
                        == small]
                if not keys:
                    continue
                brush = QColor(colour)
                brush.setAlpha(70 if small else 255)
                bars = pg.BarGraphItem(
                    x=[k - 0.4 + (n + 0.5) * width for k in keys], width=width * 0.92,
                    height=[float(values[buckets[k]]) for k in keys], brush=brush,
                    pen=pg.mkPen(colour), name=None if small and len(keys) < len(values)
                    else label)
                self.by_length.addItem(bars)  # named: the legend picks it up
                self.bars.append(bars)
        ticks = [(k, bucket_tick(b, [sizes.get(b) for _, _, sizes in systems]))
                 for k, b in enumerate(buckets)]
        self.by_length.getAxis("bottom").setTicks([ticks])
        top = max((float(v) for _, values, _ in systems for v in values.values()), default=1.0)
        # headroom above the bars for the legend
        self.by_length.setYRange(0, max(top, 0.1) * (1.15 + 0.09 * len(systems)), padding=0)
        if buckets:
            self.by_length.setXRange(-0.6, len(buckets) - 0.4, padding=0)

    # --- jobs ---------------------------------------------------------------------------------------
    def evaluate_selected(self, run_ids: list[int] | None = None, limit: int = 0) -> workers.Job | None:
        """Evaluate `run_ids` (default: the selected runs) in a job (core.services.eval_scores.evaluate_runs);
        the table refreshes when it ends."""
        run_ids = run_ids or self.selected_run_ids()
        if self.workspace is None or not run_ids:
            return None
        self.job = self.jobs.submit(evaluate_runs, self.workspace, self.sessions, run_ids,
                                    self.beam.value(), None, limit=limit,
                                    name="Evaluate")
        self.job.event.connect(self._on_event)
        self.job.finished.connect(lambda _ids: self.refresh())
        self.job.failed.connect(lambda _msg, _tb: self.progress.reset())  # no partial bar
        self.job.cancelled.connect(self.progress.reset)
        self.evaluate_button.setEnabled(False)
        self.job.state_changed.connect(lambda _s: self._update_selection_buttons())
        return self.job

    def _on_event(self, kind: str, data: dict) -> None:
        if kind == "progress" and data.get("total"):
            self.progress.setRange(0, int(data["total"]))
            self.progress.setValue(int(data["done"]))

    # --- exports --------------------------------------------------------------------------------------
    def export_figure(self) -> None:
        """File > Export figure: one of the screen's plots as PNG, SVG or PDF."""
        export_plot_dialog(self, {"Dev perplexity": self.curves.plot,
                                  "Dev BLEU": self.bleu_curves.plot,
                                  "BLEU by length": self.by_length.getPlotItem()}, "evaluation")

    def report_tables(self) -> list[Table]:
        """The HTML report's tables: the scores as the screen shows them, BLEU by source length
        when some row has it."""
        names = {r.id: r.name for r in self.workspace.list_runs()} if self.workspace else {}
        rows = []
        for run_ids, test, m in self.rows():
            label = " + ".join(f"{i}: {names.get(i, '?')}" for i in run_ids)
            rows.append([label, test or None, *shown_cells(m)])
        tables = [Table(list(COLUMNS), rows, title="Scores", formats={AER_COLUMN: PERCENT_FORMAT})]
        systems = length_systems(
            [(run_ids, m, " + ".join(f"{i}: {names.get(i, '?')}" for i in run_ids))
             for run_ids, _t, m in self.rows()])
        if systems:
            tables.append(length_table(systems, "BLEU by source length"))
        return tables

    def write_report(self, path: str | Path) -> workers.Job:
        """The HTML report of the scores, one self-contained file with its plots
        embedded: the plots rendered here (Qt draws on the GUI thread), the file written
        in a job (core.services.eval_scores.write_report_job, its result the path); the button is
        disabled until it ends, a failure shown as "Report failed"."""
        figures = [(caption, figure_png(item, 150)) for caption, item in (
            ("Dev perplexity", self.curves.plot), ("Dev BLEU", self.bleu_curves.plot),
            ("BLEU by source length", self.by_length.getPlotItem()))]
        job = self.jobs.submit(write_report_job, Path(path), self.report_tables(), figures,
                               f"Evaluation — {self.workspace.root.name}",
                               self.report_decoding(), name="HTML report",
                               report_errors=False)
        job.failed.connect(lambda message, tb: workers.show_error(
            self, "Report failed", f"{path}: {message}", tb))
        job.state_changed.connect(lambda _state: self.report_button.setEnabled(job.done))
        self.report_button.setEnabled(False)
        self.report_job = job
        return job

    def report_decoding(self) -> dict[str, dict | None]:
        """{row label (as in the report's Scores table, with its test): the decoding
        settings its evaluation stored (None for one stored before they were)}."""
        names = {r.id: r.name for r in self.workspace.list_runs()} if self.workspace else {}
        out: dict[str, dict | None] = {}
        for run_ids, test, m in self.rows():
            label = " + ".join(f"{i}: {names.get(i, '?')}" for i in run_ids)
            out[f"{label} on {test}" if test else label] = m.get("decoding")
        return out

    def _choose_report(self) -> None:
        path = ask_save_path(self, "HTML report", "reports", "report.html", "HTML (*.html)")
        if path:
            self.write_report(path)

    def _choose_heatmaps(self) -> None:
        folder = ask_folder(self, "Folder for the heatmaps", "figures")
        if not folder:
            return
        n, ok = QInputDialog.getInt(self, "Export heatmaps", "Sentences:", 10, 1, 1000)
        if ok:
            self.export_heatmaps(folder, n)

    def export_heatmaps(self, folder: str | Path, n: int, dpi: int = 150) -> workers.Job | None:
        """Forced attention of the first `n` sentences of each selected run's own gold set
        (the one of its language pair, core.services.attention_set.pairs_attention_job),
        else of its own test split, written as `<folder>/<run>-<name>-<k>.png` when the
        job ends; None when some of those files exist and the user keeps them."""
        run_ids = self.selected_run_ids()
        if self.workspace is None or not run_ids:
            return None
        names = {r.id: r.name for r in self.workspace.list_runs()}
        existing = sorted(path for r in run_ids for k in range(n)
                          if (path := heatmap_path(Path(folder), r, names.get(r, ""), k)).exists())
        if existing and QMessageBox.question(
                self, "Export heatmaps",
                f"{len(existing)} of the heatmap files already exist"
                f"{'s' if len(existing) == 1 else ''} in {folder} "
                f"({existing[0].name}{', …' if len(existing) > 1 else ''}).\n"
                "Do you want to replace them?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No) != QMessageBox.StandardButton.Yes:
            return None
        runs = [(r, f"{r}: {names.get(r, '?')}") for r in run_ids]
        job = self.jobs.submit(pairs_attention_job, self.workspace, self.sessions, runs, n,
                               True, name="Export heatmaps")
        job.finished.connect(lambda result: self._heatmaps_done(result[1], result[0], runs,
                                                                folder, dpi, names))
        return job

    def _heatmaps_done(self, views: dict, pairs: dict[int, list[PairInput]],
                       runs: list[tuple[int, str]], folder: str | Path, dpi: int,
                       names: dict[int, str]) -> None:
        """Write the heatmaps; the runs that got none are named in a message (a run of
        a pair no gold set or test split is of, e.g. an imported run with no gold set)."""
        written = self._write_heatmaps(views, pairs, folder, dpi, names)
        left = [f"{label}: no gold set of its language pair and no test split"
                for run_id, label in runs if not pairs.get(run_id)] + self.last_skipped
        if left and not self.last_failed:  # a failure has its error dialog
            QMessageBox.information(self, "Export heatmaps",
                                    f"{len(written)} heatmaps written to {folder}; none for:\n"
                                    + "\n".join(left))

    def _write_heatmaps(self, views: dict, pairs: dict[int, list[PairInput]],
                        folder: str | Path, dpi: int, names: dict[int, str]) -> list[Path]:
        """One PNG per computed view, on `pairs[run]` (each run's own pairs, with their
        gold links turned to the run's orientation); a view not computed (a run of
        another language pair: `skipped`) is not drawn, its note kept in last_skipped."""
        folder = Path(folder)
        heatmap = AttentionHeatmap()  # drawn off screen, one figure at a time
        heatmap.resize(720, 560)
        written: list[Path] = []
        skipped = {(run_id, view.label): view.note for (_, run_id), view in views.items()
                   if view.skipped}
        self.last_skipped = [f"{label}: {note}" for (_, label), note in sorted(skipped.items())]
        drawn = sorted((key, view) for key, view in views.items() if not view.skipped)
        self.last_failed = False
        try:
            for (index, run_id), view in drawn:
                # </s> labels a row only where the matrix has it (word-level views of
                # subword models have none), as on the Attention screen
                heatmap.set_matrix(view.matrix, view.src_tokens, view.row_labels)
                gold = view_gold(view, pairs[run_id][index].gold)
                if gold is not None:
                    heatmap.set_gold(gold.sure, gold.possible)
                heatmap.set_predicted(view.predicted)
                title = f"{view.label} — sentence {index + 1}"
                if view.aer is not None:
                    title += f" (AER {percent_text(view.aer)} %)"
                heatmap.plot.setTitle(title, size="11pt")
                path = heatmap_path(folder, run_id, names.get(run_id, ""), index)
                written.append(heatmap.export(path, dpi))
        except (OSError, ValueError) as exc:  # a slot of the job's end: reported here
            self.last_failed = True
            done = f" ({len(written)} of {len(drawn)} written)" if written else ""
            workers.show_error(self, "Export heatmaps failed", f"{exc}{done}")
        finally:
            heatmap.deleteLater()
        self.last_heatmaps = written
        return written

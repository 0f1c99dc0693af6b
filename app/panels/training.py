"""Training screen: a run form (or a preset), start/queue/pause/resume/cancel, live
curves of several runs, progress with tokens/s and ETA, and the workspace's runs."""
from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.core_bridge import require
from app.widgets.curves import CurvesPlot
from core.config import ATTENTION_KINDS, FAMILIES, SCORES, RunConfig, list_presets, load_preset
from core.errors import WorkbenchError

RUN_COLUMNS = ("Run", "Family", "Status", "Steps", "Device", "Created")


def _spin(lo: float, hi: float, value: float, decimals: int = 0, step: float = 1) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(lo, hi)
    spin.setDecimals(decimals)
    spin.setSingleStep(step)
    spin.setValue(value)
    return spin


class TrainingPanel(QWidget):
    runs_changed = Signal()

    def __init__(self, jobs: workers.JobManager, parent: QWidget | None = None):
        super().__init__(parent)
        self.jobs = jobs
        self.workspace: Any = None
        self.current: workers.Job | None = None

        # --- the form ---------------------------------------------------------------
        self.preset = QComboBox()
        self.preset.addItem("(custom)", None)
        for name in list_presets():
            self.preset.addItem(name, name)
        self.preset.currentIndexChanged.connect(self._load_preset)
        self.name = QLineEdit("run")
        self.family, self.attention, self.score = QComboBox(), QComboBox(), QComboBox()
        self.family.addItems(FAMILIES)
        self.attention.addItems(ATTENTION_KINDS)
        self.score.addItems(SCORES)
        self.input_feeding = QCheckBox("input feeding")
        self.reverse = QCheckBox("reverse source")
        self.dropout = _spin(0, 0.9, 0.2, 2, 0.05)
        self.emb, self.hidden = _spin(8, 4096, 256), _spin(8, 4096, 256)
        self.layers = _spin(1, 8, 2)
        self.corpus = QComboBox()
        self.device = QComboBox()
        self.device.addItems(["auto", "cpu", "cuda"])
        self.epochs, self.max_steps = _spin(1, 1000, 10), _spin(0, 10_000_000, 0)
        model_box = QGroupBox("Model")
        mform = QFormLayout(model_box)
        for label, w in (("Preset", self.preset), ("Name", self.name), ("Family", self.family),
                         ("Attention", self.attention), ("Score", self.score),
                         ("", self.input_feeding), ("", self.reverse), ("Dropout", self.dropout),
                         ("Embedding size", self.emb), ("Hidden size", self.hidden),
                         ("Layers", self.layers)):
            mform.addRow(label, w)
        data_box = QGroupBox("Data and budget")
        dform = QFormLayout(data_box)
        for label, w in (("Corpus", self.corpus), ("Device", self.device),
                         ("Epochs", self.epochs), ("Max steps (0 = none)", self.max_steps)):
            dform.addRow(label, w)

        self.start_button, self.queue_button = QPushButton("Start"), QPushButton("Queue")
        self.pause_button, self.resume_button = QPushButton("Pause"), QPushButton("Resume")
        self.cancel_button = QPushButton("Cancel")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(lambda: self.start(queue=False))
        self.queue_button.clicked.connect(lambda: self.start(queue=True))
        self.pause_button.clicked.connect(lambda: self.current and self.current.pause())
        self.resume_button.clicked.connect(lambda: self.current and self.current.resume())
        self.cancel_button.clicked.connect(lambda: self.current and self.current.cancel())
        buttons = QHBoxLayout()
        for b in (self.start_button, self.queue_button, self.pause_button, self.resume_button,
                  self.cancel_button):
            buttons.addWidget(b)
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress_label = QLabel("Idle")
        self.progress_label.setObjectName("hint")

        form_widget = QWidget()
        form_layout = QVBoxLayout(form_widget)
        form_layout.addWidget(model_box)
        form_layout.addWidget(data_box)
        form_layout.addLayout(buttons)
        form_layout.addWidget(self.progress)
        form_layout.addWidget(self.progress_label)
        form_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(form_widget)
        scroll.setMinimumWidth(330)

        # --- curves and runs ---------------------------------------------------------------
        self.loss_plot = CurvesPlot("Training loss", "loss", log_y=True)
        self.ppl_plot = CurvesPlot("Dev perplexity", "perplexity", log_y=True)
        self.bleu_plot = CurvesPlot("Dev BLEU", "BLEU")
        curves = QSplitter(Qt.Orientation.Horizontal)
        for plot in (self.loss_plot, self.ppl_plot, self.bleu_plot):
            curves.addWidget(plot)
        self.runs_table = QTableWidget(0, len(RUN_COLUMNS))
        self.runs_table.setHorizontalHeaderLabels(RUN_COLUMNS)
        self.runs_table.verticalHeader().setVisible(False)
        self.runs_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.runs_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.runs_table.horizontalHeader().setStretchLastSection(True)
        self.runs_table.itemSelectionChanged.connect(self._show_selected_curves)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(curves)
        right.addWidget(self.runs_table)
        right.setSizes([520, 260])
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(scroll)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([360, 1000])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(splitter)

        self.train_fn = require([self.start_button, self.queue_button], "core.train", "train")
        self._update_buttons()

    # --- form <-> config ----------------------------------------------------------------------
    def _load_preset(self) -> None:
        name = self.preset.currentData()
        if not name:
            return
        try:
            cfg = load_preset(name)
        except WorkbenchError as exc:
            workers.show_error(self, "Preset", str(exc))
            return
        self.set_config(cfg)

    def set_config(self, cfg: RunConfig) -> None:
        self._config = cfg
        m, t = cfg.model, cfg.train
        self.name.setText(cfg.name)
        self.family.setCurrentText(m.family)
        self.attention.setCurrentText(m.attention)
        self.score.setCurrentText(m.score)
        self.input_feeding.setChecked(m.input_feeding)
        self.reverse.setChecked(m.reverse_source)
        self.dropout.setValue(m.dropout)
        transformer = "transformer" in m.family
        self.emb.setValue(m.d_model if transformer else m.emb_size)
        self.hidden.setValue(m.ff_size if transformer else m.hidden_size)
        self.layers.setValue(m.enc_layers if transformer else m.layers)
        self.device.setCurrentText(t.device if t.device in ("auto", "cpu", "cuda") else "auto")
        self.epochs.setValue(t.epochs)
        self.max_steps.setValue(t.max_steps)

    def config(self) -> RunConfig:
        """The form as a RunConfig (the preset's other settings are kept)."""
        cfg = RunConfig.from_dict(getattr(self, "_config", RunConfig()).to_dict())
        m, t = cfg.model, cfg.train
        cfg.name = self.name.text().strip() or "run"
        m.family, m.attention = self.family.currentText(), self.attention.currentText()
        m.score = self.score.currentText()
        m.input_feeding, m.reverse_source = self.input_feeding.isChecked(), self.reverse.isChecked()
        m.dropout = self.dropout.value()
        if "transformer" in m.family:
            m.d_model, m.ff_size = int(self.emb.value()), int(self.hidden.value())
            m.enc_layers = m.dec_layers = int(self.layers.value())
        else:
            m.emb_size, m.hidden_size = int(self.emb.value()), int(self.hidden.value())
            m.layers = int(self.layers.value())
        t.device = self.device.currentText()
        t.epochs, t.max_steps = int(self.epochs.value()), int(self.max_steps.value())
        return cfg.validate()

    # --- workspace -----------------------------------------------------------------------------
    def set_workspace(self, workspace: Any) -> None:
        self.workspace = workspace
        self.refresh()

    def refresh(self) -> None:
        self.corpus.clear()
        self.runs_table.setRowCount(0)
        if self.workspace is None:
            return
        for info in self.workspace.list_corpora():
            self.corpus.addItem(f"{info.name} ({info.n_pairs:,} pairs)", info.id)
        runs = self.workspace.list_runs()
        self.runs_table.setRowCount(len(runs))
        for row, run in enumerate(runs):
            created = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.created))
            values = (run.name, run.family, run.status, f"{run.steps:,}", run.device, created)
            for col, value in enumerate(values):
                item = QTableWidgetItem(str(value))
                item.setData(Qt.ItemDataRole.UserRole, run.id)
                if col == 2 and run.error:
                    item.setToolTip(run.error)
                self.runs_table.setItem(row, col, item)
        self.runs_table.resizeColumnsToContents()

    def _show_selected_curves(self) -> None:
        if self.workspace is None:
            return
        ids = {i.data(Qt.ItemDataRole.UserRole) for i in self.runs_table.selectedItems()}
        for plot in (self.loss_plot, self.ppl_plot, self.bleu_plot):
            plot.clear()
        for run_id in sorted(ids):
            run = self.workspace.get_run(run_id)
            label = f"{run.id}:{run.name}"
            train = self.workspace.curves(run_id, "train")
            valid = self.workspace.curves(run_id, "valid")
            for plot, curves, key in ((self.loss_plot, train, "loss"),
                                      (self.ppl_plot, valid, "dev_ppl"),
                                      (self.bleu_plot, valid, "dev_bleu")):
                if key in curves:
                    plot.add_points(label, key, *curves[key])

    # --- running -------------------------------------------------------------------------------
    def start(self, queue: bool = False) -> workers.Job | None:
        if self.train_fn is None or self.workspace is None:
            return None
        if self.corpus.currentData() is None:
            workers.show_error(self, "Training", "Import a corpus first (Corpora screen).")
            return None
        try:
            cfg = self.config()
        except WorkbenchError as exc:
            workers.show_error(self, "Training", str(exc))
            return None
        label = cfg.name
        job = self.jobs.submit(self.train_fn, cfg, workspace=self.workspace,
                               corpus_id=self.corpus.currentData(), name=f"Train {label}",
                               queue="training")
        job.event.connect(lambda kind, data, lab=label: self._on_event(lab, kind, data))
        job.state_changed.connect(lambda _s: self._update_buttons())
        for signal in (job.finished, job.failed, job.cancelled):
            signal.connect(lambda *_: (self.refresh(), self.runs_changed.emit()))
        if not queue or self.current is None or self.current.done:
            self.current = job
        self._update_buttons()
        return job

    def _on_event(self, label: str, kind: str, data: dict[str, Any]) -> None:
        step = data.get("step")
        if kind == "step" and step is not None:
            self.loss_plot.add_points(label, "loss", [step], [data.get("loss")])
            total = data.get("total_steps") or (self.max_steps.value() or None)
            if total:
                self.progress.setRange(0, int(total))
                self.progress.setValue(int(step))
            else:
                self.progress.setRange(0, 0)
            eta = data.get("eta_s")
            eta_text = f" · ETA {int(eta) // 60}:{int(eta) % 60:02d}" if eta else ""
            self.progress_label.setText(
                f"{label}: step {step:,} · epoch {data.get('epoch', '?')} · "
                f"loss {data.get('loss', float('nan')):.3f} · "
                f"{data.get('tok_per_s', 0):,.0f} tok/s{eta_text}")
        elif kind == "validation" and step is not None:
            self.ppl_plot.add_points(label, "dev_ppl", [step], [data.get("dev_ppl")])
            if data.get("dev_bleu") is not None:
                self.bleu_plot.add_points(label, "dev_bleu", [step], [data["dev_bleu"]])

    def _update_buttons(self) -> None:
        job = self.current
        state = job.state if job is not None else None
        self.pause_button.setEnabled(state == workers.RUNNING)
        self.resume_button.setEnabled(state == workers.PAUSED)
        self.cancel_button.setEnabled(job is not None and not job.done)
        if job is not None and job.done:
            self.progress_label.setText(f"{job.name}: {job.state}"
                                        + (f" — {job.error}" if job.error else ""))
            self.progress.setRange(0, 1)
            self.progress.setValue(1 if job.state == workers.FINISHED else 0)



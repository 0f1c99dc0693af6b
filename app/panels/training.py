"""Training screen: a run form (or a preset), start / queue / pause / resume / cancel,
continue a stopped run from its checkpoint, live curves of several runs overlaid,
progress with tokens/s and ETA, and the workspace's runs (so a restarted workbench
shows finished runs and their curves).

A run is created in the store (core.services.training.create_run, in a job) and trained by
core.services.training.train_run on a worker thread; its events arrive as Qt signals. Curve
points are buffered and drawn a few times a second, so a fast run never floods the
GUI thread.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
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
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.panel_jobs import alignment_head_run_job, create_run_job
from app.panels.manage import install_run_actions
from app.panels.training_context import ContextModelBox
from app.panels.training_form import CUSTOM_NOTE, RunForm
from app.panels.training_runs import (
    RUN_COLUMNS,
    fill_run_row,
    fit_run_columns,
    progress_line,
)
from app.widgets.curves import CurvesPlot
from app.widgets.number_fields import RateSpinBox, number_field
from app.widgets.status_label import StatusLabel
from core.config import ATTENTION_KINDS, SCORES, RunConfig, list_presets
from core.errors import ConfigError, WorkbenchError
from core.families import families_with
from core.services.training import cancel_queued, train_run
from core.train.device import precision_note
from core.workspace.store import Workspace

FLUSH_MS = 250  # how often buffered curve points are drawn




class TrainingPanel(RunForm, QWidget):
    """The Training screen; the form's fields <-> RunConfig are training_form.RunForm's."""

    runs_changed = Signal()

    def __init__(self, jobs: workers.JobManager, parent: QWidget | None = None):
        super().__init__(parent)
        self.jobs = jobs
        self._init_state()
        self._build_model_fields()
        self._build_data_fields()
        self.context = ContextModelBox()
        self.context.stage1_chosen.connect(self._stage1_chosen)
        model_box, data_box = self._model_box(), self._data_box()
        self.family.currentTextChanged.connect(self._family_changed)
        self._family_changed(self.family.currentText())
        self._build_buttons()
        self._build_curves_and_runs()
        self.splitter = splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self._left_pane(model_box, data_box))
        splitter.addWidget(self._right_pane())
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([370, 1100])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(splitter)
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self._flush_points)
        self._flush_timer.start()
        custom = RunConfig()  # "(custom)" starts from a sensible model (Luong, global)
        custom.name = "run"
        self.set_config(custom)
        self._update_buttons()

    def _init_state(self) -> None:
        """The runs' jobs, labels, best perplexities, progress and buffered curve points."""
        self.workspace: Workspace | None = None
        self.current: workers.Job | None = None  # the job the progress bar follows
        self.creating: workers.Job | None = None  # the latest run creation (Start, Queue, ...)
        self.run_jobs: dict[int, workers.Job] = {}  # run id -> its latest job
        self.labels: dict[int, str] = {}  # run id -> curve label
        self.best_ppl: dict[int, float] = {}  # run id -> best dev perplexity (runs table)
        self.progress_of: dict[int, dict[str, Any]] = {}  # run id -> last step event
        self._pending: list[tuple[str, str, int, float]] = []  # (plot, label, step, value)

    def _build_model_fields(self) -> None:
        """The preset, the run's name and the model's fields."""
        self.preset = QComboBox()
        self.preset.addItem("(custom)", None)
        for name in list_presets():
            self.preset.addItem(name, name)
        self.preset.currentIndexChanged.connect(self._load_preset)
        self.preset_note = QLabel(CUSTOM_NOTE)  # the preset's description
        self.preset_note.setObjectName("hint")
        self.preset_note.setWordWrap(True)
        self.name = QLineEdit("run")
        self.family, self.attention, self.score = QComboBox(), QComboBox(), QComboBox()
        self.family.addItems(families_with(trainable=True))  # not an imported family
        self.attention.addItems(ATTENTION_KINDS)
        self.score.addItems(SCORES)
        self.input_feeding = QCheckBox("input feeding")
        self.reverse = QCheckBox("reverse source")
        self.dropout = number_field(0, 0.9, 0.2, 2, 0.05)
        self.emb, self.hidden = number_field(8, 4096, 256), number_field(8, 4096, 256)
        self.layers = number_field(1, 8, 2)
        self.window = number_field(1, 50, 10)

    def _build_data_fields(self) -> None:
        """The corpus, the device, the budget, the optimiser's and the data's fields,
        sampled softmax, guided alignment, bf16 and what precision that gives here."""
        self.corpus = QComboBox()  # as wide as the longest corpus name
        self.corpus.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.device = QComboBox()
        self.device.addItems(["auto", "cpu", "cuda"])
        self.epochs, self.max_steps = number_field(1, 1000, 10), number_field(0, 10_000_000, 0)
        self.max_minutes = number_field(0, 1_000_000, 0, 1, 5)
        self.max_minutes.setSuffix(" min")
        self.max_steps.setToolTip("Stop after this many updates (0 = no step limit)")
        self.max_minutes.setToolTip("Stop after this many minutes of training, summed over "
                                    "resumes; pauses do not count (0 = no time limit)")
        self.batch_size = number_field(1, 4096, 64)
        self.lr = RateSpinBox(1e-9, 10, 0.001)
        self.valid_every = number_field(0, 1_000_000, 500)
        self.dev_sample = number_field(0, 100_000, 200)
        self.sampled_softmax = number_field(0, 1_000_000, 0)
        self.sampled_softmax.setToolTip(
            "0 = full softmax. K > 0: each training batch normalises over K candidate words "
            "(its target words plus random others; Jean et al. 2015) - a faster output layer. "
            "Dev perplexity and translation always use the full vocabulary.")
        self.amp = QCheckBox("bf16 mixed precision")
        self.amp.setToolTip(
            "bf16 autocast (train.amp): the forward pass in bf16, the output softmax and the "
            "loss in fp32. On a GPU, or a CPU with native bf16 (AVX512-BF16 or AMX); other "
            "CPUs train in fp32 and say so in the log.")
        self.guided = QCheckBox("Guided alignment (eflomal)")
        self.guided.setToolTip(
            "train.guided_alignment: a second loss pulls the attention towards eflomal's "
            "grow-diag-final-and alignments of the training split (Chen et al. 2016, Garg et "
            "al. 2019). They are computed once per corpus and tokenisation and stored in the "
            "corpus's folder.")
        self.guided_weight = number_field(0.01, 100, 0.5, 2, 0.05)
        self.guided_weight.setToolTip("The alignment loss's weight beside the per-token NLL")
        self.guided_weight.setEnabled(False)
        self.guided.toggled.connect(self.guided_weight.setEnabled)
        # what the run will really compute in, on this machine and the chosen device
        self.precision = QLabel()
        self.precision.setWordWrap(True)
        self.amp.toggled.connect(self._update_precision)
        self.device.currentTextChanged.connect(self._update_precision)
        self._update_precision()

    def _model_box(self) -> QGroupBox:
        """The "Model" group of the form."""
        model_box = QGroupBox("Model")
        mform = QFormLayout(model_box)
        for label, w in (("Preset", self.preset), ("", self.preset_note), ("Name", self.name),
                         ("Family", self.family),
                         ("Attention", self.attention), ("Score", self.score),
                         ("", self.input_feeding), ("", self.reverse), ("Dropout", self.dropout),
                         ("Embedding / d_model", self.emb), ("Hidden / FF size", self.hidden),
                         ("Layers", self.layers), ("Local window D", self.window)):
            mform.addRow(label, w)
        return model_box

    def _data_box(self) -> QGroupBox:
        """The "Data and budget" group of the form."""
        data_box = QGroupBox("Data and budget")
        dform = QFormLayout(data_box)
        dform.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # long corpus names
        for label, w in (("Corpus", self.corpus), ("Device", self.device),
                         ("Epochs", self.epochs), ("Max steps (0 = none)", self.max_steps),
                         ("Max minutes (0 = none)", self.max_minutes),
                         ("Batch size", self.batch_size), ("Learning rate", self.lr),
                         ("Validate every (steps)", self.valid_every),
                         ("Dev BLEU sample", self.dev_sample),
                         ("Sampled softmax words", self.sampled_softmax), ("", self.guided),
                         ("Guided alignment weight", self.guided_weight), ("", self.amp),
                         ("Precision", self.precision)):
            dform.addRow(label, w)
        return data_box

    def _build_buttons(self) -> None:
        """Start, Queue, Pause, Resume, Cancel, Continue run, Alignment head; the
        progress bar and line."""
        self.start_button, self.queue_button = QPushButton("Start"), QPushButton("Queue")
        self.start_button.setToolTip("Create the run and start training it now (Ctrl+Return)")
        self.queue_button.setToolTip("Create the run; it starts when the queued runs before it end")
        self.pause_button, self.resume_button = QPushButton("Pause"), QPushButton("Resume")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the run after this step (a checkpoint is saved)")
        self.continue_button = QPushButton("Continue run")
        self.continue_button.setToolTip("Resume the selected cancelled or failed run from its "
                                        "last checkpoint")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(lambda: self.start(queue=False))
        self.queue_button.clicked.connect(lambda: self.start(queue=True))
        self.pause_button.clicked.connect(lambda: self.current and self.current.pause())
        self.resume_button.clicked.connect(lambda: self.current and self.current.resume())
        self.cancel_button.clicked.connect(lambda: self.current and self.current.cancel())
        self.continue_button.clicked.connect(self.continue_selected)
        self.head_button = QPushButton("Alignment head")
        self.head_button.setToolTip(
            "A new run that trains a word-alignment head over the selected finished Luong or "
            "RNNsearch run, which stays as it is: guided by eflomal's links of its corpus, "
            "3000 updates; the Attention screen shows it as the 'alignment head' reading")
        self.head_button.clicked.connect(self.train_alignment_head)
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress_label = StatusLabel("Idle", logged=False)
        self.progress_label.setObjectName("hint")

    def _left_pane(self, model_box: QGroupBox, data_box: QGroupBox) -> QWidget:
        """The form (scrolling) over the buttons and the progress, which stay in view."""
        buttons = QHBoxLayout()
        for b in (self.start_button, self.queue_button):
            buttons.addWidget(b)
        controls = QHBoxLayout()
        for b in (self.pause_button, self.resume_button, self.cancel_button):
            controls.addWidget(b)
        form_widget = QWidget()
        form_layout = QVBoxLayout(form_widget)
        form_layout.addWidget(model_box)
        form_layout.addWidget(self.context)
        form_layout.addWidget(data_box)
        form_layout.addStretch(1)
        self.form_scroll = scroll = QScrollArea()  # the form scrolls, the buttons stay
        scroll.setWidgetResizable(True)
        scroll.setWidget(form_widget)
        scroll.setMinimumWidth(340)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(scroll, 1)
        for row in (buttons, controls):
            left_layout.addLayout(row)
        run_buttons = QHBoxLayout()  # one row: the form keeps its height at 1280 x 720
        for b in (self.continue_button, self.head_button):
            run_buttons.addWidget(b)
        left_layout.addLayout(run_buttons)
        for w in (self.progress, self.progress_label):
            left_layout.addWidget(w)
        return left

    def _build_curves_and_runs(self) -> None:
        """The three curve plots and the runs table (rename / delete actions on it)."""
        self.loss_plot = CurvesPlot("Training loss (smoothed)", "loss", log_y=True, smoothing=0.9)
        self.ppl_plot = CurvesPlot("Dev perplexity", "perplexity", log_y=True)
        self.bleu_plot = CurvesPlot("Dev BLEU", "BLEU")
        self.plots = {"loss": self.loss_plot, "dev_ppl": self.ppl_plot, "dev_bleu": self.bleu_plot}
        self.runs_table = QTableWidget(0, len(RUN_COLUMNS))
        self.runs_table.setHorizontalHeaderLabels(RUN_COLUMNS)
        self.runs_table.horizontalHeaderItem(RUN_COLUMNS.index("Best dev ppl")).setToolTip(
            "Best dev perplexity")
        self.runs_table.verticalHeader().setVisible(False)
        self.runs_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.runs_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.runs_table.setAlternatingRowColors(True)
        self.runs_table.horizontalHeader().setStretchLastSection(True)
        self.runs_table.itemSelectionChanged.connect(self._selection_changed)
        self.rename_action, self.delete_action = install_run_actions(self)  # F2, Delete

    def _right_pane(self) -> QSplitter:
        """The curves side by side over the runs table and its hint."""
        curves = QSplitter(Qt.Orientation.Horizontal)
        for plot in self.plots.values():
            curves.addWidget(plot)
        hint = QLabel("Select runs (Ctrl/Shift-click) to overlay their curves; running runs "
                      "are always shown.")
        hint.setObjectName("hint")
        runs_box = QWidget()
        runs_layout = QVBoxLayout(runs_box)
        runs_layout.setContentsMargins(0, 0, 0, 0)
        runs_layout.addWidget(hint)
        runs_layout.addWidget(self.runs_table)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(curves)
        right.addWidget(runs_box)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 2)
        right.setSizes([540, 300])
        return right

    # --- form <-> config ----------------------------------------------------------------------
    def _update_precision(self, *_: object) -> None:
        self.precision.setText(precision_note(self.device.currentText(), self.amp.isChecked()))

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self._fit_form()

    def _fit_form(self) -> None:
        """Widen the form's pane so the longest corpus name shows whole."""
        self.corpus.setMinimumWidth(self.corpus.sizeHint().width())
        bar = self.form_scroll.verticalScrollBar().sizeHint().width()
        needed, sizes = self.form_scroll.widget().sizeHint().width() + bar + 4, self.splitter.sizes()
        if sizes[0] < needed and sum(sizes) > needed:
            self.splitter.setSizes([needed, sum(sizes) - needed])

    # --- workspace -----------------------------------------------------------------------------
    def set_workspace(self, workspace: Workspace | None) -> None:
        """Show `workspace`'s corpora and runs; the curves and job table of the previous one are
        cleared."""
        self.workspace = workspace
        self.run_jobs.clear()
        self.labels.clear()
        for plot in self.plots.values():
            plot.clear()
        self.refresh()

    def refresh(self) -> None:
        """Corpora for the form; the runs table from the store (selection kept)."""
        keep = self.selected_runs()
        corpus = self.corpus.currentData()
        self.corpus.clear()
        self.runs_table.blockSignals(True)
        self.runs_table.setRowCount(0)
        try:
            if self.workspace is None:
                self.context.set_stage1_runs([])
                return
            for info in self.workspace.list_corpora():
                self.corpus.addItem(f"{info.name} ({info.n_pairs:,} pairs)", info.id)
                self.corpus.setItemData(self.corpus.count() - 1, info.name,
                                        Qt.ItemDataRole.ToolTipRole)
            self._fit_form()
            if corpus is not None and self.corpus.findData(corpus) >= 0:
                self.corpus.setCurrentIndex(self.corpus.findData(corpus))
            runs = self.workspace.list_runs()
            self.context.set_stage1_runs(runs)
            self.runs_table.setRowCount(len(runs))
            self.best_ppl = self.workspace.best_dev_ppl()  # one query for the whole table
            for row, run in enumerate(runs):
                job = self.run_jobs.get(run.id)
                live = job is not None and not job.done
                steps = int(self.progress_of.get(run.id, {}).get("step", run.steps))
                fill_run_row(self.runs_table, row, run, job.state if live else run.status,
                             steps if live else run.steps, self.best_ppl.get(run.id))
                if run.id in keep:
                    self.runs_table.selectRow(row)
            fit_run_columns(self.runs_table, runs)
        finally:
            self.runs_table.blockSignals(False)
            # the selection may have lost a run (deleted, another workspace) without a
            # signal: the run buttons follow what is selected now
            self._update_buttons()

    def selected_runs(self) -> list[int]:
        """The ids of the runs selected in the runs table, in table order."""
        rows = {i.row() for i in self.runs_table.selectedItems()}
        out = []
        for r in sorted(rows):
            item = self.runs_table.item(r, 0)
            if item is not None:
                out.append(int(item.data(Qt.ItemDataRole.UserRole)))
        return out

    def _label(self, run_id: int) -> str:
        if run_id not in self.labels and self.workspace is not None:
            self.labels[run_id] = f"{run_id}: {self.workspace.get_run(run_id).name}"
        return self.labels.get(run_id, str(run_id))

    def _selection_changed(self) -> None:
        self.show_curves(self.selected_runs())
        selected = self.selected_runs()
        if selected and selected[-1] in self.run_jobs and not self.run_jobs[selected[-1]].done:
            self.current = self.run_jobs[selected[-1]]  # controls act on the selected run
        self._update_buttons()

    def show_curves(self, run_ids: list[int]) -> None:
        """Overlay the stored curves of `run_ids` and of every active run."""
        if self.workspace is None:
            return
        self._flush_points()
        active = [rid for rid, j in self.run_jobs.items() if not j.done]
        for plot in self.plots.values():
            plot.clear()
        for run_id in dict.fromkeys([*run_ids, *active]):
            label = self._label(run_id)
            train = self.workspace.curves(run_id, "train")
            valid = self.workspace.curves(run_id, "valid")
            for key, curves in (("loss", train), ("dev_ppl", valid), ("dev_bleu", valid)):
                if key in curves:
                    self.plots[key].add_points(label, key, *curves[key])

    # --- running -------------------------------------------------------------------------------
    def start(self, queue: bool = False) -> workers.Job | None:
        """Create a run from the form in a job (app.panel_jobs.create_run_job), then train
        it (now, or after the queued runs). Returns the creating job; None when the form
        is refused at once (or a run is being created)."""
        if self.workspace is None:
            workers.show_error(self, "Training", "Open or create a workspace first (File menu).")
            return None
        if self.corpus.currentData() is None:
            workers.show_error(self, "Training", "Import a corpus first (Corpora screen).")
            return None
        if self.creating is not None and not self.creating.done:
            return None
        try:
            cfg = self.config()
            if cfg.train.stage == 2 and not cfg.train.init_from:
                raise ConfigError(
                    "Stage 2 starts from a trained sentence-level run: pick it under "
                    "'Stage-1 run' (a finished transformer run of the same sizes; train one "
                    "first with family transformer), or choose stage 0.")
        except WorkbenchError as exc:
            workers.show_error(self, "Training", str(exc))
            return None
        return self._create(create_run_job, self.corpus.currentData(), cfg, title="Training",
                            queue=queue)

    def _create(self, job_fn, *args: Any, title: str, queue: bool = False) -> workers.Job:
        """Create a run by `job_fn(workspace, *args)` in a job, Start, Queue and
        Alignment head disabled meanwhile; the run is then submitted for training. A
        refusal is shown under `title` (with the traceback of a programming error)."""
        job = self.jobs.submit(job_fn, self.workspace, *args, name="Create run",
                               report_errors=False)
        job.finished.connect(lambda run_id: self.submit(run_id, resume=False, queue=queue))
        job.failed.connect(lambda message, tb: workers.show_error(self, title, message, tb))
        job.state_changed.connect(lambda _state: self._update_buttons())
        self.creating = job
        self._update_buttons()
        return job

    def continue_selected(self) -> workers.Job | None:
        """Resume the selected run from its last checkpoint."""
        for run_id in self.selected_runs():
            job = self.run_jobs.get(run_id)
            if job is not None and not job.done:
                continue
            run = self.workspace.get_run(run_id)
            if run.status == "finished":
                workers.show_error(self, "Continue", f"Run {run.name!r} has finished; raise its "
                                   "budget in a new run instead.")
                return None
            return self.submit(run_id, resume=run.steps > 0 or bool(
                self.workspace.checkpoints(run_id, "last")))
        return None

    def train_alignment_head(self) -> workers.Job | None:
        """A new run training an alignment head over the selected finished run, created
        in a job (app.panel_jobs.alignment_head_run_job) and started then. Returns the
        creating job, or None."""
        selected = self.selected_runs()
        if self.workspace is None or not selected:
            return None
        if self.creating is not None and not self.creating.done:
            return None
        run = self.workspace.get_run(selected[0])
        if run.status != "finished":
            workers.show_error(self, "Alignment head", f"Run {run.name!r} is {run.status}: an "
                               "alignment head is trained over a finished run.")
            return None
        return self._create(alignment_head_run_job, run.id, title="Alignment head")

    def submit(self, run_id: int, resume: bool, queue: bool = False) -> workers.Job:
        """Train run `run_id` in the 'training' queue (`resume`: from its last checkpoint;
        `queue`: after the runs before it); its events feed the curves and progress. Returns
        the job."""
        label = self._label(run_id)
        # every run is in the 'training' queue: a queued one waits for the runs training
        # before it, also those started at once (Start, Continue run)
        job = self.jobs.submit(train_run, self.workspace, run_id, resume=resume,
                               name=f"Train {label}", queue="training", wait=queue)
        self.run_jobs[run_id] = job
        job.event.connect(lambda kind, data, rid=run_id: self._on_event(rid, kind, data))
        job.state_changed.connect(lambda _s, rid=run_id: self._on_state(rid))
        if not queue or self.current is None or self.current.done:
            self.current = job
        self.refresh()
        self.show_curves(self.selected_runs())
        self.runs_changed.emit()
        self._update_buttons()
        return job

    def _on_state(self, run_id: int) -> None:
        job = self.run_jobs.get(run_id)
        if job is not None and job.state == workers.CANCELLED and self.workspace is not None:
            cancel_queued(self.workspace, run_id)  # cancelled before it ever trained
        if self.current is None or self.current.done:
            running = [j for j in self.run_jobs.values() if not j.done and j.started]
            self.current = running[-1] if running else self.current
        self._flush_points()
        self.refresh()
        if job is not None and job.done:
            self.runs_changed.emit()
        self._update_buttons()

    def _on_event(self, run_id: int, kind: str, data: dict[str, Any]) -> None:
        label = self._label(run_id)
        step = data.get("step")
        if kind == "start":
            self.progress_of[run_id] = {"total_steps": data.get("total_steps"),
                                        "device": data.get("device")}
        elif kind == "step" and step is not None:
            self._pending.append(("loss", label, step, data.get("loss")))
            self.progress_of.setdefault(run_id, {}).update(data)
            if self.current is self.run_jobs.get(run_id):
                self._show_progress(run_id)
        elif kind == "validation" and step is not None:
            self._pending.append(("dev_ppl", label, step, data.get("dev_ppl")))
            if data.get("dev_bleu") is not None:
                self._pending.append(("dev_bleu", label, step, data["dev_bleu"]))

    def _flush_points(self) -> None:
        self._update_live_steps()
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

    def _update_live_steps(self) -> None:
        for row in range(self.runs_table.rowCount()):
            item = self.runs_table.item(row, 4)
            run_id = int(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None
            job = self.run_jobs.get(run_id)
            if job is not None and not job.done and "step" in self.progress_of.get(run_id, {}):
                item.setText(f"{int(self.progress_of[run_id]['step']):,}")

    def _show_progress(self, run_id: int) -> None:
        p = self.progress_of.get(run_id, {})
        step, total = int(p.get("step", 0)), p.get("total_steps")
        if total:
            self.progress.setRange(0, int(total))
            self.progress.setValue(min(step, int(total)))
        else:
            self.progress.setRange(0, 0)
        self.progress_label.setText(progress_line(self._label(run_id), p))

    def _update_buttons(self) -> None:
        job = self.current
        state = job.state if job is not None else None
        self.pause_button.setEnabled(state == workers.RUNNING)
        self.resume_button.setEnabled(state == workers.PAUSED)
        self.cancel_button.setEnabled(job is not None and not job.done)
        creating = self.creating is not None and not self.creating.done
        self.start_button.setEnabled(not creating)
        self.queue_button.setEnabled(not creating)
        self.continue_button.setEnabled(bool(self.selected_runs()))
        self.head_button.setEnabled(bool(self.selected_runs()) and not creating)
        if job is not None and job.done:
            self.progress_label.setText(f"{job.name}: {job.state}"
                                        + (f" — {job.error}" if job.error else ""))
            self.progress.setRange(0, 1)
            self.progress.setValue(1 if job.state == workers.FINISHED else 0)
        elif job is not None and state == workers.PAUSED:
            self.progress_label.setText(f"{job.name}: paused")

    def export_figure(self) -> None:
        """File > Export figure: one of the curve plots as PNG, SVG or PDF."""
        from app.panels.figures import export_plot_dialog

        export_plot_dialog(self, {"Training loss": self.loss_plot.plot,
                                  "Dev perplexity": self.ppl_plot.plot,
                                  "Dev BLEU": self.bleu_plot.plot}, "curves")

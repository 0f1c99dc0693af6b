"""Training screen: a run form (or a preset; app/panels/training_form.py), start / queue / pause / resume / cancel,
continue a stopped run from its checkpoint, live curves of several runs overlaid,
progress with tokens/s and ETA, and the workspace's runs (so a restarted workbench
shows finished runs and their curves: app/panels/training_curves.py,
app/panels/training_runs.py).

A run is created in the store (core.services.training.create_run, in a job) and trained by
core.services.training.train_run on a worker thread; its events arrive as Qt signals. Curve
points are buffered and drawn a few times a second, so a fast run never floods the
GUI thread.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.panels.manage import install_run_actions
from app.panels.training_curves import TrainingCurves
from app.panels.training_form import RunForm
from app.panels.training_runs import (
    fill_run_row,
    fit_run_columns,
    progress_line,
    runs_table,
    selected_run_ids,
    show_live_steps,
)
from app.widgets.status_label import StatusLabel
from core.config import RunConfig
from core.errors import ConfigError, WorkbenchError
from core.services.training import (
    alignment_head_run_job,
    cancel_queued,
    create_run_job,
    train_run,
)
from core.workspace.store import Workspace

FLUSH_MS = 250  # how often buffered curve points are drawn


class TrainingPanel(RunForm, QWidget):
    """The Training screen; the run form (its fields, boxes and RunConfig round trip) is
    training_form.RunForm's, the curves training_curves.TrainingCurves, the runs table's
    rows training_runs'."""

    runs_changed = Signal()

    def __init__(self, jobs: workers.JobManager, parent: QWidget | None = None):
        super().__init__(parent)
        self.jobs = jobs
        self._init_state()
        form = self._build_form()  # training_form.RunForm
        self._build_buttons()
        self._build_curves_and_runs()
        self.splitter = splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self._left_pane(form))
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
        """The runs' jobs, labels, best perplexities and progress."""
        self.workspace: Workspace | None = None
        self.current: workers.Job | None = None  # the job the progress bar follows
        self.creating: workers.Job | None = None  # the latest run creation (Start, Queue, ...)
        self.run_jobs: dict[int, workers.Job] = {}  # run id -> its latest job
        self.labels: dict[int, str] = {}  # run id -> curve label
        self.best_ppl: dict[int, float] = {}  # run id -> best dev perplexity (runs table)
        self.progress_of: dict[int, dict[str, Any]] = {}  # run id -> last step event

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

    def _left_pane(self, form: QWidget) -> QWidget:
        """The form (scrolling) over the buttons and the progress, which stay in view."""
        buttons = QHBoxLayout()
        for b in (self.start_button, self.queue_button):
            buttons.addWidget(b)
        controls = QHBoxLayout()
        for b in (self.pause_button, self.resume_button, self.cancel_button):
            controls.addWidget(b)
        self.form_scroll = scroll = QScrollArea()  # the form scrolls, the buttons stay
        scroll.setWidgetResizable(True)
        scroll.setWidget(form)
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
        """The three curve plots (training_curves.py) and the runs table (training_runs.py;
        rename / delete actions on it)."""
        self.curves_view = TrainingCurves()
        self.plots = self.curves_view.plots
        self.loss_plot, self.ppl_plot = self.curves_view.loss_plot, self.curves_view.ppl_plot
        self.bleu_plot = self.curves_view.bleu_plot
        self.runs_table = runs_table()
        self.runs_table.itemSelectionChanged.connect(self._selection_changed)
        self.rename_action, self.delete_action = install_run_actions(self)  # F2, Delete

    def _right_pane(self) -> QSplitter:
        """The curves side by side over the runs table and its hint."""
        hint = QLabel("Select runs (Ctrl/Shift-click) to overlay their curves; running runs "
                      "are always shown.")
        hint.setObjectName("hint")
        runs_box = QWidget()
        runs_layout = QVBoxLayout(runs_box)
        runs_layout.setContentsMargins(0, 0, 0, 0)
        runs_layout.addWidget(hint)
        runs_layout.addWidget(self.runs_table)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.curves_view)
        right.addWidget(runs_box)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 2)
        right.setSizes([540, 300])
        return right

    # --- the form's width ----------------------------------------------------------------------
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
        self.curves_view.clear()
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
        return selected_run_ids(self.runs_table)

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
        self.curves_view.show_stored(self.workspace, {
            run_id: self._label(run_id) for run_id in dict.fromkeys([*run_ids, *active])})

    # --- running -------------------------------------------------------------------------------
    def start(self, queue: bool = False) -> workers.Job | None:
        """Create a run from the form in a job (core.services.training.create_run_job), then train
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
        in a job (core.services.training.alignment_head_run_job) and started then. Returns the
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
            self.curves_view.add_point("loss", label, step, data.get("loss"))
            self.progress_of.setdefault(run_id, {}).update(data)
            if self.current is self.run_jobs.get(run_id):
                self._show_progress(run_id)
        elif kind == "validation" and step is not None:
            self.curves_view.add_point("dev_ppl", label, step, data.get("dev_ppl"))
            if data.get("dev_bleu") is not None:
                self.curves_view.add_point("dev_bleu", label, step, data["dev_bleu"])

    def _flush_points(self) -> None:
        """Draw the buffered curve points; the running runs' steps in the runs table."""
        show_live_steps(self.runs_table, {
            run_id: p for run_id, p in self.progress_of.items()
            if run_id in self.run_jobs and not self.run_jobs[run_id].done and "step" in p})
        self.curves_view.flush()

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

        export_plot_dialog(self, self.curves_view.figures(), "curves")

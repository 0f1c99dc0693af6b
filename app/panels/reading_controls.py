"""The Attention screen's reading controls: where each target word's attention is read
(core.evaluate.readings), whether the final full stop may take it (the sink), and
"Choose readings": each checked run's reading chosen without gold, by the anchor words
of its corpus's training pairs (core.services.reading_anchors), in the background."""
from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QWidget,
)

from app import workers
from app.widgets.status_label import StatusLabel
from core.config import RunConfig
from core.services.alignment_runs import default_reading
from core.services.reading_anchors import choose_readings_job
from core.workspace.store import Workspace

#: the reading selector: (label, core.evaluate.readings name)
READING_CHOICES = (("each run's best", "default"), ("predicting step", "predict"),
                   ("next step (Shift-Att)", "shift"),
                   ("both (mean)", "sum"), ("previous step", "previous"),
                   ("alignment head", "head"))
READING_TIP = (
    "Where each target word's attention is read: while the decoder predicts it (Luong et "
    "al. 2015), one step later when it is the decoder's input (Shift-Att, Chen et al. "
    "2020), the mean of both, or one step earlier (input-feeding Luong models attend "
    "ahead); or, for a run trained with an alignment head (model.alignment_head), that "
    "head, which aligns each target word knowing it. The heatmaps, the links and every AER "
    "follow.")
CHOOSE_TIP = (
    "Choose each checked run's best reading without gold links: the reading whose links "
    "join most words spelled alike on both sides of its corpus's training pairs (names, "
    "numbers). It is stored with the run ('each run's best', align, evaluate, exports); "
    "needs 100 such words, and leaves runs with an alignment head as they are.")


class ReadingControls(QWidget):
    """'Read at' [reading] [no sink] [Choose readings] note, in one row."""

    changed = Signal()  # the reading asked for or the sink box changed
    chosen = Signal(list)  # runs' stored readings were chosen: one line per run

    def __init__(self, jobs: workers.JobManager, parent: QWidget | None = None):
        super().__init__(parent)
        self.jobs = jobs
        self.job: workers.Job | None = None
        self.reading = QComboBox()
        for label, value in READING_CHOICES:
            self.reading.addItem(label, value)
        self.reading.setToolTip(READING_TIP)
        self.no_sink = QCheckBox("leave out the final full stop (sink)")
        self.no_sink.setToolTip("A final punctuation mark is no candidate for target words "
                                "that are not punctuation (attention often collects there)")
        self.reading.currentIndexChanged.connect(lambda _=None: self.changed.emit())
        self.no_sink.toggled.connect(lambda _=None: self.changed.emit())
        self.choose_button = QPushButton("Choose readings")
        self.choose_button.setToolTip(CHOOSE_TIP)
        self.note = StatusLabel("", logged=False)  # one line: the full text in its tooltip
        self.note.setObjectName("hint")
        row = QHBoxLayout(self)  # one row: the Attention screen keeps its height for heatmaps
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Read at"))
        row.addWidget(self.reading)
        row.addWidget(self.no_sink)
        row.addWidget(self.choose_button)
        row.addWidget(self.note, 1)

    def choice(self, workspace: Workspace | None, run_id: int | None = None) -> tuple[str, bool]:
        """(reading, no_sink) as the controls say; "each run's best" is the run's default
        reading (core.services.alignment_runs.default_reading)."""
        reading = self.reading.currentData() or "default"
        if reading == "default":
            reading = "predict"
            if run_id is not None and workspace is not None:
                reading = default_reading(RunConfig.from_dict(workspace.get_run(run_id).config))
        return reading, self.no_sink.isChecked()

    def choose(self, workspace: Workspace | None, run_ids: list[int]) -> workers.Job | None:
        """Choose the runs' readings in the background; then show "each run's best"."""
        if workspace is None or not run_ids:
            self.note.setText("Check the models whose readings to choose.")
            return None
        self.choose_button.setEnabled(False)
        self.note.setText("Reading the attention on training pairs ...")
        self.job = self.jobs.submit(choose_readings_job, workspace, list(run_ids),
                                    name="Choose readings")
        self.job.finished.connect(self._chosen)
        self.job.failed.connect(lambda message, _tb: self._stopped(f"Choosing failed: {message}"))
        self.job.cancelled.connect(lambda: self._stopped("Choosing was cancelled; readings "
                                                         "chosen before it are kept."))
        return self.job

    def _chosen(self, lines: list[str]) -> None:
        self.choose_button.setEnabled(True)
        self.note.setText("; ".join(lines))
        with QSignalBlocker(self.reading):  # one redraw, by `chosen`
            self.reading.setCurrentIndex(self.reading.findData("default"))
        self.chosen.emit(lines)

    def _stopped(self, note: str) -> None:  # a failure: the job manager shows the error
        self.choose_button.setEnabled(True)
        self.note.setText(note)

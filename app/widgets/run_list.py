"""RunList: the workspace's usable runs (finished, or stopped early with a checkpoint) as a
compact checkable list (pick one model, an ensemble, or the 2-4 models to compare)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from app.widgets.run_colours import run_colour, swatch
from core.families import FAMILIES, family_traits
from core.textsafe import printable
from core.workspace.store import Workspace

STOPPED = ("cancelled", "interrupted")  # stopped before their last step


def has_checkpoint(run: Any) -> bool:
    """Whether the run's folder holds a checkpoint a model can be loaded from."""
    return (run.path / "last.pt").is_file() or any(run.path.glob("best-*.pt"))


def usable_runs(workspace: Workspace | None) -> list[Any]:
    """The runs the Translate and Attention screens can load: finished ones, and
    cancelled or interrupted ones whose last checkpoint exists (so marked in their title)."""
    if workspace is None:
        return []
    return [r for r in workspace.list_runs()
            if r.status == "finished" or (r.status in STOPPED and has_checkpoint(r))]


def run_device(described: str) -> tuple[str, str]:
    """(the device as "cpu" / "cuda:N", the full description for a tooltip) from what a
    run recorded: 'CPU, 2 threads' -> ('cpu', 'CPU, 2 threads'), 'NVIDIA H100 (cuda:0)'
    -> ('cuda:0', 'NVIDIA H100 (cuda:0)'), 'cpu' -> ('cpu', '')."""
    text = (described or "").strip()
    match = re.search(r"\b(cuda(?::\d+)?|mps|cpu)\b", text, re.IGNORECASE)
    if match is None:
        return (text or "\u2013"), ""
    kind = match.group(1).lower()
    if kind == "cuda" and "cuda:" not in text.lower():
        kind = "cuda:0"
    return kind, ("" if text.lower() == kind else text)


def run_title(run: Any) -> str:
    """A run's line in the lists: its id, name, family (and an RNN's attention), and the
    step a stopped run reached."""
    model = run.config.get("model", {})
    recurrent = run.family in FAMILIES and not family_traits(run.family).transformer
    kind = model.get("attention", "") if recurrent else ""
    title = f"{run.id}: {printable(run.name)}  ({run.family}{', ' + kind if kind else ''})"
    if run.status in STOPPED:
        title += f"  \u2014 {run.status} at step {run.steps:,}"
    return title


class RunList(QListWidget):
    """The workspace's usable runs with check boxes (at most `max_checked`; 0 = any);
    `changed` when the checked ones change."""

    changed = Signal()

    def __init__(self, max_checked: int = 0, parent: QWidget | None = None):
        super().__init__(parent)
        self.max_checked = max_checked  # 0 = no limit
        self.itemChanged.connect(self._on_item_changed)
        self.rows_shown = 0  # show_rows: a height of that many entries
        # no sideways scrolling (its bar would hide an entry): a long title is elided,
        # whole in its tooltip
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setMaximumHeight(84)
        self.setAlternatingRowColors(True)

    def show_rows(self, rows: int) -> None:
        """Make the list exactly `rows` entries high (by the font and the check box, so
        larger fonts keep them all in view); more entries scroll."""
        self.rows_shown = rows
        self._fit_height()

    def row_height(self) -> int:
        """One entry's height: the first one's, or what the font and check box need."""
        if self.count():
            return self.sizeHintForRow(0)
        indicator = self.style().pixelMetric(self.style().PixelMetric.PM_IndicatorHeight)
        return max(self.fontMetrics().height(), self.iconSize().height(), indicator) + 4

    def _fit_height(self) -> None:
        if self.rows_shown:
            self.setMaximumHeight(16777215)
            self.setFixedHeight(self.rows_shown * self.row_height() + 2 * self.frameWidth())

    def set_runs(self, runs: Sequence[Any]) -> None:
        """List `runs`, keeping the checks of those still listed."""
        keep = set(self.checked())
        self.blockSignals(True)
        self.clear()
        for run in runs:
            item = QListWidgetItem(run_title(run))
            item.setToolTip(run_title(run))
            if run.status in STOPPED:
                item.setToolTip(f"{run_title(run)}\n{run.status.capitalize()} before its last "
                                "step: its last checkpoint is used")
            item.setData(Qt.ItemDataRole.UserRole, run.id)
            item.setIcon(swatch(run_colour(run.id)))  # the run's colour in every chart
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if run.id in keep else Qt.CheckState.Unchecked)
            self.addItem(item)
        self._fit_height()
        self.blockSignals(False)
        self.changed.emit()

    def run_ids(self) -> list[int]:
        """The ids of the listed runs, in order."""
        return [int(self.item(i).data(Qt.ItemDataRole.UserRole)) for i in range(self.count())]

    def checked(self) -> list[int]:
        """The ids of the checked runs, in list order."""
        return [int(self.item(i).data(Qt.ItemDataRole.UserRole)) for i in range(self.count())
                if self.item(i).checkState() == Qt.CheckState.Checked]

    def set_checked(self, run_ids: Sequence[int]) -> None:
        """Check exactly `run_ids` (those listed)."""
        wanted = [int(r) for r in run_ids]
        self.blockSignals(True)
        for i in range(self.count()):
            item = self.item(i)
            on = int(item.data(Qt.ItemDataRole.UserRole)) in wanted
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        self.blockSignals(False)
        self.changed.emit()

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        if self.max_checked and item.checkState() == Qt.CheckState.Checked \
                and len(self.checked()) > self.max_checked:
            self.blockSignals(True)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.blockSignals(False)
            return
        self.changed.emit()

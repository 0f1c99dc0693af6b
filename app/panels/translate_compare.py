"""The Translate screen's comparison with a sentence-level baseline: the same document
translated by the chosen model (typically context-aware) and by a baseline run; per
sentence both outputs side by side, the words that differ highlighted (difflib on the
words), a marker and a count of the sentences that differ, and a filter to show only them.

`compare_job` is Qt-free (it runs on a worker thread); `CompareControls` is the row of
options; `fill_comparison` writes a Comparison into the panel's table.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from app.core_jobs import SessionCache, translate_job
from app.widgets.diff_view import RICH_ROLE, diff_pair
from core.infer.session import CONTEXT_FAMILIES
from core.jobs import JobContext

TARGET, BASELINE, MARK = 1, 2, 3  # table columns of a comparison (0 = source)
DIFFERS = "\u2260"  # the marker of a sentence whose outputs differ


# --- the job -----------------------------------------------------------------------------------
class _Phase(JobContext):
    """One phase of a two-phase job: forwards cancel/pause to the outer context, shifts
    progress into the whole job's range and renames per-sentence events."""

    def __init__(self, outer: JobContext, offset: int, total: int, translation_kind: str):
        super().__init__()
        self.outer, self.offset, self.total = outer, offset, total
        self.translation_kind = translation_kind

    @property
    def cancelled(self) -> bool:
        return self.outer.cancelled

    def check_cancelled(self) -> None:
        self.outer.check_cancelled()

    def wait_if_paused(self, poll_s: float = 0.1) -> None:
        self.outer.wait_if_paused(poll_s)

    def emit(self, kind: str, **data: Any) -> None:
        if kind == "progress":
            data["done"] = self.offset + int(data.get("done") or 0)
            data["total"] = self.total
        elif kind == "translation":
            kind = self.translation_kind
        self.outer.emit(kind, **data)


@dataclass
class Comparison:
    """Both models' Translations of the same sentences, in input order."""

    main: list[Any]
    baseline: list[Any]
    main_name: str = "model"
    baseline_name: str = "baseline"

    def differs(self, row: int) -> bool:
        return self.main[row].text.split() != self.baseline[row].text.split()

    def n_differ(self) -> int:
        return sum(self.differs(r) for r in range(len(self.main)))


def compare_job(ws: Any, cache: SessionCache, run_ids: Sequence[int], baseline_id: int,
                sentences: list[str], beam: int, unk_replace: bool, ctx: JobContext,
                target_context: bool = False) -> Comparison:
    """Translate `sentences` with the run(s) (a context model reads them as one document,
    with `target_context` seeing its own translations), then with the baseline run.
    Events: 'translation' for the first, 'baseline_translation' for the second,
    'progress' over both."""
    n = len(sentences)
    main = translate_job(ws, cache, run_ids, sentences, beam, unk_replace,
                         _Phase(ctx, 0, 2 * n, "translation"), target_context=target_context)
    baseline = translate_job(ws, cache, [baseline_id], sentences, beam, unk_replace,
                             _Phase(ctx, n, 2 * n, "baseline_translation"))
    names = [ws.get_run(r).name for r in run_ids]
    return Comparison(main, baseline, " + ".join(names), ws.get_run(baseline_id).name)


# --- the controls --------------------------------------------------------------------------------
class CompareControls(QWidget):
    """[x] compare with baseline [run v]   [x] only sentences that differ"""

    filter_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.enabled = QCheckBox("Compare with baseline")
        self.enabled.setToolTip("Also translate the document with a sentence-level run and "
                                "show both outputs, differing words highlighted")
        self.baseline = QComboBox()
        self.baseline.setMinimumContentsLength(14)
        self.baseline.setToolTip("The sentence-level run to compare with")
        self.only_differing = QCheckBox("only sentences that differ")
        self.only_differing.setEnabled(False)
        self.only_differing.toggled.connect(self.filter_changed.emit)
        self.enabled.toggled.connect(self.baseline.setEnabled)
        self.baseline.setEnabled(False)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.enabled)
        row.addWidget(self.baseline, 1)
        row.addWidget(self.only_differing)

    def set_runs(self, runs: Sequence[Any]) -> None:
        """Every usable run (see run_list.usable_runs) can be the baseline; sentence-level ones come first, the
        newest sentence-level Transformer (else any sentence-level run) is preselected."""
        keep = self.baseline_id()
        ordered = sorted(runs, key=lambda r: (r.family in CONTEXT_FAMILIES, -r.id))
        self.baseline.clear()
        for run in ordered:
            level = "context" if run.family in CONTEXT_FAMILIES else "sentence-level"
            self.baseline.addItem(f"{run.id}: {run.name} ({run.family}, {level})", run.id)
        pick = next((r.id for r in ordered if r.family == "transformer"),
                    ordered[0].id if ordered else None)
        if keep is not None and self.baseline.findData(keep) >= 0:
            pick = keep
        if pick is not None:
            self.baseline.setCurrentIndex(self.baseline.findData(pick))

    def baseline_id(self) -> int | None:
        data = self.baseline.currentData()
        return None if data is None else int(data)

    def wanted(self) -> int | None:
        """The baseline run id when a comparison is asked for."""
        return self.baseline_id() if self.enabled.isChecked() else None


# --- the table -------------------------------------------------------------------------------------
def set_comparison_columns(table: QTableWidget, comparing: bool, main_name: str = "",
                           baseline_name: str = "") -> None:
    """Two columns (source, editable target) or four (+ baseline, difference marker)."""
    header = table.horizontalHeader()
    if not comparing:
        table.setColumnCount(2)
        table.setHorizontalHeaderLabels(["Source", "Target (editable)"])
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        return
    table.setColumnCount(4)
    table.setHorizontalHeaderLabels(["Source", f"{main_name or 'Model'} (editable)",
                                     f"Baseline: {baseline_name}", DIFFERS])
    for column in (0, TARGET, BASELINE):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
    header.setSectionResizeMode(MARK, QHeaderView.ResizeMode.ResizeToContents)


def fill_comparison(table: QTableWidget, comparison: Comparison) -> int:
    """Write both outputs with their differing words highlighted; returns how many
    sentences differ."""
    set_comparison_columns(table, True, comparison.main_name, comparison.baseline_name)
    table.blockSignals(True)
    for row, (ours, theirs) in enumerate(zip(comparison.main, comparison.baseline, strict=True)):
        rich_ours, rich_theirs, differ = diff_pair(ours.text, theirs.text)
        target = QTableWidgetItem(ours.text)
        target.setData(RICH_ROLE, (ours.text, rich_ours))
        table.setItem(row, TARGET, target)
        base = QTableWidgetItem(theirs.text)
        base.setData(RICH_ROLE, (theirs.text, rich_theirs))
        base.setFlags(base.flags() & ~Qt.ItemFlag.ItemIsEditable)
        table.setItem(row, BASELINE, base)
        mark = QTableWidgetItem(DIFFERS if differ else "")
        mark.setFlags(mark.flags() & ~Qt.ItemFlag.ItemIsEditable)
        mark.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        mark.setToolTip("the outputs differ" if differ else "the same output")
        table.setItem(row, MARK, mark)
    table.blockSignals(False)
    return comparison.n_differ()


def apply_filter(table: QTableWidget, comparison: Comparison | None, only_differing: bool) -> None:
    """Hide the rows whose two outputs agree (or show every row)."""
    for row in range(table.rowCount()):
        hide = bool(only_differing and comparison is not None and row < len(comparison.main)
                    and not comparison.differs(row))
        table.setRowHidden(row, hide)

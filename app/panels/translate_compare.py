"""The Translate screen's comparison with a sentence-level baseline: the same document
translated by the chosen model (typically context-aware) and by a baseline run; per
sentence both outputs side by side, the words that differ highlighted (difflib on the
words), a marker and a count of the sentences that differ, and a filter to show only them.

The translating is core.services.translation.compare (core.services.translation_jobs.
compare_job runs it); here: `CompareControls`, the row of options, and `fill_comparison`, which writes a
Comparison into the panel's table.
"""
from __future__ import annotations

from collections.abc import Sequence
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

from app.widgets.diff_view import RICH_ROLE, diff_pair
from core.families import family_traits
from core.services.language_pairs import same_pair
from core.services.translation import Comparison

TARGET, BASELINE, MARK = 1, 2, 3  # table columns of a comparison (0 = source)
DIFFERS = "\u2260"  # the marker of a sentence whose outputs differ


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

    def set_runs(self, runs: Sequence[Any], langs: dict[int, tuple[str, str]] | None = None,
                 pair: tuple[str, str] = ("", "")) -> None:
        """The usable runs (see run_list.usable_runs) that translate `pair` (the checked
        run's (source, target), langs = {run: its pair}; a pair not known fits any) can be
        the baseline: a baseline of another pair would translate the text as another
        language. Sentence-level ones first; the newest sentence-level Transformer (else
        any sentence-level run) is preselected, a choice still offered is kept."""
        keep = self.baseline_id()
        runs = [r for r in runs if same_pair((langs or {}).get(r.id, ("", "")), pair)]
        ordered = sorted(runs, key=lambda r: (family_traits(r.family).context, -r.id))
        self.baseline.clear()
        for run in ordered:
            level = "context" if family_traits(run.family).context else "sentence-level"
            self.baseline.addItem(f"{run.id}: {run.name} ({run.family}, {level})", run.id)
        pick = next((r.id for r in ordered if r.family == "transformer"),
                    ordered[0].id if ordered else None)
        if keep is not None and self.baseline.findData(keep) >= 0:
            pick = keep
        if pick is not None:
            self.baseline.setCurrentIndex(self.baseline.findData(pick))

    def baseline_id(self) -> int | None:
        """The run chosen as the baseline, or None."""
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
    labels = ["Source", f"{main_name or 'Model'} (editable)", f"Baseline: {baseline_name}",
              DIFFERS]
    table.setHorizontalHeaderLabels(labels)
    # a run's name can be wider than its column: cut in the middle, whole in the tooltip
    header.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    for column in (TARGET, BASELINE):
        table.horizontalHeaderItem(column).setToolTip(labels[column])
    for column in (0, TARGET, BASELINE):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
    header.setSectionResizeMode(MARK, QHeaderView.ResizeMode.ResizeToContents)


def fill_comparison(table: QTableWidget, comparison: Comparison) -> int:
    """Write both outputs with their differing words highlighted; returns how many
    sentences differ."""
    set_comparison_columns(table, True, comparison.main_name, comparison.baseline_name)
    table.blockSignals(True)
    for row, (ours, theirs) in enumerate(zip(comparison.main, comparison.baseline, strict=True)):
        table.setItem(row, TARGET, QTableWidgetItem(ours.text))
        base = QTableWidgetItem(theirs.text)
        base.setFlags(base.flags() & ~Qt.ItemFlag.ItemIsEditable)
        table.setItem(row, BASELINE, base)
        mark = QTableWidgetItem()
        mark.setFlags(mark.flags() & ~Qt.ItemFlag.ItemIsEditable)
        mark.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        table.setItem(row, MARK, mark)
        refresh_row(table, row)
    table.blockSignals(False)
    return comparison.n_differ()


def refresh_row(table: QTableWidget, row: int) -> bool:
    """Compare row `row`'s target, as the table shows it (edited or not), with its
    baseline: both cells' highlighted words and the ≠ mark. Returns whether they
    differ."""
    target, base, mark = (table.item(row, c) for c in (TARGET, BASELINE, MARK))
    rich_ours, rich_theirs, differ = diff_pair(target.text(), base.text())
    target.setData(RICH_ROLE, (target.text(), rich_ours))
    base.setData(RICH_ROLE, (base.text(), rich_theirs))
    mark.setText(DIFFERS if differ else "")
    mark.setToolTip("the outputs differ" if differ else "the same output")
    return differ


def apply_filter(table: QTableWidget, comparison: Comparison | None, only_differing: bool) -> None:
    """Hide the rows whose two outputs agree, as their ≠ marks say (an edited
    target included), or show every row."""
    for row in range(table.rowCount()):
        mark = table.item(row, MARK) if table.columnCount() > MARK else None
        hide = bool(only_differing and comparison is not None and row < len(comparison.main)
                    and mark is not None and mark.text() != DIFFERS)
        table.setRowHidden(row, hide)

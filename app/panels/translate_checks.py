"""The Translate screen's warnings where an output may invent or drop content: the rules
are core.evaluate.output_checks'; here a flagged row's target cell gets a tinted
background, a '⚠' before the row's number and a tooltip saying why."""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from core.evaluate.output_checks import OutputWarning

FLAG = "\u26a0"  # before a flagged row's number
TINT = QColor("#fff1c2")  # a flagged target's background: amber, readable when selected
TIP_HEAD = "Check this translation:"


def show_warnings(table: QTableWidget, row: int, column: int,
                  warnings: Sequence[OutputWarning]) -> None:
    """Flag row `row` (its target in `column`) with `warnings`, or clear its flag."""
    item = table.item(row, column)
    if item is None:
        return
    header = table.verticalHeaderItem(row)
    if header is None:
        header = QTableWidgetItem()
        table.setVerticalHeaderItem(row, header)
    blocked = table.blockSignals(True)  # a flag is not an edit of the target
    try:
        if warnings:
            tip = "\n".join([TIP_HEAD, *(f"\u2022 {w.text}" for w in warnings)])
            item.setBackground(QBrush(TINT))
            item.setToolTip(tip)
            header.setText(f"{FLAG} {row + 1}")
            header.setToolTip(tip)
        else:
            item.setBackground(QBrush())
            item.setToolTip("")
            header.setText(str(row + 1))
            header.setToolTip("")
    finally:
        table.blockSignals(blocked)


def flagged_rows(table: QTableWidget) -> list[int]:
    """The rows flagged by show_warnings."""
    return [r for r in range(table.rowCount())
            if (h := table.verticalHeaderItem(r)) is not None and h.text().startswith(FLAG)]


def clear_warnings(table: QTableWidget) -> None:
    """No row flagged (new rows: the numbers Qt gives them)."""
    for row in range(table.rowCount()):
        table.takeVerticalHeaderItem(row)

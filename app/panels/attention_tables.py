"""The Attention screen's two AER tables: this pair (the matrix each heatmap shows) and
the whole set (averaged attention, and a row for each decoder layer or head a heatmap
shows), side by side under the heatmaps.

Each keeps room for three rows whatever the window's size, and its columns fit its
width: the model's name takes what the numbers leave (elided, whole in its tooltip; a
row's own part first: "grow-diag-final-and: 4: …", "layer 1 · head 2 of 8: …"),
each number column is as wide as its header, and the "Note" column is shown only when
a row has a note."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.evaluate.aer import percent_text

MIN_ROWS = 3  # rows each table always has room for
#: (header, tooltip) of each table's columns
PAIR_COLUMNS = (("Model", ""), ("AER %", "Alignment error rate of this pair, in %"),
                ("Precision %", ""), ("Recall %", ""), ("Note", ""))
SET_COLUMNS = (("Model", ""), ("Pairs", "Sentence pairs scored"),
               ("AER %", "Corpus alignment error rate over the whole set, in %"),
               ("Precision %", ""), ("Recall %", ""), ("Note", ""))
STRETCHED = ("Model", "Note")


def table_item(value: Any, percent: bool = False) -> QTableWidgetItem:
    """A table cell; `percent`: a fraction shown as AER is everywhere (in %, one decimal).
    Text cells carry their text as tooltip (a narrow column elides it)."""
    item = QTableWidgetItem()
    if isinstance(value, float):
        item.setText(percent_text(value) if percent else f"{value:.3f}")
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    else:
        item.setText("–" if value is None else str(value))
        if value:
            item.setToolTip(str(value))
    return item


class AerTable(QTableWidget):
    """A table never lower than its header and MIN_ROWS rows (by the row height its
    style and font give, known once it is polished)."""

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        hint = super().minimumSizeHint()
        return QSize(hint.width(), max(hint.height(), rows_height(self, MIN_ROWS)))


def aer_table(columns: Sequence[tuple[str, str]]) -> QTableWidget:
    """A read-only table with these (header, tooltip) columns, three rows high at least."""
    table = AerTable(0, len(columns))
    table.setHorizontalHeaderLabels([name for name, _ in columns])
    for c, (name, tip) in enumerate(columns):
        table.horizontalHeaderItem(c).setToolTip(tip or name)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setWordWrap(False)
    header = table.horizontalHeader()
    for c, (name, _) in enumerate(columns):
        mode = QHeaderView.ResizeMode.Stretch if name in STRETCHED else \
            QHeaderView.ResizeMode.ResizeToContents
        header.setSectionResizeMode(c, mode)
    table.setColumnHidden(len(columns) - 1, True)  # "Note": shown when a row has one
    return table


def rows_height(table: QTableWidget, rows: int) -> int:
    """The height of `table` showing its header, `rows` rows and, when it shows, the
    horizontal scroll bar."""
    bar = table.horizontalScrollBar()
    return (table.horizontalHeader().sizeHint().height()
            + rows * table.verticalHeader().defaultSectionSize() + 2 * table.frameWidth()
            + (bar.sizeHint().height() if bar.isVisible() else 0))


def fill_table(table: QTableWidget, rows: Sequence[Sequence[Any]],
               percent_columns: range) -> None:
    """Put `rows` in `table` (numbers in `percent_columns` as AER is shown); the last
    column ("Note") is shown when one of them has a note."""
    table.setRowCount(len(rows))
    for r, values in enumerate(rows):
        for c, value in enumerate(values):
            table.setItem(r, c, table_item(value, percent=c in percent_columns))
    note = table.columnCount() - 1
    table.setColumnHidden(note, not any(len(v) > note and v[note] for v in rows))


def tables_box(tables: Sequence[tuple[str, QTableWidget]]) -> QSplitter:
    """The tables side by side, each under its caption."""
    splitter = QSplitter(Qt.Orientation.Horizontal)
    for title, table in tables:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        caption = QLabel(title)
        caption.setObjectName("caption")
        layout.addWidget(caption)
        layout.addWidget(table)
        splitter.addWidget(box)
    splitter.setChildrenCollapsible(False)
    splitter.setSizes([450, 550])  # the whole set has one column more
    return splitter

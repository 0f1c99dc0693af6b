"""Undo and redo of the Translate screen's target edits: each edit of a target cell is
a command on a QUndoStack (the main window's Edit menu: Undo Ctrl+Z, Redo Ctrl+Shift+Z
or Ctrl+Y). Undoing puts the cell's previous text back, so a row whose target is again
what the screen wrote is no longer "edited" (the panel compares the two before it
replaces the targets). The screen's own writes (a translation, another document) are
no edits: they start a new history."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QUndoCommand, QUndoStack
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem


class TargetEdit(QUndoCommand):
    """One edit of row `row`'s target, `before` -> `after`."""

    def __init__(self, history: EditHistory, row: int, before: str, after: str):
        super().__init__(f"edit of row {row + 1}")
        self.history, self.row, self.before, self.after = history, row, before, after
        self._shown = True  # pushed after the user typed it: the cell already shows it

    def redo(self) -> None:
        if self._shown:
            self._shown = False
            return
        self.history.write(self.row, self.after)

    def undo(self) -> None:
        self.history.write(self.row, self.before)


class EditHistory(QObject):
    """The undo stack of `table`'s `column`: every change of a cell's text that the
    screen did not write itself (`written`, `reset`) becomes a TargetEdit;
    `changed(row)` is called after an undo or redo has written a cell."""

    def __init__(self, table: QTableWidget, column: int, changed: Callable[[int], None]):
        super().__init__(table)
        self.table, self.column, self.changed = table, column, changed
        self.stack = QUndoStack(self)
        self._shown: list[str] = []  # each row's text as this history last saw it
        table.itemChanged.connect(self._item_changed)

    def reset(self, texts: list[str]) -> None:
        """The screen wrote the whole column (`texts`): a new history."""
        self._shown = list(texts)
        self.stack.clear()

    def written(self, row: int, text: str) -> None:
        """The screen is writing `text` into row `row`: no edit."""
        if 0 <= row < len(self._shown):
            self._shown[row] = text

    def _item_changed(self, item: QTableWidgetItem) -> None:
        row = item.row()
        if item.column() != self.column or not 0 <= row < len(self._shown):
            return
        before, after = self._shown[row], item.text()
        if before != after:
            self._shown[row] = after
            self.stack.push(TargetEdit(self, row, before, after))

    def write(self, row: int, text: str) -> None:
        """An undo's or redo's text into row `row` (selected, to show where)."""
        self._shown[row] = text
        item = self.table.item(row, self.column)
        self.table.blockSignals(True)
        try:
            if item is None:
                self.table.setItem(row, self.column, QTableWidgetItem(text))
            else:
                item.setText(text)
        finally:
            self.table.blockSignals(False)
        self.table.setCurrentCell(row, self.column)
        self.changed(row)

"""What leaves the Translate screen besides its exports' records: the targets copied to
the clipboard as plain text, and the export dialog's file types and default name (the
translated document in the form it came in)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QTableWidget

from core.formats.export import FILE_FILTER
from core.services.translation import Document

#: the export dialog's file types: the translated Word document first, then the records
EXPORT_FILTER = "Word document (*.docx);;" + FILE_FILTER
#: a source's suffix -> the suffix its translation is offered under
_SAME_FORM = {".docx": ".docx", ".txt": ".txt", ".md": ".md", ".xlf": ".xlf",
              ".xliff": ".xliff", ".tmx": ".tmx"}


def default_export_name(document: Document | None, tgt_lang: str) -> str:
    """'informe_en.docx' for informe.docx translated into en: the source's own form and
    name with the target language (never the source's own name); 'translation.tmx' for
    typed text."""
    source = document.source if document is not None else None
    if source is None:
        return "translation.tmx"
    suffix = _SAME_FORM.get(source.suffix.lower(), ".tmx")
    return f"{Path(source).stem}_{tgt_lang}{suffix}"


def selected_rows(table: QTableWidget) -> list[int]:
    """The rows with a selected cell, top to bottom."""
    return sorted({index.row() for index in table.selectionModel().selectedIndexes()})


def copy_targets(table: QTableWidget, rows: list[int] | None = None, column: int = 1) -> int:
    """Put the target (`column`) of `rows` (None: every row), in row order, on the
    clipboard as plain text, one row per line. Returns the rows copied."""
    rows = list(range(table.rowCount())) if rows is None else sorted(rows)
    texts = [(table.item(r, column).text() if table.item(r, column) else "") for r in rows]
    if texts:
        QGuiApplication.clipboard().setText("\n".join(texts))
    return len(texts)


def add_copy_actions(table: QTableWidget, copy: Callable[[list[int] | None], int]) -> None:
    """The table's "Copy targets of the selected rows" (Ctrl+C while the table has the
    focus; a cell being edited keeps Ctrl+C for its own text) and "Copy all targets",
    both in its right-click menu; `copy(rows)` copies (None: every row)."""
    selected = QAction("Copy targets of the selected rows", table)
    selected.setShortcut(QKeySequence.StandardKey.Copy)
    selected.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
    selected.triggered.connect(lambda: copy(selected_rows(table)))
    every = QAction("Copy all targets", table)
    every.triggered.connect(lambda: copy(None))
    table.addActions([selected, every])
    table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)

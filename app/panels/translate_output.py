"""What leaves the Translate screen: its export (ExportActions, a mixin of
TranslatePanel: the records written in a job), the targets copied to the clipboard as
plain text, and the export dialog's file types and default name (the translated document
in the form it came in)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QTableWidget

from app import workers
from app.file_dialogs import ask_save_path
from core.formats.export import FILE_FILTER
from core.services import translation
from core.services.translation import Document
from core.services.translation_jobs import export_translation_job

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


class ExportActions:
    """The export part of TranslatePanel: Export… and Copy targets. It reads the panel's
    table, translations, the runs and languages that translated them, the document and
    the decoding settings; `_exported` is the target column as last exported."""

    def copy_targets(self, rows: list[int] | None = None) -> int:
        """Copy the targets of `rows` (None: all) to the clipboard, one row per line."""
        n = copy_targets(self.table, rows)
        if n:
            self.status.setText(f"Copied {n} target{'s' if n > 1 else ''} to the clipboard")
        return n

    def _choose_export(self) -> None:
        checked = self.models.checked()
        tgt_lang = self.translated_langs[1] if self.translations else (
            self._languages(checked[0])[1] if checked else "tgt")
        path = ask_save_path(self, "Export translation", "translations",
                             default_export_name(self.document, tgt_lang), EXPORT_FILTER)
        if path:
            self.export(path)

    def export(self, path: str | Path) -> workers.Job:
        """Write sources and the (edited) targets in a job (core.services.
        translation_jobs.export_translation_job: the records the `translate` command writes; a sentence
        whose target was edited keeps its text only; .docx and text: the translated
        document, its paragraphs kept) and record the export in the workspace under the
        run that translated. Export is disabled until it ends; the job's result is the
        list of files written."""
        run_id = self.translated_by[0] if self.translations and self.translated_by else None
        if run_id is not None:
            src_lang, tgt_lang = self.translated_langs
            if run_id not in {r.id for r in self.workspace.list_runs()}:
                run_id = None  # deleted since it translated: the export is not recorded
        else:
            checked = self.models.checked()
            src_lang, tgt_lang = self._languages(checked[0]) if checked else ("src", "tgt")
        document = self.document_path.name if self.document_path else "typed text"
        targets = self.targets()  # as they are now: later edits are not in the file
        records = translation.table_records(self.sources(), targets, self.translations)
        job = self.jobs.submit(export_translation_job, self.workspace, path, records,
                               src_lang=src_lang, tgt_lang=tgt_lang, run=run_id,
                               document=document, source=self.document,
                               decoding=self.decoding if self.translations else None,
                               name="Export translation", report_errors=False)
        job.finished.connect(lambda written: self._exported_to(written, targets))
        job.failed.connect(lambda message, tb: workers.show_error(self, "Export failed",
                                                                   message, tb))
        job.state_changed.connect(lambda _state: self._update_buttons())
        self.export_job = job
        self.status.setText(f"Exporting to {path}\u2026")
        self._update_buttons()
        return job

    def _exported_to(self, written: list[Path], targets: list[str]) -> None:
        self._exported = targets  # these edits are kept in the file now
        self.status.setText(f"Exported to {', '.join(str(p) for p in written)}")

    def _languages(self, run_id: int) -> tuple[str, str]:
        """(source, target) language of run `run_id`'s corpus; ("src", "tgt") without."""
        run = self.workspace.get_run(run_id) if self.workspace is not None else None
        if run is None or run.corpus_id is None:
            return "src", "tgt"
        info = self.workspace.get_corpus(run.corpus_id)
        return info.src_lang, info.tgt_lang

"""The Translate screen's rows (DocumentRows, a mixin of TranslatePanel): the source /
editable target table, one sentence a row, filled from a document read in a job
(txt/md/docx/TMX/XLIFF: its layout kept for the export) or from typed text; the source
and target columns read back."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from app import workers
from app.file_dialogs import ask_open_path
from app.panels.translate_checks import clear_warnings
from app.panels.translate_compare import TARGET, apply_filter, set_comparison_columns
from app.panels.translate_output import add_copy_actions
from app.panels.translate_undo import EditHistory
from app.widgets.diff_view import RichTextDelegate
from core.evaluate.output_checks import OutputWarning
from core.services import translation
from core.services.language_pairs import UNKNOWN_LANGS, run_languages
from core.services.translation_jobs import read_document_job

DOC_FILTER = ("Documents (*.txt *.md *.docx *.tmx *.xlf *.xliff);;Text (*.txt *.md);;"
              "Word (*.docx);;TMX (*.tmx);;XLIFF (*.xlf *.xliff)")


class DocumentRows:
    """The rows part of TranslatePanel: it builds the table and reads the panel's
    workspace, models, jobs and job, and resets its translations, comparison, history
    and attention view when the rows change."""

    def _build_table(self) -> None:
        """The source / editable target table, its undo history and its output checks."""
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Source", "Target (editable)"])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(True)
        self.table.setAlternatingRowColors(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        add_copy_actions(self.table, self.copy_targets)  # Ctrl+C, right-click menu
        self.table.setItemDelegate(RichTextDelegate(self.table))  # highlighted differences
        self._edit_triggers = self.table.editTriggers()
        self.table.currentCellChanged.connect(lambda row, *_: self.show_attention(row))
        self.table.itemChanged.connect(self._target_edited)
        # undo / redo of target edits (the main window's Edit menu)
        self.history = EditHistory(self.table, TARGET, self._target_changed)
        # per translated row, where its output may invent or drop content
        self.output_warnings: list[list[OutputWarning]] = []
        self._usual_ratio = 1.0  # output characters per source character, measured

    def _source_lang(self) -> str:
        """The source language of the first checked run whose language is known (its
        corpus's, else the one its preprocessing was saved with: an imported or bundled
        run), the sentence splitter's rules; 'en' when none is known."""
        for run_id in self.models.checked():
            src = run_languages(self.workspace, self.workspace.get_run(run_id))[0]
            if src not in UNKNOWN_LANGS:
                return src
        return "en"

    def _choose_document(self) -> None:
        path = ask_open_path(self, "Open document", "documents", DOC_FILTER)
        if path:
            self.open_document(path)

    def open_document(self, path: str | Path) -> workers.Job | None:
        """Read the document in a job (a big .docx takes seconds to parse and split: never
        on the GUI thread); its sentences fill the table when it is done, and a failure
        opens the error dialog (with the reader's file and line). None when the user keeps
        the targets they edited."""
        path = Path(path)
        if not self.may_discard_edits(f"Opening {path.name}"):
            return None
        lang = self._source_lang() if self.workspace is not None else "en"
        self.status.setText(f"reading {path.name} ...")
        job = self.jobs.submit(read_document_job, str(path), lang, name=f"Open {path.name}")
        job.finished.connect(lambda document, p=path: self._document_read(p, document))
        job.failed.connect(lambda message, _tb: self.status.setText(f"Failed: {message}"))
        return job

    def _document_read(self, path: Path, document: translation.Document) -> None:
        self.document_path = path
        self.set_sentences(document.sentences, document=document)
        self.status.setText(f"{path.name}: {len(document.sentences)} sentences")

    def translate_typed(self) -> workers.Job | None:
        """Translate the typed text: its sentences replace the table's, as a document would
        (its blank lines kept for a text export)."""
        document = translation.text_document(self.typed.toPlainText(),
                                             self._source_lang() if self.workspace else "en")
        if not document.sentences or not self.may_discard_edits("Translating the typed text"):
            return None
        self.document_path = None
        self.set_sentences(document.sentences, document=document)
        return self.translate()

    def set_sentences(self, sources: list[str], targets: list[str] | None = None,
                      document: translation.Document | None = None) -> None:
        """Show `sources` (with `targets`, when given) as the table's rows; `document`:
        the Document they are the sentences of (None: a line each)."""
        if document is not None and document.sentences != list(sources):
            document = None  # not these rows' document
        self.document = document
        if self.job is not None and not self.job.done:
            self.job.cancel()  # it translates the sentences this table no longer shows
        self.job = None  # so its late results are not taken for these (_if_current)
        self.translations, self.translated_by = [], []
        self.decoding = None
        self._end_comparison()
        self._written = list(targets) if targets else [""] * len(sources)
        self._exported = []
        self.output_warnings = []
        self.history.reset(self._written)
        self.table.setRowCount(len(sources))
        clear_warnings(self.table)
        for row, text in enumerate(sources):
            item = QTableWidgetItem(text)
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            self.table.setItem(row, 0, item)
            self.table.setItem(row, 1, QTableWidgetItem(self._written[row]))
        self.table.resizeRowsToContents()
        self.attention_view.clear()
        self.progress.reset()  # the previous rows' "100%"
        self._update_buttons()

    def _end_comparison(self) -> None:
        """Back to two columns, every row shown."""
        self.comparison = None
        apply_filter(self.table, None, False)
        set_comparison_columns(self.table, False)
        self.compare.only_differing.setEnabled(False)

    def sources(self) -> list[str]:
        """The source column, row by row."""
        return [self.table.item(r, 0).text() for r in range(self.table.rowCount())]

    def targets(self) -> list[str]:
        """The target column as shown (edits included), row by row."""
        return [(self.table.item(r, 1).text() if self.table.item(r, 1) else "")
                for r in range(self.table.rowCount())]

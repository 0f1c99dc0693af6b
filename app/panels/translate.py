"""Translate screen: open a document (txt/md/docx/TMX/XLIFF) or type / paste text,
choose a run, an ensemble
of runs or a context model, translate in a worker with progress and cancel, edit the
target side by side with the source, see the selected sentence's attention (with p_t
and its window for local-p; with a context model's gate values lambda as a strip under
it), optionally compare with a sentence-level baseline (app/panels/translate_compare.py),
undo / redo target edits (app/panels/translate_undo.py), see the rows whose output may
invent or drop content flagged (app/panels/translate_checks.py),
export the translated document in its own form (.docx, text with its paragraphs, XLIFF
with its ids) or TSV / TMX / XLIFF / JSON lines, copy targets to the clipboard
(app/panels/translate_output.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.core_jobs import SessionCache, compare_job, read_document_job, translate_job
from app.file_dialogs import ask_open_path
from app.panels.translate_arithmetic import arithmetic_boxes, arithmetic_note, flag_note
from app.panels.translate_checks import clear_warnings
from app.panels.translate_compare import (
    BASELINE,
    TARGET,
    CompareControls,
    apply_filter,
    fill_comparison,
    set_comparison_columns,
)
from app.panels.translate_edits import TargetEdits
from app.panels.translate_output import ExportActions, add_copy_actions
from app.panels.translate_runs import (
    first_choice,
    is_context_model,
    reads_target_side,
    remember_runs,
    shortlist_unavailable,
)
from app.panels.translate_undo import EditHistory
from app.widgets.diff_view import RichTextDelegate
from app.widgets.gate_strip import GateStrip
from app.widgets.heatmap import AttentionHeatmap
from app.widgets.run_list import RunList, usable_runs
from app.widgets.status_label import StatusLabel
from core import limits
from core.evaluate.output_checks import (
    OutputWarning,
)
from core.families import family_traits
from core.services import translation
from core.services.translation import Comparison
from core.workspace.store import Workspace

SHORTLIST_TIP = (
    "Decode each batch over a lexical shortlist: the source words' likeliest translations "
    "(eflomal links of the run's training split, built once and stored with the run) plus the "
    "100 most frequent words. Faster on the CPU; outputs can differ a little "
    "(docs/benchmarks.md)")
STATUS_WIDTH = 260  # the progress bar's and status line's column
DOC_FILTER = ("Documents (*.txt *.md *.docx *.tmx *.xlf *.xliff);;Text (*.txt *.md);;"
              "Word (*.docx);;TMX (*.tmx);;XLIFF (*.xlf *.xliff)")


class TranslatePanel(TargetEdits, ExportActions, QWidget):
    """The Translate screen; its edits (translate_edits.TargetEdits) and export
    (translate_output.ExportActions) are mixins of their own modules."""

    def __init__(self, jobs: workers.JobManager, sessions: SessionCache | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.jobs = jobs
        self.sessions = sessions or SessionCache()
        self._init_state()
        self._build_decoding_options()
        self._build_actions()
        self._build_table()
        self._build_attention_view()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(self._top_bar())
        typed_row = QHBoxLayout()
        typed_row.addWidget(self.typed, 1)
        typed_row.addWidget(self.typed_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(typed_row)
        layout.addWidget(self._table_and_attention(), 1)
        self._update_buttons()

    def _init_state(self) -> None:
        """What the screen holds besides its widgets: the translations shown, the runs
        and languages behind them, the document, the jobs."""
        self.workspace: Workspace | None = None
        self.translations: list[Any] = []
        self.translated_by: list[int] = []  # the run(s) behind self.translations
        self._pending_runs: list[int] = []
        # the source and target languages of the run that translated (its corpus's), kept
        # for the export: the run may be deleted meanwhile
        self.translated_langs: tuple[str, str] = ("src", "tgt")
        self._pending_langs: tuple[str, str] = ("src", "tgt")
        self.comparison: Comparison | None = None
        # the decoding settings of the translation shown (core.infer.decoding), for the
        # exports' metadata; the job's 'decoding' event brings them
        self.decoding: dict[str, Any] | None = None
        self._pending_decoding: dict[str, Any] | None = None
        # the target column as the screen last wrote it: a row whose text differs was edited
        self._written: list[str] = []
        # the target column as last exported: edits written to a file are not lost
        self._exported: list[str] = []
        self.document_path: Path | None = None
        # the document the table's rows are the sentences of (paragraphs, layout, source
        # file): the export rebuilds it; None: rows set one by one (a line each)
        self.document: translation.Document | None = None
        self.job: workers.Job | None = None
        self.export_job: workers.Job | None = None  # the latest export
        self.window_of: dict[int, int] = {}

    def _build_decoding_options(self) -> None:
        """Open document, the model list and the decoding options (beam, <unk>
        replacement, bf16, shortlist, own translations as context)."""
        self.open_button = QPushButton("Open document…")
        self.open_button.setToolTip("Open a document (Ctrl+Shift+O, File menu)")
        self.open_button.clicked.connect(self._choose_document)
        self.models = RunList()
        self.models.setToolTip("Check one run, or several (same vocabularies) for an ensemble")
        self.models.changed.connect(self._update_buttons)
        self.beam = QSpinBox()
        self.beam.setRange(1, limits.MAX_BEAM)  # what translate --beam accepts
        self.beam.setValue(5)
        self.unk = QCheckBox("replace unknown words")
        self.unk.setToolTip("Copy the most-attended source word for each <unk>")
        self.bf16, self.int8 = arithmetic_boxes()
        self.shortlist = QCheckBox("shortlist")
        self.shortlist.setToolTip(SHORTLIST_TIP)
        self.target_context = QCheckBox("own translations as context")
        # the user's choice while a target-side run (always its own translations) is checked
        self._user_target_context: bool | None = None
        self.target_context.setToolTip(
            "Context models: each sentence sees the model's own translations of the previous "
            "sentence(s) as context instead of the previous source sentence(s)")

    def _build_actions(self) -> None:
        """Translate, Cancel, the typed text and its button, Export, Copy targets, the
        progress bar and status line, the comparison controls."""
        self.translate_button = QPushButton("Translate")
        self.translate_button.setToolTip("Translate (Ctrl+T, Run menu)")
        self.translate_button.clicked.connect(self.translate)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: self.job and self.job.cancel())
        self.typed = QPlainTextEdit()  # typed text: translated like a short document
        self.typed.setPlaceholderText("…or type or paste text here and press Translate text "
                                      "(Ctrl+Shift+Return)")
        self.typed.setMaximumHeight(64)
        self.typed.textChanged.connect(self._update_buttons)
        self.typed_button = QPushButton("Translate text")
        self.typed_button.setToolTip("Translate the typed text, sentence by sentence, and show "
                                     "each sentence's attention (Ctrl+Shift+Return)")
        self.typed_button.setShortcut("Ctrl+Shift+Return")
        self.typed_button.clicked.connect(self.translate_typed)
        self.export_button = QPushButton("Export…")
        self.export_button.clicked.connect(self._choose_export)
        self.copy_button = QPushButton("Copy targets")
        self.copy_button.setToolTip("Copy every target to the clipboard as plain text, one "
                                    "row per line (Ctrl+C copies the selected rows')")
        self.copy_button.clicked.connect(lambda: self.copy_targets(None))
        self.progress = QProgressBar()
        self.status = StatusLabel("Open a document, check a model, press Translate.")
        self.status.setObjectName("hint")
        self.compare = CompareControls()
        self.compare.filter_changed.connect(
            lambda on: apply_filter(self.table, self.comparison, on))

    def _top_bar(self) -> QHBoxLayout:
        """[options and actions | the model list | progress and status]."""
        left = QVBoxLayout()
        left.addWidget(self.open_button)
        options = QHBoxLayout()
        options.addWidget(QLabel("Beam"))
        options.addWidget(self.beam)
        options.addWidget(self.unk)
        options.addWidget(self.bf16)
        options.addWidget(self.int8)
        options.addWidget(self.shortlist)
        options.addWidget(self.target_context)
        left.addLayout(options)
        go = QHBoxLayout()
        go.addWidget(self.translate_button)
        go.addWidget(self.cancel_button)
        go.addWidget(self.export_button)
        go.addWidget(self.copy_button)
        left.addLayout(go)
        left.addWidget(self.compare)
        bar = QHBoxLayout()
        bar.addLayout(left)
        models = QVBoxLayout()
        models.addWidget(QLabel("Model(s) — several checked = ensemble"))
        models.addWidget(self.models)
        bar.addLayout(models, 1)
        # a fixed width: a long status elides (full text in its tooltip) instead of
        # taking the width of the model list, whose names it would cut
        status_box = QWidget()
        status_box.setFixedWidth(STATUS_WIDTH)
        right = QVBoxLayout(status_box)
        right.setContentsMargins(0, 0, 0, 0)
        right.addWidget(self.progress)
        right.addWidget(self.status)
        right.addStretch(1)
        bar.addWidget(status_box)
        return bar

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

    def _build_attention_view(self) -> None:
        """The selected sentence's heatmap, the gate strips of context models and the note
        under them."""
        self.heatmap = AttentionHeatmap(title="Attention of the selected sentence")
        self.gate_strip = GateStrip(self.heatmap)  # context models' lambda, under the heatmap
        # ... and a compared baseline's, when it is a context model too
        self.baseline_gate_strip = GateStrip(self.heatmap, row=2, label="baseline \u03bb")
        self.note = StatusLabel(" ")
        self.note.setObjectName("hint")

    def _table_and_attention(self) -> QSplitter:
        """[the table | the heatmap over its note]."""
        attention_box = QWidget()
        box = QVBoxLayout(attention_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.heatmap, 1)
        box.addWidget(self.note)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.table)
        splitter.addWidget(attention_box)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([820, 560])
        return splitter

    # --- workspace ------------------------------------------------------------------------
    def set_workspace(self, workspace: Workspace | None) -> None:
        """Show `workspace`'s runs. The translations, comparison and run ids on the screen
        are the previous workspace's (the same id may name another run here): cleared,
        targets too, without asking, since the switch has already happened; the sources
        stay, to be translated by this workspace's runs."""
        self.workspace = workspace
        self.sessions.clear()
        self.refresh()  # first: the runs checked are then this workspace's
        self.set_sentences(self.sources(), document=self.document)

    def refresh(self) -> None:
        """List the workspace's usable runs (the run checked first: translate_runs.first_choice)."""
        runs = usable_runs(self.workspace)
        self.window_of = {r.id: int(r.config.get("model", {}).get("window", 0)) for r in runs}
        self.models.set_runs(runs)
        self.compare.set_runs(runs)
        if runs and not self.models.checked():
            self.models.set_checked(first_choice(self.workspace, runs))

    def _update_buttons(self) -> None:
        busy = self.job is not None and not self.job.done
        self.translate_button.setEnabled(not busy and bool(self.models.checked())
                                         and self.table.rowCount() > 0)
        self.cancel_button.setEnabled(busy)
        exporting = self.export_job is not None and not self.export_job.done
        self.export_button.setEnabled(self.table.rowCount() > 0 and not exporting)
        self.copy_button.setEnabled(self.table.rowCount() > 0)
        # while a translation runs its result will fill the targets: an edit made then
        # would be overwritten, so none can be started
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers if busy
                                   else self._edit_triggers)
        target_side = reads_target_side(self.workspace, self.models.checked())
        if target_side and self._user_target_context is None:  # it has no other context
            self._user_target_context = self.target_context.isChecked()
            self.target_context.setChecked(True)
        elif not target_side and self._user_target_context is not None:  # the user's again
            self.target_context.setChecked(self._user_target_context)
            self._user_target_context = None
        self.target_context.setEnabled(not busy and is_context_model(self.workspace,
                                                                    self.models.checked())
                                       and not target_side)
        no_shortlist = shortlist_unavailable(self.workspace, self.models.checked())
        if no_shortlist:
            self.shortlist.setChecked(False)
        self.shortlist.setEnabled(not busy and not no_shortlist)
        self.shortlist.setToolTip(f"Not for this run: {no_shortlist}." if no_shortlist
                                  else SHORTLIST_TIP)
        self.typed_button.setEnabled(not busy and bool(self.models.checked())
                                     and bool(self.typed.toPlainText().strip()))

    # --- documents ----------------------------------------------------------------------------
    def _source_lang(self) -> str:
        for run_id in self.models.checked():
            run = self.workspace.get_run(run_id)
            if run.corpus_id is not None:
                return self.workspace.get_corpus(run.corpus_id).src_lang
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
        self.heatmap.clear()
        self.gate_strip.clear()
        self.baseline_gate_strip.clear()
        self.note.setText(" ")  # the previous rows' "sentence 9: log p = ..."
        self.progress.reset()  # ... and their "100%"
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

    # --- translating --------------------------------------------------------------------------
    def translate(self) -> workers.Job | None:
        """Translate the table's sources with the checked run(s) in a job (with a comparison when
        a baseline is chosen); None when nothing to translate or the user keeps their edits."""
        run_ids = self.models.checked()
        if self.workspace is None or not run_ids or self.table.rowCount() == 0:
            return None
        if not self.may_discard_edits("Translating again"):
            return None
        sentences = self.sources()
        self._pending_runs = list(run_ids)
        self._pending_langs = self._languages(run_ids[0])
        self._pending_decoding = None
        self.progress.setRange(0, len(sentences))
        self.progress.setValue(0)
        kind = "ensemble of " + str(len(run_ids)) if len(run_ids) > 1 else "run " + str(run_ids[0])
        family = self.workspace.get_run(run_ids[0]).family
        context = family_traits(family).context
        target_context = context and (self.target_context.isChecked()
                                      or reads_target_side(self.workspace, run_ids))
        if context:
            kind += ", context model: each sentence sees the ones before it"
            if target_context:
                kind += " (its own translations)"
        baseline = self.compare.wanted()
        self._end_comparison()
        if baseline is not None:
            name = self.workspace.get_run(baseline).name
            kind += f"; then the baseline {name}"
            set_comparison_columns(self.table, True, baseline_name=name)
        self.status.setText(f"Translating {len(sentences)} sentences ({kind}, beam "
                            f"{self.beam.value()})…")
        if baseline is None:
            self.job = self.jobs.submit(translate_job, self.workspace, self.sessions, run_ids,
                                        sentences, self.beam.value(), self.unk.isChecked(),
                                        name="Translate", target_context=target_context,
                                        amp=self.bf16.isChecked(),
                                        shortlist=self.shortlist.isChecked(),
                                        int8=self.int8.isChecked())
            self.job.finished.connect(self._if_current(self.job, self.show_translations))
        else:
            self.job = self.jobs.submit(compare_job, self.workspace, self.sessions, run_ids,
                                        baseline, sentences, self.beam.value(),
                                        self.unk.isChecked(), name="Translate and compare",
                                        target_context=target_context,
                                        amp=self.bf16.isChecked(),
                                        shortlist=self.shortlist.isChecked(),
                                        int8=self.int8.isChecked())
            self.job.finished.connect(self._if_current(self.job, self.show_comparison))
        job = self.job
        job.event.connect(self._if_current(job, self._on_event))
        job.cancelled.connect(self._if_current(
            job, lambda: self.status.setText("Translation cancelled")))
        job.failed.connect(self._if_current(
            job, lambda msg, _tb: self.status.setText(f"Failed: {msg}")))
        job.state_changed.connect(lambda _s: self._update_buttons())
        self._update_buttons()
        return job

    def _if_current(self, job: workers.Job, slot):
        """`slot`, called only while `job` is the screen's translation: one whose
        sentences were replaced meanwhile (another document opened) changes nothing."""
        return lambda *args: slot(*args) if job is self.job else None

    def _on_event(self, kind: str, data: dict) -> None:
        if kind == "decoding":
            self._pending_decoding = data.get("settings")
        elif kind == "progress" and data.get("total"):
            self.progress.setRange(0, int(data["total"]))
            self.progress.setValue(int(data["done"]))
        elif kind in ("translation", "baseline_translation"):  # partial results as they come
            tr, row = data.get("translation"), data.get("index")
            column = 1 if kind == "translation" else BASELINE
            if tr is not None and row is not None and data.get("document", 0) == 0 \
                    and row < self.table.rowCount() and column < self.table.columnCount():
                if column == 1:
                    self._written[row] = tr.text
                    self.history.written(row, tr.text)  # the screen's, not an edit
                self.table.setItem(row, column, QTableWidgetItem(tr.text))

    def show_translations(self, translations: list[Any]) -> None:
        """core.infer.translate.Translation objects, in input order."""
        self.translations = list(translations)
        self.translated_by = list(self._pending_runs)
        self.decoding = self._pending_decoding
        remember_runs(self.workspace, self.translated_by)
        self.translated_langs = self._pending_langs
        self.table.blockSignals(True)
        for row, tr in enumerate(translations):
            self.table.setItem(row, 1, QTableWidgetItem(tr.text))
            self._written[row] = tr.text
        self.table.blockSignals(False)
        self.history.reset(self._written)
        flagged = self._check_outputs()
        self.table.resizeRowsToContents()
        self.status.setText(f"{len(translations)} sentences translated{arithmetic_note(self.decoding)}"
                            f"{flag_note(flagged)}; select one to see its attention")
        self._select_and_show()

    def show_comparison(self, comparison: Comparison) -> None:
        """Both models' outputs side by side, differing words highlighted."""
        self.comparison = comparison
        self.translations = list(comparison.main)
        self.translated_by = list(self._pending_runs)
        self.decoding = self._pending_decoding
        remember_runs(self.workspace, self.translated_by)
        self.translated_langs = self._pending_langs
        differ = fill_comparison(self.table, comparison)
        self._written[:len(comparison.main)] = [tr.text for tr in comparison.main]
        self.history.reset(self._written)
        flagged = self._check_outputs()
        self.compare.only_differing.setEnabled(True)
        apply_filter(self.table, comparison, self.compare.only_differing.isChecked())
        self.table.resizeRowsToContents()
        n = len(comparison.main)
        self.status.setText(f"{n} sentences translated{arithmetic_note(self.decoding)}"
                            f"{flag_note(flagged)}; {differ} of "
                            f"{n} differ from the baseline {comparison.baseline_name} (\u2260)")
        self._select_and_show()

    def _select_and_show(self) -> None:
        translations = self.translations
        row = max(0, self.table.currentRow())
        if self.table.currentRow() < 0 and translations:
            self.table.selectRow(0)
        self.show_attention(row)
        self._update_buttons()

    def show_attention(self, row: int) -> None:
        """Show row `row`'s attention (and gates, local-p window) under the table."""
        if not 0 <= row < len(self.translations):
            return
        tr = self.translations[row]
        tgt_tokens = list(tr.target_tokens) + ["</s>"]  # the last attention row is EOS
        self.heatmap.set_matrix(tr.attention, tr.source_tokens, tgt_tokens)
        notes = [f"sentence {row + 1}: log p = {tr.log_prob:.2f}"]
        if getattr(tr, "gates", None) is not None:
            self.gate_strip.set_gates(tr.gates, tr.source_tokens)
            notes.append("strip: gate \u03bb per source word (1 = the sentence itself, "
                         "0 = the context)")
        else:
            self.gate_strip.clear()
        notes += self._show_baseline_gates(row, tr)
        if tr.positions is not None:
            window = self.window_of.get(self.models.checked()[0], 0) if self.models.checked() else 0
            self.heatmap.set_positions(np.asarray(tr.positions, dtype=float), window)
            notes.append(f"green line: predicted position p_t, band: window D = {window}")
        if tr.unk_report is not None and getattr(tr.unk_report, "replaced", None):
            notes.append(f"unknown words replaced: {len(tr.unk_report.replaced)}")
        self.note.setText(" · ".join(notes))

    def _show_baseline_gates(self, row: int, tr: Any) -> list[str]:
        """In a comparison with a context-model baseline: its gates in the second strip,
        when it tokenised the source as the shown model did (the columns must match).
        -> notes for the caption."""
        base = self.comparison.baseline[row] if self.comparison is not None \
            and row < len(self.comparison.baseline) else None
        gates = getattr(base, "gates", None)
        if gates is None:
            self.baseline_gate_strip.clear()
            return []
        if list(base.source_tokens) != list(tr.source_tokens):
            self.baseline_gate_strip.clear()
            return [f"the baseline {self.comparison.baseline_name} tokenises the source "
                    "otherwise: its gates are not shown"]
        self.baseline_gate_strip.set_gates(gates, base.source_tokens)
        return [f"second strip: the baseline {self.comparison.baseline_name}'s gates"]

    def targets(self) -> list[str]:
        """The target column as shown (edits included), row by row."""
        return [(self.table.item(r, 1).text() if self.table.item(r, 1) else "")
                for r in range(self.table.rowCount())]

    # --- export ---------------------------------------------------------------------------------
    def export_figure(self) -> None:
        """File > Export figure: the selected sentence's heatmap as PNG, SVG or PDF."""
        from app.panels.figures import export_dialog

        export_dialog(self, self.heatmap.export, "attention")

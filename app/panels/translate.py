"""Translate screen: open a document (txt/md/docx/TMX/XLIFF) or type / paste text,
choose a run, an ensemble
of runs or a context model, translate in a worker with progress and cancel, edit the
target side by side with the source (app/panels/translate_document.py), see the
selected sentence's attention (with p_t and its window for local-p; with a context
model's gate values lambda as a strip under it: app/panels/translate_attention.py), set
the decoding options (app/panels/translate_options.py), optionally compare with a sentence-level baseline (app/panels/translate_compare.py),
undo / redo target edits (app/panels/translate_undo.py), see the rows whose output may
invent or drop content flagged (app/panels/translate_checks.py),
export the translated document in its own form (.docx, text with its paragraphs, XLIFF
with its ids) or TSV / TMX / XLIFF / JSON lines, copy targets to the clipboard
(app/panels/translate_output.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.panels.translate_arithmetic import arithmetic_note, flag_note
from app.panels.translate_attention import SentenceAttention
from app.panels.translate_compare import (
    BASELINE,
    CompareControls,
    apply_filter,
    fill_comparison,
    set_comparison_columns,
)
from app.panels.translate_document import DocumentRows
from app.panels.translate_edits import TargetEdits
from app.panels.translate_options import DecodingOptions
from app.panels.translate_output import ExportActions
from app.panels.translate_runs import first_choice, remember_runs
from app.widgets.run_list import RunList, usable_runs
from app.widgets.status_label import StatusLabel
from core.errors import ConfigError
from core.services import translation
from core.services.alignment_runs import run_languages
from core.services.translation import Comparison, SessionCache
from core.services.translation_jobs import compare_job, translate_job
from core.workspace.store import Workspace

STATUS_WIDTH = 260  # the progress bar's and status line's column


class TranslatePanel(DocumentRows, TargetEdits, ExportActions, QWidget):
    """The Translate screen; its rows (translate_document.DocumentRows), edits
    (translate_edits.TargetEdits) and export (translate_output.ExportActions) are mixins
    of their own modules, its options (translate_options.DecodingOptions) and attention
    view (translate_attention.SentenceAttention) objects of theirs."""

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
        self.runs: list = []  # the usable runs listed
        self.run_langs: dict[int, tuple[str, str]] = {}  # run -> (source, target) language

    def _build_decoding_options(self) -> None:
        """Open document, the model list and the decoding options (beam, <unk>
        replacement, bf16 / int8, shortlist, own translations as context:
        translate_options.DecodingOptions, its boxes also the panel's attributes)."""
        self.open_button = QPushButton("Open document…")
        self.open_button.setToolTip("Open a document (Ctrl+Shift+O, File menu)")
        self.open_button.clicked.connect(self._choose_document)
        self.models = RunList()
        self.models.setToolTip("Check one run, or several (same vocabularies) for an ensemble")
        self.models.changed.connect(self._update_buttons)
        self.models.changed.connect(self._offer_baselines)
        self.options = DecodingOptions()
        self.beam, self.unk = self.options.beam, self.options.unk
        self.bf16, self.int8 = self.options.bf16, self.options.int8
        self.shortlist, self.target_context = self.options.shortlist, self.options.target_context

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
        left.addLayout(self.options.row())
        go = QHBoxLayout()
        go.addWidget(self.translate_button)
        go.addWidget(self.cancel_button)
        go.addWidget(self.export_button)
        go.addWidget(self.copy_button)
        for widget in self.options.penalty_row():
            go.addWidget(widget)
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

    def _build_attention_view(self) -> None:
        """The selected sentence's heatmap, the gate strips of context models and the note
        under them."""
        self.attention_view = SentenceAttention()
        self.heatmap, self.note = self.attention_view.heatmap, self.attention_view.note
        self.gate_strip = self.attention_view.gate_strip
        self.baseline_gate_strip = self.attention_view.baseline_gate_strip

    def _table_and_attention(self) -> QSplitter:
        """[the table | the heatmap over its note]."""
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.table)
        splitter.addWidget(self.attention_view)
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
        self.runs = runs
        self.run_langs = {r.id: run_languages(self.workspace, r) for r in runs}
        self.models.set_runs(runs)
        if runs and not self.models.checked():
            self.models.set_checked(first_choice(self.workspace, runs))
        self._offer_baselines()

    def _offer_baselines(self) -> None:
        """The baselines offered: the runs of the first checked run's language pair."""
        checked = self.models.checked()
        pair = self.run_langs.get(checked[0], ("", "")) if checked else ("", "")
        self.compare.set_runs(self.runs, self.run_langs, pair)

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
        self.options.follow(self.workspace, self.models.checked(), busy)
        self.typed_button.setEnabled(not busy and bool(self.models.checked())
                                     and bool(self.typed.toPlainText().strip()))

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
        if self.document is not None and self.document.sentences == sentences:
            run = self.workspace.get_run(run_ids[0])
            try:  # a TMX / XLIFF in another language than the run translates from
                translation.check_document_language(
                    self.document, run_languages(self.workspace, run)[0], run.name)
            except ConfigError as exc:
                self.status.setText(f"Not translated: {exc}")
                return None
        self._pending_runs = list(run_ids)
        self._pending_langs = self._languages(run_ids[0])
        self._pending_decoding = None
        self.progress.setRange(0, len(sentences))
        self.progress.setValue(0)
        kind = "ensemble of " + str(len(run_ids)) if len(run_ids) > 1 else "run " + str(run_ids[0])
        context, target_context = self.options.context_of(self.workspace, run_ids)
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
        self.job = self._submit(run_ids, sentences, baseline, target_context)
        self._update_buttons()
        return self.job

    def _submit(self, run_ids: list[int], sentences: list[str], baseline: int | None,
                target_context: bool) -> workers.Job:
        """The translation job (translate_job; compare_job with a `baseline` run), its
        results and status connected to the screen while it is the current one."""
        doc = self.document  # an XLIFF of several documents: each read on its own
        doc_ids = doc.doc_ids if doc is not None and doc.sentences == sentences else None
        if baseline is None:
            job = self.jobs.submit(translate_job, self.workspace, self.sessions, run_ids,
                                   sentences, self.beam.value(), self.unk.isChecked(),
                                   name="Translate", target_context=target_context,
                                   doc_ids=doc_ids, **self.options.job_settings())
            job.finished.connect(self._if_current(job, self.show_translations))
        else:
            job = self.jobs.submit(compare_job, self.workspace, self.sessions, run_ids,
                                   baseline, sentences, self.beam.value(),
                                   self.unk.isChecked(), name="Translate and compare",
                                   target_context=target_context, doc_ids=doc_ids,
                                   **self.options.job_settings())
            job.finished.connect(self._if_current(job, self.show_comparison))
        job.event.connect(self._if_current(job, self._on_event))
        job.cancelled.connect(self._if_current(
            job, lambda: self.status.setText("Translation cancelled")))
        job.failed.connect(self._if_current(
            job, lambda msg, _tb: self.status.setText(f"Failed: {msg}")))
        job.state_changed.connect(lambda _s: self._update_buttons())
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
        """Show row `row`'s attention (and gates, local-p window) beside the table."""
        if not 0 <= row < len(self.translations):
            return
        checked = self.models.checked()
        window = self.window_of.get(checked[0], 0) if checked else 0
        self.attention_view.show_sentence(row, self.translations[row], window,
                                          self.comparison)

    # --- export ---------------------------------------------------------------------------------
    def export_figure(self) -> None:
        """File > Export figure: the selected sentence's heatmap as PNG, SVG or PDF."""
        from app.panels.figures import export_dialog

        export_dialog(self, self.heatmap.export, "attention")

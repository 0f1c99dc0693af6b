"""The corpus import dialog: every reader format, path pickers, languages, TSV
columns (guessed from the text by core.data.langid, the guess and its doubts shown),
lenient reading and a preview of the first lines (a TSV file's two columns under their
languages)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.file_dialogs import ask_open_path
from core.data.langid import ColumnGuess, language_name
from core.errors import ConfigError
from core.services.corpora import ImportPreview, check_language_codes, preview_job

FORMAT_LABELS = {
    "parallel": "Two line-parallel files (+ optional document ids)",
    "tsv": "Tab-separated columns (Tatoeba / Anki)",
    "tmx": "TMX translation memory",
    "docs": "Two files, documents separated by blank lines",
}
FILE_ROLES = {  # format -> [(label, required)]
    "parallel": [("Source file", True), ("Target file", True), ("Document ids", False)],
    "tsv": [("TSV file", True)],
    "tmx": [("TMX file", True)],
    "docs": [("Source file", True), ("Target file", True)],
}


class PathPicker(QWidget):
    """A path field with a Browse… button (the last folder used for corpora)."""
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.edit = QLineEdit()
        button = QPushButton("Browse…")
        button.clicked.connect(self._browse)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(button)

    def _browse(self) -> None:
        path = ask_open_path(self, "Choose a file", "corpora")
        if path:
            self.edit.setText(path)

    def path(self) -> str:
        """The path typed or chosen, stripped."""
        return self.edit.text().strip()


def last_languages(fallback: tuple[str, str] | None = None) -> tuple[str, str]:
    """The language pair of the last import (QSettings), else `fallback` (the workspace's
    newest corpus), else en -> fr."""
    settings = QSettings()
    src, tgt = settings.value("import/src_lang", ""), settings.value("import/tgt_lang", "")
    if src and tgt:
        return str(src), str(tgt)
    return fallback or ("en", "fr")


class ImportDialog(QDialog):
    """Asks what to import; request() is the answer. The preview of the first file is
    read in a job of `jobs` (the dialog's own manager when none is given)."""

    def __init__(self, formats: tuple[str, ...], parent: QWidget | None = None,
                 languages: tuple[str, str] | None = None,
                 jobs: workers.JobManager | None = None):
        """`languages`: the pair to offer when no import was made yet (see last_languages)."""
        super().__init__(parent)
        self.setWindowTitle("Import corpus")
        self.setMinimumWidth(640)
        self._build_fields(formats, languages)
        self._build_preview()
        self.jobs = jobs or workers.JobManager(error_parent=self)
        self.preview_job: workers.Job | None = None  # the latest preview asked for
        self._lines: list[str] | str = []  # the previewed lines, or why not readable
        self._columns_by_user = False  # the user set the TSV columns for this file
        self._setting_columns = False
        form = self._form()
        buttons = self._buttons()
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Preview (first lines of the first file)"))
        layout.addWidget(self.preview, 1)
        layout.addWidget(self.preview_table, 1)
        layout.addWidget(buttons)
        self.format.currentIndexChanged.connect(self._update_roles)
        self._update_roles()

    def _build_fields(self, formats: tuple[str, ...],
                      languages: tuple[str, str] | None) -> None:
        """The format, the three path pickers, the name, the languages (the last import's,
        else `languages`), the TSV columns and the lenient box."""
        self.format = QComboBox()
        for fmt in formats:
            self.format.addItem(FORMAT_LABELS.get(fmt, fmt), fmt)
        self.pickers = [PathPicker() for _ in range(3)]
        self.picker_labels = [QLabel() for _ in range(3)]
        self.name = QLineEdit()
        self.name.setPlaceholderText("default: the file name")
        self.src_lang, self.tgt_lang = (QLineEdit(lang) for lang in last_languages(languages))
        for edit in (self.src_lang, self.tgt_lang):
            edit.setMaximumWidth(80)
        self.src_col, self.tgt_col = QSpinBox(), QSpinBox()
        for spin, value in ((self.src_col, 1), (self.tgt_col, 0)):
            spin.setRange(0, 2)
            spin.setValue(value)
        self.lenient = QCheckBox("Lenient: replace bad bytes, keep pairs with an empty side "
                                 "(reported as warnings)")

    def _build_preview(self) -> None:
        """The first lines of the first file (as text, or a TSV file's two columns as a
        table) and what its columns were guessed to be."""
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setFont(QFont("DejaVu Sans Mono", 9))
        self.preview.setMinimumHeight(150)
        self.preview_table = QTableWidget(0, 2)  # a TSV file: source and target columns
        self.preview_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.preview_table.horizontalHeader().setStretchLastSection(True)
        self.preview_table.setMinimumHeight(150)
        self.guess_label = QLabel()  # what the columns were guessed to be, or a warning
        self.guess_label.setWordWrap(True)
        self.guess: ColumnGuess | None = None

    def _form(self) -> QFormLayout:
        """The fields in rows, the guess under the TSV columns; each change followed."""
        form = QFormLayout()
        form.addRow("Format", self.format)
        for label, picker in zip(self.picker_labels, self.pickers, strict=True):
            form.addRow(label, picker)
            picker.edit.textChanged.connect(self._on_path_changed)
        langs = QHBoxLayout()
        langs.addWidget(QLabel("source"))
        langs.addWidget(self.src_lang)
        langs.addSpacing(12)
        langs.addWidget(QLabel("target"))
        langs.addWidget(self.tgt_lang)
        langs.addStretch(1)
        form.addRow("Languages", langs)
        cols = QHBoxLayout()
        self.cols_widgets = [QLabel("source column"), self.src_col, QLabel("target column"),
                             self.tgt_col]
        for w in self.cols_widgets:
            cols.addWidget(w)
        cols.addStretch(1)
        form.addRow("TSV columns", cols)
        self.cols_row_label = form.labelForField(cols)
        form.addRow("", self.guess_label)
        for spin in (self.src_col, self.tgt_col):
            spin.valueChanged.connect(self._on_columns_changed)
        for edit in (self.src_lang, self.tgt_lang):
            edit.textChanged.connect(self._languages_changed)
        form.addRow("Name", self.name)
        form.addRow("", self.lenient)
        return form

    def _buttons(self) -> QDialogButtonBox:
        """Import (it checks the form first: accept) and Cancel."""
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        self.import_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.import_button.setText("Import")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        return buttons

    def accept(self) -> None:
        """Close with the answer unless the form has a problem (then it stays open and says
        which); the languages are remembered for the next import."""
        problem = self.problem()
        if problem is not None:  # the dialog stays open with what the user typed
            workers.show_error(self, "Import corpus", problem)
            return
        settings = QSettings()  # the next import offers this pair
        settings.setValue("import/src_lang", self.src_lang.text().strip())
        settings.setValue("import/tgt_lang", self.tgt_lang.text().strip())
        super().accept()

    def problem(self) -> str | None:
        """Why the form cannot be imported as it stands (a required file empty, missing
        or a folder; a language code empty or spaced), else None."""
        roles = FILE_ROLES.get(self.fmt(), [("File", True)])
        for (label, required), picker in zip(roles, self.pickers, strict=False):
            path = picker.path()
            if not path:
                if required:
                    return f"{label}: choose a file (Browse\u2026) or type its path."
            elif not Path(path).exists():
                return f"{label}: {path}: no such file; check the path."
            elif Path(path).is_dir():
                return f"{label}: {path}: is a folder; choose a file in it."
        try:
            check_language_codes(self.src_lang.text().strip(), self.tgt_lang.text().strip())
        except ConfigError as exc:
            return str(exc)
        return None

    def fmt(self) -> str:
        """The reader format chosen (core.data.readers.FORMATS)."""
        return self.format.currentData()

    def _update_roles(self) -> None:
        roles = FILE_ROLES.get(self.fmt(), [("File", True)])
        for i, (label, picker) in enumerate(zip(self.picker_labels, self.pickers, strict=True)):
            visible = i < len(roles)
            label.setVisible(visible)
            picker.setVisible(visible)
            if visible:
                label.setText(roles[i][0] + ("" if roles[i][1] else " (optional)"))
        is_tsv = self.fmt() == "tsv"
        for w in self.cols_widgets:
            w.setVisible(is_tsv)
        if self.cols_row_label is not None:
            self.cols_row_label.setVisible(is_tsv)
        self._update_preview()

    def _on_path_changed(self) -> None:
        self._columns_by_user = False  # a new file: its columns are guessed afresh
        self._update_preview()

    @property
    def reading_preview(self) -> bool:
        """Whether the preview (and the TSV column guess) of the file is being read."""
        return self.preview_job is not None and not self.preview_job.done

    def _update_preview(self) -> None:
        """Read the first lines of the first file (and guess a TSV file's columns for
        the languages) in a job; Import waits for it, since the guess may set the
        columns. Without a file, the preview is empty."""
        is_tsv = self.fmt() == "tsv"
        self.preview.setVisible(not is_tsv)
        self.preview_table.setVisible(is_tsv)
        self.guess_label.setVisible(is_tsv)
        path = self.pickers[0].path()
        if not path:
            self.preview_job = None
            self._show_preview(ImportPreview([]))
            return
        src, tgt = self.src_lang.text().strip(), self.tgt_lang.text().strip()
        self.preview_job = self.jobs.submit(
            preview_job, path, (src, tgt) if is_tsv else None,
            (self.src_col.value(), self.tgt_col.value()), name="Preview import")
        self.preview_job.finished.connect(self._preview_read)
        self.preview_job.failed.connect(self._preview_failed)  # the manager shows it
        self.import_button.setEnabled(False)
        self.preview.setPlainText("Reading\u2026")

    def _preview_read(self, preview: ImportPreview) -> None:
        if self.sender() is self.preview_job:  # else a file or language changed since
            self._show_preview(preview)

    def _preview_failed(self, message: str, _tb: str) -> None:
        if self.sender() is self.preview_job:
            self._show_preview(ImportPreview(f"cannot preview: {message}"))

    def _show_preview(self, preview: ImportPreview) -> None:
        """Show the preview read; a sure guess sets the column boxes unless the user set
        them for this file."""
        self._lines, self.guess = preview.lines, preview.guess
        self.import_button.setEnabled(True)
        if self.guess is not None and self.guess.sure and not self._columns_by_user:
            self._setting_columns = True
            try:
                self.src_col.setValue(self.guess.src_col)
                self.tgt_col.setValue(self.guess.tgt_col)
            finally:
                self._setting_columns = False
        if self.fmt() == "tsv":
            self._show_columns()
        elif isinstance(self._lines, str):
            self.preview.setPlainText(self._lines)
        else:
            self.preview.setPlainText("".join(f"{i + 1:>4}  {line}\n"
                                              for i, line in enumerate(self._lines)))

    def _languages_changed(self) -> None:
        if self.fmt() == "tsv":  # the columns are guessed for the languages
            self._update_preview()
        else:
            self._show_columns()

    def _on_columns_changed(self) -> None:
        if not self._setting_columns:
            self._columns_by_user = True
        self._show_columns()

    def _show_columns(self) -> None:
        """The guess (or its warning, or a contradiction of the user's columns) and the
        preview table: source column first, under the language names."""
        src_col, tgt_col = self.src_col.value(), self.tgt_col.value()
        guess = self.guess
        if guess is None:
            self.guess_label.setText("")
        elif not guess.sure:
            self.guess_label.setText("Warning: " + guess.unsure_warning("the TSV columns"))
        elif (warning := guess.contradiction(src_col, tgt_col)) is not None:
            self.guess_label.setText("Warning: " + warning)
        else:
            self.guess_label.setText("Columns guessed from the text: " + guess.describe())
        src, tgt = self.src_lang.text().strip(), self.tgt_lang.text().strip()
        self.preview_table.setHorizontalHeaderLabels([
            f"{language_name(src)}: source, column {src_col}",
            f"{language_name(tgt)}: target, column {tgt_col}"])
        lines = self._lines
        if isinstance(lines, str):
            lines = [lines]  # why it cannot be read, in the first cell
        self.preview_table.setRowCount(len(lines))
        for row, line in enumerate(lines):
            cols = line.split("\t")
            for k, col in enumerate((src_col, tgt_col)):
                text = cols[col] if col < len(cols) else ""
                self.preview_table.setItem(row, k, QTableWidgetItem(text))

    def request(self) -> dict[str, Any]:
        """What to import: format, paths, languages and reader options."""
        n = len(FILE_ROLES.get(self.fmt(), [("File", True)]))
        paths = [p.path() for p in self.pickers[:n]]
        while paths and not paths[-1] and not FILE_ROLES[self.fmt()][len(paths) - 1][1]:
            paths.pop()
        options: dict[str, Any] = {"lenient": self.lenient.isChecked()}
        if self.fmt() == "tsv":
            options.update(src_col=self.src_col.value(), tgt_col=self.tgt_col.value())
        name = self.name.text().strip() or (Path(paths[0]).stem if paths and paths[0] else "corpus")
        return {"fmt": self.fmt(), "paths": paths, "src_lang": self.src_lang.text().strip(),
                "tgt_lang": self.tgt_lang.text().strip(), "options": options, "name": name}

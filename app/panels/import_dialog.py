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
from core.data.langid import ColumnGuess, guess_tsv_columns, language_name
from core.errors import ConfigError
from core.services.corpora import check_language_codes

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
PREVIEW_LINES = 8


class PathPicker(QWidget):
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
    def __init__(self, formats: tuple[str, ...], parent: QWidget | None = None,
                 languages: tuple[str, str] | None = None):
        """`languages`: the pair to offer when no import was made yet (see last_languages)."""
        super().__init__(parent)
        self.setWindowTitle("Import corpus")
        self.setMinimumWidth(640)
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
        self._columns_by_user = False  # the user set the TSV columns for this file
        self._setting_columns = False

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
            edit.textChanged.connect(self._update_guess)
        form.addRow("Name", self.name)
        form.addRow("", self.lenient)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Import")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Preview (first lines of the first file)"))
        layout.addWidget(self.preview, 1)
        layout.addWidget(self.preview_table, 1)
        layout.addWidget(buttons)
        self.format.currentIndexChanged.connect(self._update_roles)
        self._update_roles()

    def accept(self) -> None:
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

    def _update_preview(self) -> None:
        """The first lines of the first file: raw, or a TSV file's columns under their
        languages (after guessing the columns)."""
        is_tsv = self.fmt() == "tsv"
        self.preview.setVisible(not is_tsv)
        self.preview_table.setVisible(is_tsv)
        self.guess_label.setVisible(is_tsv)
        if is_tsv:
            self._update_guess()
            return
        path = self.pickers[0].path()
        if not path:
            self.preview.setPlainText("")
            return
        lines = self._first_lines(path)
        if isinstance(lines, str):
            self.preview.setPlainText(lines)
            return
        text = "".join(f"{i + 1:>4}  {line}\n" for i, line in enumerate(lines))
        self.preview.setPlainText(text)

    @staticmethod
    def _first_lines(path: str) -> list[str] | str:
        """The first PREVIEW_LINES lines of `path`, or why it cannot be read."""
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines = [next(handle, None) for _ in range(PREVIEW_LINES)]
        except OSError as exc:
            return f"cannot read {path}: {exc.strerror}"
        return [line.rstrip("\r\n") for line in lines if line is not None]

    def _tsv_file(self) -> str | None:
        """The TSV file to guess and preview: an existing file, else None."""
        path = self.pickers[0].path()
        return path if self.fmt() == "tsv" and path and Path(path).is_file() else None

    def _update_guess(self) -> None:
        """Guess the TSV file's columns for the languages; a sure guess sets the column
        boxes unless the user set them for this file. Then show the columns."""
        path = self._tsv_file()
        src, tgt = self.src_lang.text().strip(), self.tgt_lang.text().strip()
        self.guess = None
        if path and src and tgt:
            current = (self.src_col.value(), self.tgt_col.value())
            try:
                self.guess = guess_tsv_columns(path, src, tgt, default=current)
            except OSError:
                self.guess = None  # the preview says why it cannot be read
        if self.guess is not None and self.guess.sure and not self._columns_by_user:
            self._setting_columns = True
            try:
                self.src_col.setValue(self.guess.src_col)
                self.tgt_col.setValue(self.guess.tgt_col)
            finally:
                self._setting_columns = False
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
        path = self.pickers[0].path()
        lines = self._first_lines(path) if path and self.fmt() == "tsv" else []
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

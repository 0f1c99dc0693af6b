"""Gold sets of the workspace: the list (languages, pairs, sure and possible links), import
from three files (as `align --gold-set NAME --gold-src/--gold-tgt/--gold-links` does:
Pharaoh, TALP or WPT links, 1-based, written target first) and removal. Importing checks
every link against its sentence (core.evaluate.goldsets); a file with a problem is named
in an error and the import form stays open with what the user typed."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.panels.import_dialog import PathPicker
from core.errors import WorkbenchError
from core.evaluate.goldsets import (
    FORMATS,
    delete_gold_set,
    import_gold_set,
    list_gold_sets,
    read_gold_meta,
)
from core.workspace.store import Workspace

FORMAT_LABELS = {"pharaoh": "Pharaoh (0-0 1-2 …; '?' or 'p' marks a possible link)",
                 "talp": "TALP (1-based, 'S' / 'P' links, one line per pair)",
                 "wpt": "WPT shared task (sentence id, word ids, S / P)"}
COLUMNS = ("Name", "Languages", "Pairs", "Sure links", "Possible links")


class GoldImportDialog(QDialog):
    """Three files, their link format, the set's name and languages; accept() imports
    into `workspace` and stays open on a problem (shown, the form kept)."""

    def __init__(self, workspace: Workspace, languages: tuple[str, str] = ("", ""),
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Import gold alignments")
        self.setMinimumWidth(620)
        self.workspace = workspace
        self.src, self.tgt, self.links = PathPicker(), PathPicker(), PathPicker()
        self.format = QComboBox()
        for fmt in FORMATS:
            self.format.addItem(FORMAT_LABELS.get(fmt, fmt), fmt)
        self.one_based = QCheckBox("Link indices start at 1")
        self.one_based.setToolTip("Pharaoh links only: TALP and WPT links are 1-based by definition")
        self.format.currentIndexChanged.connect(
            lambda _=None: self.one_based.setEnabled(self.format.currentData() == "pharaoh"))
        self.swap = QCheckBox("Links are written target first (e.g. English first)")
        self.name = QLineEdit()
        self.name.setPlaceholderText("letters, digits, '.', '_' or '-'")
        self.src_lang, self.tgt_lang = QLineEdit(languages[0]), QLineEdit(languages[1])
        for edit, example in ((self.src_lang, "e.g. en"), (self.tgt_lang, "e.g. fr")):
            edit.setMaximumWidth(80)
            edit.setPlaceholderText(example)
        form = QFormLayout()
        form.addRow("Source sentences (tokenised)", self.src)
        form.addRow("Target sentences (tokenised)", self.tgt)
        form.addRow("Links", self.links)
        form.addRow("Link format", self.format)
        form.addRow("", self.one_based)
        form.addRow("", self.swap)
        langs = QHBoxLayout()
        for label, edit in (("source", self.src_lang), ("target", self.tgt_lang)):
            langs.addWidget(QLabel(label))
            langs.addWidget(edit)
        langs.addStretch(1)
        form.addRow("Languages", langs)
        form.addRow("Name", self.name)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Import")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.imported: str | None = None

    def accept(self) -> None:
        """Import the set; on a problem say which (file, line, link) and stay open."""
        paths = (self.src.path(), self.tgt.path(), self.links.path())
        if not all(paths):
            workers.show_error(self, "Import gold alignments",
                               "Choose the source sentences, the target sentences and the links.")
            return
        langs = (self.src_lang.text().strip(), self.tgt_lang.text().strip())
        if not all(langs):
            workers.show_error(self, "Import gold alignments",
                               "Give the languages of the two sides (e.g. en and fr): the "
                               "Attention and Evaluation screens match gold sets to runs by them.")
            return
        name = self.name.text().strip()
        try:
            import_gold_set(self.workspace, name, *paths, fmt=self.format.currentData(),
                            one_based=self.one_based.isEnabled() and self.one_based.isChecked(),
                            swap=self.swap.isChecked(),
                            src_lang=langs[0], tgt_lang=langs[1])
        except (WorkbenchError, OSError, UnicodeError) as exc:  # the user's files or name
            workers.show_error(self, "Import gold alignments", str(exc))
            return
        self.imported = name
        super().accept()


class GoldSetsDialog(QDialog):
    """The workspace's gold sets, with Import… and Remove; `changed` after either,
    `imported_set` (its name) after an import."""

    changed = Signal()
    imported_set = Signal(str)

    def __init__(self, workspace: Workspace, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Gold alignment sets")
        self.setMinimumSize(560, 300)
        self.workspace = workspace
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.import_button = QPushButton("Import…")
        self.remove_button = QPushButton("Remove")
        self.import_button.clicked.connect(self.import_set)
        self.remove_button.clicked.connect(self.remove_selected)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(self.import_button)
        row.addWidget(self.remove_button)
        row.addStretch(1)
        row.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        self.refresh()

    def refresh(self) -> None:
        """One row per stored set, from its meta.json."""
        names = list_gold_sets(self.workspace)
        self.table.setRowCount(len(names))
        for row, name in enumerate(names):
            try:
                meta = read_gold_meta(self.workspace, name)
                langs = " → ".join(meta.get(k) or "?" for k in ("src_lang", "tgt_lang"))
            except (WorkbenchError, OSError) as exc:  # listed, so that Remove can take it
                meta, langs, problem = {}, "damaged", str(exc)
            else:
                problem = ""
            for col, value in enumerate((name, langs, meta.get("sentences"), meta.get("sure"),
                                         meta.get("possible"))):
                item = QTableWidgetItem("–" if value is None else str(value))
                item.setToolTip(problem)
                self.table.setItem(row, col, item)
        self._update_buttons()

    def selected_name(self) -> str | None:
        """The name of the set in the first selected row, None when no row is selected."""
        rows = {i.row() for i in self.table.selectedItems()}
        return self.table.item(min(rows), 0).text() if rows else None

    def _update_buttons(self) -> None:
        self.remove_button.setEnabled(self.selected_name() is not None)

    def import_set(self) -> str | None:
        """The import form; the new set's name when one was imported."""
        dialog = GoldImportDialog(self.workspace, parent=self)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        self.refresh()
        self.changed.emit()
        self.imported_set.emit(dialog.imported)
        return dialog.imported

    def remove_selected(self) -> bool:
        """Remove the selected set after the user says yes (the stored copy only: the files
        it was imported from stay where they are)."""
        name = self.selected_name()
        if name is None or QMessageBox.question(
                self, "Remove gold set",
                f"Remove gold set {name!r} from this workspace?\n(The files it was imported "
                "from are not touched; AER already stored in evaluations stays.)",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No) != QMessageBox.StandardButton.Yes:
            return False
        try:
            delete_gold_set(self.workspace, name)
        except (WorkbenchError, OSError) as exc:
            workers.show_error(self, "Remove gold set", str(exc))
            return False
        self.refresh()
        self.changed.emit()
        return True

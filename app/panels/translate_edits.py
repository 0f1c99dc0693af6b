"""The Translate screen's target edits (TargetEdits, a mixin of TranslatePanel): a row
whose target changes (an edit, an undo or redo) is compared with the baseline again and
its output checks are made again (core.evaluate.output_checks); which rows hold edits not
exported yet, and the question before an action that would discard them."""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QTableWidgetItem

from app.panels.translate_checks import show_warnings
from app.panels.translate_compare import TARGET, refresh_row
from core.evaluate.output_checks import check_translation, check_translations, typical_ratio


class TargetEdits:
    """The edits part of TranslatePanel: it reads the panel's table, comparison,
    translations, translated_langs, output_warnings and the target column as the screen
    last wrote it (_written) and last exported it (_exported)."""

    def _target_edited(self, item: QTableWidgetItem) -> None:
        if item.column() == TARGET:
            self._target_changed(item.row())

    def _target_changed(self, row: int) -> None:
        """Row `row`'s target changed (an edit, an undo or redo): in a comparison it is
        compared with the baseline again (its highlights and ≠ mark follow), and its
        output checks are made again."""
        if self.comparison is not None:
            self.table.blockSignals(True)
            try:
                refresh_row(self.table, row)
            finally:
                self.table.blockSignals(False)
        if row < len(self.output_warnings):
            src_lang, tgt_lang = self.translated_langs
            self.output_warnings[row] = check_translation(
                self.sources()[row], self.targets()[row], src_lang, tgt_lang,
                self._usual_ratio)
            show_warnings(self.table, row, TARGET, self.output_warnings[row])

    def _check_outputs(self) -> int:
        """Flag the rows whose output may invent or drop content
        (core.evaluate.output_checks); returns how many are flagged."""
        sources, targets = self.sources(), self.targets()[:len(self.translations)]
        sources = sources[:len(targets)]
        src_lang, tgt_lang = self.translated_langs
        self._usual_ratio = typical_ratio(sources, targets, src_lang, tgt_lang)
        self.output_warnings = check_translations(sources, targets, src_lang, tgt_lang)
        for row, found in enumerate(self.output_warnings):
            show_warnings(self.table, row, TARGET, found)
        return sum(bool(found) for found in self.output_warnings)

    def edited_rows(self) -> list[int]:
        """The rows whose target the user changed from what the screen wrote there, and
        did not export since."""
        exported = self._exported if len(self._exported) == len(self._written) else None
        return [row for row, (written, shown) in enumerate(zip(self._written, self.targets(),
                                                                strict=True))
                if written != shown and (exported is None or exported[row] != shown)]

    def may_discard_edits(self, action: str) -> bool:
        """Whether `action`, which replaces the targets, may go on: yes when the user edited
        none, else only when they agree to discard their edits (Yes/No, default No)."""
        edited = self.edited_rows()
        if not edited:
            return True
        n, plural = len(edited), "s" if len(edited) > 1 else ""
        rows = ", ".join(str(row + 1) for row in edited[:5]) + (", …" if n > 5 else "")
        return QMessageBox.question(
            self, "Discard edited translations?",
            f"You edited the target of {n} sentence{plural} (row{plural} {rows}). {action} "
            f"would lose {'them' if plural else 'it'}.\nDiscard your edits?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No) == QMessageBox.StandardButton.Yes

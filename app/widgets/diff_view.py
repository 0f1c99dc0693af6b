"""Word-level differences between two translations of one sentence, and a table delegate
that draws a cell's text with its differing words highlighted.

The words are the whitespace-separated words of the shown (detokenised) text, so two
models with different vocabularies or subword splits compare on what the user reads.
"""
from __future__ import annotations

import html
from difflib import SequenceMatcher

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

#: item data role holding (plain text, rich text): the rich text is drawn only while the
#: item's text is still the plain text it was made for (an edit shows the edit, plain)
RICH_ROLE = Qt.ItemDataRole.UserRole + 7

# (text, background) of words only the chosen model wrote / only the baseline wrote; a
# tinted background keeps them readable on a selected (dark) row too
ADDED = ("#14532d", "#d3f2db")
REMOVED = ("#7f1d1d", "#fadcd9")


def words(text: str) -> list[str]:
    """`text` split at white space, the unit the differences are marked in."""
    return text.split()


def changed_words(a: list[str], b: list[str]) -> tuple[list[bool], list[bool]]:
    """Which words of `a` and of `b` are not part of difflib's matching blocks
    (replaced, deleted or inserted), position by position."""
    in_a, in_b = [True] * len(a), [True] * len(b)
    for block in SequenceMatcher(a=a, b=b, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            in_a[block.a + k] = in_b[block.b + k] = False
    return in_a, in_b


def highlight(tokens: list[str], marks: list[bool], colours: tuple[str, str]) -> str:
    """Rich text: the tokens joined by spaces, the marked ones bold in colours
    (text, background)."""
    style = f"color:{colours[0]}; background-color:{colours[1]}"
    parts: list[str] = []
    run: list[str] = []  # consecutive marked tokens share one span (tinted spaces too)
    for token, marked in zip([*tokens, ""], [*marks, False], strict=True):
        if marked:
            run.append(html.escape(token))
            continue
        if run:
            parts.append(f'<b style="{style}">{" ".join(run)}</b>')
            run = []
        if token:
            parts.append(html.escape(token))
    return " ".join(parts)


def diff_pair(ours: str, theirs: str) -> tuple[str, str, bool]:
    """(rich text of `ours` with its own words highlighted, the same for `theirs`,
    whether the two differ word-wise)."""
    a, b = words(ours), words(theirs)
    marks_a, marks_b = changed_words(a, b)
    return highlight(a, marks_a, ADDED), highlight(b, marks_b, REMOVED), a != b


class RichTextDelegate(QStyledItemDelegate):
    """Draws an item's RICH_ROLE text (when it still matches the item's plain text) as
    wrapped rich text; everything else, editing included, is the default delegate's."""

    def _document(self, index: QModelIndex | QPersistentModelIndex, width: float,
                  option: QStyleOptionViewItem) -> QTextDocument | None:
        rich = index.data(RICH_ROLE)
        if not rich or rich[0] != index.data(Qt.ItemDataRole.DisplayRole):
            return None
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(2)
        doc.setHtml(rich[1])
        doc.setTextWidth(max(10.0, width))
        return doc

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        doc = self._document(index, opt.rect.width(), opt)
        if doc is None:
            super().paint(painter, option, index)
            return
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        context = QAbstractTextDocumentLayout.PaintContext()
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        context.palette.setColor(QPalette.ColorRole.Text, opt.palette.color(role))
        painter.save()
        painter.translate(opt.rect.topLeft())
        painter.setClipRect(QRectF(0, 0, opt.rect.width(), opt.rect.height()))
        doc.documentLayout().draw(painter, context)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem,
                 index: QModelIndex | QPersistentModelIndex) -> QSize:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        doc = self._document(index, opt.rect.width() if opt.rect.width() > 0 else 300, opt)
        if doc is None:
            return super().sizeHint(option, index)
        return QSize(int(doc.idealWidth()), int(doc.size().height()) + 2)

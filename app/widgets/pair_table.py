"""A table model over a corpus's sentence pairs that stays fast for a million rows.

No per-row items: `data()` reads the pair on demand. Filtering keeps a list of the
matching row indices; for a big corpus it is computed in chunks from a zero-delay
timer, so the event loop keeps running while the filter advances.
Documents appear as a group column; rows alternate shading by document.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont

CHUNK = 50_000  # rows scanned per event-loop turn while filtering
_ROOT = QModelIndex()


class PairLike(Protocol):
    """What the table shows of a pair: its source and target text, its document id (None
    outside documents) and its line in the corpus."""
    src: str
    tgt: str
    doc_id: str | None
    line: int


ModelIndex = QModelIndex | QPersistentModelIndex


class PairTableModel(QAbstractTableModel):
    """A corpus's pairs as a table model (#, document, source, target) with a search filter run
    in slices, so a big corpus never freezes the screen."""
    COLUMNS = ("#", "Document", "Source", "Target")
    filter_finished = Signal(int)  # number of matching rows

    def __init__(self, pairs: Sequence[PairLike] = (), parent=None):
        super().__init__(parent)
        self._pairs: Sequence[PairLike] = ()
        self._rows: list[int] | range = range(0)  # visible row -> pair index
        self._doc_shade: bytearray = bytearray()  # pair index -> 0/1 per document
        self._doc_start: bytearray = bytearray()  # 1 where a new document begins
        self._pending: tuple[str, int, list[int]] | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._filter_chunk)
        self.filter_text = ""
        self._shade = QBrush(QColor(244, 246, 250))
        self._bold = QFont()
        self._bold.setBold(True)
        self.set_pairs(pairs)

    # --- data ---------------------------------------------------------------------
    def set_pairs(self, pairs: Sequence[PairLike]) -> None:
        """Show `pairs` (the filter cleared)."""
        self._timer.stop()
        self._pending = None
        self.beginResetModel()
        self._pairs = pairs
        self._rows = range(len(pairs))
        self.filter_text = ""
        self._doc_shade, self._doc_start = _document_groups(pairs)
        self.endResetModel()

    def pair(self, row: int) -> PairLike:
        """The pair shown at `row`."""
        return self._pairs[self._rows[row]]

    def pair_index(self, row: int) -> int:
        """The corpus index of the pair shown at `row`."""
        return self._rows[row]

    def rowCount(self, parent: ModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: ModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.COLUMNS[section]
        return None

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        i = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            pair = self._pairs[i]
            if col == 0:
                return str(i + 1)
            if col == 1:
                return pair.doc_id or ""
            return pair.src if col == 2 else pair.tgt
        if role == Qt.ItemDataRole.ToolTipRole and col in (2, 3):
            pair = self._pairs[i]
            return f"line {pair.line}" if pair.line else None
        if role == Qt.ItemDataRole.BackgroundRole and self._doc_shade and self._doc_shade[i]:
            return self._shade
        if role == Qt.ItemDataRole.FontRole and col == 1 and self._doc_start and self._doc_start[i]:
            return self._bold
        if role == Qt.ItemDataRole.ForegroundRole and col in (0, 1):
            return QBrush(QColor(110, 110, 110))
        return None

    # --- filtering ------------------------------------------------------------------
    def set_filter(self, text: str) -> None:
        """Keep the rows whose source or target contains `text` (case-insensitive).
        Small corpora are filtered at once; big ones chunk by chunk (filter_finished
        is emitted when the row list is complete)."""
        self._timer.stop()
        needle = text.casefold().strip()
        self.filter_text = needle
        if not needle:
            self._apply(range(len(self._pairs)))
            return
        self._pending = (needle, 0, [])
        if len(self._pairs) <= CHUNK:
            self._filter_chunk()
        else:
            self._timer.start()

    @property
    def filtering(self) -> bool:
        """Whether a search is still going through the pairs."""
        return self._pending is not None

    def _filter_chunk(self) -> None:
        if self._pending is None:
            self._timer.stop()
            return
        needle, start, found = self._pending
        stop = min(len(self._pairs), start + CHUNK)
        pairs = self._pairs
        for i in range(start, stop):
            pair = pairs[i]
            if needle in pair.src.casefold() or needle in pair.tgt.casefold():
                found.append(i)
        if stop >= len(pairs):
            self._timer.stop()
            self._pending = None
            self._apply(found)
        else:
            self._pending = (needle, stop, found)

    def _apply(self, rows: list[int] | range) -> None:
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()
        self.filter_finished.emit(len(rows))


def _document_groups(pairs: Sequence[PairLike]) -> tuple[bytearray, bytearray]:
    """Per pair: shade parity of its document and whether it starts one (empty
    arrays when the corpus has no document ids)."""
    if not len(pairs) or all(getattr(p, "doc_id", None) is None for p in pairs[:1000]):
        return bytearray(), bytearray()
    shade, start = bytearray(len(pairs)), bytearray(len(pairs))
    parity, previous = 1, object()
    for i, pair in enumerate(pairs):
        if pair.doc_id != previous:
            parity ^= 1
            start[i] = 1
            previous = pair.doc_id
        shade[i] = parity
    return shade, start

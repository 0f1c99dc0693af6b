"""StatusLabel: a one-line status message that never widens its window. A text longer
than the label is drawn elided at the end; the full text is the tooltip and goes to the
job log (the "app.jobs" logger, where job failures are logged too)."""
from __future__ import annotations

import logging

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

log = logging.getLogger("app.jobs")
PREFERRED_WIDTH = 360  # what the label asks for; it takes any width its layout gives


class StatusLabel(QLabel):
    """A QLabel for status lines: `text()` is the full message, the drawing is elided."""

    def __init__(self, text: str = "", parent: QWidget | None = None, logged: bool = True):
        """`logged`: write each message to the job log (off for a progress line that
        changes several times a second; its job's end and failure are logged anyway)."""
        super().__init__(parent)
        self.logged = logged
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        """Show `text` (elided to one line); the whole of it in the tooltip."""
        super().setText(text)
        self.setToolTip(text)
        if self.logged and text.strip():
            log.info("%s", text)

    def shown_text(self) -> str:
        """What is drawn: the message on one line, elided to the label's width."""
        one_line = " ".join(self.text().split())
        return self.fontMetrics().elidedText(one_line, Qt.TextElideMode.ElideRight,
                                             max(0, self.contentsRect().width()))

    def sizeHint(self) -> QSize:  # noqa: N802
        hint = super().sizeHint()
        return QSize(min(hint.width(), PREFERRED_WIDTH), self.fontMetrics().height() + 4)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(0, self.fontMetrics().height() + 4)

    def paintEvent(self, event) -> None:  # noqa: N802
        painter = QPainter(self)
        self.style().drawItemText(painter, self.contentsRect(),
                                  int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                                  self.palette(), self.isEnabled(), self.shown_text(),
                                  QPalette.ColorRole.WindowText)
        painter.end()

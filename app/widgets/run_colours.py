"""One colour per run, everywhere: training curves, the run pickers, the Attention
screen's heatmap titles, the Evaluation charts and the figures exported from them. A
run's colour follows from its id, so it is the same in every screen and session."""
from __future__ import annotations

import re

from PySide6.QtGui import QColor, QIcon, QPixmap

# calm, distinguishable colours (colour-blind friendly order)
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#F0E442"]
_IDS = re.compile(r"(?:^|\+\s*)(\d+):")  # "3: name" or "3: a + 5: b" (an ensemble)


def run_colour(run_id: int) -> str:
    """Run 1 gets the first colour, run 2 the second, ... (wrapping after 8)."""
    return PALETTE[(int(run_id) - 1) % len(PALETTE)]


def label_colour(label: str) -> str | None:
    """The colour of a run label "<id>: <name>"; an ensemble "<id>: a + <id>: b" gets a
    darker shade of its first member's; None when the label names no run."""
    ids = [int(i) for i in _IDS.findall(label)]
    if not ids:
        return None
    colour = run_colour(ids[0])
    return colour if len(ids) == 1 else QColor(colour).darker(150).name()


def swatch(colour: str, size: int = 12) -> QIcon:
    """A square of `colour`, for list and table rows."""
    pixmap = QPixmap(size, size)
    pixmap.fill(QColor(colour))
    return QIcon(pixmap)

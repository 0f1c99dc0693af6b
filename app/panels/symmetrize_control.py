"""The Attention screen's "Symmetrise with" control: a reverse-direction run (only runs of
model 1's reversed language pair are offered) and a heuristic (core.evaluate.symmetrize);
the checked runs of model 1's pair then show their links symmetrised with that run's
(core.services.attention_set.Symmetrization: the links `align --reverse-run R
--symmetrize H` scores)."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from core.evaluate.symmetrize import HEURISTICS
from core.services.attention_set import Symmetrization, reverse_pair_runs

NONE = "— none —"
TIP = ("Symmetrise the links of the checked runs with those of a run translating the other "
       "way round (each read as the screen reads it), as align --reverse-run does: the "
       "heatmaps' links, their AER and a whole-set row follow")


class SymmetrizeControl(QWidget):
    """'Symmetrise with' [reverse run] [heuristic]."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.run = QComboBox()
        self.run.setToolTip(TIP)
        self.heuristic = QComboBox()
        self.heuristic.addItems(HEURISTICS)
        self.heuristic.setCurrentText("grow-diag-final-and")
        self.run.currentIndexChanged.connect(lambda _=None: self.changed.emit())
        self.heuristic.currentIndexChanged.connect(lambda _=None: self.changed.emit())
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Symmetrise with"))
        layout.addWidget(self.run, 1)
        layout.addWidget(self.heuristic)
        self.langs: dict[int, tuple[str, str]] = {}

    def offer(self, langs: dict[int, tuple[str, str]], names: dict[int, str],
              model_1: int | None) -> None:
        """Offer the runs of model 1's reversed pair (`langs`: each run's languages);
        the choice is kept while it is still offered."""
        self.langs = dict(langs)
        keep = self.run.currentData()
        runs = reverse_pair_runs(langs, model_1) if model_1 is not None else []
        self.run.blockSignals(True)
        self.run.clear()
        self.run.addItem(NONE, None)
        for r in runs:
            self.run.addItem(f"{r}: {names.get(r, '?')}", r)
        self.run.setCurrentIndex(max(0, self.run.findData(keep)) if keep in runs else 0)
        self.run.blockSignals(False)
        self.run.setEnabled(bool(runs))
        if keep is not None and keep not in runs:
            self.changed.emit()

    def choice(self, checked: list[int]) -> Symmetrization | None:
        """The checked runs of the chosen run's reversed pair, to symmetrise with it;
        None when no run is chosen."""
        reverse = self.run.currentData()
        if reverse is None:
            return None
        forward = tuple(r for r in checked if r in reverse_pair_runs(self.langs, reverse))
        return Symmetrization(reverse, self.run.currentText(), self.heuristic.currentText(),
                              forward)

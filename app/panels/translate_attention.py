"""The Translate screen's view of the selected sentence: its attention heatmap (with the
predicted position p_t and its window for local-p), the gate strips of context models
(the translation's, and a compared context-model baseline's) and the note under them."""
from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.widgets.gate_strip import GateStrip
from app.widgets.heatmap import AttentionHeatmap
from app.widgets.status_label import StatusLabel
from core.services.translation import Comparison


class SentenceAttention(QWidget):
    """The heatmap (and its strips) over the note; `show_sentence` draws one translated
    row, `clear` empties it."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.heatmap = AttentionHeatmap(title="Attention of the selected sentence")
        self.gate_strip = GateStrip(self.heatmap)  # context models' lambda, under the heatmap
        # ... and a compared baseline's, when it is a context model too
        self.baseline_gate_strip = GateStrip(self.heatmap, row=2, label="baseline \u03bb")
        self.note = StatusLabel(" ")
        self.note.setObjectName("hint")
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.heatmap, 1)
        box.addWidget(self.note)

    def clear(self) -> None:
        """Nothing shown: no matrix, no strips, a blank note."""
        self.heatmap.clear()
        self.gate_strip.clear()
        self.baseline_gate_strip.clear()
        self.note.setText(" ")  # the previous rows' "sentence 9: log p = ..."

    def show_sentence(self, row: int, tr: Any, window: int,
                      comparison: Comparison | None = None) -> None:
        """Draw translation `tr` of row `row` (a core.infer.translate.Translation:
        attention (target + 1) x source, gates, positions): its matrix with the EOS row,
        its gates, its p_t line in a band of `window` words either side; in a
        `comparison`, the baseline's gates too. The note says what is drawn."""
        tgt_tokens = list(tr.target_tokens) + ["</s>"]  # the last attention row is EOS
        self.heatmap.set_matrix(tr.attention, tr.source_tokens, tgt_tokens)
        notes = [f"sentence {row + 1}: log p = {tr.log_prob:.2f}"]
        if getattr(tr, "gates", None) is not None:
            self.gate_strip.set_gates(tr.gates, tr.source_tokens)
            notes.append("strip: gate \u03bb per source word (1 = the sentence itself, "
                         "0 = the context)")
        else:
            self.gate_strip.clear()
        notes += self._show_baseline_gates(row, tr, comparison)
        if tr.positions is not None:
            self.heatmap.set_positions(np.asarray(tr.positions, dtype=float), window)
            notes.append(f"green line: predicted position p_t, band: window D = {window}")
        if tr.unk_report is not None and getattr(tr.unk_report, "replaced", None):
            notes.append(f"unknown words replaced: {len(tr.unk_report.replaced)}")
        self.note.setText(" · ".join(notes))

    def _show_baseline_gates(self, row: int, tr: Any, comparison: Comparison | None
                             ) -> list[str]:
        """In a comparison with a context-model baseline: its gates in the second strip,
        when it tokenised the source as the shown model did (the columns must match).
        -> notes for the caption."""
        base = comparison.baseline[row] if comparison is not None \
            and row < len(comparison.baseline) else None
        gates = getattr(base, "gates", None)
        if gates is None:
            self.baseline_gate_strip.clear()
            return []
        if list(base.source_tokens) != list(tr.source_tokens):
            self.baseline_gate_strip.clear()
            return [f"the baseline {comparison.baseline_name} tokenises the source "
                    "otherwise: its gates are not shown"]
        self.baseline_gate_strip.set_gates(gates, base.source_tokens)
        return [f"second strip: the baseline {comparison.baseline_name}'s gates"]

"""The Translate screen's decoding options: beam, <unk> replacement, the bf16 and int8
boxes (translate_arithmetic.py), the shortlist and "own translations as context", in one
row, and the beam's length penalty (the run's own unless the user sets one) beside the
action buttons; each follows what the checked runs allow (translate_runs.py), and they
become the translation job's settings."""
from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QDoubleSpinBox, QHBoxLayout, QLabel, QSpinBox

from app.panels.translate_arithmetic import arithmetic_boxes
from app.panels.translate_runs import is_context_model, reads_target_side, shortlist_unavailable
from core import limits
from core.families import family_traits
from core.workspace.store import Workspace

SHORTLIST_TIP = (
    "Decode each batch over a lexical shortlist: the source words' likeliest translations "
    "(eflomal links of the run's training split, built once and stored with the run) plus the "
    "100 most frequent words. Faster on the CPU; outputs can differ a little "
    "(docs/benchmarks.md)")


class DecodingOptions:
    """The option boxes (not a widget: `row()` lays them out in the screen's top bar);
    `follow` enables them for the checked runs, `job_settings` reads them."""

    def __init__(self) -> None:
        self.beam = QSpinBox()
        self.beam.setRange(1, limits.MAX_BEAM)  # what translate --beam accepts
        self.beam.setValue(5)
        self.length_penalty = QDoubleSpinBox()
        # below 0: the run's own alpha (config.length_penalty), shown as "run's"
        self.length_penalty.setRange(-0.1, 10.0)
        self.length_penalty.setSingleStep(0.1)
        self.length_penalty.setDecimals(1)
        self.length_penalty.setSpecialValueText("run's")
        self.length_penalty.setValue(-0.1)
        self.length_penalty.setToolTip(
            "The beam's length penalty (GNMT's alpha): 0 ranks by the sum of log-probabilities, "
            "which favours short translations; about 1 evens that out. \"run's\": each run's "
            "own, chosen on its dev split (evaluate --tune-length-penalty)")
        self.unk = QCheckBox("replace unknown words")
        self.unk.setToolTip("Copy the most-attended source word for each <unk>")
        self.bf16, self.int8 = arithmetic_boxes()
        self.shortlist = QCheckBox("shortlist")
        self.shortlist.setToolTip(SHORTLIST_TIP)
        self.target_context = QCheckBox("own translations as context")
        # the user's choice while a target-side run (always its own translations) is checked
        self._user_target_context: bool | None = None
        self.target_context.setToolTip(
            "Context models: each sentence sees the model's own translations of the previous "
            "sentence(s) as context instead of the previous source sentence(s)")

    def row(self) -> QHBoxLayout:
        """Beam [n], replace unknown words, bf16, int8, shortlist, own translations (the
        length penalty goes beside the action buttons: `penalty_row`; one row is as wide as
        the screen's 1,280 pixels allow)."""
        options = QHBoxLayout()
        options.addWidget(QLabel("Beam"))
        for box in (self.beam, self.unk, self.bf16, self.int8, self.shortlist,
                    self.target_context):
            options.addWidget(box)
        return options

    def penalty_row(self) -> list:
        """The label and the length penalty box, for a row of the screen's."""
        label = QLabel("Length penalty")
        label.setToolTip(self.length_penalty.toolTip())
        return [label, self.length_penalty]

    def follow(self, workspace: Workspace | None, run_ids: list[int], busy: bool) -> None:
        """Enable the boxes for the checked runs `run_ids` (none while a translation runs,
        `busy`): a target-side context run checks "own translations" (the user's choice
        comes back when it is unchecked); a run without a shortlist unchecks it."""
        target_side = reads_target_side(workspace, run_ids)
        if target_side and self._user_target_context is None:  # it has no other context
            self._user_target_context = self.target_context.isChecked()
            self.target_context.setChecked(True)
        elif not target_side and self._user_target_context is not None:  # the user's again
            self.target_context.setChecked(self._user_target_context)
            self._user_target_context = None
        self.target_context.setEnabled(not busy and is_context_model(workspace, run_ids)
                                       and not target_side)
        no_shortlist = shortlist_unavailable(workspace, run_ids)
        if no_shortlist:
            self.shortlist.setChecked(False)
        self.shortlist.setEnabled(not busy and not no_shortlist)
        self.shortlist.setToolTip(f"Not for this run: {no_shortlist}." if no_shortlist
                                  else SHORTLIST_TIP)

    def context_of(self, workspace: Workspace, run_ids: list[int]) -> tuple[bool, bool]:
        """(whether the first run is a context model, whether it sees its own
        translations: the box checked, or a run that reads the target side)."""
        context = family_traits(workspace.get_run(run_ids[0]).family).context
        return context, context and (self.target_context.isChecked()
                                     or reads_target_side(workspace, run_ids))

    def job_settings(self) -> dict[str, Any]:
        """The translation job's arithmetic, shortlist and length penalty keywords (amp,
        shortlist, int8, length_penalty: None for each run's own)."""
        alpha = self.length_penalty.value()
        return {"amp": self.bf16.isChecked(), "shortlist": self.shortlist.isChecked(),
                "int8": self.int8.isChecked(), "length_penalty": None if alpha < 0 else alpha}

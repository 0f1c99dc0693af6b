"""The Training form's "Context model" box: K previous sentences (concat and
context_transformer), and for context_transformer the side the context comes from (source or target), the following
sentences, the context-encoder depth, the training strategy (ws / ts), the stage and the stage-1 run
that two-stage training's stage 2 starts from."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QSpinBox

from core.config import ModelConfig, TrainConfig
from core.families import family_traits


def _spin(lo: int, hi: int, value: int, tip: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(lo, hi)
    box.setValue(value)
    box.setToolTip(tip)
    return box


class ContextModelBox(QGroupBox):
    """Shown for the context families only; `load` / `apply` round-trip its fields with
    a run's ModelConfig and TrainConfig."""

    #: the user picked a stage-1 run (its name): the form copies that run's sizes
    stage1_chosen = Signal(str)

    def __init__(self, parent=None):
        super().__init__("Context model", parent)
        self.strategy = QComboBox()
        self.strategy.addItem("ws: weight sharing", "ws")
        self.strategy.addItem("ts: two-stage", "ts")
        self.strategy.setToolTip(
            "ws: the context encoder shares the source encoder's weights, trained in one go. "
            "ts: the context encoder has its own layers; stage 2 starts from a trained "
            "sentence-level transformer (stage 1) and trains only the context parts.")
        self.stage = QComboBox()
        for text, value in (("0: one stage", 0), ("1: sentence-level", 1),
                            ("2: context parts only", 2)):
            self.stage.addItem(text, value)
        self.stage.setToolTip("Two-stage training: stage 2 freezes the source encoder and "
                              "decoder of the stage-1 run and trains only the context parts")
        self.init_from = QComboBox()
        self.init_from.addItem("(none)", "")
        self.init_from.setToolTip(
            "The stage-1 run stage 2 starts from: a finished sentence-level transformer run "
            "of this workspace; picking it copies its sizes (its vocabularies are reused)")
        self.ctx_side = QComboBox()
        self.ctx_side.addItem("source: the previous source sentences", "source")
        self.ctx_side.addItem("target: the previous translation", "target")
        self.ctx_side.setToolTip(
            "target: the context encoder reads the previous TARGET sentence with the target "
            "embeddings (the reference in training, the model's own translation when "
            "translating), merged through the same gate (Bawden et al. 2018)")
        self.ctx_layers = _spin(1, 12, 1)
        self.ctx_sentences = _spin(0, 20, 1, "How many previous sentences of the same "
                                   "document are the context")
        self.ctx_following = _spin(0, 20, 0, "How many following sentences of the same "
                                   "document are added to the context (context_transformer "
                                   "only)")
        self.form = QFormLayout(self)
        for label, w in (("Strategy", self.strategy), ("Stage", self.stage),
                         ("Stage-1 run", self.init_from), ("Context side", self.ctx_side),
                         ("Context encoder layers", self.ctx_layers),
                         ("Previous sentences K", self.ctx_sentences),
                         ("Following sentences", self.ctx_following)):
            self.form.addRow(label, w)
        self.init_from.activated.connect(
            lambda: self.init_from.currentData() and self.stage1_chosen.emit(
                self.init_from.currentData()))
        self.strategy.currentIndexChanged.connect(self._strategy_changed)
        self.stage.currentIndexChanged.connect(self._stage_changed)
        self.ctx_side.currentIndexChanged.connect(self._side_changed)

    def set_family(self, family: str) -> None:
        """Show the box for the context families, the ctx-encoder rows for
        context_transformer only."""
        self.setVisible(family_traits(family).context)
        for w in (self.strategy, self.stage, self.init_from, self.ctx_layers, self.ctx_following):
            self.form.setRowVisible(w, family == "context_transformer")
        self.form.setRowVisible(self.ctx_side, family_traits(family).target_side)
        self._stage_changed()

    def set_stage1_runs(self, runs: list[Any]) -> None:
        """The workspace's runs (RunInfo); the finished transformer runs are the stage-1
        choices. The current choice is kept."""
        current = self.init_from.currentData() or ""
        self.init_from.clear()
        self.init_from.addItem("(none)", "")
        for run in runs:
            if run.status == "finished" and run.family == "transformer":
                self.init_from.addItem(f"{run.id}: {run.name} ({run.steps:,} steps)", run.name)
        self._select_init_from(current)

    def load(self, m: ModelConfig, t: TrainConfig) -> None:
        """Show the context-model settings of `m` (model) and `t` (train)."""
        self.strategy.setCurrentIndex(max(0, self.strategy.findData(m.strategy)))
        self.stage.setCurrentIndex(max(0, self.stage.findData(t.stage)))
        self._select_init_from(t.init_from)
        self.ctx_layers.setValue(m.ctx_layers)
        self.ctx_sentences.setValue(m.ctx_sentences)
        self.ctx_following.setValue(m.ctx_following)
        self.ctx_side.setCurrentIndex(max(0, self.ctx_side.findData(m.ctx_side)))

    def apply(self, m: ModelConfig, t: TrainConfig) -> None:
        """Write the fields that apply to m.family into m and t."""
        if family_traits(m.family).context:
            m.ctx_sentences = int(self.ctx_sentences.value())
        if m.family == "context_transformer":
            m.strategy, m.ctx_layers = self.strategy.currentData(), int(self.ctx_layers.value())
            m.ctx_following = int(self.ctx_following.value())
            t.stage = int(self.stage.currentData())
            t.init_from = self.init_from.currentData() if t.stage == 2 else ""
        elif t.stage == 2:  # a preset's stage 2 is for context_transformer only
            t.stage, t.init_from = 0, ""
        target = family_traits(m.family).target_side and self.ctx_side.currentData() == "target"
        m.ctx_side = "target" if target else "source"
        if target:
            m.ctx_following = 0

    def _side_changed(self) -> None:
        target = self.ctx_side.currentData() == "target"
        if target:  # no translation of the following sentences exists yet
            self.ctx_following.setValue(0)
        self.ctx_following.setEnabled(not target)

    def _strategy_changed(self) -> None:
        if self.strategy.currentData() == "ws" and self.stage.currentData() == 2:
            self.stage.setCurrentIndex(self.stage.findData(0))  # stage 2 needs 'ts'
        self._stage_changed()

    def _stage_changed(self) -> None:
        two = self.stage.currentData() == 2
        if two and self.strategy.currentData() != "ts":
            self.strategy.setCurrentIndex(self.strategy.findData("ts"))
        self.init_from.setEnabled(two)

    def _select_init_from(self, value: str) -> None:
        """Select the stage-1 run `value` (a run name or id); one that is not a finished
        transformer run of this workspace is kept as its own entry."""
        index = self.init_from.findData(value)
        if index < 0:
            self.init_from.addItem(f"{value} (not a finished transformer run here)", value)
            index = self.init_from.count() - 1
        self.init_from.setCurrentIndex(index)

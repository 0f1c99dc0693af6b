"""The Training screen's run form: `RunForm`, mixed into app.panels.training.TrainingPanel,
builds the form's fields and its "Model" and "Data and budget" boxes (the "Context
model" box is training_context.py's), says what precision a run would compute in, and
turns the form into a RunConfig and back, so the form starts from a preset, follows the
family and a chosen stage-1 run, and turns into the config the CLI would validate
(RunConfig.validate: the same messages)."""
from __future__ import annotations

import copy

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.panels.training_context import ContextModelBox
from app.widgets.number_fields import RateSpinBox, number_field
from core.config import ATTENTION_KINDS, SCORES, RunConfig, list_presets, load_preset
from core.errors import WorkbenchError
from core.families import families_with, family_traits
from core.train.device import precision_note

CUSTOM_NOTE = "Your own settings: edit the form (it starts from a Luong model with global attention)."


class RunForm:
    """The form's fields and boxes, its preset, family and stage-1 reactions, and
    config() / set_config()."""

    def _build_form(self) -> QWidget:
        """The form: the "Model" box, the "Context model" box (training_context.py) and
        the "Data and budget" box, one over the other; the fields follow the family."""
        self._build_model_fields()
        self._build_data_fields()
        self.context = ContextModelBox()
        self.context.stage1_chosen.connect(self._stage1_chosen)
        model_box, data_box = self._model_box(), self._data_box()
        self.family.currentTextChanged.connect(self._family_changed)
        self._family_changed(self.family.currentText())
        form = QWidget()
        layout = QVBoxLayout(form)
        for box in (model_box, self.context, data_box):
            layout.addWidget(box)
        layout.addStretch(1)
        return form

    def _build_model_fields(self) -> None:
        """The preset, the run's name and the model's fields."""
        self.preset = QComboBox()
        self.preset.addItem("(custom)", None)
        for name in list_presets():
            self.preset.addItem(name, name)
        self.preset.currentIndexChanged.connect(self._load_preset)
        self.preset_note = QLabel(CUSTOM_NOTE)  # the preset's description
        self.preset_note.setObjectName("hint")
        self.preset_note.setWordWrap(True)
        self.name = QLineEdit("run")
        self.family, self.attention, self.score = QComboBox(), QComboBox(), QComboBox()
        self.family.addItems(families_with(trainable=True))  # not an imported family
        self.attention.addItems(ATTENTION_KINDS)
        self.score.addItems(SCORES)
        self.input_feeding = QCheckBox("input feeding")
        self.reverse = QCheckBox("reverse source")
        self.dropout = number_field(0, 0.9, 0.2, 2, 0.05)
        self.emb, self.hidden = number_field(8, 4096, 256), number_field(8, 4096, 256)
        self.layers = number_field(1, 8, 2)
        self.window = number_field(1, 50, 10)

    def _build_data_fields(self) -> None:
        """The corpus, the device, the budget, the optimiser's and the data's fields,
        sampled softmax, guided alignment, bf16 and what precision that gives here."""
        self.corpus = QComboBox()  # as wide as the longest corpus name
        self.corpus.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.device = QComboBox()
        self.device.addItems(["auto", "cpu", "cuda"])
        self.epochs, self.max_steps = number_field(1, 1000, 10), number_field(0, 10_000_000, 0)
        self.max_minutes = number_field(0, 1_000_000, 0, 1, 5)
        self.max_minutes.setSuffix(" min")
        self.max_steps.setToolTip("Stop after this many updates (0 = no step limit)")
        self.max_minutes.setToolTip("Stop after this many minutes of training, summed over "
                                    "resumes; pauses do not count (0 = no time limit)")
        self.batch_size = number_field(1, 4096, 64)
        self.lr = RateSpinBox(1e-9, 10, 0.001)
        self.valid_every = number_field(0, 1_000_000, 500)
        self.dev_sample = number_field(0, 100_000, 200)
        self.sampled_softmax = number_field(0, 1_000_000, 0)
        self.sampled_softmax.setToolTip(
            "0 = full softmax. K > 0: each training batch normalises over K candidate words "
            "(its target words plus random others; Jean et al. 2015) - a faster output layer. "
            "Dev perplexity and translation always use the full vocabulary.")
        self.amp = QCheckBox("bf16 mixed precision")
        self.amp.setToolTip(
            "bf16 autocast (train.amp): the forward pass in bf16, the output softmax and the "
            "loss in fp32. On a GPU, or a CPU with native bf16 (AVX512-BF16 or AMX); other "
            "CPUs train in fp32 and say so in the log.")
        self.guided = QCheckBox("Guided alignment (eflomal)")
        self.guided.setToolTip(
            "train.guided_alignment: a second loss pulls the attention towards eflomal's "
            "grow-diag-final-and alignments of the training split (Chen et al. 2016, Garg et "
            "al. 2019). They are computed once per corpus and tokenisation and stored in the "
            "corpus's folder.")
        self.guided_weight = number_field(0.01, 100, 0.5, 2, 0.05)
        self.guided_weight.setToolTip("The alignment loss's weight beside the per-token NLL")
        self.guided_weight.setEnabled(False)
        self.guided.toggled.connect(self.guided_weight.setEnabled)
        # what the run will really compute in, on this machine and the chosen device
        self.precision = QLabel()
        self.precision.setWordWrap(True)
        self.amp.toggled.connect(self._update_precision)
        self.device.currentTextChanged.connect(self._update_precision)
        self._update_precision()

    def _model_box(self) -> QGroupBox:
        """The "Model" group of the form."""
        model_box = QGroupBox("Model")
        mform = QFormLayout(model_box)
        for label, w in (("Preset", self.preset), ("", self.preset_note), ("Name", self.name),
                         ("Family", self.family),
                         ("Attention", self.attention), ("Score", self.score),
                         ("", self.input_feeding), ("", self.reverse), ("Dropout", self.dropout),
                         ("Embedding / d_model", self.emb), ("Hidden / FF size", self.hidden),
                         ("Layers", self.layers), ("Local window D", self.window)):
            mform.addRow(label, w)
        return model_box

    def _data_box(self) -> QGroupBox:
        """The "Data and budget" group of the form."""
        data_box = QGroupBox("Data and budget")
        dform = QFormLayout(data_box)
        dform.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # long corpus names
        for label, w in (("Corpus", self.corpus), ("Device", self.device),
                         ("Epochs", self.epochs), ("Max steps (0 = none)", self.max_steps),
                         ("Max minutes (0 = none)", self.max_minutes),
                         ("Batch size", self.batch_size), ("Learning rate", self.lr),
                         ("Validate every (steps)", self.valid_every),
                         ("Dev BLEU sample", self.dev_sample),
                         ("Sampled softmax words", self.sampled_softmax), ("", self.guided),
                         ("Guided alignment weight", self.guided_weight), ("", self.amp),
                         ("Precision", self.precision)):
            dform.addRow(label, w)
        return data_box

    def _update_precision(self, *_: object) -> None:
        self.precision.setText(precision_note(self.device.currentText(), self.amp.isChecked()))

    def _load_preset(self) -> None:
        name = self.preset.currentData()
        if not name:  # "(custom)": the form as it is, to edit
            self.preset_note.setText(CUSTOM_NOTE)
            return
        try:
            cfg = load_preset(name)
        except WorkbenchError as exc:
            workers.show_error(self, "Preset", str(exc))
            return
        self.preset_note.setText(cfg.description or f"The preset {name}.")
        self.set_config(cfg)

    def _family_changed(self, family: str) -> None:
        rnn = not family_traits(family).transformer
        for w in (self.attention, self.score, self.input_feeding, self.reverse, self.window):
            w.setEnabled(rnn)
        self.context.set_family(family)

    def _stage1_chosen(self, name: str) -> None:
        """The user picked stage-1 run `name`: stage 2 must have its sizes, so copy them
        into the form (d_model, feed-forward size, layers, heads; the rest of the model is
        the context part's own)."""
        runs = self.workspace.list_runs() if self.workspace is not None else []
        run = next((r for r in runs if r.name == name), None)
        if run is None:
            return
        sizes = {k: v for k, v in run.config.get("model", {}).items()
                 if k in ("d_model", "ff_size", "heads", "enc_layers", "dec_layers")}
        cfg = self.config_or_none() or getattr(self, "_config", RunConfig())
        for key, value in sizes.items():
            setattr(cfg.model, key, value)
        self.set_config(cfg)

    def config_or_none(self) -> RunConfig | None:
        """The form as a RunConfig, or None while it does not validate."""
        try:
            return self.config()
        except WorkbenchError:
            return None

    def set_config(self, cfg: RunConfig) -> None:
        """Fill the form from `cfg` (kept, so settings the form does not show survive config())."""
        self._config = cfg
        m, t, d = cfg.model, cfg.train, cfg.data
        self.name.setText(cfg.name)
        self.family.setCurrentText(m.family)
        self.attention.setCurrentText(m.attention)
        self.score.setCurrentText(m.score)
        self.input_feeding.setChecked(m.input_feeding)
        self.reverse.setChecked(m.reverse_source)
        self.dropout.setValue(m.dropout)
        transformer = family_traits(m.family).transformer
        self.emb.setValue(m.d_model if transformer else m.emb_size)
        self.hidden.setValue(m.ff_size if transformer else m.hidden_size)
        self.layers.setValue(m.enc_layers if transformer else m.layers)
        self.window.setValue(m.window)
        self.context.load(m, t)
        self.device.setCurrentText(t.device if t.device in ("auto", "cpu", "cuda") else "auto")
        self.epochs.setValue(t.epochs)
        self.max_steps.setValue(t.max_steps)
        self.max_minutes.setValue(t.max_minutes)
        self.batch_size.setValue(d.batch_size)
        self.lr.setValue(t.lr)
        self.valid_every.setValue(t.valid_every)
        self.dev_sample.setValue(d.dev_sample)
        self.sampled_softmax.setValue(t.sampled_softmax)
        self.amp.setChecked(t.amp)
        self.guided.setChecked(t.guided_alignment > 0)
        if t.guided_alignment > 0:
            self.guided_weight.setValue(t.guided_alignment)

    def config(self) -> RunConfig:
        """The form as a RunConfig (the preset's other settings are kept)."""
        # copied, not validated: the form's values are applied first, then checked once
        # (RunConfig.validate: the same messages as the CLI's)
        cfg = copy.deepcopy(getattr(self, "_config", RunConfig()))
        m, t, d = cfg.model, cfg.train, cfg.data
        cfg.name = self.name.text().strip() or "run"
        m.family, m.attention = self.family.currentText(), self.attention.currentText()
        m.score = self.score.currentText()
        m.input_feeding, m.reverse_source = self.input_feeding.isChecked(), self.reverse.isChecked()
        m.dropout = self.dropout.value()
        m.window = int(self.window.value())
        if family_traits(m.family).transformer:
            m.d_model, m.ff_size = int(self.emb.value()), int(self.hidden.value())
            m.enc_layers = m.dec_layers = int(self.layers.value())
        else:
            m.emb_size, m.hidden_size = int(self.emb.value()), int(self.hidden.value())
            m.layers = int(self.layers.value())
        self.context.apply(m, t)
        t.device = self.device.currentText()
        t.epochs, t.max_steps = int(self.epochs.value()), int(self.max_steps.value())
        t.max_minutes = float(self.max_minutes.value())
        t.lr, t.valid_every = float(self.lr.value()), int(self.valid_every.value())
        t.sampled_softmax = int(self.sampled_softmax.value())
        t.amp = self.amp.isChecked()
        t.guided_alignment = float(self.guided_weight.value()) if self.guided.isChecked() else 0.0
        d.batch_size, d.dev_sample = int(self.batch_size.value()), int(self.dev_sample.value())
        return cfg.validate()

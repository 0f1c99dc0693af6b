"""The Training screen's form as a RunConfig and back: `RunForm`, mixed into
app.panels.training.TrainingPanel, whose widgets (built there) it reads and fills, so
the form starts from a preset, follows the family and a chosen stage-1 run, and turns
into the config the CLI would validate (RunConfig.validate: the same messages)."""
from __future__ import annotations

import copy

from app import workers
from core.config import RunConfig, load_preset
from core.errors import WorkbenchError
from core.families import family_traits

CUSTOM_NOTE = "Your own settings: edit the form (it starts from a Luong model with global attention)."


class RunForm:
    """Preset, family and stage-1 reactions of the form, and config() / set_config()."""

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

"""Model registry: build any family from a ModelConfig, describe it in one line, and the
list of attention VARIANTS every test and benchmark iterates over.

Family modules are imported lazily so that e.g. a GRU-only run never imports the
Transformer code; each family module exposes `build(config, src_vocab, tgt_vocab)`.
"""
from __future__ import annotations

import importlib
from typing import Any

from core.config import ModelConfig
from core.errors import ConfigError
from core.families import FAMILIES
from core.models.base import Seq2Seq

_MODULES = {
    "rnnencdec": "core.models.rnnencdec",
    "rnnsearch": "core.models.rnnsearch",
    "luong": "core.models.luong",
    "transformer": "core.models.transformer",
    "concat": "core.models.transformer",
    "context_transformer": "core.models.context_transformer",
    "marian": "core.models.marian",
}

#: (name, ModelConfig overrides): every attention variant of the recurrent families.
#: Tests and benchmarks apply these over their own sizes.
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("rnnencdec", dict(family="rnnencdec", attention="none", reverse_source=True)),
    ("rnnencdec-gru", dict(family="rnnencdec", attention="none", cell="gru")),
    ("rnnsearch", dict(family="rnnsearch", cell="gru", attention="global", score="additive",
                       layers=1)),
    ("luong-global-dot", dict(family="luong", attention="global", score="dot",
                              input_feeding=False)),
    ("luong-global-general", dict(family="luong", attention="global", score="general")),
    ("luong-global-general-rev", dict(family="luong", attention="global", score="general",
                                      reverse_source=True, input_feeding=False)),
    ("luong-global-general-bi", dict(family="luong", attention="global", score="general",
                                     bidirectional=True)),
    ("luong-global-mlp", dict(family="luong", attention="global", score="mlp")),
    ("luong-global-concat", dict(family="luong", attention="global", score="concat")),
    ("luong-global-location", dict(family="luong", attention="global", score="location")),
    ("luong-local-m-dot", dict(family="luong", attention="local-m", score="dot",
                               input_feeding=False)),
    ("luong-local-m-general", dict(family="luong", attention="local-m", score="general",
                                   reverse_source=True)),
    ("luong-local-p-dot", dict(family="luong", attention="local-p", score="dot",
                               input_feeding=False)),
    ("luong-local-p-general", dict(family="luong", attention="local-p", score="general")),
    ("luong-local-p-concat", dict(family="luong", attention="local-p", score="concat",
                                  reverse_source=True)),
]


def variant_config(name: str, **sizes: Any) -> ModelConfig:
    """The ModelConfig of VARIANTS[name] with `sizes` (emb_size=..., ...) applied on top."""
    for vname, overrides in VARIANTS:
        if vname == name:
            return ModelConfig(**{**overrides, **sizes})
    raise KeyError(f"no variant {name!r}; known: {[v for v, _ in VARIANTS]}")


def build_model(config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int) -> Seq2Seq:
    """Build the model of `config.family`; ConfigError on an unknown family."""
    config.validate()
    if config.family not in _MODULES:
        raise ConfigError(f"model.family must be one of {FAMILIES}, not {config.family!r}")
    module = importlib.import_module(_MODULES[config.family])
    return module.build(config, src_vocab_size, tgt_vocab_size)


def describe(config: ModelConfig) -> str:
    """One line for tables and titles, e.g. 'Luong local-p general, input feeding, 2x256 LSTM'."""
    size = f"{config.layers}x{config.hidden_size}"
    rev = ", reversed source" if config.reverse_source else ""
    if config.family == "luong":
        feed = ", input feeding" if config.input_feeding else ""
        window = f" D={config.window}" if config.attention != "global" else ""
        return f"Luong {config.attention}{window} {config.score}{feed}, {size} LSTM{rev}"
    if config.family == "rnnsearch":
        return f"RNNsearch (Bahdanau) additive, {size} biGRU encoder, {config.hidden_size} GRU decoder"
    if config.family == "rnnencdec":
        return f"RNN encoder-decoder, no attention, {size} {config.cell.upper()}{rev}"
    size = f"{config.enc_layers}+{config.dec_layers} layers, d={config.d_model}, {config.heads} heads"
    names = {"transformer": "Transformer", "concat": "Transformer (concatenated context)",
             "marian": "Marian Transformer (imported)",
             "context_transformer": f"Context Transformer ({config.strategy})"}
    return f"{names.get(config.family, config.family)}, {size}"

"""Typed configuration of a training run, loaded from TOML (resources/presets/*.toml).

One `RunConfig` = model + data + training sections. Unknown keys are an error that
names the key and the file, so a typo never silently falls back to a default.
"""
from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import ConfigError

FAMILIES = ("rnnencdec", "rnnsearch", "luong", "transformer", "concat", "context_transformer")
ATTENTION_KINDS = ("none", "global", "local-m", "local-p")
SCORES = ("dot", "general", "concat", "location", "additive")


@dataclass
class ModelConfig:
    family: str = "luong"
    # --- recurrent families -------------------------------------------------
    cell: str = "lstm"  # lstm | gru
    emb_size: int = 256
    hidden_size: int = 256
    layers: int = 2
    attention: str = "global"  # none | global | local-m | local-p
    score: str = "general"  # dot | general | concat | location | additive (rnnsearch)
    window: int = 10  # D of local attention; sigma = D / 2
    input_feeding: bool = True
    reverse_source: bool = False
    dropout: float = 0.2
    init_range: float = 0.1  # uniform init in [-r, r]; 0 keeps PyTorch's default
    maxout_pool: int = 2  # rnnsearch deep output
    max_src_len: int = 100  # location score's fixed output size
    # --- transformer families -------------------------------------------------
    d_model: int = 512
    ff_size: int = 2048
    heads: int = 8
    enc_layers: int = 3
    dec_layers: int = 3
    ctx_layers: int = 1  # context encoder depth (context_transformer)
    ctx_sentences: int = 1  # K previous sentences as context
    # F following sentences of the same document as context, after the previous ones
    # (context_transformer only: concat prepends its context, previous sentences only)
    ctx_following: int = 0
    strategy: str = "ws"  # ws (weight sharing) | ts (two-stage) for context_transformer
    tie_embeddings: bool = False

    def validate(self) -> None:
        if self.family not in FAMILIES:
            raise ConfigError(f"model.family must be one of {FAMILIES}, not {self.family!r}")
        if self.attention not in ATTENTION_KINDS:
            raise ConfigError(
                f"model.attention must be one of {ATTENTION_KINDS}, not {self.attention!r}"
            )
        if self.score not in SCORES:
            raise ConfigError(f"model.score must be one of {SCORES}, not {self.score!r}")
        if self.cell not in ("lstm", "gru"):
            raise ConfigError(f"model.cell must be 'lstm' or 'gru', not {self.cell!r}")
        if self.strategy not in ("ws", "ts"):
            raise ConfigError(f"model.strategy must be 'ws' or 'ts', not {self.strategy!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"model.dropout must be in [0, 1), not {self.dropout}")
        if self.ctx_following < 0:
            raise ConfigError(f"model.ctx_following must be >= 0, not {self.ctx_following}")
        if self.ctx_following and self.family == "concat":
            raise ConfigError(
                "model.ctx_following must be 0 for family 'concat': it prepends its context to "
                "the sentence and uses previous sentences only; set model.ctx_following = 0, "
                "or use family 'context_transformer' for following sentences")


@dataclass
class DataConfig:
    vocab: str = "word"  # word | bpe | unigram (sentencepiece)
    src_vocab_size: int = 50000
    tgt_vocab_size: int = 50000
    joint_vocab: bool = False
    max_len: int = 50  # training pairs longer than this (in tokens) are filtered
    lowercase: bool = False
    fold_accents: bool = False
    pretokenized: bool = False  # text is already tokenised (split on spaces, no Moses)
    batch_size: int = 64  # sentences per batch ...
    batch_tokens: int = 0  # ... or, when > 0, a target-token budget per batch
    dev_sample: int = 200  # sentences of dev used for greedy BLEU at validation


@dataclass
class TrainConfig:
    optimizer: str = "adam"  # sgd | adam | adadelta
    lr: float = 1e-3
    lr_decay: float = 0.5  # SGD halving factor
    decay_start_epoch: int = 0  # 0 = never; Luong: 5 (8 with dropout)
    epochs: int = 10
    max_steps: int = 0  # 0 = no step limit
    clip_norm: float = 5.0
    label_smoothing: float = 0.0
    sampled_softmax: int = 0  # 0 = full softmax; K = Jean et al. 2015 over K candidate words
    valid_every: int = 500
    early_stop_patience: int = 0  # validations without dev-perplexity gain; 0 = off
    keep_best: int = 2
    seed: int = 1234
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    threads: int = 0  # CPU threads; 0 = torch default
    amp: bool = False  # bf16 autocast: on CUDA, or on a CPU with native bf16 (else fp32)
    stage: int = 0  # two-stage training: 1 sentence-level, 2 context parts only
    init_from: str = ""  # run (name or id) whose best checkpoint initialises this one (TS stage 2)


@dataclass
class RunConfig:
    name: str = "run"
    description: str = ""
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def validate(self) -> RunConfig:
        self.model.validate()
        if self.train.optimizer not in ("sgd", "adam", "adadelta"):
            raise ConfigError(f"train.optimizer must be sgd, adam or adadelta, not {self.train.optimizer!r}")
        if self.train.sampled_softmax < 0:
            raise ConfigError(f"train.sampled_softmax must be 0 (full softmax) or a word count "
                              f"> 0, not {self.train.sampled_softmax}")
        if self.data.vocab not in ("word", "bpe", "unigram"):
            raise ConfigError(f"data.vocab must be word, bpe or unigram, not {self.data.vocab!r}")
        if self.train.stage not in (0, 1, 2):
            raise ConfigError(f"train.stage must be 0 (one stage), 1 (sentence-level) or 2 "
                              f"(context parts only), not {self.train.stage!r}")
        if self.train.stage == 2 and self.model.family != "context_transformer":
            raise ConfigError(
                f"train.stage = 2 trains the context parts of a context_transformer, not of "
                f"a {self.model.family!r} model: set model.family = 'context_transformer' "
                "(strategy 'ts'), or train.stage = 0")
        if self.train.stage == 2 and self.model.strategy != "ts":
            raise ConfigError(
                f"train.stage = 2 needs model.strategy = 'ts' (two-stage), not "
                f"{self.model.strategy!r}: under 'ws' the context encoder shares the source "
                "encoder's weights, so it cannot be trained alone; set model.strategy = 'ts', "
                "or train.stage = 0")
        return self

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], source: str = "<config>") -> RunConfig:
        sections = {"model": ModelConfig, "data": DataConfig, "train": TrainConfig}
        top = {f.name for f in dataclasses.fields(cls)}
        for key in raw:
            if key not in top:
                raise ConfigError(f"{source}: unknown key {key!r} (known: {sorted(top)})")
        kwargs: dict[str, Any] = {}
        for key, value in raw.items():
            if key in sections:
                kind = sections[key]
                if not isinstance(value, dict):
                    raise ConfigError(f"{source}: [{key}] must be a table")
                known = {f.name: f for f in dataclasses.fields(kind)}
                for sub in value:
                    if sub not in known:
                        raise ConfigError(
                            f"{source}: unknown key {key}.{sub!r}; known keys: {sorted(known)}"
                        )
                kwargs[key] = kind(**value)
            else:
                kwargs[key] = value
        return cls(**kwargs).validate()


def load_config(path: str | Path) -> RunConfig:
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix the file and try again") from None
    return RunConfig.from_dict(raw, source=str(path))


PRESET_DIR = Path(__file__).resolve().parent.parent / "resources" / "presets"


def list_presets() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def load_preset(name: str) -> RunConfig:
    # a preset is a name from the list, never a path (`--preset ../../file`)
    if name not in list_presets():
        raise ConfigError(f"no preset named {name!r}; available: {', '.join(list_presets())}")
    return load_config(PRESET_DIR / f"{name}.toml")

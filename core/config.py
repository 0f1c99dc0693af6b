"""Typed configuration of a training run, loaded from TOML (resources/presets/*.toml).

One `RunConfig` = model + data + training sections. Unknown keys are an error that
names the key and the file, so a typo never silently falls back to a default.
"""
from __future__ import annotations

import dataclasses
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import limits
from core.errors import ConfigError
from core.families import FAMILIES, families_with, family_traits

ATTENTION_KINDS = ("none", "global", "local-m", "local-p")
SCORES = ("dot", "general", "concat", "mlp", "location", "additive")
DEVICE_RE = re.compile(r"^(auto|cpu|mps|cuda(:[0-9]+)?)$")


@dataclass(frozen=True)
class Rule:
    """What one config field may hold: its type, a range (`lo`/`hi`, inclusive unless
    `*_open`) or a set of `choices`, and `hint` = what to do when it does not."""

    kind: type
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple = ()
    hint: str = ""

    def range_text(self) -> str:
        """The allowed values in words, e.g. "in [0, 1)", ">= 1" or "one of 'a', 'b'"; '' when
        the rule sets no range."""
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind is int:
            lo = None if self.lo is None else f"{int(self.lo):,}"
            hi = None if self.hi is None else f"{int(self.hi):,}"
            if lo is not None and hi is not None:
                return f"in [{lo}, {hi}]"
            return f">= {lo}" if lo is not None else f"<= {hi}"
        if self.lo is not None and self.hi is not None:
            return f"in {'(' if self.lo_open else '['}{self.lo:g}, {self.hi:g}{')' if self.hi_open else ']'}"
        if self.lo is not None:
            return f"{'>' if self.lo_open else '>='} {self.lo:g}"
        if self.hi is not None:
            return f"{'<' if self.hi_open else '<='} {self.hi:g}"
        return ""


def _int(lo: float | None = None, hi: float | None = None, hint: str = "") -> Rule:
    return Rule(int, lo, hi, hint=hint)


def _float(lo: float | None = None, hi: float | None = None, lo_open: bool = False,
           hi_open: bool = False, hint: str = "") -> Rule:
    return Rule(float, lo, hi, lo_open, hi_open, hint=hint)


def _one_of(*choices, kind: type = str) -> Rule:
    return Rule(kind, choices=tuple(choices))


BOOL, TEXT = Rule(bool), Rule(str)

#: "" (the family's reading) or core.evaluate.readings.READINGS; config cannot import that
#: module, so tests/core/test_evaluate_readings.py keeps the two equal
READING_CHOICES = ("", "predict", "shift", "sum", "previous", "head")

W = limits.MAX_WIDTH  # embedding, hidden and d_model sizes
#: train.threads in any config; when a run trains, at most the machine's CPU threads
#: (core.train.device.check_threads): 2,000 threads made a step 20 times slower
MAX_THREADS = 1024

#: Every field of every section, "section.key" -> Rule. A new config field gets one line
#: here (tests/core/test_config_validation.py checks that none is missing).
RULES: dict[str, Rule] = {
    "name": TEXT, "description": TEXT,
    "alignment_reading": _one_of(*READING_CHOICES),
    "length_penalty": _float(0, 10, hint="GNMT's alpha for beam search, e.g. 1.0; 0 = none"),
    # model
    "model.family": _one_of(*FAMILIES), "model.cell": _one_of("lstm", "gru"),
    "model.emb_size": _int(1, W), "model.hidden_size": _int(1, W),
    "model.layers": _int(1, limits.MAX_LAYERS),
    "model.attention": _one_of(*ATTENTION_KINDS), "model.score": _one_of(*SCORES),
    "model.window": _int(1, limits.MAX_SOURCE_LEN,
                         hint="the half-width D of local attention, e.g. 10"),
    "model.input_feeding": BOOL, "model.reverse_source": BOOL, "model.bidirectional": BOOL,
    "model.dropout": _float(0, 1, hi_open=True),
    "model.init_range": _float(0, hint="0 keeps PyTorch's initialisation"),
    "model.maxout_pool": _int(1, 64), "model.max_src_len": _int(1, limits.MAX_SOURCE_LEN),
    "model.d_model": _int(1, W), "model.ff_size": _int(1, limits.MAX_FF),
    "model.heads": _int(1, limits.MAX_HEADS),
    "model.enc_layers": _int(1, limits.MAX_LAYERS), "model.dec_layers": _int(1, limits.MAX_LAYERS),
    "model.ctx_layers": _int(1, limits.MAX_LAYERS),
    "model.ctx_sentences": _int(1, limits.MAX_CONTEXT),
    "model.ctx_following": _int(0, limits.MAX_CONTEXT),
    "model.strategy": _one_of("ws", "ts"), "model.ctx_side": _one_of("source", "target"), "model.tie_embeddings": BOOL,
    "model.alignment_head": BOOL,
    "model.pre_norm": BOOL, "model.norm_eps": _float(0, 1, lo_open=True, hint="e.g. 1e-5"),
    "model.generator_bias": BOOL,
    "model.external": TEXT,
    # data
    "data.vocab": _one_of("word", "bpe", "unigram"),
    "data.src_vocab_size": _int(8, limits.MAX_VOCAB,
                                hint="the vocabulary keeps 5 special ids; e.g. 8000"),
    "data.tgt_vocab_size": _int(8, limits.MAX_VOCAB,
                                hint="the vocabulary keeps 5 special ids; e.g. 8000"),
    "data.joint_vocab": BOOL, "data.max_len": _int(1, limits.MAX_SOURCE_LEN),
    "data.lowercase": BOOL, "data.fold_accents": BOOL, "data.pretokenized": BOOL,
    "data.batch_size": _int(1, limits.MAX_BATCH),
    "data.batch_tokens": _int(0, limits.MAX_BATCH_TOKENS, hint="0 batches by sentences"),
    "data.dev_sample": _int(0, limits.MAX_BATCH * 10, hint="0 skips the greedy dev BLEU"),
    # train
    "train.optimizer": _one_of("sgd", "adam", "adadelta"),
    "train.lr": _float(0, lo_open=True), "train.lr_decay": _float(0, 1, lo_open=True),
    "train.decay_start_epoch": _int(0, hint="0 never decays"),
    "train.epochs": _int(1, limits.MAX_EPOCHS),
    "train.max_steps": _int(0, limits.MAX_STEPS, hint="0 = no step limit"),
    "train.max_minutes": _float(0, 1e8, hint="0 = no time limit"),
    "train.clip_norm": _float(0, hint="0 turns clipping off"),
    "train.label_smoothing": _float(0, 1, hi_open=True, hint="e.g. 0.1"),
    "train.sampled_softmax": _int(0, limits.MAX_VOCAB,
                                  hint="0 = full softmax, or a word count K > 0"),
    "train.guided_alignment": _float(0, 100, hint="0 = off; the alignment loss's weight, "
                                     "e.g. 0.5"),
    "train.guide_runs": TEXT,
    "train.valid_every": _int(0, limits.MAX_STEPS, hint="0 validates only at the end"),
    "train.early_stop_patience": _int(0, limits.MAX_STEPS, hint="0 = off"),
    "train.keep_best": _int(0, 1000),
    "train.keep_every": _int(0, limits.MAX_STEPS, hint="0 = off; e.g. 500 with valid_every "
                             "500 keeps every validation's checkpoint"),
    "train.seed": _int(0, 2**32 - 1), "train.device": TEXT,
    "train.threads": _int(0, MAX_THREADS, hint="0 = torch's default; at most the "
                          "machine's CPU threads when it trains"), "train.amp": BOOL,
    "train.stage": _one_of(0, 1, 2, kind=int), "train.init_from": TEXT,
}

_TYPE_NAMES = {int: "a whole number", float: "a number", bool: "true or false", str: "text"}


def _toml(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else (
        f'"{value}"' if isinstance(value, str) else f"{value!r}")


def check_field(key: str, value: Any, source: str = "", default: Any = None) -> Any:
    """`value` checked against RULES[key]; returns it (an int given for a float field
    becomes a float). ConfigError naming the key, the value and what to do."""
    rule = RULES.get(key)
    if rule is None:
        return value
    where = f"{source}: " if source else ""
    field = key.rpartition(".")[2]
    kind_ok = (isinstance(value, rule.kind) and not (rule.kind is int and isinstance(value, bool))
               or rule.kind is float and isinstance(value, int) and not isinstance(value, bool))
    example = _toml(default) if default is not None else {
        int: "64", float: "0.1", bool: "true", str: '"text"'}[rule.kind]
    if not kind_ok:
        raise ConfigError(
            f"{where}{key} must be {_TYPE_NAMES[rule.kind]}, not {value!r} "
            f"({type(value).__name__}); write it without quotes unless it is text, "
            f"e.g. {field} = {example}")
    if rule.kind is float:
        value = float(value)
        if not math.isfinite(value):
            raise ConfigError(f"{where}{key} must be a finite number, not {value!r}")
    bad = (rule.choices and value not in rule.choices
           or rule.lo is not None and (value <= rule.lo if rule.lo_open else value < rule.lo)
           or rule.hi is not None and (value >= rule.hi if rule.hi_open else value > rule.hi))
    if bad:
        hint = f"; {rule.hint}" if rule.hint else f"; e.g. {field} = {example}"
        raise ConfigError(f"{where}{key} must be {rule.range_text()}, not {value!r}{hint}")
    return value


def _check_section(section: str, obj: Any, source: str) -> None:
    for f in dataclasses.fields(obj):
        key = f"{section}.{f.name}" if section else f.name
        if isinstance(getattr(obj, f.name), ModelConfig | DataConfig | TrainConfig):
            continue
        default = None if f.default is dataclasses.MISSING else f.default
        setattr(obj, f.name, check_field(key, getattr(obj, f.name), source, default))


@dataclass
class ModelConfig:
    family: str = "luong"
    # --- recurrent families -------------------------------------------------
    cell: str = "lstm"  # lstm | gru
    emb_size: int = 256
    hidden_size: int = 256
    layers: int = 2
    attention: str = "global"  # none | global | local-m | local-p
    score: str = "general"  # dot | general | concat | mlp (OpenNMT-py's) | location | additive (rnnsearch)
    window: int = 10  # D of local attention; sigma = D / 2
    input_feeding: bool = True
    reverse_source: bool = False
    # luong: a bidirectional encoder, each direction hidden_size / 2 wide, its outputs and
    # its final states per layer joined [forward; backward] (OpenNMT-py's brnn)
    bidirectional: bool = False
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
    # which side the context sentences come from: "source" (the previous source sentences)
    # or "target" (the previous target sentence: the reference in training, the model's
    # own translation when translating; encoded with the target embeddings)
    ctx_side: str = "source"
    tie_embeddings: bool = False
    # family 'transformer' (and 'concat'): pre-norm layers (x + sublayer(LayerNorm(x)),
    # a final LayerNorm after each stack, as OpenNMT-py's) instead of post-norm; the
    # LayerNorms' epsilon; a bias on the generator (OpenNMT-py's has one)
    pre_norm: bool = False
    norm_eps: float = 1e-5
    generator_bias: bool = False
    # a target-conditioned word-alignment head trained by guided alignment
    # (core/models/alignment_head.py; recurrent attention families only)
    alignment_head: bool = False
    # an imported family's own configuration as JSON text (family 'marian': the model's
    # config.json, core/models/marian.py); empty for the workbench's own families
    external: str = ""

    def validate(self, source: str = "") -> None:
        """Check every model field against its Rule (an int becomes a float where one is due),
        d_model a multiple of heads (Transformer families) and ctx_following 0 for concat;
        ConfigError naming the key."""
        _check_section("model", self, source)
        where = f"{source}: " if source else ""
        if self.family in FAMILIES and family_traits(self.family).transformer \
                and self.d_model % self.heads:
            raise ConfigError(
                f"{where}model.d_model = {self.d_model} must be a multiple of model.heads = "
                f"{self.heads} (each head gets d_model / heads dimensions); e.g. d_model = "
                f"{max(self.heads, self.d_model // self.heads * self.heads)} or heads = "
                f"{math.gcd(self.d_model, self.heads)}")
        if self.ctx_side == "target" and self.family in FAMILIES \
                and not family_traits(self.family).target_side:
            raise ConfigError(
                f"{where}model.ctx_side = 'target' needs a family that encodes its context "
                f"on its own ({', '.join(families_with(target_side=True))}), not "
                f"{self.family!r}; set model.ctx_side = 'source' or change the family")
        if self.ctx_side == "target" and self.ctx_following:
            raise ConfigError(
                f"{where}model.ctx_following must be 0 with model.ctx_side = 'target': the "
                "following sentences have no translation yet when a sentence is translated")
        if self.ctx_following and self.family == "concat":
            raise ConfigError(
                "model.ctx_following must be 0 for family 'concat': it prepends its context to "
                "the sentence and uses previous sentences only; set model.ctx_following = 0, "
                "or use family 'context_transformer' for following sentences")
        if self.bidirectional and (self.family != "luong" or self.hidden_size % 2):
            raise ConfigError(
                f"{where}model.bidirectional needs family 'luong' and an even "
                f"model.hidden_size (each direction gets half), not {self.family!r} with "
                f"{self.hidden_size}; set model.bidirectional = false")
        if self.alignment_head and self.family in FAMILIES \
                and not family_traits(self.family).alignment_head:
            raise ConfigError(
                f"{where}model.alignment_head is available for the families "
                f"{', '.join(families_with(alignment_head=True))}, not {self.family!r}; set "
                "model.alignment_head = false")
        changed = [k for k, on in (("pre_norm", self.pre_norm), ("norm_eps", self.norm_eps != 1e-5),
                                   ("generator_bias", self.generator_bias)) if on]
        readers = families_with(norm_options=True)
        if changed and self.family not in readers:
            raise ConfigError(
                f"{where}model.{changed[0]} is read by the families "
                f"{', '.join(repr(f) for f in readers)} only, not {self.family!r}; leave it "
                "at its default")


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
    # training-time budget in minutes (updates, validations and checkpoint saves, summed
    # over resumes); the run stops after the step that reaches it; 0 = no time limit
    max_minutes: float = 0.0
    clip_norm: float = 5.0
    label_smoothing: float = 0.0
    sampled_softmax: int = 0  # 0 = full softmax; K = Jean et al. 2015 over K candidate words
    # weight of the guided-alignment loss (attention pulled towards eflomal's alignments of
    # the training split; core/train/guidance.py); 0 = off
    guided_alignment: float = 0.0
    # where the guide's links come from: "" = eflomal's grow-diag-final-and links; "RUN" or
    # "RUN,REVERSE_RUN" = those trained runs' own attention (core/services/attention_links.py)
    guide_runs: str = ""
    valid_every: int = 500
    early_stop_patience: int = 0  # validations without dev-perplexity gain; 0 = off
    keep_best: int = 2
    # also keep the checkpoint of each validation whose step is a multiple of this, as
    # step-<step>.pt (to choose among or average later: `runs average`); 0 = off
    keep_every: int = 0
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
    # where this run's attention is read as word alignments by default: "" = its family's
    # reading (core.families), or the reading `align --remember` measured best for it
    alignment_reading: str = ""
    # the beam's length penalty (GNMT's alpha; 0 = the plain sum of log-probabilities)
    # this run translates with unless a command or screen says otherwise: chosen on its
    # dev split by `evaluate --tune-length-penalty` (core.services.length_penalty)
    length_penalty: float = 0.0

    def validate(self, source: str = "") -> RunConfig:
        """Every field against its Rule (RULES), then the rules between fields;
        ConfigError naming the key and what to do. Returns self."""
        _check_section("", self, source)
        self.model.validate(source)
        _check_section("data", self.data, source)
        _check_section("train", self.train, source)
        where = f"{source}: " if source else ""
        if not DEVICE_RE.match(self.train.device):
            raise ConfigError(f"{where}train.device must be auto, cpu, cuda or cuda:N, not "
                              f"{self.train.device!r}")
        if self.train.stage == 2:
            self._check_stage2(where)
        if self.train.guide_runs and self.train.guided_alignment <= 0:
            raise ConfigError(
                f"{where}train.guide_runs names the runs whose attention guides the alignment "
                "loss: set train.guided_alignment > 0 too, or train.guide_runs = ''")
        if self.model.alignment_head and self.train.guided_alignment <= 0:
            raise ConfigError(
                f"{where}model.alignment_head is trained by guided alignment only: set "
                "train.guided_alignment > 0 (e.g. 1.0), or model.alignment_head = false")
        return self

    def _check_stage2(self, where: str) -> None:
        """train.stage = 2 trains only what a trained run lacks: the context parts of a
        two-stage context_transformer, or a recurrent model's alignment head."""
        if self.model.alignment_head:
            return
        if self.model.family != "context_transformer":
            raise ConfigError(
                f"{where}train.stage = 2 trains the context parts of a context_transformer, "
                f"or the alignment head of a {'/'.join(families_with(alignment_head=True))} "
                "model, not "
                f"a {self.model.family!r} model: set model.family = 'context_transformer' "
                "(strategy 'ts') or model.alignment_head = true, or train.stage = 0")
        if self.model.strategy != "ts":
            raise ConfigError(
                f"{where}train.stage = 2 needs model.strategy = 'ts' (two-stage), not "
                f"{self.model.strategy!r}: under 'ws' the context encoder shares the source "
                "encoder's weights, so it cannot be trained alone; set model.strategy = 'ts', "
                "or train.stage = 0")

    def to_dict(self) -> dict[str, Any]:
        """The config as nested plain dicts ({'name': ..., 'model': {...}, ...}), for TOML,
        JSON and checkpoints."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], source: str = "") -> RunConfig:
        """A validated RunConfig from nested dicts (as `to_dict` writes them); ConfigError on
        unknown keys, a section that is not a table or a value out of its rule."""
        sections = {"model": ModelConfig, "data": DataConfig, "train": TrainConfig}
        where = f"{source}: " if source else ""
        top = {f.name for f in dataclasses.fields(cls)}
        for key in raw:
            if key not in top:
                raise ConfigError(f"{where}unknown key {key!r} (known: {sorted(top)})")
        kwargs: dict[str, Any] = {}
        for key, value in raw.items():
            if key in sections:
                kind = sections[key]
                if not isinstance(value, dict):
                    raise ConfigError(f"{where}[{key}] must be a table")
                known = {f.name: f for f in dataclasses.fields(kind)}
                for sub in value:
                    if sub not in known:
                        raise ConfigError(
                            f"{where}unknown key {key}.{sub!r}; known keys: {sorted(known)}"
                        )
                kwargs[key] = kind(**value)
            else:
                kwargs[key] = value
        try:
            config = cls(**kwargs)
        except TypeError as exc:  # e.g. [model] given as a value
            raise ConfigError(f"{where}{exc}") from None
        return config.validate(source)


def load_config(path: str | Path) -> RunConfig:
    """The RunConfig of a TOML file; every problem (unreadable, too large for
    NMT_WB_MAX_INPUT_MB, not UTF-8, not TOML, nested too deeply, unknown keys, values
    out of range) is a ConfigError naming the file."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > limits.max_input_bytes():
            raise ConfigError(f"{path}: holds {size / limits.MB:,.1f} MB, more than a config "
                              f"file can (the limit is {limits.INPUT_MB.value()} MB; "
                              f"{limits.INPUT_MB.how_to_raise()}); choose the TOML file")
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); save the file as UTF-8 "
                          "and try again") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc}); choose a readable "
                          "TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix the file and try again") from None
    except RecursionError:
        raise ConfigError(f"{path}: not a config: its TOML is nested too deeply; fix the "
                          "file and try again") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix the file and try again") from None
    return RunConfig.from_dict(raw, source=str(path))


PRESET_DIR = Path(__file__).resolve().parent.parent / "resources" / "presets"


def list_presets() -> list[str]:
    """Names of the presets in resources/presets (file stems), sorted."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def load_preset(name: str) -> RunConfig:
    """The RunConfig of preset `name` (a name from list_presets, never a path);
    ConfigError naming the presets when there is no such preset."""
    # a preset is a name from the list, never a path (`--preset ../../file`)
    if name not in list_presets():
        raise ConfigError(f"no preset named {name!r}; available: {', '.join(list_presets())}")
    return load_config(PRESET_DIR / f"{name}.toml")

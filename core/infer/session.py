"""A translation session: one or several trained runs loaded once, then used by the
CLI and the GUI to translate text or documents and to force-decode references.

    session = TranslationSession.open(workspace, ["luong-global", "luong-local-p"])
    session.translate(["Hola."], beam=5)          -> list[Translation]
    session.force("Hola.", "Hello.")              -> ForcedTranslation (forced attention)
    session.translate_documents([[...], [...]])   -> context models see their document

Several runs form an ensemble (they must share the target vocabulary); the first run's
vocabularies and preprocessors tokenise the text.
"""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from core import limits
from core.errors import CheckpointError, ConfigError
from core.families import family_traits
from core.infer.scoring import ForcedScorer
from core.infer.search import NonFiniteScores
from core.infer.target_context import coverage, shares_vocabulary, target_context_models
from core.infer.translate import (
    Translation,
    detokenize,
    translate_documents,
    translate_sentences,
)
from core.jobs import JobContext
from core.models import int8, int8_release
from core.train.artifacts import LoadedModel, imported_kind, load_model
from core.train.device import amp_active, autocast
from core.workspace.store import Workspace


@dataclass
class ForcedTranslation(Translation):
    """A Translation from forced decoding, plus (Transformer families) the cross-attention
    of every decoder layer and head: layers x heads x (len(target_ids) + 1) x
    len(source_tokens); `attention` is its last layer's mean over heads. None for RNN
    models and ensembles. `alignment`: a run with an alignment head
    (model.alignment_head): the head's (len(target_ids) + 1) x len(source_tokens) rows,
    the 'head' reading (core.evaluate.readings); None otherwise."""

    layer_attention: np.ndarray | None = None
    alignment: np.ndarray | None = None


@dataclass
class TranslationSession:
    members: list[LoadedModel]
    names: list[str]
    #: decode in bf16 autocast (translate --amp) where the device has native bf16; the
    #: output layer's matmul is most of a beam-search step (docs/benchmarks.md)
    amp: bool = False
    #: decode each batch over a lexical shortlist (core.infer.shortlist; translate
    #: --shortlist), or over the whole target vocabulary when None
    shortlist: Any = None
    #: products against the weight matrices in int8 with per-row scales
    #: (core.models.int8; translate --int8, the Translate screen's box); set by use_int8
    int8: bool = False
    #: the beam's length penalty (GNMT's alpha) a call uses unless it passes its own:
    #: the first run's (its config.length_penalty, chosen by evaluate
    #: --tune-length-penalty); a command's --length-penalty sets it for the session
    length_penalty: float = 0.0
    #: whether drop_fp32 dropped the members' fp32 copies of their int8 weights
    _released: bool = field(default=False, init=False, repr=False)

    @classmethod
    def open(cls, workspace: Workspace, run_refs: Sequence[int | str], which: str = "best",
             device: str | torch.device = "cpu") -> TranslationSession:
        """Load runs `run_refs` (names or ids) of `workspace` at checkpoint `which` on
        `device`; several form an ensemble. ConfigError for none or differing vocabularies."""
        if not run_refs:
            raise ConfigError("choose at least one trained run")
        members, names = [], []
        for ref in run_refs:
            info = workspace.get_run(ref)
            members.append(load_model(workspace.run_dir(info.id), which, device,
                                      run_config=info.config))
            names.append(info.name)
        return cls.from_loaded(members, names)

    @classmethod
    def from_dirs(cls, run_dirs: Sequence[str | Path], which: str = "best",
                  device: str | torch.device = "cpu") -> TranslationSession:
        """Load the runs in folders `run_dirs` (named after the folders) at checkpoint `which`;
        ConfigError when their vocabularies differ."""
        members = [load_model(d, which, device) for d in run_dirs]
        return cls.from_loaded(members, [Path(d).name for d in run_dirs])

    @classmethod
    def from_loaded(cls, members: list[LoadedModel], names: list[str]) -> TranslationSession:
        """A session of loaded models; ConfigError when a member's source or target
        vocabulary, or the side its context comes from, differs from the first's."""
        first = members[0]
        first_side = getattr(first.config.model, "ctx_side", "source")
        for m, name in zip(members[1:], names[1:], strict=True):
            if getattr(m.config.model, "ctx_side", "source") != first_side:
                raise ConfigError(
                    f"run {name!r} reads its context from another side than {names[0]!r} "
                    "(model.ctx_side): an ensemble's members must see the same context")
            if m.tgt_vocab.itos != first.tgt_vocab.itos:
                raise ConfigError(
                    f"run {name!r} has another target vocabulary than {names[0]!r}: an ensemble "
                    "needs runs trained with the same vocabularies")
            if m.src_vocab.itos != first.src_vocab.itos:
                raise ConfigError(f"run {name!r} has another source vocabulary than {names[0]!r}")
        return cls(members, names,
                   length_penalty=float(getattr(first.config, "length_penalty", 0.0)))

    # --- properties -----------------------------------------------------------------
    @property
    def first(self) -> LoadedModel:
        """The first run's LoadedModel: its vocabularies and preprocessors serve the session."""
        return self.members[0]

    @property
    def models(self) -> list:
        """The members' Seq2Seq models, in order."""
        return [m.model for m in self.members]

    @property
    def is_context_model(self) -> bool:
        """True when the first run's family is a context family (sees its document)."""
        return family_traits(self.first.config.model.family).context

    @property
    def context_sentences(self) -> int:
        """K, the previous sentences a context model sees (0 for other models)."""
        return self.first.config.model.ctx_sentences if self.is_context_model else 0

    @property
    def context_following(self) -> int:
        """F, the following sentences a context model sees (0 for other models and for
        runs saved before model.ctx_following existed)."""
        return getattr(self.first.config.model, "ctx_following", 0) if self.is_context_model else 0

    @property
    def context_side(self) -> str:
        """'target' for a run trained on the previous target sentence as context
        (model.ctx_side: it always translates with its own previous translations), else
        'source'."""
        model = self.first.config.model
        return getattr(model, "ctx_side", "source") if self.is_context_model else "source"

    @property
    def onmt_style(self) -> bool:
        """True when every member was imported from OpenNMT-py: its beam then searches as
        onmt_translate does (core.infer.beam.beam_search's onmt_style)."""
        return all(imported_kind(m.checkpoint.parent) == "opennmt-py" for m in self.members)

    def text_side(self) -> tuple[Any, Any, Any, Any]:
        """(source vocabulary, target vocabulary, source preprocessor, target
        preprocessor) of the first member (an ensemble's members share them)."""
        f = self.first
        return f.src_vocab, f.tgt_vocab, f.src_pre, f.tgt_pre

    @property
    def device(self) -> torch.device:
        """The device the models are on."""
        param = next(self.first.model.parameters(), None)
        return torch.device("cpu") if param is None else param.device

    def use_int8(self, on: bool = True) -> str:
        """Decode (and force) with int8 products from now on, or in fp32 again (`on`
        False; models whose fp32 copies were dropped are loaded again first): the
        session's own setting, for a session used by one command (the GUI's shared
        sessions pass `int8` per call instead). Returns the line naming the path that
        will run. ConfigError off the CPU or without a quantized engine."""
        if on:
            self._prepare_int8()
        else:
            self.ensure_fp32()
        self.int8 = bool(on)
        return self.path_text()

    def drop_fp32(self) -> int:
        """For a session that only searches in int8 (translate --int8): one int8 search of
        a one-word sentence packs the weights searches use, then each member drops its
        fp32 copies of them (core.models.int8_release.release) and a second such search checks
        that nothing reads them in fp32. Any later fp32 work (precision without int8,
        forced scoring, a shortlist) loads the members again first (ensure_fp32).
        Returns the bytes dropped: 0 with int8 off or a shortlist (which reads the output
        layer's rows in fp32), or where the check failed (the models are then loaded
        again and decode as without this call)."""
        if not self.int8 or self.shortlist is not None or self.device.type != "cpu":
            return 0
        self.translate(["a"], beam=2)
        freed = sum(int8_release.release(m)[1] for m in self.models)
        self._released = freed > 0
        try:
            self.translate(["a"], beam=2)
        except RuntimeError:  # a search read a dropped weight in fp32: keep fp32 copies
            self.ensure_fp32()
            return 0
        return freed

    def ensure_fp32(self) -> None:
        """The members' fp32 weights, loaded again from their checkpoints where
        drop_fp32 dropped them (new models, prepared for int8 again when the session
        decodes in int8, keeping their fp32 copies); nothing otherwise."""
        if not self._released:
            return
        device = self.device
        self.members = [load_model(m.checkpoint.parent, m.checkpoint.name, device,
                                   run_config=m.run_config) for m in self.members]
        self._target_models = None
        self._released = False
        if self.int8:  # a forced pass in int8 reads what prepare registers
            self._prepare_int8()

    def _prepare_int8(self) -> None:
        """Every member's weights made int8 once (core.models.int8.prepare: a shipped
        int8 run's own rows and scales, others quantised per row); ConfigError off the
        CPU or without a quantized engine in torch."""
        if self.device.type != "cpu":
            raise ConfigError(f"int8 inference runs on the CPU only, not {self.device}: "
                              "use --device cpu, or leave int8 off")
        if not int8.available():
            raise ConfigError("this PyTorch has no quantized engine (fbgemm / oneDNN): "
                              "leave int8 off")
        for member in self.members:
            int8.prepare(member.model, member.compact)

    def path_text(self, amp: bool | None = None, q8: bool | None = None) -> str:
        """The arithmetic decoding will use (None: the session's settings), in one line:
        'int8 (x86 engine, ...)', 'bf16 autocast' or 'fp32'."""
        if self.int8 if q8 is None else q8:
            self._prepare_int8()
            models = [m.model for m in self.members]
            return int8.status_text(models, sum(int8_release.released(m)[1] for m in models))
        return "bf16 autocast" if amp_active(self.device, self.amp if amp is None else amp) \
            else "fp32"

    @contextlib.contextmanager
    def precision(self, amp: bool | None = None, q8: bool | None = None):
        """The context to decode in: int8 products when `q8` (None: the session's
        `int8`; then without autocast), else bf16 autocast when `amp` (None: the
        session's `amp`) is on and the device has native bf16, else nothing (fp32). A
        search that meets non-finite scores inside it ends in a CheckpointError naming
        the checkpoints (core.infer.search.NonFiniteScores)."""
        q8 = self.int8 if q8 is None else q8
        if q8:
            self._prepare_int8()
        else:
            self.ensure_fp32()
        amp = (self.amp if amp is None else amp) and not q8
        try:
            with autocast(self.device, amp), int8.products(q8):
                yield
        except NonFiniteScores as exc:
            raise CheckpointError(self._non_finite(exc, amp_active(self.device, amp))) from None

    def _non_finite(self, exc: Exception, bf16: bool) -> str:
        """The message for a search's NonFiniteScores: which checkpoints, what to do."""
        where = ", ".join(str(m.checkpoint) for m in self.members)
        also = " or translate without --amp (bf16 may overflow)" if bf16 else ""
        return (f"{where}: translating stopped: {exc}; the checkpoint is damaged or its run "
                f"diverged: pick another checkpoint (e.g. 'best'){also}, or train the run again")

    # --- work ---------------------------------------------------------------------
    def translate(self, sentences: list[str], beam: int = 5, unk_replace: bool = False,
                  dictionary: dict[str, str] | None = None, ctx: JobContext | None = None,
                  target_context: bool = False, amp: bool | None = None,
                  int8: bool | None = None, **options: Any) -> list[Translation]:
        """Sentence-level translation; a context model translates the list as one
        document (each sentence sees its predecessors; with `target_context`, the
        model's own translations of them, see translate_documents). `amp`: decode in
        bf16 where possible, `int8` with int8 products (None: the session's settings).
        ConfigError for a beam beyond core.limits.MAX_BEAM."""
        limits.check_beam(beam, option="the beam size")
        options.setdefault("shortlist", self.shortlist)
        options.setdefault("length_penalty", self.length_penalty)
        if options["shortlist"] is not None:  # reads the output layer's rows in fp32
            self.ensure_fp32()
        if self.is_context_model:
            return self.translate_documents([sentences], beam=beam, unk_replace=unk_replace,
                                            dictionary=dictionary, ctx=ctx,
                                            target_context=target_context, amp=amp,
                                            int8=int8, **options)[0]
        if target_context:
            raise ConfigError(self._no_target_context())
        options.setdefault("onmt_style", self.onmt_style)
        with self.precision(amp, int8):
            return translate_sentences(self.models, *self.text_side(), sentences, beam=beam,
                                       unk_replace=unk_replace, dictionary=dictionary, ctx=ctx,
                                       **options)

    def translate_documents(self, documents: list[list[str]], beam: int = 5,
                            ctx: JobContext | None = None, target_context: bool = False,
                            amp: bool | None = None, int8: bool | None = None,
                            **options: Any) -> list[list[Translation]]:
        """Documents in order; a context model sees each sentence's previous source
        sentences, or with `target_context` its own previous translations (mapped to
        source ids by token string when the run's vocabularies differ)."""
        limits.check_beam(beam, option="the beam size")
        options.setdefault("shortlist", self.shortlist)
        options.setdefault("length_penalty", self.length_penalty)
        if options["shortlist"] is not None:  # reads the output layer's rows in fp32
            self.ensure_fp32()
        if not self.is_context_model:
            if target_context:
                raise ConfigError(self._no_target_context())
            flat = [s for doc in documents for s in doc]
            out = iter(self.translate(flat, beam=beam, ctx=ctx, amp=amp, int8=int8, **options))
            return [[next(out) for _ in doc] for doc in documents]
        if self.context_side == "target":  # trained on target ids: its own, unmapped
            models, target_context = self.models, True
        else:
            models = self.target_context_models() if target_context else self.models
        with self.precision(amp, int8):
            return translate_documents(models, *self.text_side(), documents, beam=beam,
                                       ctx_sentences=self.context_sentences,
                                       ctx_following=self.context_following, ctx=ctx,
                                       target_context=target_context, **options)

    # --- the model's own translations as context ------------------------------------
    @property
    def shares_vocabulary(self) -> bool:
        """Whether target ids are source ids (joint vocabulary) in every member."""
        return all(shares_vocabulary(m.src_vocab, m.tgt_vocab) for m in self.members)

    def target_context_models(self) -> list:
        """The members' models for target-side context: as they are with a joint
        vocabulary, else wrapped to map target ids to source ids (core.infer.target_context)."""
        cached = getattr(self, "_target_models", None)
        if cached is None:
            cached = self._target_models = target_context_models(self.members)
        return cached

    def target_context_note(self) -> str | None:
        """None with a joint vocabulary or a target-side context model; else what mapping
        target-side context means."""
        if self.shares_vocabulary or self.context_side == "target":
            return None
        found, total = coverage(self.first.src_vocab, self.first.tgt_vocab)
        return (f"{self.names[0]!r} has separate source and target vocabularies: its own "
                f"translations become context through their token strings ({found} of "
                f"{total} target tokens are in the source vocabulary, the others become <unk>)")

    def _no_target_context(self) -> str:
        family = self.first.config.model.family
        return (f"target-side context (the model's own previous translations) needs a "
                f"context-aware run (family concat or context_transformer); "
                f"{self.names[0]!r} is a {family!r} run that translates each sentence on its "
                "own: choose a context model or leave the option off")

    def force(self, source: str, target: str, context: list[str] | None = None,
              following: list[str] | None = None) -> ForcedTranslation:
        """Score `target` as the translation of `source` (teacher forcing) and return it
        with its attention: the reference's alignment as the model sees it (and, for a
        single Transformer-family run, every layer's and head's). A context model sees
        `context` (previous sentences, oldest first: source sentences, or target sentences
        for a model with model.ctx_side 'target') and, when it uses following
        sentences, `following` (the next source sentences, in order); none given is a
        document edge ('<doc>', core.data.context)."""
        scorer = ForcedScorer.for_session(self)  # fp32 weights again (ensure_fp32)
        s_tok, t_tok = scorer.source_tokens(source), scorer.target_tokens(target)
        item = scorer.item(source, target, context or [], following or [])
        tgt_ids = item.tgt
        result = scorer.score([item])[0]
        tgt_pre, tgt_vocab = self.first.tgt_pre, self.first.tgt_vocab
        return ForcedTranslation(
            source=source, source_tokens=s_tok, target_ids=tgt_ids, target_tokens=t_tok,
            text=detokenize(t_tok, tgt_pre, tgt_vocab), score=result.log_prob,
            log_prob=result.log_prob, attention=result.attention, positions=result.positions,
            gates=result.gates, layer_attention=result.layer_attention,
            alignment=result.alignment)

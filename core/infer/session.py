"""A translation session: one or several trained runs loaded once, then used by the
CLI and the GUI to translate text or documents and to force-decode references.

    session = TranslationSession.open(workspace, ["luong-global", "luong-local-p"])
    session.translate(["Hola."], beam=5)          -> list[Translation]
    session.force("Hola.", "Hello.")              -> Translation (forced attention)
    session.translate_documents([[...], [...]])   -> context models see their document

Several runs form an ensemble (they must share the target vocabulary); the first run's
vocabularies and preprocessors tokenise the text.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from core.errors import ConfigError
from core.infer.forced import score_targets
from core.infer.translate import (
    Translation,
    detokenize,
    pad_batch,
    source_tokens,
    translate_documents,
    translate_sentences,
)
from core.jobs import JobContext
from core.train.artifacts import LoadedModel, load_model

CONTEXT_FAMILIES = ("concat", "context_transformer")


@dataclass
class TranslationSession:
    members: list[LoadedModel]
    names: list[str]

    @classmethod
    def open(cls, workspace, run_refs: Sequence[int | str], which: str = "best",
             device: str | torch.device = "cpu") -> TranslationSession:
        if not run_refs:
            raise ConfigError("choose at least one trained run")
        members, names = [], []
        for ref in run_refs:
            info = workspace.get_run(ref)
            members.append(load_model(workspace.run_dir(info.id), which, device))
            names.append(info.name)
        return cls.from_loaded(members, names)

    @classmethod
    def from_dirs(cls, run_dirs: Sequence[str | Path], which: str = "best",
                  device: str | torch.device = "cpu") -> TranslationSession:
        members = [load_model(d, which, device) for d in run_dirs]
        return cls.from_loaded(members, [Path(d).name for d in run_dirs])

    @classmethod
    def from_loaded(cls, members: list[LoadedModel], names: list[str]) -> TranslationSession:
        first = members[0]
        for m, name in zip(members[1:], names[1:], strict=True):
            if m.tgt_vocab.itos != first.tgt_vocab.itos:
                raise ConfigError(
                    f"run {name!r} has another target vocabulary than {names[0]!r}: an ensemble "
                    "needs runs trained with the same vocabularies")
            if m.src_vocab.itos != first.src_vocab.itos:
                raise ConfigError(f"run {name!r} has another source vocabulary than {names[0]!r}")
        return cls(members, names)

    # --- properties -----------------------------------------------------------------
    @property
    def first(self) -> LoadedModel:
        return self.members[0]

    @property
    def models(self) -> list:
        return [m.model for m in self.members]

    @property
    def is_context_model(self) -> bool:
        return self.first.config.model.family in CONTEXT_FAMILIES

    @property
    def context_sentences(self) -> int:
        return self.first.config.model.ctx_sentences if self.is_context_model else 0

    def _text_side(self) -> tuple[Any, Any, Any, Any]:
        f = self.first
        return f.src_vocab, f.tgt_vocab, f.src_pre, f.tgt_pre

    # --- work ---------------------------------------------------------------------
    def translate(self, sentences: list[str], beam: int = 5, unk_replace: bool = False,
                  dictionary: dict[str, str] | None = None, ctx: JobContext | None = None,
                  **options: Any) -> list[Translation]:
        """Sentence-level translation; a context model translates the list as one
        document (each sentence sees its predecessors)."""
        if self.is_context_model:
            return self.translate_documents([sentences], beam=beam, unk_replace=unk_replace,
                                            dictionary=dictionary, ctx=ctx, **options)[0]
        return translate_sentences(self.models, *self._text_side(), sentences, beam=beam,
                                   unk_replace=unk_replace, dictionary=dictionary, ctx=ctx,
                                   **options)

    def translate_documents(self, documents: list[list[str]], beam: int = 5,
                            ctx: JobContext | None = None, **options: Any) -> list[list[Translation]]:
        if not self.is_context_model:
            flat = [s for doc in documents for s in doc]
            out = iter(self.translate(flat, beam=beam, ctx=ctx, **options))
            return [[next(out) for _ in doc] for doc in documents]
        return translate_documents(self.models, *self._text_side(), documents, beam=beam,
                                   ctx_sentences=self.context_sentences, ctx=ctx, **options)

    def force(self, source: str, target: str, context: list[str] | None = None) -> Translation:
        """Score `target` as the translation of `source` (teacher forcing) and return it
        with its attention: the reference's alignment as the model sees it."""
        from core.data.context import CONTEXT_START
        from core.infer.ensemble import Ensemble

        src_vocab, tgt_vocab, src_pre, tgt_pre = self._text_side()
        s_tok = source_tokens(source, src_pre, src_vocab)
        t_tok = source_tokens(target, tgt_pre, tgt_vocab)
        model = self.models[0] if len(self.members) == 1 else Ensemble(self.models)
        device = next(self.models[0].parameters()).device
        src, src_lens = pad_batch([list(src_vocab.encode(s_tok))], device)
        extra: dict[str, Any] = {}
        if self.is_context_model:
            ctx_ids = [t for sent in (context or [])[-self.context_sentences:]
                       for t in src_vocab.encode(source_tokens(sent, src_pre, src_vocab))]
            ctx_ids = ctx_ids or src_vocab.encode([CONTEXT_START])
            extra["ctx"], extra["ctx_lens"] = pad_batch([ctx_ids], device)
        tgt_ids = list(tgt_vocab.encode(t_tok))
        result = score_targets(model, src, src_lens, [tgt_ids], **extra)[0]
        return Translation(source=source, source_tokens=s_tok, target_ids=tgt_ids,
                           target_tokens=t_tok, text=detokenize(t_tok, tgt_pre, tgt_vocab),
                           score=result.log_prob, log_prob=result.log_prob,
                           attention=result.attention, positions=result.positions,
                           gates=result.gates)

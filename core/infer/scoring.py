"""The one forced-scoring pipeline: text (or tokens) -> the model's ids -> context ids
-> padded batches -> teacher-forced scores and attention (core.infer.forced).

Every forced use goes through `ForcedScorer`: a session's `force` (one pair, the
Attention screen), the perplexity of a test set with document context and the
contrastive score functions (core.services.contrastive_eval), and the attention of
gold-aligned pairs (core.evaluate.attention_aer). Text is tokenised as in training (the Preprocessor,
then the subword splitter when the vocabulary has one: core.data.dataset); the context of
a context model is built by core.data.context.sentence_context from its previous and
following sentences.

    scorer = ForcedScorer.for_session(session)
    item = scorer.item("La casa.", "The house.", previous=["Hola."])
    result = scorer.score([item])[0]          # ForcedResult: log_prob, attention ...
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from core.data.context import CONTEXT_START, sentence_context
from core.infer.forced import ForcedResult, score_targets
from core.infer.translate import as_model, pad_batch, source_tokens
from core.jobs import JobContext
from core.models.base import Seq2Seq
from core.models.int8 import products as int8_products


@dataclass
class ForcedItem:
    """One pair to score: source ids, target ids (no BOS/EOS) and, for a context model,
    its context ids (None otherwise)."""

    src: list[int]
    tgt: list[int]
    ctx: list[int] | None = None


class ForcedScorer:
    """Teacher-forced scoring of (source, target) pairs with one model or an ensemble.

    k_context / k_following: the context model's previous and following sentence counts
    (both 0 for a sentence-level model: items then carry no context). ctx_side: 'source',
    or 'target' for a model whose context is the previous target sentence
    (model.ctx_side): its context sentences are then target text, tokenised and
    indexed as targets."""

    def __init__(self, model: Seq2Seq | Sequence[Seq2Seq], src_vocab: Any, tgt_vocab: Any,
                 src_pre: Any, tgt_pre: Any, k_context: int = 0, k_following: int = 0,
                 device: torch.device | str | None = None, ctx_side: str = "source",
                 int8: bool = False):
        self.model = as_model(model)
        self.src_vocab, self.tgt_vocab = src_vocab, tgt_vocab
        self.src_pre, self.tgt_pre = src_pre, tgt_pre
        self.k_context, self.k_following = k_context, k_following
        if ctx_side not in ("source", "target"):
            raise ValueError(f"ctx_side must be 'source' or 'target', not {ctx_side!r}")
        self.ctx_side = ctx_side
        self.int8 = int8  # products against prepared weights in int8 (core.models.int8)
        if device is None:
            param = next(self.model.parameters(), None)
            device = torch.device("cpu") if param is None else param.device
        self.device = torch.device(device)
        self.start_id = src_vocab.encode([CONTEXT_START])[0]

    @classmethod
    def for_session(cls, session: Any) -> ForcedScorer:
        """The scorer of a TranslationSession (its ensemble when it has several runs),
        with the session's fp32 weights loaded again where int8 decoding dropped them
        (forced passes read some of them in fp32: TranslationSession.ensure_fp32)."""
        ensure_fp32 = getattr(session, "ensure_fp32", None)
        if ensure_fp32 is not None:
            ensure_fp32()
        f = session.first
        return cls(session.models, f.src_vocab, f.tgt_vocab, f.src_pre, f.tgt_pre,
                   session.context_sentences, session.context_following,
                   ctx_side=session.context_side, int8=getattr(session, "int8", False))

    @property
    def uses_context(self) -> bool:
        """True when the models see context sentences (previous or following)."""
        return self.k_context > 0 or self.k_following > 0

    # --- text -> ids ------------------------------------------------------------------
    def source_tokens(self, text: str) -> list[str]:
        """The source-side tokens of `text`, one per id (training's tokenisation)."""
        return source_tokens(text, self.src_pre, self.src_vocab)

    def target_tokens(self, text: str) -> list[str]:
        """The target-side tokens of `text`, one per id (training's tokenisation)."""
        return source_tokens(text, self.tgt_pre, self.tgt_vocab)

    def source_ids(self, text: str) -> list[int]:
        """Source vocabulary ids of `text` (UNK for unknown tokens)."""
        return list(self.src_vocab.encode(self.source_tokens(text)))

    def target_ids(self, text: str) -> list[int]:
        """Target vocabulary ids of `text`, without BOS/EOS (UNK for unknown tokens)."""
        return list(self.tgt_vocab.encode(self.target_tokens(text)))

    def context_ids(self, previous: Sequence[str] = (), following: Sequence[str] = ()
                    ) -> list[int] | None:
        """The context ids of a sentence whose document has `previous` sentences before
        it (oldest first) and `following` after it; none given is a document edge.
        They are source sentences, or target sentences when ctx_side is 'target'. None
        for a sentence-level model."""
        if not self.uses_context:
            return None
        ids = self.target_ids if self.ctx_side == "target" else self.source_ids
        return self.context_from_ids([ids(s) for s in previous], [ids(s) for s in following])

    def context_from_ids(self, previous: Sequence[Sequence[int]] = (),
                         following: Sequence[Sequence[int]] = ()) -> list[int] | None:
        """context_ids for sentences already turned into ids (of the context's side)."""
        if not self.uses_context:
            return None
        return sentence_context(list(previous), list(following), self.k_context,
                                self.k_following, self.start_id)

    def item(self, source: str, target: str, previous: Sequence[str] = (),
             following: Sequence[str] = ()) -> ForcedItem:
        """The ForcedItem of a source/target pair whose document has `previous` and
        `following` sentences around it (on the context's side, see context_ids; ctx None
        for sentence-level models)."""
        return ForcedItem(self.source_ids(source), self.target_ids(target),
                          self.context_ids(previous, following))

    # --- scoring ----------------------------------------------------------------------
    def score(self, items: Sequence[ForcedItem], batch_size: int = 32,
              ctx: JobContext | None = None) -> list[ForcedResult]:
        """One ForcedResult per item, in order, scored `batch_size` at a time. An item
        with an empty source is scored on one <unk> (its attention has one column)."""
        out: list[ForcedResult] = []
        for start in range(0, len(items), batch_size):
            if ctx is not None:
                ctx.wait_if_paused()
                ctx.check_cancelled()
            chunk = items[start:start + batch_size]
            src, src_lens = pad_batch([it.src or [1] for it in chunk], self.device)  # B x S
            extra: dict[str, torch.Tensor] = {}
            if self.uses_context:
                contexts = [it.ctx if it.ctx is not None else self.context_from_ids()
                            for it in chunk]
                extra["ctx"], extra["ctx_lens"] = pad_batch(contexts, self.device)  # B x C
            with int8_products(self.int8):
                out.extend(score_targets(self.model, src, src_lens,
                                         [it.tgt for it in chunk], **extra))
        return out

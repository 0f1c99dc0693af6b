"""The model's own previous translations as a context model's context.

`translate_documents(target_context=True)` feeds the target ids of earlier
translations as `ctx`, which a context model embeds with its SOURCE embedding. That is
right only when the run's source and target vocabularies are the same (a joint
vocabulary: `data.joint_vocab`, saved as identical src.vocab / tgt.vocab). For separate
vocabularies `TargetIdsAsSource` wraps each model and maps every context id, a target
id, to the source id of the same token string (<unk> when the source vocabulary lacks
it) before the model sees it. The special ids (<pad> <unk> <s> </s> <doc>) are the same
in every vocabulary, so context breaks and document starts pass through unchanged.

    models = target_context_models(loaded_members)  # the members themselves when joint
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from core.models.base import Seq2Seq, Seq2SeqOutput, State


def shares_vocabulary(src_vocab: Any, tgt_vocab: Any) -> bool:
    """True when target ids are source ids (the same tokens in the same order)."""
    return src_vocab == tgt_vocab or list(src_vocab.itos) == list(tgt_vocab.itos)


def target_to_source_table(src_vocab: Any, tgt_vocab: Any) -> Tensor:
    """ids of the target vocabulary -> ids of the source vocabulary, by token string.

    1-D long, one entry per target id; UNK where the source vocabulary lacks the token."""
    return torch.tensor(src_vocab.encode(list(tgt_vocab.itos)), dtype=torch.long)


def coverage(src_vocab: Any, tgt_vocab: Any) -> tuple[int, int]:
    """(target tokens that the source vocabulary has, target vocabulary size)."""
    stoi = set(src_vocab.itos)
    return sum(t in stoi for t in tgt_vocab.itos), len(tgt_vocab.itos)


class TargetIdsAsSource(Seq2Seq):
    """`model` with its `ctx` ids mapped from target to source ids through `table`
    (target vocabulary size,); everything else passes through unchanged."""

    def __init__(self, model: Seq2Seq, table: Tensor):
        """Wrap `model`; `table` (1-D long, the source id of each target id, see
        target_to_source_table) becomes a non-persistent buffer on the model's device."""
        super().__init__()
        self.model = model
        self.family = model.family
        if hasattr(model, "tgt_vocab_size"):
            self.tgt_vocab_size = model.tgt_vocab_size
        elif isinstance(getattr(model, "tgt_embed", None), torch.nn.Embedding):
            self.tgt_vocab_size = model.tgt_embed.num_embeddings
        param = next(model.parameters(), None)
        device = param.device if param is not None else torch.device("cpu")
        self.register_buffer("table", table.to(device), persistent=False)

    def _mapped(self, extra: dict[str, Any]) -> dict[str, Any]:
        if extra.get("ctx") is None:
            return extra
        return {**extra, "ctx": self.table[extra["ctx"]]}  # batch x C

    def forward(self, src: Tensor, src_lens: Tensor, tgt_in: Tensor, **extra) -> Seq2SeqOutput:
        """`model`'s forward with `ctx` (batch x C target ids) mapped to source ids; src
        batch x S, tgt_in batch x T as in Seq2Seq.forward."""
        return self.model(src, src_lens, tgt_in, **self._mapped(extra))

    def encode(self, src: Tensor, src_lens: Tensor, **extra) -> State:
        """`model.encode` with `ctx` (batch x C target ids) mapped to source ids."""
        return self.model.encode(src, src_lens, **self._mapped(extra))

    def init_state(self, enc: State) -> State:
        """`model.init_state(enc)` unchanged (batch x ... tensors): the context only enters
        through `encode`."""
        return self.model.init_state(enc)

    def step(self, y_prev: Tensor, state: State, enc: State, out_vocab: Tensor | None = None
             ) -> tuple[Tensor, Tensor, State, Tensor | None]:
        """`model.step` unchanged: y_prev batch -> (log_probs batch x V (or K over
        `out_vocab`, a shortlist), attention batch x S, new state, positions or None)."""
        return self.model.step(y_prev, state, enc,
                               **({} if out_vocab is None else {"out_vocab": out_vocab}))


def target_context_models(members: Sequence[Any]) -> list[Seq2Seq]:
    """The models to give `translate_documents(target_context=True)`: each LoadedModel's
    model as is when its vocabularies are shared, else wrapped in TargetIdsAsSource."""
    out: list[Seq2Seq] = []
    for m in members:
        if shares_vocabulary(m.src_vocab, m.tgt_vocab):
            out.append(m.model)
        else:
            out.append(TargetIdsAsSource(m.model, target_to_source_table(m.src_vocab,
                                                                          m.tgt_vocab)))
    return out

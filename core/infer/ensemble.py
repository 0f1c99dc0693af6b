"""An ensemble of translation models that is itself a Seq2Seq model.

The members decode together: at each step their log-probabilities are averaged and
renormalised with a log-softmax (so scores stay proper log-probabilities), and their
attentions are averaged (rows still sum to 1 when every member's do). Because the
ensemble honours the step contract, greedy, beam search and forced decoding work on
it unchanged. Members with gated context merges (enc["gates"], batch x src_len) give
the ensemble's encoder state a "gates" entry: their mean, so search reports it.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from core.errors import ConfigError
from core.models.base import Seq2Seq, Seq2SeqOutput, State


def _prefix(i: int) -> str:
    return f"m{i}."


def _split(tree: State, n: int) -> list[State]:
    """Undo the key prefixes: one dict per member (keys of the ensemble itself, without
    an 'm<i>.' prefix, such as "gates", belong to no member)."""
    parts: list[State] = [{} for _ in range(n)]
    for key, value in tree.items():
        head, dot, rest = key.partition(".")
        if dot and head[:1] == "m" and head[1:].isdigit():
            parts[int(head[1:])][rest] = value
    return parts


def _join(parts: list[State]) -> State:
    return {_prefix(i) + k: v for i, part in enumerate(parts) for k, v in part.items()}


def _mean_or_none(tensors: list[Tensor | None]) -> Tensor | None:
    present = [t for t in tensors if t is not None]
    return None if not present else torch.stack(present).mean(0)


def _target_vocab_size(model: Seq2Seq) -> int | None:
    """The model's target vocabulary size when it tells (None: checked at the first step)."""
    size = getattr(model, "tgt_vocab_size", None)
    if size is None and isinstance(getattr(model, "tgt_embed", None), nn.Embedding):
        size = model.tgt_embed.num_embeddings
    return size


class Ensemble(Seq2Seq):
    """Average of several models sharing the target vocabulary."""

    family = "ensemble"

    def __init__(self, models: list[Seq2Seq]):
        super().__init__()
        if not models:
            raise ConfigError("an ensemble needs at least one model")
        self.members = nn.ModuleList(models)
        sizes = [_target_vocab_size(m) for m in models]
        known = {s for s in sizes if s is not None}
        if len(known) > 1:
            raise ConfigError(self._vocab_message(sizes))

    @staticmethod
    def _vocab_message(sizes: list[int | None]) -> str:
        listed = ", ".join(f"model {i + 1}: {s}" for i, s in enumerate(sizes))
        return (
            f"the models of an ensemble must share one target vocabulary, but their "
            f"target vocabulary sizes differ ({listed}); choose models trained with the "
            f"same target vocabulary"
        )

    def _combine(self, log_probs: list[Tensor]) -> Tensor:
        """Average members' log-probs (..., V) and renormalise."""
        if len({lp.size(-1) for lp in log_probs}) > 1:
            raise ConfigError(self._vocab_message([lp.size(-1) for lp in log_probs]))
        if len(log_probs) == 1:
            return log_probs[0]
        return torch.log_softmax(torch.stack(log_probs).mean(0), dim=-1)

    def forward(self, src: Tensor, src_lens: Tensor, tgt_in: Tensor, **extra) -> Seq2SeqOutput:
        """Teacher-forced pass of every member (src batch x S, tgt_in batch x T). scores
        batch x T x V: the renormalised mean of their log-probs (already log-probs);
        attention batch x T x S: their mean; positions and gates: the mean over members
        that have them. ConfigError when the vocabulary sizes differ."""
        outs = [m(src, src_lens, tgt_in, **extra) for m in self.members]
        return Seq2SeqOutput(
            scores=self._combine([o.log_probs for o in outs]),  # batch x T x V log-probs
            attention=torch.stack([o.attention for o in outs]).mean(0),  # batch x T x S
            positions=_mean_or_none([o.positions for o in outs]),
            gates=_mean_or_none([o.gates for o in outs]),
        )

    def encode(self, src: Tensor, src_lens: Tensor, **extra) -> State:
        """Every member's encoder state under keys 'm<i>.<key>' (batch x ... tensors), plus
        'gates' (batch x S, the members' mean) when any member has gates."""
        encs = [m.encode(src, src_lens, **extra) for m in self.members]
        joined = _join(encs)
        gates = _mean_or_none([e.get("gates") for e in encs])  # batch x S, or None
        if gates is not None:
            joined["gates"] = gates
        return joined

    def init_state(self, enc: State) -> State:
        """Each member's init_state on its own part of `enc`, keys 'm<i>.<key>'; every tensor
        batch x ... (batch on dim 0)."""
        encs = _split(enc, len(self.members))
        return _join([m.init_state(e) for m, e in zip(self.members, encs, strict=True)])

    def step(
        self, y_prev: Tensor, state: State, enc: State, out_vocab: Tensor | None = None
    ) -> tuple[Tensor, Tensor, State, Tensor | None]:
        """y_prev: batch -> (log_probs batch x V (or K over `out_vocab`, a shortlist), the
        renormalised mean of the members';
        attention batch x S, their mean; the members' new states; positions batch, the mean
        over members with positions, or None). ConfigError when vocabulary sizes differ."""
        n = len(self.members)
        results = [
            m.step(y_prev, s, e, **({} if out_vocab is None else {"out_vocab": out_vocab}))
            for m, s, e in zip(self.members, _split(state, n), _split(enc, n), strict=True)
        ]
        logp = self._combine([r[0] for r in results])  # batch x V
        attn = torch.stack([r[1] for r in results]).mean(0)  # batch x S
        return logp, attn, _join([r[2] for r in results]), _mean_or_none([r[3] for r in results])

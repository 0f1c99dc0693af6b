"""The contract every translation model honours, so that training, search,
heatmaps, AER and unknown-word replacement treat all families alike.

Token ids: the special ids are fixed for every vocabulary (see core/data/vocab.py):
PAD=0, UNK=1, BOS=2, EOS=3.

Teacher-forced pass (training, forced decoding):
    out = model(src, src_lens, tgt_in, **extra)       -> Seq2SeqOutput
        src:      batch x src_len   (long, PAD-padded, already reversed if the model
                                     reverses: NO - reversal is the model's job, see
                                     `reverse_source` in the config; inputs are always
                                     in natural order and attention is always reported
                                     over natural source positions)
        src_lens: batch             (long, true lengths, no BOS/EOS on the source)
        tgt_in:   batch x tgt_len   (BOS y1 ... yn, PAD-padded)
    out.scores:    batch x tgt_len x vocab   (the softmax layer's logits; training's
                                     loss normalises them itself, core/train/loss.py)
    out.log_probs: batch x tgt_len x vocab   (log-softmax of `scores` in fp32, computed
                                     on first use)
    out.attention: batch x tgt_len x src_len (rows sum to 1 over real source tokens,
                                     exactly 0 on padding and outside local windows;
                                     all zeros for models without attention)
    out.positions: batch x tgt_len or None   (local-p's predicted p_t, natural order)
    out.gates:     batch x src_len or None   (context models' lambda per source token)
    out.layer_attention: layers x batch x heads x tgt_len x src_len or None
                                    (Transformer families: every decoder layer's and
                                     head's cross-attention over the same source
                                     positions as `attention`, each head's rows summing
                                     to 1 over real tokens; `attention` is the mean over
                                     heads of the last layer. None for the RNN models
                                     and ensembles, whose `attention` is all there is)
    out.alignment: batch x tgt_len x src_len or None (model.alignment_head: row t aligns the
                                    target token predicted at step t, knowing it; rows
                                    sum to 1 like `attention`; core/models/alignment_head.py)
Training may pass `out_vocab` (1-D long, K sorted target ids, see
core/train/sampled_softmax.py): scores and log_probs are then batch x tgt_len x K,
normalised over those K words only (Jean et al. 2015's target-vocabulary softmax); every
family routes its final projection through `output_scores` below.

Incremental decoding (greedy, beam search, ensembles):
    enc   = model.encode(src, src_lens, **extra)        -> dict[str, Tensor]
    state = model.init_state(enc)                       -> dict[str, Tensor]
    logp, attn, state, pos = model.step(y_prev, state, enc[, out_vocab=ids])
        y_prev: batch (long), the previous target token (BOS at the first step)
        logp:   batch x vocab (batch x K over a shortlist's K sorted ids `out_vocab`,
                core/infer/shortlist.py), attn: batch x src_len, pos: batch or None
Context models also put their gate values in `enc["gates"]` (batch x src_len, the
per-token mean of lambda), which search copies onto every hypothesis.
Every tensor in `enc` and `state` has the batch on dim 0, so search can expand and
reorder hypotheses generically with `select_batch` below. A state may also hold an
object with `index_select(0, rows)` (an imported Marian model's key/value cache,
core.models.marian.KVCache), which may pick its rows in place: search never steps from a
state again once it has picked rows of it.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import torch
from torch import Tensor, nn

from core.models import matmul

PAD, UNK, BOS, EOS = 0, 1, 2, 3

State = dict[str, Tensor]


@dataclass
class Seq2SeqOutput:
    scores: Tensor  # batch x tgt_len x vocab: logits (or log-probs: same log_probs)
    attention: Tensor  # batch x tgt_len x src_len
    positions: Tensor | None = None  # batch x tgt_len (local-p)
    gates: Tensor | None = None  # batch x src_len (context models)
    layer_attention: Tensor | None = None  # layers x batch x heads x tgt_len x src_len
    #: batch x tgt_len x src_len: a target-conditioned alignment head's distribution
    #: (model.alignment_head, core/models/alignment_head.py), else None
    alignment: Tensor | None = None

    @cached_property
    def log_probs(self) -> Tensor:
        """batch x tgt_len x vocab, fp32 log-softmax of `scores`."""
        return torch.log_softmax(self.scores.float(), dim=-1)


class Seq2Seq(nn.Module):
    """Base class: subclasses implement forward, encode, init_state and step."""

    #: the family name in the registry ('luong', 'rnnsearch', ...)
    family: str = ""

    def forward(self, src: Tensor, src_lens: Tensor, tgt_in: Tensor, **extra) -> Seq2SeqOutput:
        """Teacher-forced pass. src: batch x S (natural order), src_lens: batch, tgt_in:
        batch x T (BOS y1..yn, PAD-padded) -> Seq2SeqOutput, scores batch x T x V and
        attention batch x T x S (see the module doc)."""
        raise NotImplementedError

    def encode(self, src: Tensor, src_lens: Tensor, **extra) -> State:
        """src: batch x S, src_lens: batch -> the encoder state, tensors with the batch on
        dim 0 (batch x ...), read by this model's `step`."""
        raise NotImplementedError

    def init_state(self, enc: State) -> State:
        """The decoder state before the first step, from `encode`'s output; every tensor
        batch x ... (batch on dim 0)."""
        raise NotImplementedError

    def step(
        self, y_prev: Tensor, state: State, enc: State, out_vocab: Tensor | None = None
    ) -> tuple[Tensor, Tensor, State, Tensor | None]:
        """One decoding step. y_prev: batch (long) -> (log_probs batch x V, attention
        batch x S, new state, positions batch or None). With `out_vocab` (K sorted target
        ids, a shortlist: core.infer.shortlist) the log-probs are batch x K, normalised
        over those K words."""
        raise NotImplementedError


def output_scores(linear: nn.Linear, hidden: Tensor, out_vocab: Tensor | None = None) -> Tensor:
    """The softmax layer's logits: hidden ... x H -> ... x V over the whole target
    vocabulary, or ... x K over the K words of `out_vocab` (weights and bias rows picked,
    so the other V - K rows cost nothing and get no gradient). In bf16 under autocast."""
    if out_vocab is None:
        return matmul.linear(hidden, linear.weight, linear.bias)
    bias = None if linear.bias is None else linear.bias.index_select(0, out_vocab)
    weight = linear.weight.index_select(0, out_vocab)  # K x H
    return matmul.linear(hidden, weight, bias)


def output_log_probs(linear: nn.Linear, hidden: Tensor, out_vocab: Tensor | None = None) -> Tensor:
    """log-softmax (fp32) of output_scores: ... x V (or K)."""
    return step_log_probs(output_scores(linear, hidden, out_vocab))


def step_log_probs(scores: Tensor) -> Tensor:
    """The fp32 log-softmax over the last dim of a decoding step's logits, ... x V, which
    the caller has just computed and does not keep. Where no gradient flows through them
    (a search) it overwrites them: the product's output is still in the cache, while a
    new tensor of that size is not (32 x 14,790 in a greedy step of the bench model: 175
    against 735 us, docs/benchmarks.md)."""
    scores = scores.float()
    if scores.requires_grad:
        return torch.log_softmax(scores, dim=-1)
    return torch.log_softmax(scores, dim=-1, out=scores)


def select_batch(tree: State, index: Tensor) -> State:
    """Pick rows `index` (1-D long) along dim 0 of every tensor (or object with
    index_select, module docstring): expands a batch for beam search (repeat_interleave
    indices) or reorders surviving hypotheses."""
    return {k: v.index_select(0, index) for k, v in tree.items()}


def length_mask(lens: Tensor, max_len: int | None = None) -> Tensor:
    """batch -> batch x max_len bool, True on real tokens."""
    max_len = int(lens.max()) if max_len is None else max_len
    return torch.arange(max_len, device=lens.device)[None, :] < lens[:, None]

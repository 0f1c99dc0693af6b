"""A word-alignment head that knows the target word it aligns (after Garg et al. 2019,
"Jointly Learning to Align and Translate with Transformer Models", and Chen et al. 2020's
separate alignment module).

The attention that predicts y_t has not seen y_t: on function words (`de`, `le`, the
comma) it spreads over the candidates, and its argmax is a guess (experiments/RESULTS.md,
section E). This head scores every source word for a target word *given* that word and
its neighbours on both sides (the whole target is known when a pair is aligned):

    q_t = tanh(W_q [d_t ; e(y_t-1) ; e(y_t) ; e(y_t+1)])   d_t: the decoder's output state
    k_s = tanh(W_k [m_s ; f(x_s-1) ; f(x_s) ; f(x_s+1)])   m_s: the encoder state
    A[t, s] = softmax over s and NULL of q_t . k_s / sqrt(H), with k_NULL a learned key

(e, f: the model's target and source embeddings; zeros past either end.) NULL takes the
target words the guide links to nothing (eflomal leaves `de` unlinked 43 % of the time):
a row's source weights sum to 1 - A[t, NULL], and a word whose NULL weight beats every
source word is left unaligned (core.evaluate.readings, the 'head' reading). The neighbours
tell `de` in `de la Chambre` from `de` before a verb, and give a left-to-right encoder's
states the source word's right side.

It is trained by guided alignment only (train.guided_alignment, core/train/guidance.py):
with `model.alignment_head = true` the guide supervises A, and the translation attention
is left to the translation loss. `train --alignment-head RUN` trains one alone over a
finished run whose every other weight stays frozen (train.stage = 2: `load_base`,
`freeze_all_but_head`). It never takes part in translating: search does not call
it, so a run with a head translates exactly as it would without one. Forced decoding
returns A as Seq2SeqOutput.alignment, read as the 'head' reading (core.evaluate.readings).
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from core.models import matmul
from core.models.base import PAD


class AlignmentHead(nn.Module):
    def __init__(self, dec_size: int, tgt_emb: int, mem_size: int, src_emb: int,
                 size: int) -> None:
        super().__init__()
        self.query = matmul.Linear(dec_size + 3 * tgt_emb, size)
        self.key = matmul.Linear(mem_size + 3 * src_emb, size)
        self.null = nn.Parameter(torch.zeros(size))  # k_NULL
        self.scale = 1.0 / math.sqrt(size)

    def forward(self, dec: Tensor, tgt_emb: Tensor, memory: Tensor, src_emb: Tensor,
                src_lens: Tensor) -> Tensor:
        """dec: batch x T x D, tgt_emb: batch x T x E (row t: the embedding of the target
        token predicted at step t, zero for PAD), memory: batch x S x M, src_emb:
        batch x S x F (zero on padding), src_lens: batch -> batch x T x S in fp32: the
        source part of each row's distribution over the real source tokens and NULL
        (exactly 0 on padding; NULL's weight is 1 - the row's sum)."""
        q = torch.tanh(self.query(torch.cat([dec, with_neighbours(tgt_emb)], dim=-1)))
        k = torch.tanh(self.key(torch.cat([memory, with_neighbours(src_emb)], dim=-1)))
        keys = torch.cat([k, self.null.to(k.dtype).expand(k.size(0), 1, -1)], dim=1)
        scores = torch.bmm(q, keys.transpose(1, 2)).float() * self.scale  # batch x T x S+1
        width = memory.size(1)
        pad = torch.arange(width + 1, device=memory.device)[None, :] >= src_lens[:, None]
        pad[:, width] = False  # NULL
        scores = scores.masked_fill(pad[:, None, :], float("-inf"))
        return torch.softmax(scores, dim=-1)[..., :width]


def with_neighbours(emb: Tensor) -> Tensor:
    """batch x L x E -> batch x L x 3E: [emb[i - 1]; emb[i]; emb[i + 1]], zeros past the
    ends (and padding embeds to zero, so a sentence's last word has a zero right side)."""
    zero = emb.new_zeros(emb.size(0), 1, emb.size(2))
    before = torch.cat([zero, emb[:, :-1]], dim=1)
    after = torch.cat([emb[:, 1:], zero], dim=1)
    return torch.cat([before, emb, after], dim=-1)


def predicted_tokens(tgt_in: Tensor) -> Tensor:
    """tgt_in batch x T (BOS y1..yn PAD..) -> batch x T, row t the token predicted at step
    t (y1..yn, then PAD where EOS is predicted: the EOS row aligns nothing)."""
    return torch.cat([tgt_in[:, 1:], tgt_in.new_full((tgt_in.size(0), 1), PAD)], dim=1)


def head_parameter_names(model: nn.Module) -> list[str]:
    """Names (as in `model.named_parameters()`) of the alignment head's parameters."""
    return sorted(n for n, _ in model.named_parameters() if n.startswith("align_head."))


def load_base(model: nn.Module, state_dict: dict[str, Tensor]) -> None:
    """Copy a trained run's weights (name -> tensor, e.g. `w_s.weight` V x H, each of
    the shape `model` has: the same model without a head, or with one whose weights are
    replaced) into `model`; only the head may be missing from them. ValueError naming
    the keys that do not fit."""
    own = set(model.state_dict())
    given = {k: v for k, v in state_dict.items() if not k.startswith("align_head.")}
    missing = sorted(own - set(given) - {k for k in own if k.startswith("align_head.")})
    unexpected = sorted(set(given) - own)
    if missing or unexpected:
        raise ValueError(f"the trained run's weights do not fit this model: missing "
                         f"{missing[:5]}, unexpected {unexpected[:5]}")
    model.load_state_dict(given, strict=False)


def freeze_all_but_head(model: nn.Module) -> list[str]:
    """Make only the alignment head trainable (the translation model stays exactly as
    it was trained); returns the names left trainable."""
    trainable = set(head_parameter_names(model))
    if not trainable:
        raise ValueError("the model has no alignment head (model.alignment_head = false)")
    for name, param in model.named_parameters():
        param.requires_grad_(name in trainable)
    return sorted(trainable)

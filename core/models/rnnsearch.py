"""RNNsearch (Bahdanau, Cho & Bengio 2015), following the paper's appendix A.

Encoder: bidirectional GRU; annotations h_j = [fwd_j; bwd_j] (batch x S x 2H).
Decoder, at target step i (everything from s_{i-1}, y_{i-1}):
    e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)        (U_a h precomputed per sentence)
    c_i  = sum_j softmax_j(e_ij) h_j
    t~_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i;  t_i = maxout(t~_i, pool)
    p(y_i) = softmax(W_o t_i)
    s_i  = GRU([E y_{i-1}; c_i], s_{i-1})
with s_0 = tanh(W_s bwd_1), the backward state at the first word. The recurrence needs
c_i before s_i, so the decoder steps token by token; the deep output and softmax run
once over all steps afterwards. `model.layers` stacks the bidirectional encoder (the
paper uses 1); the decoder is one GRU layer. Maxout units l = hidden / 2 (paper: 500 for
1000 hidden units).
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from core.config import ModelConfig
from core.errors import ConfigError
from core.models import int8, matmul
from core.models.alignment_head import AlignmentHead, predicted_tokens
from core.models.attention import AdditiveAttention
from core.models.base import (
    PAD,
    Seq2Seq,
    Seq2SeqOutput,
    State,
    length_mask,
    output_scores,
    step_log_probs,
)
from core.models.dropout import Dropout
from core.models.rnn_common import PackedEncoder, uniform_init


class RNNSearch(Seq2Seq):
    family = "rnnsearch"

    def __init__(self, config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int) -> None:
        super().__init__()
        if config.reverse_source:
            raise ConfigError("rnnsearch reads the source in both directions: set "
                              "model.reverse_source = false")
        if config.maxout_pool < 1:
            raise ConfigError(f"model.maxout_pool must be >= 1, not {config.maxout_pool}")
        self.config = config
        hidden, emb = config.hidden_size, config.emb_size
        self.hidden_size = hidden
        self.pool = config.maxout_pool
        self.units = max(1, hidden // 2)
        self.encoder = PackedEncoder(src_vocab_size, emb, hidden, config.layers, "gru",
                                     config.dropout, bidirectional=True)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, emb, padding_idx=PAD)
        self.w_s = matmul.Linear(hidden, hidden, bias=False)
        self.attention = AdditiveAttention(hidden, 2 * hidden, hidden)
        self.cell = nn.GRUCell(emb + 2 * hidden, hidden)
        self.u_o = matmul.Linear(hidden, self.pool * self.units)
        self.v_o = matmul.Linear(emb, self.pool * self.units, bias=False)
        self.c_o = matmul.Linear(2 * hidden, self.pool * self.units, bias=False)
        self.w_o = matmul.Linear(self.units, tgt_vocab_size)
        self.drop = Dropout(config.dropout)
        uniform_init(self, config.init_range)
        # after uniform_init, as in the luong family: [s_{i-1}; c_i] and E y_i against
        # [h_j; E x_j]
        self.align_head = AlignmentHead(3 * hidden, emb, 2 * hidden, emb, hidden) \
            if config.alignment_head else None

    def encode(self, src: Tensor, src_lens: Tensor, **extra) -> State:
        """-> memory batch x S x 2H, keys (U_a h) batch x S x H, mask batch x S, s0 batch x H."""
        memory, _, _ = self.encoder(src, src_lens)  # batch x S x 2H
        bwd_first = memory[:, 0, self.hidden_size:]  # backward state at word 1
        return {
            "memory": memory,
            "keys": self.attention.prepare(memory),
            "mask": length_mask(src_lens, src.size(1)),
            "s0": torch.tanh(self.w_s(bwd_first)),
        }

    def init_state(self, enc: State) -> State:
        """s: batch x H, the decoder's initial state s_0."""
        return {"s": enc["s0"]}

    def _recur(self, emb: Tensor, s_prev: Tensor, enc: State):
        """emb: batch x E (E y_{i-1}), s_prev: batch x H -> (c_i batch x 2H, a_i batch x S, s_i)."""
        context, weights = self.attention(s_prev, enc["keys"], enc["memory"], enc["mask"])
        s = int8.gru_cell(self.cell, torch.cat([emb, context], dim=-1), s_prev)
        return context, weights, s

    def _output(self, s_prev: Tensor, emb: Tensor, context: Tensor,
                out_vocab: Tensor | None = None) -> Tensor:
        """Deep output, any leading shape: (..., H), (..., E), (..., 2H) -> scores (logits)
        (..., V) (or (..., K) over out_vocab)."""
        t_tilde = self.u_o(s_prev) + self.v_o(emb) + self.c_o(context)
        t = t_tilde.unflatten(-1, (self.units, self.pool)).amax(-1)  # maxout
        return output_scores(self.w_o, self.drop(t), out_vocab)

    def step(self, y_prev: Tensor, state: State, enc: State, out_vocab: Tensor | None = None):
        """y_prev: batch -> (log_probs batch x V (or K over `out_vocab`; fp32), attention
        batch x S, {'s': batch x H}, None)."""
        emb = self.drop(self.tgt_embed(y_prev))  # batch x E
        context, weights, s = self._recur(emb, state["s"], enc)
        logp = step_log_probs(self._output(state["s"], emb, context, out_vocab))
        return logp, weights, {"s": s}, None

    def forward(self, src: Tensor, src_lens: Tensor, tgt_in: Tensor,
                out_vocab: Tensor | None = None, **extra) -> Seq2SeqOutput:
        """src: batch x S, src_lens: batch, tgt_in: batch x T -> scores batch x T x V (or K
        over `out_vocab`), attention batch x T x S; other `extra` is ignored."""
        enc = self.encode(src, src_lens)
        emb = self.drop(self.tgt_embed(tgt_in))  # batch x T x E
        s = enc["s0"]
        prevs, contexts, attns = [], [], []
        for i in range(tgt_in.size(1)):
            prevs.append(s)
            context, weights, s = self._recur(emb[:, i], s, enc)
            contexts.append(context)
            attns.append(weights)
        prev, context = torch.stack(prevs, 1), torch.stack(contexts, 1)  # batch x T x H, 2H
        scores = self._output(prev, emb, context, out_vocab)
        alignment = None
        if self.align_head is not None:  # the predicting state and the word it predicts
            alignment = self.align_head(torch.cat([prev, context], dim=-1),
                                        self.tgt_embed(predicted_tokens(tgt_in)),
                                        enc["memory"], self.encoder.embed(src), src_lens)
        return Seq2SeqOutput(scores=scores, attention=torch.stack(attns, 1), alignment=alignment)


def build(config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int) -> RNNSearch:
    """Registry entry for family 'rnnsearch'."""
    return RNNSearch(config, src_vocab_size, tgt_vocab_size)

"""RNN encoder-decoder without attention (Sutskever et al. 2014; Cho et al. 2014).

A stacked LSTM or GRU encoder reads the (optionally reversed) source; its final states
initialise a decoder of the same shape, which runs over the whole target in one call.
p(y_t) = softmax(W h_t) on the decoder's top layer. There is no attention: the attention
tensor is all zeros (batch x tgt x src), which the contract allows for such models.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from core.config import ModelConfig
from core.models import int8, matmul
from core.models.base import PAD, Seq2Seq, Seq2SeqOutput, State, output_log_probs, output_scores
from core.models.dropout import Dropout
from core.models.rnn_common import (
    PackedEncoder,
    reverse_padded,
    to_batch_first,
    to_layer_first,
    uniform_init,
)


class RNNEncDec(Seq2Seq):
    family = "rnnencdec"

    def __init__(self, config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int) -> None:
        super().__init__()
        self.config = config
        self.cell = config.cell
        self.reverse = config.reverse_source
        hidden, emb, layers = config.hidden_size, config.emb_size, config.layers
        self.encoder = PackedEncoder(src_vocab_size, emb, hidden, layers, config.cell,
                                     config.dropout)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, emb, padding_idx=PAD)
        rnn = nn.LSTM if config.cell == "lstm" else nn.GRU
        self.rnn = rnn(emb, hidden, layers, batch_first=True,
                       dropout=config.dropout if layers > 1 else 0.0)
        self.drop = Dropout(config.dropout)
        self.out = matmul.Linear(hidden, tgt_vocab_size)
        uniform_init(self, config.init_range)

    def encode(self, src: Tensor, src_lens: Tensor, **extra) -> State:
        """-> h0 (and c0 for LSTM) batch x L x H; `no_attention` batch x S zeros (gives
        `step` the source length for its all-zero attention row)."""
        src_in = reverse_padded(src, src_lens) if self.reverse else src
        _, h_n, c_n = self.encoder(src_in, src_lens)
        enc = {"h0": to_batch_first(h_n), "no_attention": src.new_zeros(src.shape, dtype=torch.float)}
        if c_n is not None:
            enc["c0"] = to_batch_first(c_n)
        return enc

    def init_state(self, enc: State) -> State:
        """h (and c for LSTM): batch x L x H, the encoder's final states."""
        state = {"h": enc["h0"]}
        if "c0" in enc:
            state["c"] = enc["c0"]
        return state

    def _hidden(self, state: State):
        h = to_layer_first(state["h"])
        return (h, to_layer_first(state["c"])) if self.cell == "lstm" else h

    def _state(self, hidden) -> State:
        if self.cell == "lstm":
            return {"h": to_batch_first(hidden[0]), "c": to_batch_first(hidden[1])}
        return {"h": to_batch_first(hidden)}

    def step(self, y_prev: Tensor, state: State, enc: State, out_vocab: Tensor | None = None):
        """y_prev: batch -> (log_probs batch x V (or K over `out_vocab`), all-zero attention
        batch x S, new state, None)."""
        emb = self.drop(self.tgt_embed(y_prev))[:, None]  # batch x 1 x E
        top, hidden = int8.rnn_step(self.rnn, emb, self._hidden(state))
        logp = output_log_probs(self.out, self.drop(top[:, 0]), out_vocab)  # batch x V (or K)
        attn = enc["no_attention"].to(logp.dtype)
        return logp, attn, self._state(hidden), None

    def forward(self, src: Tensor, src_lens: Tensor, tgt_in: Tensor,
                out_vocab: Tensor | None = None, **extra) -> Seq2SeqOutput:
        """src: batch x S, src_lens: batch, tgt_in: batch x T -> scores batch x T x V (or K
        over `out_vocab`), attention all zeros batch x T x S."""
        enc = self.encode(src, src_lens)
        emb = self.drop(self.tgt_embed(tgt_in))  # batch x T x E
        top, _ = self.rnn(emb, self._hidden(self.init_state(enc)))  # batch x T x H
        scores = output_scores(self.out, self.drop(top), out_vocab)  # batch x T x V (or K)
        attention = scores.new_zeros(src.size(0), tgt_in.size(1), src.size(1))
        return Seq2SeqOutput(scores=scores, attention=attention)


def build(config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int) -> RNNEncDec:
    """Registry entry for family 'rnnencdec'."""
    return RNNEncDec(config, src_vocab_size, tgt_vocab_size)

"""Pieces shared by the recurrent families: source reversal, a packed encoder, the
layout change of recurrent states (PyTorch's layers x batch x hidden <-> the contract's
batch-first state dicts) and the papers' uniform initialisation."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from core.data.batching import host_lengths, to_device
from core.models.base import PAD
from core.models.dropout import Dropout


def reverse_index(lens: Tensor, max_len: int) -> Tensor:
    """batch -> batch x max_len long: position j maps to len-1-j on real tokens and to
    itself on padding, so gathering with it reverses every sentence in place (padding
    stays at the end). The map is its own inverse."""
    pos = torch.arange(max_len, device=lens.device)[None, :]  # 1 x S
    rev = lens[:, None] - 1 - pos
    return torch.where(pos < lens[:, None], rev, pos)


def reverse_padded(x: Tensor, lens: Tensor) -> Tensor:
    """Reverse the real part of each row of `x` (batch x len [x ...]) along dim 1."""
    idx = reverse_index(lens, x.size(1))
    if x.dim() > 2:
        idx = idx.view(*idx.shape, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, idx)


def to_batch_first(state: Tensor) -> Tensor:
    """layers x batch x hidden -> batch x layers x hidden (contiguous)."""
    return state.transpose(0, 1).contiguous()


def to_layer_first(state: Tensor) -> Tensor:
    """batch x layers x hidden -> layers x batch x hidden (contiguous, as cuDNN wants)."""
    return state.transpose(0, 1).contiguous()


def join_directions(state: Tensor) -> Tensor:
    """A bidirectional RNN's final states (layers*2) x batch x H (forward, backward per
    layer) -> layers x batch x 2H, each layer's [forward; backward]."""
    return torch.cat([state[0::2], state[1::2]], dim=2)


def uniform_init(module: nn.Module, init_range: float) -> None:
    """Luong/Sutskever: every parameter uniform in [-r, r]; r = 0 keeps PyTorch's defaults.
    The padding row of every embedding is zeroed afterwards."""
    if init_range > 0:
        for p in module.parameters():
            nn.init.uniform_(p, -init_range, init_range)
    for m in module.modules():
        if isinstance(m, nn.Embedding) and m.padding_idx is not None:
            with torch.no_grad():
                m.weight[m.padding_idx].zero_()


def longest_first(lens: Tensor, device: torch.device) -> tuple[Tensor, Tensor, Tensor]:
    """lens: batch (any device) -> (the lengths longest first, on the host (1-D); the
    order that sorts the batch so and its inverse, both 1-D on `device`). The sort runs
    on the host (host_lengths) and reaches a GPU without waiting (to_device)."""
    lens = host_lengths(lens)
    order = torch.argsort(lens, descending=True, stable=True)
    return lens[order], to_device(order, device), to_device(torch.argsort(order), device)


def lstm_by_segments(rnn: nn.LSTM, x: Tensor, lens: Tensor) -> tuple[Tensor, tuple[Tensor, Tensor]]:
    """A unidirectional batch-first nn.LSTM over sentences of different lengths, as over
    a packed batch, but in one call per stretch of time steps between the batch's
    distinct lengths, each over the sentences still running.

    On the CPU torch runs a packed LSTM step by step with MKL's products; a call without
    packing goes to oneDNN's LSTM, which made the bench encoder's forward and backward
    1.7x faster (docs/benchmarks.md). The results are the packed LSTM's up to summation
    order.

    x: batch x S x in, lens: batch (each >= 1) -> (outputs batch x S x hidden, zero past
    each sentence's length; (h_n, c_n) layers x batch x hidden at each sentence's last
    token). The sentences run longest first; the state of those still running carries
    from one stretch to the next."""
    lengths, order, inverse = longest_first(lens, x.device)
    lengths = lengths.tolist()
    x = x.index_select(0, order)
    batch, total = x.size(0), x.size(1)
    if lengths[-1] < 1 or lengths[0] > total:
        raise ValueError(f"lengths must be 1..{total} (the input's steps); got "
                         f"{lengths[-1]}..{lengths[0]}")
    state: tuple[Tensor, Tensor] | None = None
    start, pieces, finals = 0, [], []
    for end in sorted(set(lengths)):
        running = sum(n >= end for n in lengths)  # sentences in steps start .. end-1
        longer = sum(n > end for n in lengths)  # ... of which these go on after `end`
        if state is not None:
            state = (state[0][:, :running].contiguous(), state[1][:, :running].contiguous())
        out, state = rnn(x[:running, start:end], state)  # running x (end-start) x hidden
        pieces.append(F.pad(out, (0, 0, 0, 0, 0, batch - running)))
        finals.append((state[0][:, longer:running], state[1][:, longer:running]))
        start = end
    out = torch.cat(pieces, dim=1)  # batch x max_len x hidden
    if start < total:
        out = F.pad(out, (0, 0, 0, total - start))
    h_n = torch.cat([h for h, _ in reversed(finals)], dim=1).index_select(1, inverse)
    c_n = torch.cat([c for _, c in reversed(finals)], dim=1).index_select(1, inverse)
    return out.index_select(0, inverse), (h_n, c_n)


class PackedEncoder(nn.Module):
    """Embedding + nn.LSTM/nn.GRU over a packed batch (cuDNN on GPU).

    Returns outputs batch x src_len x (hidden * directions), zero on padding, and the
    final states (layers*directions) x batch x hidden, taken at each sentence's last
    real token thanks to packing. A unidirectional LSTM on the CPU outside autocast runs
    by segments (`lstm_by_segments`: the same results, faster).
    """

    def __init__(
        self,
        vocab_size: int,
        emb_size: int,
        hidden_size: int,
        layers: int,
        cell: str = "lstm",
        dropout: float = 0.0,
        bidirectional: bool = False,
    ) -> None:
        super().__init__()
        self.cell = cell
        self.embed = nn.Embedding(vocab_size, emb_size, padding_idx=PAD)
        self.drop = Dropout(dropout)
        rnn = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = rnn(
            emb_size,
            hidden_size,
            num_layers=layers,
            batch_first=True,
            dropout=dropout if layers > 1 else 0.0,
            bidirectional=bidirectional,
        )

    def forward(self, src: Tensor, src_lens: Tensor) -> tuple[Tensor, Tensor, Tensor | None]:
        """src: batch x S, src_lens: batch -> (outputs B x S x H*dirs, h_n, c_n or None)."""
        emb = self.drop(self.embed(src))  # batch x S x emb
        if (self.cell == "lstm" and not self.rnn.bidirectional and src.device.type == "cpu"
                and not torch.is_autocast_enabled("cpu")):
            # under autocast the packed LSTM's step products run in bf16, faster than
            # segments in fp32 or oneDNN's bf16 LSTM (docs/benchmarks.md)
            out, (h_n, c_n) = lstm_by_segments(self.rnn, emb, src_lens)
            return out, h_n, c_n
        # sorted here rather than by pack_padded_sequence(enforce_sorted=False), whose
        # pageable copies of the order to a GPU wait for the GPU's queued work
        lengths, order, inverse = longest_first(src_lens, src.device)
        packed = pack_padded_sequence(emb.index_select(0, order), lengths, batch_first=True)
        out, final = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        out = out.index_select(0, inverse)
        if self.cell == "lstm":
            h_n, c_n = final
            return out, h_n.index_select(1, inverse), c_n.index_select(1, inverse)
        return out, final.index_select(1, inverse), None

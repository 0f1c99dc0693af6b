"""Luong, Pham & Manning (2015), "Effective Approaches to Attention-based NMT".

Stacked LSTM encoder and decoder (model.bidirectional: an encoder of two directions, each
half as wide, their outputs and final states joined [forward; backward], as OpenNMT-py's
brnn); attention on the decoder's top layer h_t;
attentional state h~_t = tanh(W_c [c_t; h_t]) (with the mlp score, OpenNMT-py's, W_c [c_t; h_t]
+ b_c); p(y_t) = softmax(W_s h~_t).
Input feeding concatenates h~_{t-1} to the next input embedding (the first layer's input
doubles), which forces a token-by-token decoder. Its parameters are an nn.LSTMCell stack,
but the training forward does the cell math itself to keep the per-step work small
(docs/benchmarks.md): the embedding part of layer 1's input projection (and both biases)
runs once for all steps, each step does one matmul per layer on [input; h] against the
concatenated weights, the mask and the general score's W_a h_s are built once, and the
output projection + log-softmax run once over all steps after the loop. With global
dot/general attention on the CPU that loop is one autograd node with a hand-written
backward (core/models/feed_decoder.py), the same forward. Without input
feeding the decoder runs nn.LSTM over the whole target in one call and scores all steps
in one batched matmul.
Dropout (Zaremba et al.) on embeddings, between LSTM layers and on h~_t.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from core.config import ModelConfig
from core.errors import ConfigError
from core.models import int8, matmul
from core.models.activations import tanh
from core.models.alignment_head import AlignmentHead, predicted_tokens
from core.models.attention import LuongAttention
from core.models.base import (
    PAD,
    Seq2Seq,
    Seq2SeqOutput,
    State,
    length_mask,
    output_log_probs,
    output_scores,
)
from core.models.dropout import Dropout
from core.models.feed_decoder import LocalP, feed_decoder, lstm_pointwise
from core.models.feed_graphs import DecoderGraphs, graphed_feed_decoder
from core.models.rnn_common import (
    PackedEncoder,
    join_directions,
    reverse_padded,
    to_batch_first,
    to_layer_first,
    uniform_init,
)


class LuongModel(Seq2Seq):
    family = "luong"
    #: the teacher-forced input-feeding decoder as one autograd node where it applies
    #: (core/models/feed_decoder.py); False records every step's operations instead
    fuse_decoder = True
    #: the devices it runs on: measured on the CPU only so far; `bench train
    #: --fused-decoder-gpu` adds "cuda" to compare on a GPU
    fuse_decoder_devices: tuple[str, ...] = ("cpu",)
    #: the devices where, in training, that decoder runs as CUDA graphs replayed per
    #: shape bucket (core/models/feed_graphs.py); "cpu" runs the buckets eagerly (tests)
    graph_decoder_devices: tuple[str, ...] = ("cuda",)
    #: the attentions graphed there: global (on one H100, 2.8x the step-by-step graph)
    #: and local-p (Luong's paper model on one H200: 2.0x in fp32, 3.9x in bf16)
    graph_decoder_attentions: tuple[str, ...] = ("global", "local-p")

    def __init__(self, config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int) -> None:
        super().__init__()
        if config.cell != "lstm":
            raise ConfigError("model.cell must be 'lstm' for the luong family (the paper's cell)")
        if config.attention == "none":
            raise ConfigError("luong needs model.attention; use family 'rnnencdec' for none")
        if config.score == "additive":
            raise ConfigError("luong scores are dot, general, concat or location; "
                              "'additive' belongs to family 'rnnsearch'")
        if config.attention != "global" and config.window < 1:
            raise ConfigError(f"model.window must be >= 1 for local attention, not {config.window}")
        self.config = config
        hidden, emb, layers = config.hidden_size, config.emb_size, config.layers
        self.hidden_size, self.layers = hidden, layers
        self.feed = config.input_feeding
        self.reverse = config.reverse_source
        self.bidirectional = config.bidirectional
        self.encoder = PackedEncoder(src_vocab_size, emb, hidden // 2 if self.bidirectional else hidden,
                                     layers, "lstm", config.dropout, self.bidirectional)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, emb, padding_idx=PAD)
        if self.feed:
            self.cells = nn.ModuleList(
                nn.LSTMCell(emb + hidden if i == 0 else hidden, hidden) for i in range(layers)
            )
        else:
            self.rnn = nn.LSTM(emb, hidden, layers, batch_first=True,
                               dropout=config.dropout if layers > 1 else 0.0)
        self.attention = LuongAttention(
            config.attention, config.score, hidden, config.window, config.max_src_len
        )
        # score 'mlp' (OpenNMT-py's): h~ = W_c [c; h] + b_c, no tanh
        self.linear_out = config.score == "mlp"
        self.w_c = matmul.Linear(2 * hidden, hidden, bias=self.linear_out)
        self.w_s = matmul.Linear(hidden, tgt_vocab_size)
        self.drop = Dropout(config.dropout)
        uniform_init(self, config.init_range)
        # built after uniform_init: a head added to a trained run starts from PyTorch's
        # own initialisation whether or not the run had one
        self.align_head = AlignmentHead(hidden, emb, hidden, emb, hidden) \
            if config.alignment_head else None

    # --- encoder ------------------------------------------------------------------
    def encode(self, src: Tensor, src_lens: Tensor, **extra) -> State:
        """src: batch x S (natural order) -> memory batch x S x H in natural order,
        keys (precomputed score projection), src_lens, final states h0/c0 batch x L x H."""
        src_in = reverse_padded(src, src_lens) if self.reverse else src
        memory, h_n, c_n = self.encoder(src_in, src_lens)  # batch x S x H
        if self.bidirectional:  # (L*2) x batch x H/2 -> L x batch x H, [forward; backward]
            h_n, c_n = join_directions(h_n), join_directions(c_n)
        if self.reverse:  # back to natural positions: attention is reported over them
            memory = reverse_padded(memory, src_lens)
        return {
            "memory": memory,
            "keys": self.attention.prepare(memory),
            "src_lens": src_lens,
            "h0": to_batch_first(h_n),
            "c0": to_batch_first(c_n),
        }

    def init_state(self, enc: State) -> State:
        """h, c: batch x L x H (the encoder's final states); t: batch long zeros, the target
        step; with input feeding also feed: batch x H zeros (h~_0)."""
        state = {
            "h": enc["h0"],
            "c": enc["c0"],
            "t": torch.zeros_like(enc["src_lens"]),  # target step (local-m's p_t)
        }
        if self.feed:
            state["feed"] = enc["h0"].new_zeros(enc["h0"].size(0), self.hidden_size)
        return state

    # --- decoder ------------------------------------------------------------------
    def _attentional(self, top: Tensor, enc: State, t0: Tensor | int):
        """top: batch x T x H -> (h~ batch x T x H, attention batch x T x S, positions)."""
        context, attn, pos = self.attention(top, enc["keys"], enc["memory"], enc["src_lens"], t0)
        return self._h_tilde(context, top), attn, pos

    def _h_tilde(self, context: Tensor, top: Tensor) -> Tensor:
        """context, top: ... x H -> the attentional state h~ ... x H (dropout applied):
        tanh(W_c [c; h]), or W_c [c; h] + b_c for the mlp score."""
        out = self.w_c(torch.cat([context, top], dim=-1))
        return self.drop(out if self.linear_out else tanh(out))

    def _feed_weights(self, with_embedding: bool = False) -> list[tuple[Tensor, Tensor]]:
        """Per layer (W, b) for `_feed_cell`: W = [W_ih; W_hh]^T as (in + H) x 4H and
        b = b_ih + b_hh. Layer 1's W holds only the feed columns of W_ih (its embedding
        columns are applied to all steps at once by `_feed_inputs`), or all of them, for
        inputs [emb; feed], with `with_embedding`."""
        emb = self.config.emb_size
        # under autocast, cast once per forward: autocast would recast these non-leaf
        # weights at every step
        dtype = self._autocast_dtype()
        out = []
        for i, cell in enumerate(self.cells):
            w_ih = cell.weight_ih[:, emb:] if i == 0 and not with_embedding else cell.weight_ih
            w = torch.cat([w_ih, cell.weight_hh], dim=1).t()
            b = cell.bias_ih + cell.bias_hh
            out.append((w, b) if dtype is None else (w.to(dtype), b.to(dtype)))
        return out

    def _step_weights(self) -> list[tuple[Tensor, Tensor]]:
        """`_feed_weights(with_embedding=True)` for one decoding step: layer 1 takes
        [emb; feed; h] in one product (32 x 768 x 1,024: 0.28 against 0.42 ms for the
        embedding's product and the rest's apart, packed).

        Without gradients (decoding) they are built once and reused by every search until
        a cell's weight changes (storage or version), the autocast dtype changes or an
        optimiser steps (matmul.kept); their fp32 products then use them packed. A search
        would otherwise concatenate and cast them again at every step, about 5 % of a
        bf16 beam-search step. With gradients each call builds them afresh."""
        if torch.is_grad_enabled():
            return self._feed_weights(with_embedding=True)
        params = list(self.cells.parameters())
        key = (self._autocast_dtype(), [(p.data_ptr(), p._version) for p in params])

        def build() -> list[Tensor]:
            # W made N x K and dense once (oneDNN takes only dense operands); each kept
            # flat, W then b, layer after layer
            pairs = self._feed_weights(with_embedding=True)
            return [t for w, b in pairs for t in (w.t().contiguous(), b)]

        flat = matmul.kept(self, key, build, sources=params)
        return [(flat[i].t(), flat[i + 1]) for i in range(0, len(flat), 2)]

    def _autocast_dtype(self) -> torch.dtype | None:
        """The autocast dtype on the cells' device type, or None where autocast is off."""
        device = self.device_type()
        return torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else None

    def device_type(self) -> str:
        """The device type ('cpu', 'cuda', ...) of the input-feeding LSTM cells' weights; only
        for input-feeding models (others have no `cells`)."""
        return self.cells[0].weight_hh.device.type

    def _input_weights(self) -> tuple[Tensor, Tensor]:
        """(W_emb 4H x E, b 4H): layer 1's embedding columns of W_ih and b_ih + b_hh."""
        cell = self.cells[0]
        return cell.weight_ih[:, : self.config.emb_size], cell.bias_ih + cell.bias_hh

    def _feed_inputs(self, emb: Tensor) -> Tensor:
        """emb: ... x E -> ... x 4H, the embedding part of layer 1's gates plus both biases."""
        return matmul.linear(emb, *self._input_weights())

    def _feed_cell(self, x_pre: Tensor, x: Tensor, weights: list[tuple[Tensor, Tensor]],
                   h_prev: list[Tensor], c_prev: list[Tensor]) -> tuple[list[Tensor], list[Tensor]]:
        """One step of the LSTM stack, nn.LSTMCell's math (gates i, f, g, o).

        x_pre: batch x 4H from `_feed_inputs` and x: batch x H, the fed h~_{t-1}; or
        x_pre None and x: batch x (E + H), [emb; feed], for weights `_step_weights`;
        h_prev/c_prev: per layer batch x H -> new per-layer h and c.
        """
        hs, cs = [], []
        # without gradients (a search) the fp32 product goes to oneDNN (matmul.addmm, no
        # autograd): 32 x 512 x 1,024 took 146 against 314 us, 180 against 276 with AVX2
        addmm = torch.addmm if torch.is_grad_enabled() else matmul.addmm
        for i, (w, b) in enumerate(weights):
            if i > 0:
                x = self.drop(x)
            bias = x_pre if i == 0 and x_pre is not None else b
            gates = addmm(bias, torch.cat([x, h_prev[i]], dim=1), w)
            x, c = lstm_pointwise(gates, c_prev[i])[:2]
            hs.append(x)
            cs.append(c)
        return hs, cs

    def _feed_attend(self, top: Tensor, enc: State, t: Tensor | int, mask: Tensor,
                     bias: Tensor | None) -> tuple[Tensor, Tensor, Tensor | None]:
        """top: batch x H -> (h~ batch x H, attention batch x S, positions batch or None)."""
        if bias is not None:  # global dot/general
            context, attn = self.attention.fast_step(top, enc["keys"], enc["memory"], bias)
            pos = None
        else:
            context, attn, pos = self.attention(top[:, None], enc["keys"], enc["memory"],
                                                enc["src_lens"], t, mask=mask)
            context, attn, pos = context[:, 0], attn[:, 0], None if pos is None else pos[:, 0]
        return self._h_tilde(context, top), attn, pos

    def _feed_masks(self, enc: State) -> tuple[Tensor, Tensor | None]:
        mask = length_mask(enc["src_lens"], enc["memory"].size(1))  # batch x S
        bias = None
        if self.attention.has_fast_step:
            bias = self.attention.mask_bias(mask, enc["memory"].dtype)
        return mask, bias

    def _feed_step(self, emb: Tensor, state: State, enc: State):
        """One input-feeding step. emb: batch x E -> (h~ batch x H, attn batch x S,
        pos batch or None, new state)."""
        mask, bias = self._feed_masks(enc)
        hs, cs = self._feed_cell(None, torch.cat([emb, state["feed"]], dim=1),
                                 self._step_weights(), list(state["h"].unbind(1)),
                                 list(state["c"].unbind(1)))
        h_tilde, attn, pos = self._feed_attend(hs[-1], enc, state["t"], mask, bias)
        new_state = {
            "h": torch.stack(hs, dim=1),
            "c": torch.stack(cs, dim=1),
            "t": state["t"] + 1,
            "feed": h_tilde,
        }
        return h_tilde, attn, pos, new_state

    def _feed_forward(self, tgt_in: Tensor, enc: State) -> tuple[Tensor, Tensor, Tensor | None]:
        """Teacher-forced input-feeding decoder. tgt_in: batch x T -> (h~ batch x T x H,
        attention batch x T x S, positions batch x T or None)."""
        emb = self.drop(self.tgt_embed(tgt_in.t()))  # T x batch x E (time-major: x_pre[t] contiguous)
        x_pre = self._feed_inputs(emb)  # T x batch x 4H, one matmul for all steps
        weights = self._feed_weights()
        mask, bias = self._feed_masks(enc)
        device = x_pre.device.type
        # global or local-p, dot or general: one autograd node for all steps; as CUDA
        # graphs where graph_decoder_devices and graph_decoder_attentions say so
        fused = self.fuse_decoder and self.drop.p < 1.0 \
            and (bias is not None or self.attention.has_fused_local_p)
        graphed = fused and device in self.graph_decoder_devices \
            and self.attention.kind in self.graph_decoder_attentions
        if graphed or (fused and device in self.fuse_decoder_devices):
            p = self.drop.p if self.drop.training else 0.0
            args = (x_pre, enc["h0"], enc["c0"], enc["keys"], enc["memory"], bias,
                    self.w_c.weight, weights, p,
                    None if bias is not None else LocalP(self.attention, enc["src_lens"], mask))
            if graphed:
                return graphed_feed_decoder(self._decoder_graphs(x_pre.device), *args)
            return feed_decoder(*args)
        h = list(enc["h0"].unbind(1))
        c = list(enc["c0"].unbind(1))
        feed = enc["h0"].new_zeros(enc["h0"].size(0), self.hidden_size)
        outs, attns, poss = [], [], []
        for t in range(tgt_in.size(1)):
            h, c = self._feed_cell(x_pre[t], feed, weights, h, c)
            feed, attn, pos = self._feed_attend(h[-1], enc, t, mask, bias)
            outs.append(feed)
            attns.append(attn)
            poss.append(pos)
        pos = None if poss[0] is None else torch.stack(poss, dim=1)
        return torch.stack(outs, dim=1), torch.stack(attns, dim=1), pos

    def _decoder_graphs(self, device: torch.device) -> DecoderGraphs:
        """This model's decoder buckets on `device` (made on first use; not module state,
        so never in a checkpoint)."""
        graphs = self.__dict__.get("_graphs")
        if graphs is None or graphs[0] != device:
            graphs = self.__dict__["_graphs"] = (device, DecoderGraphs.for_device(device))
        return graphs[1]

    def step(self, y_prev: Tensor, state: State, enc: State, out_vocab: Tensor | None = None):
        """y_prev: batch -> (log_probs batch x V (or K over `out_vocab`, a shortlist),
        attention batch x S, new state, positions batch (local-m/local-p) or None)."""
        emb = self.drop(self.tgt_embed(y_prev))  # batch x E
        if self.feed:
            h_tilde, attn, pos, new_state = self._feed_step(emb, state, enc)
        else:
            hc = (to_layer_first(state["h"]), to_layer_first(state["c"]))
            top, (h, c) = int8.rnn_step(self.rnn, emb[:, None], hc)  # batch x 1 x H
            h_tilde, attn, pos = self._attentional(top, enc, state["t"])
            h_tilde, attn = h_tilde[:, 0], attn[:, 0]
            pos = None if pos is None else pos[:, 0]
            new_state = {"h": to_batch_first(h), "c": to_batch_first(c), "t": state["t"] + 1}
        logp = output_log_probs(self.w_s, h_tilde, out_vocab)  # batch x V (or K)
        return logp, attn, new_state, pos

    def forward(self, src: Tensor, src_lens: Tensor, tgt_in: Tensor,
                out_vocab: Tensor | None = None, **extra) -> Seq2SeqOutput:
        """src: batch x S, src_lens: batch, tgt_in: batch x T -> scores batch x T x V (or
        K over `out_vocab`), attention batch x T x S, positions batch x T (local) or None."""
        enc = self.encode(src, src_lens)
        if self.feed:
            h_tilde, attn, pos = self._feed_forward(tgt_in, enc)  # batch x T x H, x S
        else:
            emb = self.drop(self.tgt_embed(tgt_in))  # batch x T x E
            hc = (to_layer_first(enc["h0"]), to_layer_first(enc["c0"]))
            top, _ = self.rnn(emb, hc)  # batch x T x H, all steps in one call
            h_tilde, attn, pos = self._attentional(top, enc, 0)
        scores = output_scores(self.w_s, h_tilde, out_vocab)  # batch x T x V (or K)
        alignment = None
        if self.align_head is not None:  # h~_t and the word it predicts -> batch x T x S
            alignment = self.align_head(h_tilde, self.tgt_embed(predicted_tokens(tgt_in)),
                                        enc["memory"], self.encoder.embed(src), src_lens)
        return Seq2SeqOutput(scores=scores, attention=attn, positions=pos, alignment=alignment)


def build(config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int) -> LuongModel:
    """Registry entry for family 'luong'."""
    return LuongModel(config, src_vocab_size, tgt_vocab_size)

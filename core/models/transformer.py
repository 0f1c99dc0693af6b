"""The Transformer (Vaswani et al., 2017) and the concatenation baseline for context.

Families built here (see `build`):

- ``transformer``: the sentence-level baseline.
- ``concat``: the same network, whose source is ``context <break> sentence``; the model
  concatenates the inputs itself (`concat_context`) and reports attention over the
  current sentence's source positions only, renormalised.

Layers are post-norm as in Vaswani et al. (``x = LayerNorm(x + Dropout(sublayer(x)))``),
the thesis baseline, or with ``model.pre_norm`` pre-norm (``x = x + Dropout(sublayer(
LayerNorm(x)))``, a LayerNorm after each stack: OpenNMT-py's, core/services/onmt_tf.py); positions are sinusoidal; every attention masks padded keys, so
attention weights are exactly 0 on padding.

Attention reported by `forward`: the decoder's cross-attention in the LAST layer,
averaged over heads (batch x tgt x src). All layers and heads come back in
``Seq2SeqOutput.layer_attention`` (layers x batch x heads x tgt x src, over the same
source positions; for concat each head renormalised over the sentence's own positions)
and, detached, in ``model.last_cross_attention`` of the latest forward.

Incremental decoding caches, per decoder layer, the layer inputs of the prefix
(``state["layer{i}"]``: batch x t x d_model): with causal self-attention the earlier
positions never change, so each step only runs the new position through the stack.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from core.config import ModelConfig
from core.models import matmul
from core.models.base import (
    EOS,
    PAD,
    Seq2Seq,
    Seq2SeqOutput,
    State,
    length_mask,
    output_scores,
    step_log_probs,
)
from core.models.dropout import Dropout

# --------------------------------------------------------------------------- layers


class SinusoidalPositions(nn.Module):
    """Adds sin/cos position encodings; grows its table when a longer input arrives."""

    def __init__(self, d_model: int, max_len: int = 512):
        super().__init__()
        self.d_model = d_model
        self.register_buffer("table", self._make(max_len), persistent=False)

    def _make(self, length: int) -> Tensor:
        pos = torch.arange(length, dtype=torch.float32)[:, None]
        freq = torch.exp(
            torch.arange(0, self.d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / self.d_model)
        )
        table = torch.zeros(length, self.d_model)
        table[:, 0::2] = torch.sin(pos * freq)
        table[:, 1::2] = torch.cos(pos * freq[: self.d_model // 2])
        return table  # length x d_model

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """x: batch x len x d_model; positions start at `offset` (incremental decoding)."""
        end = offset + x.size(1)
        if end > self.table.size(0):
            self.table = self._make(max(end, 2 * self.table.size(0))).to(self.table.device)
        return x + self.table[offset:end].to(x.dtype)[None]


class MultiHeadAttention(nn.Module):
    """Scaled dot-product attention with `heads` heads; returns per-head weights."""

    def __init__(self, d_model: int, heads: int, dropout: float):
        super().__init__()
        if d_model % heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by heads ({heads})")
        self.heads, self.d_head = heads, d_model // heads
        self.q_proj = matmul.Linear(d_model, d_model)
        self.k_proj = matmul.Linear(d_model, d_model)
        self.v_proj = matmul.Linear(d_model, d_model)
        self.out_proj = matmul.Linear(d_model, d_model)
        self.dropout = Dropout(dropout)

    def _split(self, x: Tensor) -> Tensor:  # batch x len x d -> batch x heads x len x d_head
        return x.view(x.size(0), x.size(1), self.heads, self.d_head).transpose(1, 2)

    def forward(
        self, query: Tensor, key: Tensor, key_mask: Tensor | None, causal: bool = False
    ) -> tuple[Tensor, Tensor]:
        """query: batch x T x d; key (= value): batch x S x d; key_mask: batch x S bool,
        True on real tokens. `causal`: query i (the last T of the S positions) sees only
        keys up to its own position. Returns (batch x T x d, weights batch x heads x T x S,
        before dropout)."""
        q, k, v = self._split(self.q_proj(query)), self._split(self.k_proj(key)), self._split(self.v_proj(key))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)  # batch x heads x T x S
        if key_mask is not None:
            scores = scores.masked_fill(~key_mask[:, None, None, :], float("-inf"))
        if causal:
            t, s = scores.size(-2), scores.size(-1)
            future = torch.ones(t, s, dtype=torch.bool, device=scores.device).triu(s - t + 1)
            scores = scores.masked_fill(future, float("-inf"))
        weights = scores.softmax(dim=-1)
        out = (self.dropout(weights) @ v).transpose(1, 2).reshape(query.size(0), query.size(1), -1)
        return self.out_proj(out), weights


def feed_forward(d_model: int, ff_size: int, dropout: float) -> nn.Sequential:
    """The position-wise feed-forward block: Linear d_model -> ff_size, ReLU, dropout,
    Linear back to d_model (... x d -> ... x d)."""
    return nn.Sequential(
        matmul.Linear(d_model, ff_size), nn.ReLU(), Dropout(dropout), matmul.Linear(ff_size, d_model)
    )


class EncoderLayer(nn.Module):
    """Self-attention + feed-forward, post-norm (``x = LN(x + sublayer(x))``) or, with
    `pre_norm`, pre-norm (``x = x + sublayer(LN(x))``, OpenNMT-py's)."""

    def __init__(self, d_model: int, heads: int, ff_size: int, dropout: float,
                 pre_norm: bool = False, eps: float = 1e-5):
        super().__init__()
        self.pre_norm = pre_norm
        self.self_attn = MultiHeadAttention(d_model, heads, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.ff = feed_forward(d_model, ff_size, dropout)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.dropout = Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        """x: batch x S x d; mask: batch x S (True = real token)."""
        if self.pre_norm:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, mask)[0])
            return x + self.dropout(self.ff(self.norm2(x)))
        attended, _ = self.self_attn(x, x, mask)
        x = self.norm1(x + self.dropout(attended))
        return self.norm2(x + self.dropout(self.ff(x)))


class DecoderLayer(nn.Module):
    """Causal self-attention, cross-attention over the memory, feed-forward; post-norm,
    or pre-norm with `pre_norm` (as EncoderLayer)."""

    def __init__(self, d_model: int, heads: int, ff_size: int, dropout: float,
                 pre_norm: bool = False, eps: float = 1e-5):
        super().__init__()
        self.pre_norm = pre_norm
        self.self_attn = MultiHeadAttention(d_model, heads, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.cross_attn = MultiHeadAttention(d_model, heads, dropout)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.ff = feed_forward(d_model, ff_size, dropout)
        self.norm3 = nn.LayerNorm(d_model, eps=eps)
        self.dropout = Dropout(dropout)

    def forward(
        self, y: Tensor, memory: Tensor, mem_mask: Tensor, past: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """y: batch x T x d (new positions); memory: batch x S x d; past: batch x t x d,
        this layer's inputs at the t earlier positions (None = no earlier positions).
        Returns (batch x T x d, cross-attention batch x heads x T x S)."""
        keys = y if past is None else torch.cat([past, y], dim=1)
        if self.pre_norm:
            y = y + self.dropout(self.self_attn(self.norm1(y), self.norm1(keys), None,
                                                causal=True)[0])
            crossed, cross = self.cross_attn(self.norm2(y), memory, mem_mask)
            y = y + self.dropout(crossed)
            return y + self.dropout(self.ff(self.norm3(y))), cross
        attended, _ = self.self_attn(y, keys, None, causal=True)
        y = self.norm1(y + self.dropout(attended))
        crossed, cross = self.cross_attn(y, memory, mem_mask)
        y = self.norm2(y + self.dropout(crossed))
        return self.norm3(y + self.dropout(self.ff(y))), cross


# --------------------------------------------------------------------------- models


class TransformerBase(Seq2Seq):
    """Embeddings, decoder, generator and search shared by every Transformer family.

    Subclasses implement `encode` (returning at least ``memory`` batch x M x d and
    ``mem_mask`` batch x M) and may override `_source_attention` when the memory is not
    the source (concat)."""

    def __init__(self, config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int):
        super().__init__()
        d = config.d_model
        self.d_model = d
        self.enc_layers, self.dec_layers = config.enc_layers, config.dec_layers
        self.src_embed = nn.Embedding(src_vocab_size, d, padding_idx=PAD)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d, padding_idx=PAD)
        for emb in (self.src_embed, self.tgt_embed):
            nn.init.normal_(emb.weight, 0.0, d**-0.5)  # scaled by sqrt(d) on use
            with torch.no_grad():
                emb.weight[PAD].zero_()
        self.positions = SinusoidalPositions(d)
        self.dropout = Dropout(config.dropout)
        self.decoder = nn.ModuleList(
            DecoderLayer(d, config.heads, config.ff_size, config.dropout, config.pre_norm,
                         config.norm_eps)
            for _ in range(config.dec_layers)
        )
        #: pre-norm: the LayerNorm after the decoder's last layer (None: post-norm)
        self.decoder_norm = nn.LayerNorm(d, eps=config.norm_eps) if config.pre_norm else None
        self.generator = matmul.Linear(d, tgt_vocab_size, bias=config.generator_bias)
        if config.tie_embeddings:
            self.generator.weight = self.tgt_embed.weight
        #: layers x batch x heads x tgt x src of the latest forward (detached)
        self.last_cross_attention: Tensor | None = None
        #: the same over the whole memory (differs from the above only for concat)
        self.last_cross_attention_full: Tensor | None = None

    # -- helpers -------------------------------------------------------------
    def embed_source(self, tokens: Tensor) -> Tensor:
        """batch x S ids -> batch x S x d (scaled embedding + positions, dropout)."""
        return self.dropout(self.positions(self.src_embed(tokens) * math.sqrt(self.d_model)))

    def embed_target(self, tokens: Tensor) -> Tensor:
        """batch x T target ids -> batch x T x d (the decoder's scaled embedding +
        positions from 0, dropout): a target-side context sentence."""
        return self.dropout(self.positions(self.tgt_embed(tokens) * math.sqrt(self.d_model)))

    def _decode(
        self, tgt: Tensor, enc: State, past: list[Tensor] | None = None,
        out_vocab: Tensor | None = None,
    ) -> tuple[Tensor, Tensor, list[Tensor]]:
        """tgt: batch x T new target ids; past: per layer batch x t x d cached inputs.
        Returns (scores batch x T x V (or K over out_vocab), cross layers x batch x
        heads x T x M, the layer inputs of the new positions per layer)."""
        offset = 0 if past is None else past[0].size(1)
        y = self.dropout(self.positions(self.tgt_embed(tgt) * math.sqrt(self.d_model), offset))
        inputs, crosses = [], []
        for i, layer in enumerate(self.decoder):
            inputs.append(y)
            y, cross = layer(y, enc["memory"], enc["mem_mask"], None if past is None else past[i])
            crosses.append(cross)
        if self.decoder_norm is not None:
            y = self.decoder_norm(y)
        return output_scores(self.generator, y, out_vocab), torch.stack(crosses), inputs

    def _source_attention(self, cross: Tensor, enc: State) -> Tensor:
        """layers x batch x heads x T x M memory attention -> ... x src (identity here)."""
        return cross

    def _gates(self, enc: State) -> Tensor | None:
        return None

    # -- contract ------------------------------------------------------------
    def forward(
        self,
        src: Tensor,
        src_lens: Tensor,
        tgt_in: Tensor,
        ctx: Tensor | None = None,
        ctx_lens: Tensor | None = None,
        out_vocab: Tensor | None = None,
    ) -> Seq2SeqOutput:
        """src: batch x S, src_lens: batch, tgt_in: batch x T (BOS y1..yn);
        ctx: batch x C previous sentence(s), ctx_lens: batch (context families);
        out_vocab: K candidate target ids (training's sampled softmax) or None."""
        enc = self.encode(src, src_lens, ctx=ctx, ctx_lens=ctx_lens)
        scores, cross, _ = self._decode(tgt_in, enc, out_vocab=out_vocab)
        self.last_cross_attention_full = cross.detach()
        heads = self._source_attention(cross, enc)  # layers x batch x heads x T x S
        self.last_cross_attention = heads.detach()
        return Seq2SeqOutput(scores, heads[-1].mean(dim=1), gates=self._gates(enc),
                             layer_attention=heads)

    def init_state(self, enc: State) -> State:
        """An empty decoder cache: `layer{i}` batch x 0 x d for every decoder layer (each step
        appends its new position)."""
        memory = enc["memory"]
        empty = memory.new_zeros(memory.size(0), 0, self.d_model)  # batch x 0 x d
        return {f"layer{i}": empty for i in range(len(self.decoder))}

    def step(self, y_prev: Tensor, state: State, enc: State, out_vocab: Tensor | None = None
             ) -> tuple[Tensor, Tensor, State, None]:
        """y_prev: batch -> (log_probs batch x V (or K over `out_vocab`, a shortlist),
        attention batch x S, new state, None)."""
        past = [state[f"layer{i}"] for i in range(len(self.decoder))]
        scores, cross, inputs = self._decode(y_prev[:, None], enc, past, out_vocab)
        heads = self._source_attention(cross, enc)  # layers x batch x heads x 1 x S
        new_state = {f"layer{i}": torch.cat([p, x], dim=1) for i, (p, x) in enumerate(zip(past, inputs, strict=True))}
        return step_log_probs(scores[:, 0]), heads[-1].mean(dim=1)[:, 0], \
            new_state, None


class Transformer(TransformerBase):
    """Sentence-level Transformer: encoder of `enc_layers` post-norm layers.

    `ctx`/`ctx_lens` are accepted (so every family shares one call) and ignored."""

    family = "transformer"

    def __init__(self, config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int):
        super().__init__(config, src_vocab_size, tgt_vocab_size)
        self.encoder = nn.ModuleList(
            EncoderLayer(config.d_model, config.heads, config.ff_size, config.dropout,
                         config.pre_norm, config.norm_eps)
            for _ in range(config.enc_layers)
        )
        #: pre-norm: the LayerNorm after the encoder's last layer (None: post-norm)
        self.encoder_norm = (nn.LayerNorm(config.d_model, eps=config.norm_eps)
                             if config.pre_norm else None)

    def run_encoder(self, tokens: Tensor, lens: Tensor) -> tuple[Tensor, Tensor]:
        """tokens: batch x S -> (memory batch x S x d, mask batch x S)."""
        mask = length_mask(lens, tokens.size(1))
        x = self.embed_source(tokens)
        for layer in self.encoder:
            x = layer(x, mask)
        if self.encoder_norm is not None:
            x = self.encoder_norm(x)
        return x, mask

    def encode(
        self, src: Tensor, src_lens: Tensor, ctx: Tensor | None = None, ctx_lens: Tensor | None = None
    ) -> State:
        """src: batch x S, src_lens: batch -> memory batch x S x d, mem_mask batch x S (True
        on real tokens); ctx and ctx_lens are ignored."""
        memory, mask = self.run_encoder(src, src_lens)
        return {"memory": memory, "mem_mask": mask}


def concat_context(
    src: Tensor, src_lens: Tensor, ctx: Tensor, ctx_lens: Tensor, break_id: int = EOS
) -> tuple[Tensor, Tensor, Tensor]:
    """Pack ``ctx[:ctx_len] <break> src[:src_len]`` per row, PAD-padded.

    src: batch x S, ctx: batch x C, lens: batch. Returns (tokens batch x L, lens batch,
    offsets batch: the position of the first current-sentence token in each row)."""
    batch, s_len = src.shape
    offsets = ctx_lens + 1
    lens = offsets + src_lens
    total = int(lens.max())
    # one extra "dump" column receives the padding writes and is cut off at the end
    out = src.new_full((batch, total + 1), PAD)
    c_pos = torch.arange(ctx.size(1), device=src.device)[None, :]
    out.scatter_(1, torch.where(c_pos < ctx_lens[:, None], c_pos, total), ctx)
    out.scatter_(1, ctx_lens[:, None], torch.full_like(ctx_lens[:, None], break_id))
    s_pos = torch.arange(s_len, device=src.device)[None, :]
    out.scatter_(1, torch.where(s_pos < src_lens[:, None], offsets[:, None] + s_pos, total), src)
    return out[:, :total], lens, offsets


class ConcatTransformer(Transformer):
    """Concatenation baseline: a Transformer over ``context <break> sentence``.

    Without `ctx` it is a plain Transformer over the sentence. Attention is reported
    over the current sentence's positions only, renormalised to sum to 1; the raw
    attention over the whole concatenation is kept in ``last_cross_attention_full``."""

    family = "concat"

    def __init__(
        self, config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int, break_id: int = EOS
    ):
        super().__init__(config, src_vocab_size, tgt_vocab_size)
        self.break_id = break_id

    def encode(
        self, src: Tensor, src_lens: Tensor, ctx: Tensor | None = None, ctx_lens: Tensor | None = None
    ) -> State:
        """Encode `ctx <break> src` (src alone without ctx) -> memory batch x M x d and mem_mask
        batch x M (M = the longest ctx_len + 1 + src_len; S without ctx), src_index
        batch x S (each source position in the memory), src_mask batch x S. ValueError when
        ctx comes without ctx_lens."""
        if ctx is None:
            tokens, lens, offsets = src, src_lens, torch.zeros_like(src_lens)
        else:
            if ctx_lens is None:
                raise ValueError("concat: ctx given without ctx_lens")
            tokens, lens, offsets = concat_context(src, src_lens, ctx, ctx_lens, self.break_id)
        memory, mem_mask = self.run_encoder(tokens, lens)
        src_mask = length_mask(src_lens, src.size(1))
        # where each source position sits in the memory (clamped inside on padding)
        index = offsets[:, None] + torch.arange(src.size(1), device=src.device)[None, :]
        index = torch.where(src_mask, index, torch.zeros_like(index))
        return {"memory": memory, "mem_mask": mem_mask, "src_index": index, "src_mask": src_mask}

    def _source_attention(self, cross: Tensor, enc: State) -> Tensor:
        layers, batch, heads, t_len, _ = cross.shape
        index = enc["src_index"][None, :, None, None, :].expand(layers, batch, heads, t_len, -1)
        picked = cross.gather(-1, index) * enc["src_mask"][None, :, None, None, :]
        return picked / picked.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def build(config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int) -> Seq2Seq:
    """Registry entry for families 'transformer' and 'concat'."""
    if config.family == "transformer":
        return Transformer(config, src_vocab_size, tgt_vocab_size)
    if config.family == "concat":
        return ConcatTransformer(config, src_vocab_size, tgt_vocab_size)
    raise ValueError(f"core.models.transformer builds 'transformer' or 'concat', not {config.family!r}")

"""Multi-encoder context-aware Transformer with a gated context merge (family
``context_transformer``), after the thesis "Traducción automática neuronal sensible al
contexto" (and the multi-encoder of Voita et al., 2018).

    context  ──embed──> context encoder (ctx_layers post-norm layers) ──> C
    source   ──embed──> enc_layers - 1 ordinary layers ──> X
             last source layer:  O     = LayerNorm(X + SelfAttn(X))
                                 O_ctx = LayerNorm(X + CtxAttn(query X, keys C))
                                 lambda = sigmoid(W [O; O_ctx] + b)    # batch x S x d
                                 O'     = lambda * O + (1 - lambda) * O_ctx
                                 out    = LayerNorm(O' + FeedForward(O'))
    decoder (unchanged) attends to `out`.

Post-norm throughout, as the sentence-level baseline. With ``ctx_side = "source"`` the
context is the previous source sentence(s), embedded with the source embeddings; with
``ctx_side = "target"`` it is the previous target sentence (the reference in training,
the model's own translation when translating; Bawden et al. 2018), embedded with the
target embeddings (the decoder's), through the same context encoder and gate. A
document's first sentence has a context of one explicit start-of-document token
supplied by the data side: `ctx` is required, ``ctx_lens >= 1``.

Training strategies (`config.strategy`):
- ``ws`` weight sharing: context-encoder layer i IS source-encoder layer i (same
  Parameter objects) for i < min(ctx_layers, enc_layers - 1); deeper context layers
  get their own weights.
- ``ts`` two-stage: the context encoder has its own layers; stage 2 trains only the
  context parts (see core/models/two_stage.py).

The parameter names of the shared parts equal those of `Transformer` (src_embed,
tgt_embed, encoder.i.self_attn..., decoder..., generator), so a sentence-level
checkpoint maps one to one onto them.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from core.config import ModelConfig
from core.models import matmul
from core.models.base import Seq2Seq, State, length_mask
from core.models.dropout import Dropout
from core.models.transformer import (
    EncoderLayer,
    MultiHeadAttention,
    TransformerBase,
    feed_forward,
)


class ContextAwareEncoderLayer(nn.Module):
    """The last source layer: self-attention and context attention, merged by a gate,
    then the feed-forward block. Sub-module names match `EncoderLayer` for the shared
    parts (self_attn, norm1, ff, norm2); the context parts are ctx_attn, ctx_norm, gate."""

    def __init__(self, d_model: int, heads: int, ff_size: int, dropout: float):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, heads, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.ctx_attn = MultiHeadAttention(d_model, heads, dropout)
        self.ctx_norm = nn.LayerNorm(d_model)
        self.gate = matmul.Linear(2 * d_model, d_model)
        self.ff = feed_forward(d_model, ff_size, dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = Dropout(dropout)

    def forward(
        self, x: Tensor, mask: Tensor, context: Tensor, ctx_mask: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        """x: batch x S x d, mask: batch x S; context: batch x C x d, ctx_mask: batch x C.
        Returns (out batch x S x d, gate lambda batch x S x d,
        context attention batch x heads x S x C)."""
        attended, _ = self.self_attn(x, x, mask)
        o = self.norm1(x + self.dropout(attended))
        from_ctx, ctx_weights = self.ctx_attn(x, context, ctx_mask)
        o_ctx = self.ctx_norm(x + self.dropout(from_ctx))
        lam = torch.sigmoid(self.gate(torch.cat([o, o_ctx], dim=-1)))  # batch x S x d
        merged = lam * o + (1.0 - lam) * o_ctx
        return self.norm2(merged + self.dropout(self.ff(merged))), lam, ctx_weights


class ContextTransformer(TransformerBase):
    """Multi-encoder Transformer; `forward`/`encode` require `ctx` and `ctx_lens`.

    After each encode: ``last_gates_full`` (batch x S x d lambda, 0 on padding) and
    ``last_context_attention`` (batch x heads x S x C); `Seq2SeqOutput.gates` and
    ``enc["gates"]`` hold lambda averaged over dimensions (batch x S, 0 on padding)."""

    family = "context_transformer"

    def __init__(self, config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int):
        super().__init__(config, src_vocab_size, tgt_vocab_size)
        if config.enc_layers < 1 or config.ctx_layers < 1:
            raise ValueError("context_transformer needs enc_layers >= 1 and ctx_layers >= 1")
        d, h, ff, p = config.d_model, config.heads, config.ff_size, config.dropout
        self.strategy = config.strategy
        self.ctx_side = config.ctx_side
        self.ctx_layers = config.ctx_layers
        self.encoder = nn.ModuleList(
            [EncoderLayer(d, h, ff, p) for _ in range(config.enc_layers - 1)]
            + [ContextAwareEncoderLayer(d, h, ff, p)]
        )
        shared = min(config.ctx_layers, config.enc_layers - 1) if config.strategy == "ws" else 0
        self.ctx_encoder = nn.ModuleList(
            [self.encoder[i] for i in range(shared)]  # the very same modules
            + [EncoderLayer(d, h, ff, p) for _ in range(config.ctx_layers - shared)]
        )
        self.last_gates_full: Tensor | None = None
        self.last_context_attention: Tensor | None = None

    def encode(
        self, src: Tensor, src_lens: Tensor, ctx: Tensor | None = None, ctx_lens: Tensor | None = None
    ) -> State:
        """src: batch x S, ctx: batch x C (previous sentence(s) or the start-of-document
        token; target ids when ctx_side is 'target'). Returns memory batch x S x d,
        mem_mask batch x S, gates batch x S."""
        if ctx is None or ctx_lens is None:
            raise ValueError(
                "context_transformer needs ctx and ctx_lens: give a document's first "
                "sentence a one-token start-of-document context"
            )
        if bool((ctx_lens < 1).any()):
            raise ValueError("context_transformer: every ctx_lens must be >= 1")
        ctx_mask = length_mask(ctx_lens, ctx.size(1))
        context = self.embed_target(ctx) if self.ctx_side == "target" else self.embed_source(ctx)
        for layer in self.ctx_encoder:
            context = layer(context, ctx_mask)
        mask = length_mask(src_lens, src.size(1))
        x = self.embed_source(src)
        for layer in self.encoder[:-1]:
            x = layer(x, mask)
        x, lam, ctx_weights = self.encoder[-1](x, mask, context, ctx_mask)
        lam = lam * mask[:, :, None]
        self.last_gates_full = lam.detach()
        self.last_context_attention = ctx_weights.detach()
        return {"memory": x, "mem_mask": mask, "gates": lam.mean(dim=-1)}

    def _gates(self, enc: State) -> Tensor | None:
        return enc["gates"]


def build(config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int) -> Seq2Seq:
    """Registry entry for family 'context_transformer'."""
    if config.family != "context_transformer":
        raise ValueError(f"core.models.context_transformer builds 'context_transformer', not {config.family!r}")
    return ContextTransformer(config, src_vocab_size, tgt_vocab_size)

"""Every model family at tiny sizes, random-initialised, and one padded batch of inputs
for the inference tests (the properties they check hold for any weights).

NAMES: each recurrent variant of the registry, "transformer", "concat" and
"context_transformer"; family_config(name) its ModelConfig, model_for(name, seed) the
model over VOCAB (20) source and target ids; inputs() three sentences with context ids.
"""
from __future__ import annotations

import torch

from core.config import ModelConfig
from core.models.registry import VARIANTS, build_model, variant_config

SIZES = dict(emb_size=16, hidden_size=16, layers=2, d_model=16, ff_size=32, heads=2,
             enc_layers=2, dec_layers=2, ctx_layers=1, dropout=0.0, window=2, max_src_len=12)
NAMES = [n for n, _ in VARIANTS] + ["transformer", "concat", "context_transformer"]
VOCAB = 20


def family_config(name: str) -> ModelConfig:
    """The ModelConfig of family or registry variant `name` at SIZES."""
    if name in ("transformer", "concat", "context_transformer"):
        return ModelConfig(family=name, **SIZES)
    return variant_config(name, **SIZES)


def model_for(name: str, seed: int = 0):
    """family_config(name)'s model over VOCAB ids, weights drawn from `seed`."""
    torch.manual_seed(seed)
    return build_model(family_config(name), VOCAB, VOCAB)


def inputs():
    """-> src (3 x 7, lengths 7, 4, 5, PAD after), src_lens (3), extra: ctx (3 x 3)
    and ctx_lens (3), context ids for the context models (others ignore them)."""
    gen = torch.Generator().manual_seed(0)
    src = torch.randint(5, VOCAB, (3, 7), generator=gen)
    lens = torch.tensor([7, 4, 5])
    for b in range(3):
        src[b, lens[b]:] = 0
    extra = dict(ctx=torch.tensor([[4, 0, 0], [6, 7, 8], [9, 10, 0]]),
                 ctx_lens=torch.tensor([1, 3, 2]))
    return src, lens, extra

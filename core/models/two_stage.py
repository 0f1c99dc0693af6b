"""Two-stage ('ts') training of the context-aware Transformer.

Stage 1 trains a sentence-level `transformer` of the same size. Stage 2 builds a
`context_transformer`, initialises its shared parts from the stage-1 weights
(`load_stage1`) and trains only the context parts (`freeze_for_stage2`): the context
encoder, the context attention of the last source layer (with its LayerNorm) and the gate.
"""
from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor, nn

from core.errors import CheckpointError
from core.models.context_transformer import ContextTransformer


def _context_prefixes(model: ContextTransformer) -> tuple[str, ...]:
    last = len(model.encoder) - 1
    return ("ctx_encoder.",) + tuple(f"encoder.{last}.{part}." for part in ("ctx_attn", "ctx_norm", "gate"))


def _check(model: nn.Module) -> ContextTransformer:
    if not isinstance(model, ContextTransformer):
        raise TypeError(f"expected a ContextTransformer, got {type(model).__name__}")
    return model


def context_parameter_names(model: nn.Module) -> list[str]:
    """Names (as in `model.named_parameters()`) of the context parts, sorted.

    Under 'ws' the context layers shared with the source encoder are not listed:
    `named_parameters` reports a shared Parameter once, under its source-encoder name."""
    prefixes = _context_prefixes(_check(model))
    return sorted(name for name, _ in model.named_parameters() if name.startswith(prefixes))


def freeze_for_stage2(model: nn.Module) -> list[str]:
    """Make only the context parts trainable; returns the names left trainable.

    Only for strategy 'ts': under 'ws' the context encoder IS the source encoder, so
    freezing one would freeze the other."""
    model = _check(model)
    if model.strategy != "ts":
        raise ValueError("freeze_for_stage2 needs strategy 'ts' (under 'ws' the encoders share weights)")
    trainable = set(context_parameter_names(model))
    for name, param in model.named_parameters():
        param.requires_grad_(name in trainable)
    return sorted(trainable)


GATE_OPEN = 3.0


def load_stage1(model: nn.Module, state_dict: Mapping[str, Tensor]) -> list[str]:
    """Copy a trained sentence-level `transformer`'s weights into the shared parts of
    `model`; the context-encoder layers start as copies of the corresponding source
    layers (a better start than random). Returns the model keys that were set.

    Raises CheckpointError when the checkpoint is not a sentence-level Transformer of
    the same size (names or shapes differ).

    Every copied tensor must have the model's shape (e.g. src_embed.weight:
    source V x d_model)."""
    model = _check(model)
    own = model.state_dict()
    prefixes = _context_prefixes(model)
    expected = {k for k in own if not k.startswith(prefixes)}
    missing = sorted(expected - set(state_dict))
    extra = sorted(set(state_dict) - set(own))
    wrong = sorted(k for k in expected & set(state_dict) if state_dict[k].shape != own[k].shape)
    if missing or extra or wrong:
        details = "; ".join(
            f"{what}: {', '.join(names[:5])}{' ...' if len(names) > 5 else ''}"
            for what, names in (("missing", missing), ("unexpected", extra), ("shape differs", wrong))
            if names
        )
        raise CheckpointError(
            "the stage-1 checkpoint is not a sentence-level transformer of this size "
            f"({details}); train stage 1 with the same d_model, heads, ff_size, layers and vocabularies"
        )
    sources = {k: state_dict[k] for k in expected}
    for i in range(min(len(model.ctx_encoder), len(model.encoder))):
        head = f"ctx_encoder.{i}."
        for key in own:
            if key.startswith(head):
                sources.setdefault(key, state_dict[f"encoder.{i}.{key[len(head):]}"])
    with torch.no_grad():
        for key, value in sources.items():
            own[key].copy_(value)  # state_dict tensors share storage with the parameters
        # Open the gate towards the source (lambda = sigmoid(GATE_OPEN) ~ 0.95): stage 2
        # then starts from the trained sentence-level model's behaviour and learns how
        # much context to let in, instead of mixing half a random context signal into
        # the frozen encoder's output (which made stage 2 start worse than stage 1).
        gate = model.encoder[-1].gate
        gate.weight.zero_()
        gate.bias.fill_(GATE_OPEN)
    return sorted(sources)

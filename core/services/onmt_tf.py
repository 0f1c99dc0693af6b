"""OpenNMT-py 3.x Transformers onto the workbench's `transformer` family
(core.services.onmt_import reads the file and the vocabularies and calls this).

OpenNMT-py's Transformer is the workbench's with three of its options set
(core.models.transformer): pre-norm layers with a LayerNorm after each stack
(model.pre_norm), LayerNorm epsilon -norm_eps (model.norm_eps, 1e-6 by default there), a
generator with a bias (model.generator_bias). The rest is the same computation: word
embeddings scaled by sqrt(d_model) plus sin/cos positions interleaved (sin on the even
dimensions, cos on the odd; -position_encoding_type SinusoidalInterleaved), scaled
dot-product attention over heads of d_model / heads, a ReLU feed-forward. Weights line up
one to one (self_attn.linear_query/keys/values/final_linear -> q/k/v/out_proj,
context_attn -> cross_attn, feed_forward.w_1/w_2 -> ff.0/ff.3, the attention's and the
feed-forward's LayerNorms -> norm1, norm2, norm3); the biases OpenNMT-py leaves out
(-add_qkvbias, -add_ffnbias off) are zeros here, which computes the same. Shared
embeddings (-share_embeddings) are copied to both sides; -share_decoder_embeddings ties
the generator to the target embeddings (model.tie_embeddings).

Attention: the workbench shows the last decoder layer's cross-attention averaged over
heads, every layer and head at the layer/head selector; OpenNMT-py's -attn_debug prints
the last layer's first head. A model trained with guided alignment (-lambda_align,
-alignment_layer, -alignment_heads) computes the same translations and is imported; the
heads it trained for alignment are read at the layer/head selector, not by default.

What the workbench does not compute is refused naming the option (`refusal`): relative or
rotary positions, other position layouts, RMSNorm, other activations, average attention,
multi-query / grouped heads, parallel residuals, experts, sliding windows, copy attention.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from core.config import ModelConfig
from core.models.transformer import SinusoidalPositions

PREFIX_EMB = "embeddings.make_embedding.emb_luts.0.weight"
PREFIX_PE = "embeddings.make_embedding.pe.pe"
#: OpenNMT-py's names inside an attention block -> the workbench's
ATTN = (("linear_query", "q_proj"), ("linear_keys", "k_proj"), ("linear_values", "v_proj"),
        ("final_linear", "out_proj"))
#: inside an encoder layer (OpenNMT-py's `layer_norm` precedes the self-attention, the
#: feed-forward's own `layer_norm` precedes it)
ENC_LAYER = (("layer_norm", "norm1"), ("feed_forward.layer_norm", "norm2"),
             ("feed_forward.w_1", "ff.0"), ("feed_forward.w_2", "ff.3"))
#: inside a decoder layer
DEC_LAYER = (("layer_norm_1", "norm1"), ("layer_norm_2", "norm2"),
             ("feed_forward.layer_norm", "norm3"), ("feed_forward.w_1", "ff.0"),
             ("feed_forward.w_2", "ff.3"))


def _opt(opt: argparse.Namespace, key: str, default: Any = None) -> Any:
    return getattr(opt, key, default)


def refusal(opt: argparse.Namespace) -> str | None:
    """Why the workbench's transformer cannot compute the OpenNMT-py Transformer `opt`
    describes, naming the option; None when it can."""
    enc, dec = _opt(opt, "encoder_type"), _opt(opt, "decoder_type")
    checks = (
        (enc == dec == "transformer", f"encoder_type {enc!r} / decoder_type {dec!r}: a "
         "Transformer encoder with a Transformer decoder maps, or an RNN with an RNN"),
        (bool(_opt(opt, "position_encoding", False)), "position_encoding false: the "
         "workbench's transformer always adds sin/cos positions"),
        (_opt(opt, "position_encoding_type", "SinusoidalInterleaved") == "SinusoidalInterleaved",
         f"position_encoding_type {_opt(opt, 'position_encoding_type')!r}: the workbench "
         "interleaves sin and cos (SinusoidalInterleaved)"),
        (not _opt(opt, "max_relative_positions", 0),
         f"max_relative_positions {_opt(opt, 'max_relative_positions')}: relative, rotary "
         "or ALiBi positions"),
        (not _opt(opt, "relative_positions_buckets", 0),
         f"relative_positions_buckets {_opt(opt, 'relative_positions_buckets')}: relative "
         "position biases"),
        (_opt(opt, "layer_norm", "standard") == "standard",
         f"layer_norm {_opt(opt, 'layer_norm')!r}: LayerNorm only, not RMSNorm"),
        (_opt(opt, "pos_ffn_activation_fn", "relu") == "relu",
         f"pos_ffn_activation_fn {_opt(opt, 'pos_ffn_activation_fn')!r}: a ReLU "
         "feed-forward only"),
        (_opt(opt, "self_attn_type", "scaled-dot") in ("scaled-dot", "scaled-dot-flash"),
         f"self_attn_type {_opt(opt, 'self_attn_type')!r}: scaled dot-product "
         "self-attention only (not average attention)"),
        (not _opt(opt, "multiquery", False) and not _opt(opt, "num_kv", 0),
         f"multiquery / num_kv {_opt(opt, 'num_kv')}: every head has its own keys and values"),
        (not _opt(opt, "parallel_residual", False), "parallel_residual: sequential sublayers only"),
        (not _opt(opt, "num_experts", 0), f"num_experts {_opt(opt, 'num_experts')}: mixtures "
         "of experts"),
        (not _opt(opt, "sliding_window", 0), f"sliding_window {_opt(opt, 'sliding_window')}: "
         "attention over every earlier position only"),
        (not _opt(opt, "copy_attn", False), "copy_attn: the copy generator"),
        (_opt(opt, "src_word_vec_size") == _opt(opt, "tgt_word_vec_size")
         == _opt(opt, "enc_hid_size") == _opt(opt, "dec_hid_size"),
         f"word_vec_size / hidden_size {_opt(opt, 'src_word_vec_size')}, "
         f"{_opt(opt, 'tgt_word_vec_size')}, {_opt(opt, 'enc_hid_size')}, "
         f"{_opt(opt, 'dec_hid_size')}: one d_model for embeddings and both stacks"),
    )
    return next((why for ok, why in checks if not ok), None)


def model_config(opt: argparse.Namespace) -> ModelConfig:
    """The transformer ModelConfig for the options `opt` (refusal() has passed)."""
    dropout = _opt(opt, "dropout", 0.0)
    dropout = dropout[0] if isinstance(dropout, list | tuple) and dropout else dropout
    return ModelConfig(
        family="transformer", d_model=_opt(opt, "enc_hid_size"),
        ff_size=_opt(opt, "transformer_ff"), heads=_opt(opt, "heads"),
        enc_layers=_opt(opt, "enc_layers"), dec_layers=_opt(opt, "dec_layers"),
        dropout=float(dropout) if isinstance(dropout, int | float) else 0.0,
        tie_embeddings=bool(_opt(opt, "share_decoder_embeddings", False)), pre_norm=True,
        norm_eps=float(_opt(opt, "norm_eps", 1e-6)), generator_bias=True)


def _layer_names(side: str, count: int, blocks: tuple, table: tuple) -> dict[str, str]:
    """OpenNMT-py's weight names of `count` layers -> the workbench's."""
    theirs_stack, ours_stack = {"enc": ("encoder.transformer", "encoder"),
                                "dec": ("decoder.transformer_layers", "decoder")}[side]
    names = {}
    for i in range(count):
        pairs = [(f"{block}.{a}", f"{ours}.{b}") for block, ours in blocks for a, b in ATTN]
        for theirs, ours in pairs + list(table):
            for kind in ("weight", "bias"):
                names[f"{theirs_stack}.{i}.{theirs}.{kind}"] = f"{ours_stack}.{i}.{ours}.{kind}"
    return names


def weight_names(config: ModelConfig) -> dict[str, str]:
    """Every OpenNMT-py weight name (model and generator.) -> the workbench's, for the
    layer counts of `config`; the embeddings (whose rows are permuted) aside."""
    names = _layer_names("enc", config.enc_layers, (("self_attn", "self_attn"),), ENC_LAYER)
    names.update(_layer_names("dec", config.dec_layers, (("self_attn", "self_attn"),
                                                         ("context_attn", "cross_attn")),
                              DEC_LAYER))
    for side in ("encoder", "decoder"):
        for kind in ("weight", "bias"):
            names[f"{side}.layer_norm.{kind}"] = f"{side}_norm.{kind}"
    return names


def mapped_weights(raw: dict[str, Any], config: ModelConfig, src_order: Tensor,
                   tgt_order: Tensor, tensor: Callable[[dict, str], Tensor],
                   zeros: Callable[[str], Tensor]) -> tuple[dict[str, Tensor], set[str]]:
    """OpenNMT-py's model and generator weights under the transformer's names, the
    vocabulary rows (embeddings V x d, generator V x d and V) permuted by `src_order` /
    `tgt_order` (V, the workbench's id -> OpenNMT-py's) into the workbench's order; a bias OpenNMT-py leaves out is zeros
    (`zeros(name)`); `tensor(table, key)` reads one weight (CheckpointError when absent).
    Returns the weights and the OpenNMT-py names used."""
    model, gen = raw["model"], raw["generator"]
    out, used = {}, set()
    for theirs, ours in weight_names(config).items():
        if theirs in model:
            out[ours] = tensor(model, theirs)
            used.add(theirs)
        elif theirs.endswith(".bias") and ("_attn." in theirs or ".w_" in theirs):
            out[ours] = zeros(ours)
    out["src_embed.weight"] = tensor(model, "encoder." + PREFIX_EMB)[src_order]
    out["tgt_embed.weight"] = tensor(model, "decoder." + PREFIX_EMB)[tgt_order]
    out["generator.weight"] = tensor(gen, "weight")[tgt_order]
    out["generator.bias"] = tensor(gen, "bias")[tgt_order]
    used |= {"encoder." + PREFIX_EMB, "decoder." + PREFIX_EMB, "encoder." + PREFIX_PE,
             "decoder." + PREFIX_PE}  # the position tables: position_table_mismatch
    return out, used


def position_table_mismatch(model: dict[str, Any], d_model: int) -> str | None:
    """The name of a stored position table (OpenNMT-py saves its sin/cos table, rows x 1
    x d_model) that is not the one the workbench computes (to 1e-6), else None."""
    for name in ("encoder." + PREFIX_PE, "decoder." + PREFIX_PE):
        table = model.get(name)
        if table is None:
            continue
        if not (isinstance(table, Tensor) and table.dim() == 3 and table.size(2) == d_model):
            return name
        rows = table[:, 0].float()
        ours = SinusoidalPositions(d_model, max_len=1)._make(rows.size(0))
        if not torch.allclose(rows, ours, rtol=0.0, atol=1e-6):
            return name
    return None

"""Read an OpenNMT-py 3.x checkpoint (.pt), safely, into what a workbench run holds
(core.services.model_import stores it).

Safety: an imported file is untrusted. OpenNMT-py pickles its options (an
argparse.Namespace) and its vocabularies (lists of strings) beside the weights; the file
is read by torch.load(weights_only=True) with argparse.Namespace the only class allowed
on top of tensors and plain values, so no code from the file runs. A file that asks for
anything else (OpenNMT-py 2.x's torchtext fields, a crafted object) is refused naming it.

What maps: the RNN encoder-decoders whose architecture the workbench's `luong` family
computes exactly: LSTM cells, a unidirectional or bidirectional (brnn) encoder, global
attention with the dot, general or mlp score, with or without input feeding, a softmax
generator. OpenNMT-py's modules line up one to one with luong's (the encoder's nn.LSTM,
the decoder's stacked LSTM cells or nn.LSTM, the attention's W_in (transposed: OpenNMT-py
scores (W h_t) . h_s, luong h_t . (W_a h_s)) or its mlp's W_q, b_q, W_k and v, and W_out
on [c; h], the generator).
Transformers map onto family `transformer` (core.services.onmt_tf).
Everything else is refused naming the OpenNMT-py option (`refusal`), never
approximated.

Vocabularies: OpenNMT-py's lists are kept in their order with its specials `<blank>`,
`<unk>`, `<s>`, `</s>` moved to the workbench's ids (`<pad>`, `<unk>`, `<s>`, `</s>`);
the embedding and generator rows are permuted alike, so every score is the model's own.
The text is read as OpenNMT-py reads it without tokenising transforms: split on spaces
(data.pretokenized), nothing added to the source, `<s>` ... `</s>` around the target.
"""
from __future__ import annotations

import argparse
import pickle
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from core import limits
from core.config import DataConfig, ModelConfig, RunConfig
from core.data.preprocess import Preprocessor
from core.data.vocab import SPECIALS, Vocab
from core.errors import CheckpointError, ConfigError
from core.models.base import Seq2Seq
from core.models.luong import LuongModel
from core.models.transformer import Transformer
from core.services import onmt_tf
from core.train.checkpoint import check_finite_weights

#: OpenNMT-py's special tokens (onmt.constants.DefaultTokens) for the workbench's PAD,
#: UNK, BOS, EOS, in that order
ONMT_SPECIALS = ("<blank>", "<unk>", "<s>", "</s>")
#: transforms that only filter training pairs: the text the model reads is unchanged
QUIET_TRANSFORMS = frozenset({"filtertoolong"})
#: the most bytes a checkpoint may have (the bench model with its optimiser: 184 MB)
MAX_BYTES = 4 * 2**30
EMB = "embeddings.make_embedding.emb_luts.0.weight"
#: OpenNMT-py's mlp attention weights (decoder.attn.*) -> luong's
MLP_NAMES = (("linear_query.weight", "attention.score.w_q.weight"),
             ("linear_query.bias", "attention.score.w_q.bias"),
             ("linear_context.weight", "attention.score.w_k.weight"),
             ("v.weight", "attention.score.v_a.weight"), ("linear_out.bias", "w_c.bias"))


def is_onmt_checkpoint(path: Path) -> bool:
    """Whether `path` is a file saved by torch.save (a zip archive), as OpenNMT-py 3.x
    checkpoints are; what it holds is checked when it is read."""
    try:
        with path.open("rb") as f:
            return path.is_file() and f.read(4) == b"PK\x03\x04"
    except OSError:
        return False


@dataclass
class OnmtImport:
    """What an OpenNMT-py checkpoint gives a run (as marian_import.MarianImport)."""

    model: Seq2Seq  # a LuongModel or a Transformer
    config: RunConfig
    src_vocab: Vocab
    tgt_vocab: Vocab
    src_pre: Preprocessor
    tgt_pre: Preprocessor
    files: list[Path]


def load_untrusted(path: Path) -> dict[str, Any]:
    """The checkpoint's top-level dict, unpickled with no code run: tensors, plain values
    and argparse.Namespace only. CheckpointError naming the file (and the class it asks
    for) otherwise."""
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise CheckpointError(f"{path}: {size:,} bytes, more than the {MAX_BYTES:,} an "
                              "OpenNMT-py checkpoint may have here")
    try:
        with torch.serialization.safe_globals([argparse.Namespace]):
            raw = torch.load(path, map_location="cpu", weights_only=True, mmap=False)
    except pickle.UnpicklingError as exc:
        found = re.search(r"GLOBAL ([\w.]+)", str(exc))
        what = found.group(1) if found else "an object"
        hint = ("; OpenNMT-py 2.x and older pickle torchtext fields: the workbench reads "
                "3.x checkpoints" if "torchtext" in what else "")
        raise CheckpointError(
            f"{path}: asks to load {what}, which an imported file may not (only tensors, "
            f"plain values and argparse.Namespace are read){hint}; not imported") from None
    except Exception as exc:  # a damaged file: whatever torch raises
        raise CheckpointError(f"{path}: not a readable PyTorch checkpoint "
                              f"({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(raw, dict) or not {"model", "generator", "vocab", "opt"} <= set(raw):
        keys = sorted(map(str, raw))[:8] if isinstance(raw, dict) else type(raw).__name__
        raise CheckpointError(f"{path}: not an OpenNMT-py 3.x checkpoint (it holds {keys}; "
                              "one holds model, generator, vocab and opt)")
    if not isinstance(raw["opt"], argparse.Namespace):
        raise CheckpointError(f"{path}: its 'opt' is not OpenNMT-py's options (a Namespace)")
    return raw


def _opt(opt: argparse.Namespace, key: str, default: Any = None) -> Any:
    return getattr(opt, key, default)


def refusal(opt: argparse.Namespace) -> str | None:
    """Why the workbench cannot represent the model these options describe, naming the
    option; None when it can (LSTM, rnn/brnn encoder, dot/general, softmax ...)."""
    enc, dec = _opt(opt, "encoder_type", "rnn"), _opt(opt, "decoder_type", "rnn")
    if _opt(opt, "model_task", "seq2seq") != "seq2seq":
        return f"model_task {_opt(opt, 'model_task')!r}: only seq2seq models translate"
    shared = _shared_refusal(opt)
    if shared or "transformer" in (enc, dec):
        return shared or onmt_tf.refusal(opt)
    if enc not in ("rnn", "brnn") or dec != "rnn":
        return f"encoder_type {enc!r} / decoder_type {dec!r}: only RNN encoder-decoders map"
    checks = (
        (_opt(opt, "rnn_type") == "LSTM", f"rnn_type {_opt(opt, 'rnn_type')!r}: the workbench's "
         "luong family has LSTM cells only"),
        (_opt(opt, "global_attention") in ("dot", "general", "mlp"),
         f"global_attention {_opt(opt, 'global_attention')!r}: luong scores OpenNMT-py's "
         "'dot', 'general' and 'mlp'; a decoder without attention has no luong counterpart"),
        (_opt(opt, "global_attention_function", "softmax") == "softmax",
         f"global_attention_function {_opt(opt, 'global_attention_function')!r}: softmax only"),
        (not _opt(opt, "bridge", False), "bridge: the encoder-to-decoder bridge layer"),
        (not _opt(opt, "coverage_attn", False), "coverage_attn: coverage attention"),
        (not _opt(opt, "context_gate"), f"context_gate {_opt(opt, 'context_gate')!r}"),
        (not _opt(opt, "copy_attn", False), "copy_attn: the copy generator"),
        (not _opt(opt, "position_encoding", False), "position_encoding in an RNN's embeddings"),
        (_opt(opt, "enc_layers") == _opt(opt, "dec_layers"),
         f"enc_layers {_opt(opt, 'enc_layers')} != dec_layers {_opt(opt, 'dec_layers')}: "
         "luong stacks the same number of layers on both sides"),
        (_opt(opt, "enc_hid_size") == _opt(opt, "dec_hid_size"),
         f"enc_hid_size {_opt(opt, 'enc_hid_size')} != dec_hid_size "
         f"{_opt(opt, 'dec_hid_size')}: luong's sides are equally wide"),
        (_opt(opt, "src_word_vec_size") == _opt(opt, "tgt_word_vec_size"),
         f"src_word_vec_size {_opt(opt, 'src_word_vec_size')} != tgt_word_vec_size "
         f"{_opt(opt, 'tgt_word_vec_size')}: luong's embeddings are equally wide"),
    )
    return next((why for ok, why in checks if not ok), None)


def _shared_refusal(opt: argparse.Namespace) -> str | None:
    """What neither an RNN nor a Transformer may have, naming the option; None if none."""
    checks = (
        (_opt(opt, "generator_function", "softmax") == "softmax",
         f"generator_function {_opt(opt, 'generator_function')!r}: softmax only"),
        (not _opt(opt, "n_src_feats", 0), "n_src_feats: source word features"),
        (_opt(opt, "decoder_start_token", "<s>") == "<s>",
         f"decoder_start_token {_opt(opt, 'decoder_start_token')!r}: the target starts "
         "with <s> in the workbench"),
    )
    for ok, why in checks:
        if not ok:
            return why
    transforms = set(_opt(opt, "_all_transform", None) or ()) | set(_opt(opt, "transforms", None) or ())
    changing = sorted(map(str, transforms - QUIET_TRANSFORMS))
    if changing:
        return (f"transforms {changing}: they change the text the model reads (tokenising, "
                "subwords, prefixes ...) and their files are not in the checkpoint; the "
                "workbench reads models over space-separated tokens (filtertoolong only)")
    return None


def _vocab(raw: Any, side: str, path: Path) -> tuple[Vocab, Tensor]:
    """OpenNMT-py's token list of one side -> (the workbench Vocab, order: for each
    workbench id the OpenNMT-py id, long)."""
    if not (isinstance(raw, list) and all(isinstance(t, str) for t in raw)):
        raise CheckpointError(f"{path}: vocab[{side!r}] is not a list of tokens")
    if len(raw) > limits.MAX_VOCAB:
        raise CheckpointError(f"{path}: vocab[{side!r}] has {len(raw):,} tokens, more than "
                              f"the {limits.MAX_VOCAB:,} the workbench allows")
    index = {t: i for i, t in enumerate(raw)}
    if len(index) != len(raw):
        raise CheckpointError(f"{path}: vocab[{side!r}] repeats a token")
    missing = [t for t in ONMT_SPECIALS if t not in index]
    if missing:
        raise CheckpointError(f"{path}: vocab[{side!r}] lacks OpenNMT-py's special "
                              f"token(s) {missing}")
    clash = [t for t in SPECIALS if t in index and t not in ONMT_SPECIALS]
    if clash:
        raise CheckpointError(f"{path}: vocab[{side!r}] holds {clash} as an ordinary token, "
                              "a name the workbench keeps for its own special ids")
    rest = [t for t in raw if t not in ONMT_SPECIALS]
    order = [index[t] for t in ONMT_SPECIALS] + [index[t] for t in rest]
    return Vocab(list(SPECIALS) + rest), torch.tensor(order, dtype=torch.long)


def _tensor(weights: dict[str, Any], key: str, path: Path) -> Tensor:
    value = weights.get(key)
    if not isinstance(value, Tensor):
        raise CheckpointError(f"{path}: the weight {key!r} is missing; the options and the "
                              "weights disagree (a damaged or altered checkpoint)")
    return value.float()


def _mapped_weights(raw: dict[str, Any], src_order: Tensor, tgt_order: Tensor,
                    feed: bool, path: Path) -> dict[str, Tensor]:
    """OpenNMT-py's model and generator weights under luong's names, vocabulary rows in
    the workbench's order. Every OpenNMT-py weight must find a place."""
    model, gen = raw["model"], raw["generator"]
    if not (isinstance(model, dict) and isinstance(gen, dict)):
        raise CheckpointError(f"{path}: 'model' and 'generator' must be tables of weights")
    out: dict[str, Tensor] = {}
    used = set()
    for key in model:
        name = str(key)
        if name.startswith("encoder.rnn."):
            out["encoder." + name[len("encoder."):]] = _tensor(model, name, path)
        elif name.startswith("decoder.rnn.layers.") and feed:
            out["cells." + name[len("decoder.rnn.layers."):]] = _tensor(model, name, path)
        elif name.startswith("decoder.rnn.") and not feed:
            out[name[len("decoder."):]] = _tensor(model, name, path)
        else:
            continue
        used.add(name)
    out["encoder.embed.weight"] = _tensor(model, "encoder." + EMB, path)[src_order]
    out["tgt_embed.weight"] = _tensor(model, "decoder." + EMB, path)[tgt_order]
    out["w_c.weight"] = _tensor(model, "decoder.attn.linear_out.weight", path)
    used |= {"encoder." + EMB, "decoder." + EMB, "decoder.attn.linear_out.weight"}
    if "decoder.attn.linear_in.weight" in model:  # general: W_a = W_in^T
        out["attention.score.w_a.weight"] = _tensor(model, "decoder.attn.linear_in.weight", path).t()
        used.add("decoder.attn.linear_in.weight")
    for theirs, ours in MLP_NAMES:  # mlp: v^T tanh(W_q h_t + b_q + W_k h_s), W_out + b_out
        if f"decoder.attn.{theirs}" in model:
            out[ours] = _tensor(model, f"decoder.attn.{theirs}", path)
            used.add(f"decoder.attn.{theirs}")
    out["w_s.weight"] = _tensor(gen, "weight", path)[tgt_order]
    out["w_s.bias"] = _tensor(gen, "bias", path)[tgt_order]
    unplaced = sorted(set(map(str, model)) - used) + sorted(set(map(str, gen)) - {"weight", "bias"})
    if unplaced:
        raise CheckpointError(f"{path}: weights {unplaced[:4]} have no place in the luong "
                              "model its options describe; not imported")
    return out


def _transformer_weights(raw: dict[str, Any], model: Transformer, config: ModelConfig,
                         src_order: Tensor, tgt_order: Tensor, path: Path) -> dict[str, Tensor]:
    """OpenNMT-py's Transformer weights under the transformer's names (onmt_tf), every
    one placed (CheckpointError naming those that are not)."""
    model_w, gen = raw["model"], raw["generator"]
    if not (isinstance(model_w, dict) and isinstance(gen, dict)):
        raise CheckpointError(f"{path}: 'model' and 'generator' must be tables of weights")
    table = onmt_tf.position_table_mismatch(model_w, config.d_model)
    if table:
        raise CheckpointError(f"{path}: its position table {table!r} is not the sin/cos table "
                              "the options describe (a damaged or altered checkpoint)")
    own = model.state_dict()
    out, used = onmt_tf.mapped_weights(
        raw, config, src_order, tgt_order,
        lambda table, key: _tensor(table, key, path), lambda name: own[name].new_zeros(own[name].shape))
    if config.tie_embeddings:
        out["generator.weight"] = out["tgt_embed.weight"]
    unplaced = sorted(set(map(str, model_w)) - used) + sorted(set(map(str, gen)) - {"weight", "bias"})
    if unplaced:
        raise CheckpointError(f"{path}: weights {unplaced[:4]} have no place in the transformer "
                              "its options describe; not imported")
    return out


def _load_weights(model: Seq2Seq, weights: dict[str, Tensor], path: Path) -> None:
    """Fill `model` with `weights`, every name and shape checked (CheckpointError)."""
    own = model.state_dict()
    for name, tensor in own.items():
        if name not in weights:
            raise CheckpointError(f"{path}: no weight for {name!r} of the model its options "
                                  "describe (a damaged or altered checkpoint)")
        if weights[name].shape != tensor.shape:
            raise CheckpointError(f"{path}: a weight for {name!r} is "
                                  f"{tuple(weights[name].shape)}, the model's options say "
                                  f"{tuple(tensor.shape)}")
    extra = sorted(set(weights) - set(own))
    if extra:
        raise CheckpointError(f"{path}: weights {extra[:4]} have no place in the model")
    check_finite_weights(weights, path)
    model.load_state_dict(weights)


def model_config(opt: argparse.Namespace) -> ModelConfig:
    """luong's or transformer's ModelConfig for the options `opt` (refusal() has passed)."""
    if _opt(opt, "encoder_type") == "transformer":
        return onmt_tf.model_config(opt)
    dropout = _opt(opt, "dropout", 0.0)
    dropout = dropout[0] if isinstance(dropout, list | tuple) and dropout else dropout
    return ModelConfig(
        family="luong", cell="lstm", emb_size=_opt(opt, "src_word_vec_size"),
        hidden_size=_opt(opt, "enc_hid_size"), layers=_opt(opt, "enc_layers"),
        attention="global", score=_opt(opt, "global_attention"),
        input_feeding=bool(_opt(opt, "input_feed", 1)), reverse_source=False,
        bidirectional=bool(_opt(opt, "brnn", False)) or _opt(opt, "encoder_type") == "brnn",
        dropout=float(dropout) if isinstance(dropout, int | float) else 0.0, init_range=0.0)


def read_onmt(path: Path, name: str) -> OnmtImport:
    """Everything run `name` needs from OpenNMT-py checkpoint `path`; CheckpointError or
    ConfigError naming the file, and the option when the model cannot be represented."""
    raw = load_untrusted(path)
    opt = raw["opt"]
    try:
        why = refusal(opt)
    except (TypeError, ValueError) as exc:  # a crafted value (e.g. transforms = 5)
        raise CheckpointError(f"{path}: its options are not OpenNMT-py's ({exc})") from None
    if why:
        raise ConfigError(f"{path}: {why}; not imported")
    vocab = raw["vocab"]
    if not isinstance(vocab, dict):
        raise CheckpointError(f"{path}: 'vocab' is not OpenNMT-py 3.x's table of token lists")
    src_vocab, src_order = _vocab(vocab.get("src"), "src", path)
    tgt_vocab, tgt_order = _vocab(vocab.get("tgt"), "tgt", path)
    config = RunConfig(
        name=name, description=f"OpenNMT-py model imported from {path}",
        model=model_config(opt),
        data=DataConfig(vocab="word", src_vocab_size=len(src_vocab),
                        tgt_vocab_size=len(tgt_vocab), pretokenized=True,
                        joint_vocab=src_vocab == tgt_vocab))
    try:
        config.validate(str(path))
    except ConfigError as exc:
        raise ConfigError(f"{exc}; not imported") from None
    if config.model.family == "transformer":
        model = Transformer(config.model, len(src_vocab), len(tgt_vocab))
        weights = _transformer_weights(raw, model, config.model, src_order, tgt_order, path)
    else:
        model = LuongModel(config.model, len(src_vocab), len(tgt_vocab))
        weights = _mapped_weights(raw, src_order, tgt_order, config.model.input_feeding, path)
    _load_weights(model, weights, path)
    langs = [(_opt(opt, key, "") or "xx") for key in ("src_lang", "tgt_lang")]
    pres = [Preprocessor(lang, normalize_punct=False, pretokenized=True) for lang in langs]
    return OnmtImport(model.eval(), config, src_vocab, tgt_vocab, pres[0], pres[1], [path])

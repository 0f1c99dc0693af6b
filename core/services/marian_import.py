"""Read a Marian / OPUS-MT model in the Hugging Face layout from a local folder, safely,
into what a workbench run holds (core.services.model_import stores it).

The folder: config.json (model_type "marian"), the weights as model.safetensors or
pytorch_model.bin, source.spm and target.spm, vocab.json (and target_vocab.json for a
model with separate vocabularies). Nothing is downloaded: transformers reads the folder
with local_files_only. A pytorch_model.bin is read by torch.load(weights_only=True),
which runs no code from the file; safetensors holds no code at all. The config's sizes
are checked against the workbench's limits before anything is built.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from core.config import DataConfig, ModelConfig, RunConfig
from core.data.marian_vocab import MARIAN_EOS, MARIAN_PAD, MarianVocab, marian_pieces
from core.data.preprocess import Preprocessor
from core.errors import CheckpointError, ConfigError
from core.models.marian import MarianWrapped, hf_config, transformers_module
from core.train.checkpoint import check_finite_weights

CONFIG, SOURCE_SPM, TARGET_SPM, VOCAB, TARGET_VOCAB = (
    "config.json", "source.spm", "target.spm", "vocab.json", "target_vocab.json")
WEIGHTS = ("model.safetensors", "pytorch_model.bin")
#: the most bytes a JSON file of the folder may have (vocab.json of OPUS-MT: about 1 MB)
MAX_JSON_BYTES = 64 * 2**20


def is_marian_folder(path: Path) -> bool:
    """Whether `path` is a folder holding a config.json of model_type 'marian'."""
    try:
        return path.is_dir() and json.loads(
            (path / CONFIG).read_text(encoding="utf-8")).get("model_type") == "marian"
    except (OSError, ValueError, AttributeError):
        return False


@dataclass
class MarianImport:
    """What a Marian folder gives a run: model, vocabularies, preprocessors, config, and
    the files read (for the provenance record)."""

    model: MarianWrapped
    config: RunConfig
    src_vocab: MarianVocab
    tgt_vocab: MarianVocab
    src_pre: Preprocessor
    tgt_pre: Preprocessor
    files: list[Path]


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise CheckpointError(f"{path}: missing; a Marian model folder holds {CONFIG}, "
                              f"{VOCAB}, {SOURCE_SPM}, {TARGET_SPM} and {' or '.join(WEIGHTS)}")
    if path.stat().st_size > MAX_JSON_BYTES:
        raise CheckpointError(f"{path}: {path.stat().st_size:,} bytes, more than the "
                              f"{MAX_JSON_BYTES:,} a Marian {path.name} may have")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path}: not a JSON file ({exc})") from None


def _spm(path: Path) -> bytes:
    if not path.is_file():
        raise CheckpointError(f"{path}: missing; a Marian model folder holds its two "
                              f"sentencepiece models, {SOURCE_SPM} and {TARGET_SPM}")
    return path.read_bytes()


def _vocab(folder: Path, name: str, size: int, side: str, spm: bytes, config: Any) -> MarianVocab:
    """One side's MarianVocab, checked against the model: its size, and `<pad>` and `</s>`
    at the config's ids."""
    path = folder / name
    raw = _read_json(path)
    if not isinstance(raw, dict):
        raise CheckpointError(f"{path}: not a Marian vocabulary (a table of piece: id)")
    pieces = marian_pieces(raw, path)
    if len(pieces) != size:
        raise CheckpointError(f"{path}: {len(pieces):,} pieces, but the model's {CONFIG} "
                              f"says {size:,}; the files come from different models")
    for piece, key in ((MARIAN_PAD, "pad_token_id"), (MARIAN_EOS, "eos_token_id")):
        at = getattr(config, key)
        if not (isinstance(at, int) and 0 <= at < size and pieces[at] == piece):
            raise CheckpointError(f"{path}: {piece!r} is not at {key} = {at!r} of {CONFIG}; "
                                  "the files come from different models")
    try:
        return MarianVocab(spm, pieces, side)
    except CheckpointError as exc:
        raise CheckpointError(f"{path}: {exc}") from None


def _weights(folder: Path, config: Any) -> tuple[Any, Path]:
    """transformers' MarianMTModel with the folder's weights (no download, no pickle code)."""
    found = [folder / w for w in WEIGHTS if (folder / w).is_file()]
    if not found:
        raise CheckpointError(f"{folder}: no weights ({' or '.join(WEIGHTS)}); a Marian model "
                              "folder holds one of them")
    transformers = transformers_module()
    try:
        model = transformers.MarianMTModel.from_pretrained(
            folder, config=config, local_files_only=True,
            use_safetensors=found[0].suffix == ".safetensors", weights_only=True)
    except Exception as exc:  # a damaged or crafted file: whatever the reader raises
        raise CheckpointError(f"{found[0]}: cannot be read as the model's weights "
                              f"({type(exc).__name__}: {str(exc)[:300]})") from None
    check_finite_weights(model.state_dict(), found[0])
    return model.eval(), found[0]


def _languages(folder: Path) -> tuple[str, str]:
    """The language pair an OPUS-MT folder's name gives (opus-mt-es-en), else 'xx'."""
    match = re.search(r"([a-z]{2,3})-([a-z]{2,3})$", folder.name.lower())
    return (match.group(1), match.group(2)) if match else ("xx", "xx")


def read_marian(folder: Path, name: str) -> MarianImport:
    """Everything run `name` needs from Marian folder `folder`; CheckpointError or
    ConfigError naming the file that is missing, damaged or does not fit the others."""
    raw = _read_json(folder / CONFIG)
    if not isinstance(raw, dict):
        raise ConfigError(f"{folder / CONFIG}: not a model config (a JSON table)")
    config = hf_config(json.dumps(raw), str(folder / CONFIG))
    config.decoder_vocab_size = config.decoder_vocab_size or config.vocab_size
    tokenizer = folder / "tokenizer_config.json"
    separate = bool(_read_json(tokenizer).get("separate_vocabs")) if tokenizer.is_file() else False
    src_spm, tgt_spm = _spm(folder / SOURCE_SPM), _spm(folder / TARGET_SPM)
    src_vocab = _vocab(folder, VOCAB, config.vocab_size, "source", src_spm, config)
    tgt_vocab = _vocab(folder, TARGET_VOCAB if separate else VOCAB,
                       config.decoder_vocab_size, "target", tgt_spm, config)
    hf_model, weights = _weights(folder, config)
    model = MarianWrapped(config, len(src_vocab), len(tgt_vocab), hf_model)
    model.src_ids.copy_(torch.tensor(src_vocab.marian_ids))
    tgt_ids = list(tgt_vocab.marian_ids)
    tgt_ids[2] = int(config.decoder_start_token_id)  # BOS: the decoder's start token
    model.tgt_ids.copy_(torch.tensor(tgt_ids))
    src_lang, tgt_lang = _languages(folder)
    run_config = RunConfig(
        name=name, description=f"Marian model imported from {folder}",
        model=ModelConfig(
            family="marian", d_model=config.d_model, ff_size=config.decoder_ffn_dim,
            heads=config.decoder_attention_heads, enc_layers=config.encoder_layers,
            dec_layers=config.decoder_layers, dropout=0.0,
            tie_embeddings=bool(getattr(config, "tie_word_embeddings", True)),
            external=json.dumps(raw, sort_keys=True)),
        data=DataConfig(vocab="unigram", src_vocab_size=len(src_vocab),
                        tgt_vocab_size=len(tgt_vocab), joint_vocab=not separate))
    run_config.validate()
    files = [folder / CONFIG, folder / SOURCE_SPM, folder / TARGET_SPM, folder / VOCAB, weights]
    files += [folder / TARGET_VOCAB] if separate else []
    files += [tokenizer] if tokenizer.is_file() else []
    return MarianImport(model, run_config, src_vocab, tgt_vocab,
                        Preprocessor(src_lang, normalize_punct=False),
                        Preprocessor(tgt_lang, normalize_punct=False), files)


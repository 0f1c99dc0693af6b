"""A small random Marian model in the Hugging Face layout, made for the tests: two
sentencepiece models trained on the demo corpus (es -> en), a vocab.json as
MarianTokenizer reads it ({piece: id}, `</s>` 0, `<unk>` 1, the pieces of both models,
`<pad>` last), and a MarianMTModel of tiny sizes saved with save_pretrained."""
from __future__ import annotations

import io
import json
from pathlib import Path

import sentencepiece as spm
import torch

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "resources" / "demo"


def train_spm(lines: list[str], size: int) -> bytes:
    """A unigram sentencepiece model of `lines`, as bytes."""
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=out, vocab_size=size, model_type="unigram",
        hard_vocab_limit=False, num_threads=1, minloglevel=2, shuffle_input_sentence=False)
    return out.getvalue()


def pieces_of(proto: bytes) -> list[str]:
    sp = spm.SentencePieceProcessor(model_proto=proto)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())
            if not (sp.is_control(i) or sp.is_unknown(i))]


def make_marian_folder(folder: Path, safetensors: bool = True, seed: int = 0) -> Path:
    """Write the model into `folder` (created); returns it."""
    from transformers import MarianConfig, MarianMTModel

    folder.mkdir(parents=True, exist_ok=True)
    es = (DEMO / "demo.es").read_text(encoding="utf-8").splitlines()
    en = (DEMO / "demo.en").read_text(encoding="utf-8").splitlines()
    src, tgt = train_spm(es, 300), train_spm(en, 300)
    (folder / "source.spm").write_bytes(src)
    (folder / "target.spm").write_bytes(tgt)
    pieces = ["</s>", "<unk>"]
    for p in pieces_of(src) + pieces_of(tgt):
        if p not in pieces:
            pieces.append(p)
    pieces.append("<pad>")
    (folder / "vocab.json").write_text(json.dumps({p: i for i, p in enumerate(pieces)}),
                                       encoding="utf-8")
    pad = len(pieces) - 1
    config = MarianConfig(
        vocab_size=len(pieces), decoder_vocab_size=len(pieces), d_model=32,
        encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
        max_position_embeddings=256, pad_token_id=pad, eos_token_id=0,
        decoder_start_token_id=pad, init_std=0.2, dropout=0.0,
        attention_dropout=0.0, activation_dropout=0.0, scale_embedding=True)
    torch.manual_seed(seed)
    model = MarianMTModel(config)
    with torch.no_grad():  # peaked distributions; many sentences end within 30 pieces
        for name, weight in model.named_parameters():
            if weight.dim() == 2 and "embed_positions" not in name:
                weight.normal_(0.0, 0.2)
        model.final_logits_bias[0, 0] = 3.5
    model.save_pretrained(folder, safe_serialization=safetensors)
    return folder

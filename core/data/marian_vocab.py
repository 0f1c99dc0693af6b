"""The vocabulary of an imported Marian / OPUS-MT model, in the workbench's id order.

A Marian model numbers its pieces by its `vocab.json` (`</s>` 0, `<unk>` 1, ..., `<pad>`
last, typically) and splits text with one sentencepiece model per side (`source.spm`,
`target.spm`). The workbench's ids start with PAD, UNK, BOS, EOS (core.data.vocab), so a
MarianVocab keeps both numberings: `itos` is the workbench's (the four specials, then
every other piece of vocab.json in its order) and `marian_ids[i]` the Marian id of
workbench id i, which the model (core.models.marian) uses to translate ids both ways.
BOS and PAD both stand for Marian's `<pad>`, its decoder start token.

It is a SubwordVocab (tokenize / detokenize / encode / decode), so every path that
tokenises text for a subword run tokenises an imported one. Tokenisation follows
transformers' MarianTokenizer: a leading language code (`>>fr<<`) is one piece, the rest
is sentencepiece's pieces; a piece vocab.json lacks is `<unk>`; the source side ends
with `</s>`, which the model attends to like any other token (so the attention shown is
all of the model's).

Saved as JSON (kind "marian": the side, vocab.json's pieces in Marian's order, the
sentencepiece model's file name) with the sentencepiece model beside it.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import sentencepiece as spm

from core.atomic import write_bytes_atomic, write_text_atomic
from core.data.vocab import FORMAT_VERSION, SAVED_KINDS, SPECIALS, UNK, SubwordVocab, _model_path
from core.errors import CheckpointError
from core.safepath import inside

KIND = "marian"
SIDES = ("source", "target")
#: Marian's names of its special pieces (MarianTokenizer's defaults)
MARIAN_EOS, MARIAN_UNK, MARIAN_PAD = "</s>", "<unk>", "<pad>"


class MarianVocab(SubwordVocab):
    """One side of a Marian model: its sentencepiece model and vocab.json's pieces."""

    kind = KIND

    def __init__(self, model_proto: bytes, pieces: Sequence[str], side: str) -> None:
        if side not in SIDES:
            raise ValueError(f"side must be one of {SIDES}, not {side!r}")
        missing = [p for p in (MARIAN_EOS, MARIAN_UNK, MARIAN_PAD) if p not in pieces]
        if missing:
            raise CheckpointError(f"the Marian vocabulary lacks {', '.join(missing)}: not a "
                                  "Marian vocab.json")
        if len(set(pieces)) != len(pieces):
            raise CheckpointError("the Marian vocabulary repeats a piece")
        self.model_proto = model_proto
        self.model_type = "unigram"
        self.side = side
        self.pieces = list(pieces)  # Marian id -> piece
        try:
            self.sp = spm.SentencePieceProcessor(model_proto=model_proto)
        except RuntimeError as exc:
            raise CheckpointError(f"damaged sentencepiece model ({exc})") from None
        marian = {p: i for i, p in enumerate(self.pieces)}
        pad = marian[MARIAN_PAD]
        # workbench order: PAD, UNK, BOS, EOS, then the other pieces in Marian's order
        head = [pad, marian[MARIAN_UNK], pad, marian[MARIAN_EOS]]
        rest = [i for i, p in enumerate(self.pieces) if p not in SPECIALS]
        self.marian_ids: list[int] = head + rest
        self.itos: list[str] = list(SPECIALS) + [self.pieces[i] for i in rest]
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, MarianVocab) and self.model_proto == other.model_proto
                and self.pieces == other.pieces and self.side == other.side)

    def tokenize(self, text: str) -> list[str]:
        """Text -> pieces as MarianTokenizer splits it (a leading `>>xx<<` kept whole),
        `</s>` after a source sentence."""
        code: list[str] = []
        end = text.find("<<") if text.startswith(">>") else -1
        if end != -1:
            code, text = [text[: end + 2]], text[end + 2:]
        pieces = code + self.sp.encode(text, out_type=str)
        return pieces + [MARIAN_EOS] if self.side == "source" else pieces

    def detokenize(self, pieces: Sequence[str]) -> str:
        """Pieces -> text, the specials left out (as MarianTokenizer.decode skips them)."""
        kept = [p for p in pieces if p not in SPECIALS]
        return self.sp.decode_pieces(kept).replace("\u2581", " ").strip()

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Workbench ids of `tokens`; a piece vocab.json lacks is UNK."""
        get = self.stoi.get
        return [get(t, UNK) for t in tokens]

    def save(self, path: str | Path) -> Path:
        """The sentencepiece model beside `path` ('.model') and the JSON at `path`."""
        path = Path(path)
        model = _model_path(path)
        write_bytes_atomic(model, self.model_proto)
        doc = {"kind": KIND, "version": FORMAT_VERSION, "side": self.side,
               "model_file": model.name, "pieces": self.pieces}
        return write_text_atomic(path, json.dumps(doc, ensure_ascii=False, indent=0) + "\n")


def from_saved(path: Path, doc: dict[str, Any]) -> MarianVocab:
    """The MarianVocab of a `save`d JSON `doc` read from `path`; CheckpointError naming the
    file when it or its sentencepiece model is missing or damaged."""
    pieces, side, model_file = doc.get("pieces"), doc.get("side"), doc.get("model_file")
    if not (isinstance(pieces, list) and all(isinstance(p, str) for p in pieces)
            and side in SIDES and isinstance(model_file, str)):
        raise CheckpointError(f"{path}: a damaged Marian vocabulary file; import the model "
                              "again")
    model = inside(path.parent, model_file, "sentencepiece model", CheckpointError, bare=True)
    try:
        proto = model.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(f"{model}: sentencepiece model missing (it belongs beside "
                              f"{path.name})") from None
    try:
        return MarianVocab(proto, pieces, side)
    except CheckpointError as exc:
        raise CheckpointError(f"{path}: {exc}") from None


def marian_pieces(entries: dict[str, Any], source: str | Path) -> list[str]:
    """vocab.json's {piece: id} as the list of pieces by id; CheckpointError naming
    `source` unless the ids are 0 .. n-1, each once."""
    ids = list(entries.values())
    if not entries or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids) \
            or sorted(ids) != list(range(len(ids))):
        raise CheckpointError(f"{source}: not a Marian vocabulary (its ids must be the whole "
                              "numbers 0 .. n-1, each once)")
    pieces = [""] * len(ids)
    for piece, i in entries.items():
        pieces[i] = piece
    return pieces


SAVED_KINDS["marian"] = from_saved  # load_vocab reads a saved Marian side through it

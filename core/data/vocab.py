"""Vocabularies: word level (`Vocab`) and subword (`SubwordVocab`, sentencepiece BPE
or unigram). Both map tokens <-> ids with the same special ids:
PAD=0 '<pad>', UNK=1 '<unk>', BOS=2 '<s>', EOS=3 '</s>', then the reserved
CONTEXT_START '<doc>' at 4 (so any vocabulary serves context-aware models).

Saved as JSON (atomically); a SubwordVocab also writes its sentencepiece model beside
the JSON (same stem, '.model'). `load_vocab(path)` reads either kind.
"""
from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import sentencepiece as spm

from core.atomic import write_bytes_atomic, write_text_atomic
from core.data.context import CONTEXT_START
from core.errors import CheckpointError, CorpusError

PAD, UNK, BOS, EOS = 0, 1, 2, 3
SPECIALS = ("<pad>", "<unk>", "<s>", "</s>")
RESERVED = (CONTEXT_START,)
FORMAT_VERSION = 1


class Vocab:
    """Word-level vocabulary: `itos[i]` is the token of id i."""

    kind = "word"

    def __init__(self, itos: Sequence[str]) -> None:
        if tuple(itos[:4]) != SPECIALS:
            raise ValueError(f"a vocabulary must start with {SPECIALS}, not {tuple(itos[:4])}")
        if len(set(itos)) != len(itos):
            raise ValueError("a vocabulary must not repeat a token")
        self.itos: list[str] = list(itos)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def from_counter(
        cls, counts: Mapping[str, int], max_size: int = 0, min_freq: int = 1,
        reserved: Sequence[str] = RESERVED,
    ) -> Vocab:
        """Specials, `reserved`, then the most frequent tokens seen at least
        `min_freq` times; ties by token string (code points) so the result never
        depends on input order. `max_size` (> 0) caps the total size, specials and
        reserved included."""
        head = list(SPECIALS) + [t for t in reserved if t not in SPECIALS]
        taken = set(head)
        words = sorted(
            ((t, n) for t, n in counts.items() if n >= min_freq and t not in taken),
            key=lambda item: (-item[1], item[0]),
        )
        if max_size > 0:
            if max_size < len(head):
                raise ValueError(f"max_size must be at least {len(head)} (specials), not {max_size}")
            words = words[: max_size - len(head)]
        return cls(head + [t for t, _ in words])

    @classmethod
    def build(
        cls, sentences: Iterable[Sequence[str]], max_size: int = 0, min_freq: int = 1,
        reserved: Sequence[str] = RESERVED,
    ) -> Vocab:
        """From tokenised sentences (see `from_counter`)."""
        counts: Counter[str] = Counter()
        for tokens in sentences:
            counts.update(tokens)
        return cls.from_counter(counts, max_size, min_freq, reserved)

    def __len__(self) -> int:
        return len(self.itos)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Token ids, UNK for tokens not in the vocabulary."""
        get = self.stoi.get
        return [get(t, UNK) for t in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Tokens of `ids`; an id outside the vocabulary gives '<unk>'."""
        n = len(self.itos)
        return [self.itos[i] if 0 <= i < n else SPECIALS[UNK] for i in map(int, ids)]

    def save(self, path: str | Path) -> Path:
        """Write the vocabulary as JSON (atomically); returns the path."""
        doc = {"kind": self.kind, "version": FORMAT_VERSION, "itos": self.itos}
        return write_text_atomic(path, json.dumps(doc, ensure_ascii=False, indent=0) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Vocab:
        """The word vocabulary saved at `path`; CheckpointError when it holds another kind."""
        return _load_kind(cls, path)


def _model_path(path: Path) -> Path:
    if path.suffix == ".model":
        raise ValueError(f"{path}: choose another name for the JSON (the .model file sits beside it)")
    return path.with_name(path.stem + ".model")


class SubwordVocab:
    """A sentencepiece model; `tokenize` turns text into pieces, `encode` pieces into
    ids (unknown pieces -> UNK), `detokenize` pieces back into text."""

    kind = "subword"

    def __init__(self, model_proto: bytes, model_type: str = "bpe") -> None:
        self.model_proto = model_proto
        self.model_type = model_type
        self.sp = spm.SentencePieceProcessor(model_proto=model_proto)
        self.itos: list[str] = [self.sp.id_to_piece(i) for i in range(self.sp.get_piece_size())]
        if tuple(self.itos[:4]) != SPECIALS:
            raise CheckpointError(f"sentencepiece model has specials {self.itos[:4]}, expected {SPECIALS}")

    @classmethod
    def train(
        cls, sentences: Iterable[str], vocab_size: int, model_type: str = "bpe",
        reserved: Sequence[str] = RESERVED, character_coverage: float = 1.0,
    ) -> SubwordVocab:
        """Train on raw (normalised) sentences; joint vocabularies are trained on both
        sides' sentences. `vocab_size` is an upper bound on small corpora."""
        if model_type not in ("bpe", "unigram"):
            raise ValueError(f"model_type must be 'bpe' or 'unigram', not {model_type!r}")
        out = io.BytesIO()
        try:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(sentences), model_writer=out, vocab_size=vocab_size,
                model_type=model_type, pad_id=PAD, unk_id=UNK, bos_id=BOS, eos_id=EOS,
                pad_piece=SPECIALS[PAD], unk_piece=SPECIALS[UNK], bos_piece=SPECIALS[BOS],
                eos_piece=SPECIALS[EOS], user_defined_symbols=list(reserved),
                character_coverage=character_coverage, hard_vocab_limit=False,
                shuffle_input_sentence=False, num_threads=1, minloglevel=2,
            )
        except RuntimeError as exc:
            raise CorpusError(
                None, None,
                f"sentencepiece could not train a {model_type} vocabulary of size "
                f"{vocab_size} ({exc}); give more text or a smaller vocabulary size",
            ) from None
        return cls(out.getvalue(), model_type)

    def __len__(self) -> int:
        return len(self.itos)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SubwordVocab) and self.model_proto == other.model_proto

    def tokenize(self, text: str) -> list[str]:
        """Text (already normalised) -> sentencepiece pieces."""
        return self.sp.encode(text, out_type=str)

    def detokenize(self, pieces: Sequence[str]) -> str:
        """Sentencepiece pieces -> text."""
        return self.sp.decode_pieces(list(pieces))

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Piece ids; sentencepiece gives UNK for unknown pieces."""
        return [self.sp.piece_to_id(t) for t in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Pieces of `ids`; an id outside the vocabulary gives '<unk>'."""
        n = len(self.itos)
        return [self.itos[i] if 0 <= i < n else SPECIALS[UNK] for i in map(int, ids)]

    def save(self, path: str | Path) -> Path:
        """Write the sentencepiece model beside `path` (same stem, '.model') and the JSON at
        `path`, both atomically; returns `path`. ValueError for a '.model' path."""
        path = Path(path)
        model = _model_path(path)
        write_bytes_atomic(model, self.model_proto)
        doc = {"kind": self.kind, "version": FORMAT_VERSION, "model_type": self.model_type,
               "model_file": model.name, "size": len(self)}
        return write_text_atomic(path, json.dumps(doc, indent=0) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> SubwordVocab:
        """The subword vocabulary saved at `path`; CheckpointError when it holds another kind."""
        return _load_kind(cls, path)


AnyVocab = Vocab | SubwordVocab


#: readers of the other saved kinds, by kind: a module below the loaders (e.g.
#: core.data.marian_vocab) adds its own when imported, so this one needs none of them
SAVED_KINDS: dict[str, Any] = {}


def load_vocab(path: str | Path) -> AnyVocab:
    """Read a vocabulary saved by `Vocab.save` or `SubwordVocab.save`."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{path}: vocabulary file is missing; it is saved beside the model") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path}: vocabulary file is damaged ({exc}); rebuild it") from None
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if kind == Vocab.kind and isinstance(doc.get("itos"), list):
        try:
            return Vocab(doc["itos"])
        except ValueError as exc:
            raise CheckpointError(f"{path}: {exc}") from None
    if kind == SubwordVocab.kind and isinstance(doc.get("model_file"), str):
        model = path.with_name(doc["model_file"])
        try:
            proto = model.read_bytes()
        except FileNotFoundError:
            raise CheckpointError(f"{model}: sentencepiece model missing (it belongs beside {path.name})") from None
        try:
            return SubwordVocab(proto, doc.get("model_type", "bpe"))
        except RuntimeError as exc:
            raise CheckpointError(f"{model}: damaged sentencepiece model ({exc})") from None
    if kind in SAVED_KINDS:  # e.g. an imported Marian model's side (core.data.marian_vocab)
        return SAVED_KINDS[kind](path, doc)
    raise CheckpointError(f"{path}: not a vocabulary file (unknown kind {kind!r})")


def _load_kind(cls: type, path: str | Path) -> Any:
    """The vocabulary saved at `path` if it is a `cls`; CheckpointError naming both
    kinds otherwise."""
    vocab = load_vocab(path)
    if not isinstance(vocab, cls):
        raise CheckpointError(f"{path}: holds a {vocab.kind} vocabulary, not a {cls.kind} one")
    return vocab

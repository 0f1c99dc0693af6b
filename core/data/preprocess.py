"""Per-language text preprocessing with sacremoses: punctuation normalisation,
optional lowercasing, optional accent/ASCII folding, tokenisation and its inverse.

The steps only ever return new strings/lists: the caller keeps the raw text (a
SentencePair is never modified) so outputs can be shown next to what the user wrote.
"""
from __future__ import annotations

import unicodedata
from typing import Any

from sacremoses import MosesDetokenizer, MosesPunctNormalizer, MosesTokenizer

from core.data.conventions import CONVENTIONS, from_model, to_model


def fold_accents(text: str) -> str:
    """Decompose (NFKD) and drop combining marks: '¿Qué tal, señor?' -> '¿Que tal,
    senor?' (the folding of the TensorFlow Spanish-English attention tutorial)."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


class Preprocessor:
    """Text <-> tokens for one language.

    normalize(text): punctuation normalisation, then lowercase / accent folding when on.
    tokenize(text):  normalize, Moses-tokenise (no HTML escaping).
    detokenize(tokens): Moses detokenisation back to a sentence.
    `pretokenized=True` splits on whitespace instead of Moses (already tokenised
    corpora such as the Hansards release).
    `convention` (core.data.conventions, e.g. "hansards"): the text convention of the
    corpus the model was trained on; `model_text` turns a user's text into it and
    `restore` the model's output back into ordinary text (set in a bundled run's
    preprocess.json; training reads its corpus as it is)."""

    def __init__(
        self, lang: str, lowercase: bool = False, fold_accents: bool = False,
        normalize_punct: bool = True, pretokenized: bool = False,
        convention: str | None = None,
    ) -> None:
        if convention is not None and convention not in CONVENTIONS:
            raise ValueError(f"unknown text convention {convention!r}; known: "
                             + ", ".join(CONVENTIONS))
        self.lang = lang
        self.lowercase = lowercase
        self.fold_accents = fold_accents
        self.normalize_punct = normalize_punct
        self.pretokenized = pretokenized
        self.convention = convention
        self._tok = MosesTokenizer(lang=lang)
        self._detok = MosesDetokenizer(lang=lang)
        self._punct = MosesPunctNormalizer(lang=lang)

    def with_language(self, lang: str) -> Preprocessor:
        """This preprocessor for language `lang`: the same text handling, Moses' rules of
        `lang` (an imported model told its languages, core.services.model_import)."""
        return Preprocessor(lang, lowercase=self.lowercase, fold_accents=self.fold_accents,
                            normalize_punct=self.normalize_punct,
                            pretokenized=self.pretokenized, convention=self.convention)

    def normalize(self, text: str) -> str:
        """The text as the model's side sees it before tokenising: punctuation normalised,
        lowercased, accents folded (each when configured), stripped."""
        if self.normalize_punct:
            text = self._punct.normalize(text)
        if self.lowercase:
            text = text.lower()
        if self.fold_accents:
            text = fold_accents(text)
        return text.strip()

    def model_text(self, text: str) -> str:
        """A user's text as the model's corpus writes it: `normalize`d, then in the run's
        convention (space-separated tokens) when it has one."""
        text = self.normalize(text)
        if self.convention is not None:
            text = " ".join(to_model(text, self.lang, self._tok))
        return text

    def restore(self, text: str) -> str:
        """The model's output text as a person writes it: in the run's convention's
        inverse (cased, contracted, detokenised) when it has one, else as it is."""
        if self.convention is None:
            return text
        return from_model(text.split(), self.lang, self._detok)

    def tokenize(self, text: str) -> list[str]:
        """`normalize`d text split into tokens: on spaces when pretokenized, else by Moses
        (no escaping)."""
        text = self.model_text(text)
        if self.pretokenized or self.convention is not None:
            tokens = text.split()
        else:
            tokens = self._tok.tokenize(text, escape=False)
        return tokens

    def detokenize(self, tokens: list[str]) -> str:
        """Tokens back to text: by the run's convention when it has one, joined by spaces
        when pretokenized, else Moses detokenised."""
        if self.convention is not None:
            return self.restore(" ".join(tokens))
        if self.pretokenized:
            return " ".join(tokens)
        return self._detok.detokenize(list(tokens), unescape=False)

    def to_dict(self) -> dict[str, Any]:
        """Settings to save beside a model."""
        out = {
            "lang": self.lang, "lowercase": self.lowercase, "fold_accents": self.fold_accents,
            "normalize_punct": self.normalize_punct, "pretokenized": self.pretokenized,
        }
        if self.convention is not None:
            out["convention"] = self.convention
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Preprocessor:
        """The Preprocessor of a `to_dict` result."""
        return cls(**raw)

    def __repr__(self) -> str:
        return f"Preprocessor({self.to_dict()})"

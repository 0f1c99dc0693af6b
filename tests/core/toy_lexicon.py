"""A German -> English word lexicon for tests/core/toy_models.MonotoneModel: its
vocabularies, the source-id -> target-id table and the two languages' preprocessing.
With it "Der Hund bellt." translates to "the dog barks." word by word."""
from __future__ import annotations

from core.data.preprocess import Preprocessor
from core.data.vocab import Vocab
from core.models.base import UNK

SRC_VOCAB = Vocab(["<pad>", "<unk>", "<s>", "</s>", "<doc>", "der", "hund", "bellt", "die",
                   "katze", "schläft", "."])
TGT_VOCAB = Vocab(["<pad>", "<unk>", "<s>", "</s>", "<doc>", "the", "dog", "barks", "cat",
                   "sleeps", "."])
# source id -> target id (der/die -> the, ...); unknown source words -> <unk>
LEXICON = [0, UNK, 2, 3, 4, 5, 6, 7, 5, 8, 9, 10]
DE, EN = Preprocessor("de", lowercase=True), Preprocessor("en")

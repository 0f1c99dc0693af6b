"""Filters, splits, document context, statistics and preprocessing on hand-made data."""
from __future__ import annotations

import pytest

from core.data.context import (
    CONTEXT_BREAK_ID,
    CONTEXT_START,
    context_ids,
    following_sentences,
    previous_sentences,
    sentence_context,
)
from core.data.corpus import Corpus, SentencePair
from core.data.filters import apply_filters, filter_duplicates, filter_length, filter_ratio
from core.data.preprocess import Preprocessor, fold_accents
from core.data.splits import Splits, split_corpus
from core.data.stats import corpus_stats, format_stats
from core.data.vocab import Vocab
from core.errors import ConfigError


def corpus(rows, docs=None) -> Corpus:
    pairs = [SentencePair(s, t, None if docs is None else docs[i], i + 1) for i, (s, t) in enumerate(rows)]
    return Corpus(pairs, "en", "fr", name="hand")


# --- filters --------------------------------------------------------------------------


def test_filter_report_counts_and_lines():
    c = corpus([
        ("a b", "x y"),        # 1 kept
        ("", "x"),             # 2 empty
        ("a b c d e", "x"),    # 3 too long (5 > 4) - also ratio 5
        ("a", "x y z"),        # 4 ratio 3 > 2.5
        ("a b", "x y"),        # 5 duplicate of 1
        ("a b", "x  "),        # 6 kept (ratio 2)
        ("  ", " "),           # 7 empty
    ])
    kept, report = apply_filters(c, max_len=4, max_ratio=2.5, dedupe=True)
    assert [p.line for p in kept.pairs] == [1, 6]
    assert report.total == 7 and report.kept == 2
    assert report.removed == {"empty": 2, "too long": 1, "length ratio": 1, "duplicate": 1}
    assert report.examples == {"empty": [2, 7], "too long": [3], "length ratio": [4], "duplicate": [5]}
    assert "kept 2 of 7" in report.summary()
    assert c.pairs[1].src == "" and len(c) == 7  # the input corpus is untouched


def test_single_filters_with_custom_tokenizer():
    c = corpus([("abc", "de"), ("abcdef", "d"), ("ab", "de")])
    kept, rep = filter_length(c, 3, src_tokenize=list, tgt_tokenize=list)
    assert [p.line for p in kept.pairs] == [1, 3] and rep.removed == {"too long": 1}
    kept, rep = filter_ratio(c, 2.0, src_tokenize=list, tgt_tokenize=list)
    assert [p.line for p in kept.pairs] == [1, 3] and rep.examples["length ratio"] == [2]
    kept, rep = filter_duplicates(corpus([("a", "b"), ("a", "c"), ("a", "b")]))
    assert len(kept) == 2 and rep.removed == {"duplicate": 1}


# --- splits ---------------------------------------------------------------------------


def test_split_sizes_and_determinism():
    c = corpus([(f"s{i}", f"t{i}") for i in range(200)])
    a = split_corpus(c, seed=1)
    assert (len(a.train), len(a.dev), len(a.test)) == (160, 20, 20)
    b = split_corpus(c, seed=1)
    assert (a.train_indices, a.dev_indices, a.test_indices) == (b.train_indices, b.dev_indices, b.test_indices)
    other = split_corpus(c, seed=2)
    assert other.dev_indices != a.dev_indices
    assert sorted(a.train_indices + a.dev_indices + a.test_indices) == list(range(200))
    assert a.dev_indices == sorted(a.dev_indices)  # corpus order inside a split
    fixed = split_corpus(c, seed=1, dev_size=7, test_size=3)
    assert (len(fixed.train), len(fixed.dev), len(fixed.test)) == (190, 7, 3)
    with pytest.raises(ConfigError):
        split_corpus(c, ratios=(0.5, 0.5, 0.5))
    with pytest.raises(ConfigError):
        split_corpus(c, dev_size=150, test_size=50)


def test_documents_never_straddle_sets():
    docs = [f"d{i // 7}" for i in range(210)]  # 30 documents of 7
    c = corpus([(f"s{i}", f"t{i}") for i in range(210)], docs)
    for seed in range(5):
        s = split_corpus(c, seed=seed, ratios=(0.8, 0.1, 0.1))
        owner = {}
        for name, split in (("train", s.train), ("dev", s.dev), ("test", s.test)):
            for p in split.pairs:
                assert owner.setdefault(p.doc_id, name) == name
        # 21 sentences wanted -> 3 whole documents each
        assert len(s.dev) == 21 and len(s.test) == 21 and len(s.train) == 168
        assert all(len(ix) == 7 for ix in s.dev.documents().values())
    assert split_corpus(c, seed=0).dev_indices != split_corpus(c, seed=1).dev_indices


def test_given_splits():
    train, dev = corpus([("a", "b")] * 3), corpus([("c", "d")])
    s = Splits.given(train, dev)
    assert s.train is train and s.dev is dev and len(s.test) == 0


# --- context --------------------------------------------------------------------------


def test_previous_sentences_reset_at_document_boundaries():
    docs = ["A", "A", "A", "B", "B", None, "A"]
    c = corpus([(f"s{i}", f"t{i}") for i in range(7)], docs)
    assert previous_sentences(c, 1) == [[], [0], [1], [], [3], [], [2]]
    assert previous_sentences(c, 2) == [[], [0], [0, 1], [], [3], [], [1, 2]]
    assert previous_sentences(c, 0) == [[]] * 7
    ids = [[10], [11, 12], [13], [14], [15], [16], [17]]
    # joined previous sentences are separated by the break (EOS, as concat_context)
    assert context_ids(ids, previous_sentences(c, 2), start_id=4) == [
        [4], [10], [10, 3, 11, 12], [4], [14], [4], [11, 12, 3, 13]]
    assert context_ids(ids, previous_sentences(c, 1), start_id=4) == [
        [4], [10], [11, 12], [4], [14], [4], [13]]
    assert CONTEXT_START == "<doc>" and CONTEXT_BREAK_ID == 3


def test_following_sentences_reset_at_document_boundaries():
    docs = ["A", "A", "A", "B", "B", None, "A"]
    c = corpus([(f"s{i}", f"t{i}") for i in range(7)], docs)
    assert following_sentences(c, 1) == [[1], [2], [6], [4], [], [], []]
    assert following_sentences(c, 2) == [[1, 2], [2, 6], [6], [4], [], [], []]
    assert following_sentences(c, 0) == [[]] * 7
    with pytest.raises(ValueError):
        following_sentences(c, -1)


def test_context_ids_with_one_following_sentence():
    # documents A = pairs 0, 1, 2, 6; B = 3, 4; pair 5 has no document
    docs = ["A", "A", "A", "B", "B", None, "A"]
    c = corpus([(f"s{i}", f"t{i}") for i in range(7)], docs)
    ids = [[10], [11, 12], [13], [14], [15], [16], [17]]
    got = context_ids(ids, previous_sentences(c, 1), 4, following_sentences(c, 1))
    # previous side, break (3), following side; '<doc>' (4) stands for a missing side
    assert got == [
        [4, 3, 11, 12],      # document start: <doc>, then the next sentence
        [10, 3, 13],
        [11, 12, 3, 17],     # pair 6 follows pair 2 in document A
        [4, 3, 15],          # B starts: nothing of A leaks in
        [14, 3, 4],          # B ends: the end marker, nothing of pair 5 or A
        [4, 3, 4],           # no document: both edges
        [13, 3, 4],          # A ends
    ]
    # K = 2, F = 2: every joined sentence separated by one break
    got2 = context_ids(ids, previous_sentences(c, 2), 4, following_sentences(c, 2))
    assert got2[1] == [10, 3, 13, 3, 17]
    assert got2[2] == [10, 3, 11, 12, 3, 17]
    assert got2[6] == [11, 12, 3, 13, 3, 4]
    # following side only (K = 0)
    assert context_ids(ids, None, 4, following_sentences(c, 1))[:3] == [[11, 12], [13], [17]]
    # the per-sentence rule that inference uses gives the same ids
    assert sentence_context([[10]], [[13], [17]], 1, 1, 4) == got[1]
    assert sentence_context([], [], 1, 1, 4) == [4, 3, 4]
    assert sentence_context([[10], []], [[], [13]], 2, 2, 4) == [10, 3, 13]  # no doubled break
    assert sentence_context([[10]], [[13]], 0, 0, 4) == [4]


# --- stats ----------------------------------------------------------------------------


def test_corpus_stats_hand_counts():
    c = corpus(
        [("a b c", "x y"), ("a a", "x"), ("b " * 7, "z q w v u t")],
        ["d1", "d1", "d2"],
    )
    vocab = Vocab.build([["a", "b"]])
    s = corpus_stats(c, src_vocab=vocab, tgt_vocab=Vocab.build([["x"]]), bin_width=5)
    assert s.pairs == 3 and s.documents == 2 and s.doc_sizes == {"d1": 2, "d2": 1}
    assert (s.src.tokens, s.tgt.tokens) == (12, 9)
    assert (s.src.types, s.tgt.types) == (3, 8)
    assert s.src.oov_rate == pytest.approx(1 / 12)  # one 'c'
    assert s.tgt.oov_rate == pytest.approx(7 / 9)  # all but the two 'x'
    assert (s.src.hist_edges, s.src.hist_counts) == ([0, 5, 10], [2, 1])
    assert (s.tgt.hist_edges, s.tgt.hist_counts) == ([0, 5, 10], [2, 1])
    assert s.src.max_len == 7 and s.src.mean_len == pytest.approx(4.0)
    table = format_stats(s, "en", "fr")
    assert "pairs: 3" in table and "8.33%" in table and "77.78%" in table
    # without vocabularies (`corpus stats`) there is no OOV rate, and no row of dashes
    plain = format_stats(corpus_stats(c), "en", "fr")
    assert "OOV" not in plain and plain.splitlines()[5].split() == ["max", "length", "7", "6"]


# --- preprocessing --------------------------------------------------------------------


def test_fold_accents_like_the_tutorial():
    assert fold_accents("¿Qué tal, señor? Ça va.") == "¿Que tal, senor? Ca va."


def test_preprocessor_tokenize_detokenize():
    raw = "¿Qué tal, señor?"
    es = Preprocessor("es", lowercase=True, fold_accents=True)
    assert es.tokenize(raw) == ["¿", "que", "tal", ",", "senor", "?"]
    assert raw == "¿Qué tal, señor?"
    en = Preprocessor("en")
    tokens = en.tokenize("It's \"fine\" & <ok>, isn't it?")
    assert tokens == ["It", "'s", '"', "fine", '"', "&", "<", "ok", ">", ",", "isn", "'t", "it", "?"]
    assert en.detokenize(["Hello", ",", "world", "!"]) == "Hello, world!"
    pre = Preprocessor("en", pretokenized=True, normalize_punct=False)
    assert pre.tokenize("edited HANSARD * NUMBER 1") == ["edited", "HANSARD", "*", "NUMBER", "1"]
    assert Preprocessor.from_dict(es.to_dict()).to_dict() == es.to_dict()


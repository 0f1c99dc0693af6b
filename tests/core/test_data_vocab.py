"""Word and sentencepiece vocabularies: specials, exact top-K cut, round trips."""
from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest

from core.data.context import CONTEXT_START
from core.data.vocab import SPECIALS, SubwordVocab, Vocab, load_vocab
from core.errors import CheckpointError

COUNTS = Counter({"the": 5, "c": 3, "a": 3, "b": 3, "d": 1, "e": 1, "<s>": 9})


def test_specials_and_reserved_first():
    v = Vocab.from_counter(COUNTS)
    assert v.itos[:5] == ["<pad>", "<unk>", "<s>", "</s>", CONTEXT_START]
    assert v.encode(["<pad>", "<unk>", "<s>", "</s>"]) == [0, 1, 2, 3]
    assert v.itos.count("<s>") == 1  # a special seen in the data is not added twice


def test_top_k_cut_is_exact_with_deterministic_ties():
    # 5 specials+reserved, then by frequency, ties by code point: the, a, b, c, d, e
    assert Vocab.from_counter(COUNTS, max_size=8).itos[5:] == ["the", "a", "b"]
    assert Vocab.from_counter(COUNTS, max_size=7).itos[5:] == ["the", "a"]
    assert Vocab.from_counter(COUNTS, max_size=6).itos[5:] == ["the"]
    assert Vocab.from_counter(COUNTS, min_freq=2).itos[5:] == ["the", "a", "b", "c"]
    assert len(Vocab.from_counter(COUNTS)) == 5 + 6
    with pytest.raises(ValueError):
        Vocab.from_counter(COUNTS, max_size=4)


def test_build_is_independent_of_sentence_order():
    sents = [["x", "y"], ["y", "z", "z"], ["w"], ["x"]]
    orders = [Vocab.build(list(p)).itos for p in itertools.permutations(sents)]
    assert all(o == orders[0] for o in orders)
    assert orders[0][5:] == ["x", "y", "z", "w"]  # 2, 2, 2, 1; ties by code point


def test_encode_decode_unknowns():
    v = Vocab.build([["a", "b"]])
    assert v.encode(["b", "zzz", "a"]) == [6, 1, 5]
    assert v.decode([5, 6, 99, -1]) == ["a", "b", "<unk>", "<unk>"]


def test_word_vocab_round_trip(tmp_path):
    v = Vocab.build([["été", "naïve", "a"], ["a"]], max_size=7)
    path = v.save(tmp_path / "src.vocab.json")
    assert json.loads(path.read_text(encoding="utf-8"))["itos"] == v.itos
    back = load_vocab(path)
    assert isinstance(back, Vocab) and back.itos == v.itos and back == v
    assert Vocab.load(path).encode(["naïve", "été"]) == v.encode(["naïve", "été"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.vocab.json"]  # no temp left


def test_load_vocab_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(CheckpointError, match="damaged"):
        load_vocab(bad)
    bad.write_text(json.dumps({"kind": "word", "itos": ["a", "b"]}), encoding="utf-8")
    with pytest.raises(CheckpointError, match="must start with"):
        load_vocab(bad)
    with pytest.raises(CheckpointError, match="missing"):
        load_vocab(tmp_path / "none.json")


def _sample(shared, n=3000) -> list[str]:
    with open(shared("tatoeba-spa-eng", "spa.txt"), encoding="utf-8") as f:
        return [line.split("\t")[1].rstrip("\n") for line in itertools.islice(f, n)]


def test_sentencepiece_bpe_round_trip(shared, tmp_path):
    lines = _sample(shared)
    sv = SubwordVocab.train(lines[:2500], vocab_size=400, model_type="bpe")
    assert len(sv) == 400
    assert tuple(sv.itos[:4]) == SPECIALS and sv.itos[4] == CONTEXT_START
    held_out = lines[2500:]
    pieces = [sv.tokenize(s) for s in held_out]
    ids = [sv.encode(p) for p in pieces]
    assert all(0 < i < 400 for seq in ids for i in seq)
    assert [sv.detokenize(p) for p in pieces[:50]] == [" ".join(s.split()) for s in held_out[:50]]
    path = sv.save(tmp_path / "spm.json")
    assert (tmp_path / "spm.model").exists()
    back = load_vocab(path)
    assert isinstance(back, SubwordVocab) and back.itos == sv.itos
    assert [back.encode(back.tokenize(s)) for s in held_out] == ids
    assert back.decode(ids[0]) == pieces[0]
    # training is deterministic: the same text gives the same model
    assert SubwordVocab.train(lines[:2500], vocab_size=400).itos == sv.itos


def test_sentencepiece_unigram_and_unknown_piece(shared):
    sv = SubwordVocab.train(_sample(shared, 1500), vocab_size=300, model_type="unigram")
    assert tuple(sv.itos[:4]) == SPECIALS and len(sv) == 300
    assert sv.encode(["\u4e2d\u6587-not-a-piece"]) == [1]
    assert sv.encode([CONTEXT_START]) == [4]


def test_subword_model_missing(tmp_path):
    sv = SubwordVocab.train(["a b c d e f g", "a b c", "hello world"] * 20, vocab_size=30)
    path = sv.save(tmp_path / "v.json")
    (tmp_path / "v.model").unlink()
    with pytest.raises(CheckpointError, match="missing"):
        load_vocab(path)

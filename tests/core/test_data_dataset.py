"""prepare_dataset: vocabularies from train only, length filter on train only, ids
that point back at the raw pairs, document context."""
from __future__ import annotations

import itertools

from core.config import DataConfig
from core.data.corpus import Corpus, SentencePair
from core.data.dataset import decode_ids, encode_text, prepare_dataset
from core.data.readers import read_tsv
from core.data.vocab import UNK, SubwordVocab
from core.jobs import RecordingContext


def _corpus(rows, docs=None, name="c"):
    return Corpus([SentencePair(s, t, docs[i] if docs else None, i + 1) for i, (s, t) in enumerate(rows)],
                  "en", "fr", name=name)


TRAIN = _corpus(
    [("The cat sleeps.", "Le chat dort."),
     ("The dog sleeps too , very very very long .", "Le chien dort aussi."),
     ("", "Vide."),
     ("A cat.", "Un chat.")],
    docs=["d1", "d1", "d1", "d2"],
)
DEV = _corpus([("The zebra sleeps.", "Le zèbre dort."), ("A cat and a dog , sleeping , all of them .", "x")],
              docs=["e1", "e1"])


def test_word_dataset_filters_and_ids():
    cfg = DataConfig(vocab="word", max_len=6, lowercase=True)
    job = RecordingContext()
    data = prepare_dataset(TRAIN, DEV, cfg, "en", "fr", context_k=1, job=job)
    assert [e.data["message"] for e in job.of_kind("progress")] == ["tokenising train", "tokenising dev"]
    # train: line 3 is empty, line 2 has 11 source tokens > 6
    assert [data.train.pair(i).line for i in range(len(data.train))] == [1, 4]
    assert data.train.indices == [0, 3]
    assert data.train_report.removed == {"empty": 1, "too long": 1}
    assert data.train_report.examples == {"empty": [3], "too long": [2]}
    assert len(data.dev) == 2 and data.dev_report.removed == {}  # dev is never length-cut
    # vocab from the kept train pairs only: 'zebra' (dev) and 'dog' (cut from train) are unknown
    assert "zebra" not in data.src_vocab.itos and "dog" in data.src_vocab.itos
    assert data.dev.src_ids[0][1] == UNK
    src_words = data.src_vocab.decode(data.train.src_ids[0])
    assert src_words == ["the", "cat", "sleeps", "."]
    assert data.train.pair(0).src == "The cat sleeps."  # raw text kept
    assert decode_ids(data.train.tgt_ids[1] + [3, 9], data.tgt_pre, data.tgt_vocab) == "un chat."
    # context: d1 and d2 each start a document in the kept train split
    assert data.train.ctx_ids == [[4], [4]]
    assert data.dev.ctx_ids == [[4], data.dev.src_ids[0]]


def test_dataset_context_with_following_sentences():
    cfg = DataConfig(vocab="word", max_len=6, lowercase=True)
    data = prepare_dataset(TRAIN, DEV, cfg, "en", "fr", context_k=1, context_following=1)
    # train keeps one pair of d1 and one of d2: each is both a start and an end
    assert data.train.ctx_ids == [[4, 3, 4], [4, 3, 4]]
    e0, e1 = data.dev.src_ids
    assert data.dev.ctx_ids == [[4, 3, *e1], [*e0, 3, 4]]
    only_next = prepare_dataset(TRAIN, DEV, cfg, "en", "fr", context_following=1)
    assert only_next.dev.ctx_ids == [e1, [4]]


def test_joint_vocab_is_shared():
    cfg = DataConfig(vocab="word", joint_vocab=True, max_len=50)
    data = prepare_dataset(TRAIN, DEV, cfg, "en", "fr")
    assert data.src_vocab is data.tgt_vocab
    assert {"chat", "cat"} <= set(data.src_vocab.itos)
    assert data.train.ctx_ids is None


def test_subword_dataset_on_real_sample(shared, tmp_path):
    path = shared("tatoeba-spa-eng", "spa.txt")
    with open(path, "rb") as f:
        head = tmp_path / "head.txt"
        head.write_bytes(b"".join(itertools.islice(f, 2000)))
    corpus = read_tsv(head, "es", "en")
    train, dev = corpus.subset(list(range(1800))), corpus.subset(list(range(1800, 2000)))
    cfg = DataConfig(vocab="bpe", src_vocab_size=300, tgt_vocab_size=250, max_len=50)
    data = prepare_dataset(train, dev, cfg, "es", "en")
    assert isinstance(data.src_vocab, SubwordVocab)
    assert (len(data.src_vocab), len(data.tgt_vocab)) == (300, 250)
    assert len(data.train) == 1800 and data.train_report.removed == {}
    for i in (0, 17, 1799):
        raw = data.train.pair(i).src
        assert data.train.src_ids[i] == encode_text(raw, data.src_pre, data.src_vocab)
        assert decode_ids(data.train.src_ids[i], data.src_pre, data.src_vocab) == raw
    # reusing the vocabularies gives the same ids
    again = prepare_dataset(train, dev, cfg, "es", "en", vocabs=(data.src_vocab, data.tgt_vocab))
    assert again.dev.tgt_ids == data.dev.tgt_ids

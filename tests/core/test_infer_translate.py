"""translate_sentences / translate_documents: text in, ordered translations out."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.errors import ConfigError
from core.infer.beam import beam_search
from core.infer.greedy import greedy
from core.infer.translate import build_context, translate_documents, translate_sentences
from core.jobs import JobCancelled, RecordingContext
from core.models.base import UNK
from tests.core.toy_lexicon import DE, EN, SRC_VOCAB, TGT_VOCAB
from tests.core.toy_models import ToyAttnModel

SENTENCES = [
    "Der Hund bellt.",
    "Die Katze schläft.",
    "Der Hund bellt laut.",  # 'laut' is unknown
    "Die Katze.",
    "",  # empty input gives an empty translation
    "Der Hund schläft, die Katze bellt Rüdesheim.",
]


def run(model, sentences=SENTENCES, **kw):
    opts = dict(beam=3, batch_size=2)
    opts.update(kw)
    return translate_sentences(model, SRC_VOCAB, TGT_VOCAB, DE, EN, sentences, **opts)


def test_word_by_word_translation_in_input_order(monotone):
    out = run(monotone)
    assert [t.text for t in out] == [
        "the dog barks.", "the cat sleeps.", "the dog barks <unk>.", "the cat.", "",
        "the dog sleeps <unk> the cat barks <unk>.",
    ]
    assert out[2].source_tokens == ["der", "hund", "bellt", "laut", "."]
    assert out[2].target_ids == [5, 6, 7, UNK, 10]
    # one-hot attention on the diagonal, with an EOS row
    np.testing.assert_array_equal(out[0].attention, np.eye(4)[[0, 1, 2, 3, 3]])
    assert out[0].log_prob == pytest.approx(5 * np.log(0.9), abs=1e-5)
    assert out[4].target_tokens == [] and out[4].attention.shape == (1, 0)


def test_unknown_words_replaced_by_copy_and_dictionary(monotone):
    out = run(monotone, unk_replace=True, dictionary={"laut": "loudly"})
    assert out[2].text == "the dog barks loudly."
    assert out[2].unk_report.n_dictionary == 1
    # 'Rüdesheim' is copied (lower-cased by the German preprocessor), ',' has no entry
    assert out[5].target_tokens == ["the", "dog", "sleeps", ",", "the", "cat", "barks",
                                    "rüdesheim", "."]
    assert out[5].unk_report.n_copied == 2
    assert [(r.tgt_pos, r.src_pos) for r in out[5].unk_report.replacements] == [(3, 3), (7, 7)]
    assert out[0].unk_report.n_unk == 0


def test_batches_sorted_by_length_and_progress_reported(monotone):
    ctx = RecordingContext()
    out = run(monotone, ctx=ctx, batch_size=2)
    progress = [(e.data["done"], e.data["total"]) for e in ctx.of_kind("progress")]
    assert progress == [(2, 6), (4, 6), (6, 6)]
    # the first batch holds the two longest inputs
    first = [e.data["index"] for e in ctx.of_kind("translation")][:2]
    assert sorted(first) == [2, 5]
    assert [e.data["translation"] for e in ctx.of_kind("translation")][0] is out[first[0]]
    # the empty sentence never reaches the model: 3 batches, each encoded once
    assert monotone.calls == 3


def test_cancel_stops_between_batches(monotone):
    ctx = RecordingContext()
    ctx.add_listener(lambda e: ctx.cancel() if e.kind == "progress" else None)
    with pytest.raises(JobCancelled):
        run(monotone, ctx=ctx, batch_size=2)
    assert len(ctx.of_kind("progress")) == 1
    assert len(ctx.of_kind("translation")) == 2
    assert monotone.calls == 1


def test_each_result_equals_translating_alone():
    model = ToyAttnModel(src_vocab=len(SRC_VOCAB), tgt_vocab=len(TGT_VOCAB), seed=5)
    sents = [s for s in SENTENCES if s]
    together = run(model, sents, beam=3, batch_size=4, max_len_ratio=1.0)
    for s, t in zip(sents, together, strict=True):
        alone = run(model, [s], beam=3, batch_size=1, max_len_ratio=1.0)[0]
        assert alone.target_ids == t.target_ids
        # the same search over a batch of 4 or of 1: fp32 kernels sum in another order
        # (1.0e-5 apart at a score of -11.1 with AVX2 kernels), so relative to the score
        assert alone.score == pytest.approx(t.score, rel=1e-5, abs=1e-5)
        ids = SRC_VOCAB.encode(DE.tokenize(s))
        direct = beam_search(model, torch.tensor([ids]), torch.tensor([len(ids)]), beam=3,
                             max_len_ratio=1.0)[0][0]
        assert direct.tokens == t.target_ids
    # beam 1 goes through greedy
    g = run(model, sents, beam=1, batch_size=4)
    ids = SRC_VOCAB.encode(DE.tokenize(sents[0]))
    assert g[0].target_ids == greedy(model, torch.tensor([ids]), torch.tensor([len(ids)]))[0].tokens


def test_default_batches_hold_a_fixed_number_of_hypotheses(monotone, monkeypatch):
    """Without batch_size, a batch holds HYPOTHESES_PER_BATCH // beam sentences: greedy
    decoding shares each step's softmax-layer weights over 160 sentences, beam 5 over
    32 (160 rows); the translations are those of batches of 2."""
    from core.infer import translate

    sizes = []
    search = translate._search

    def recorded(model, ids, *args):
        sizes.append(len(ids))
        return search(model, ids, *args)

    monkeypatch.setattr(translate, "_search", recorded)
    sents = [SENTENCES[0], SENTENCES[1], SENTENCES[3]] * 134  # 402
    assert translate.HYPOTHESES_PER_BATCH == 160
    for beam, expected in ((1, [160, 160, 82]), (5, [32] * 12 + [18]), (200, [1] * 402)):
        assert translate.sentences_per_batch(beam) == expected[0]
        sizes.clear()
        out = run(monotone, sents, beam=beam, batch_size=None)
        assert sizes == expected
        assert [t.text for t in out[:3]] == ["the dog barks.", "the cat sleeps.", "the cat."]
    sizes.clear()
    small = run(monotone, sents[:6], beam=1, batch_size=2)
    assert sizes == [2, 2, 2] and [t.text for t in small] == [t.text for t in out[:6]]


def test_build_context():
    assert build_context([], 2, 4) == [4]
    assert build_context([[5, 6], [7], [8, 9]], 2, 4) == [7, 3, 8, 9]  # EOS breaks
    assert build_context([[5, 6]], 0, 4) == [4]
    # following sentences: previous side, break, following side; <doc> at an edge
    assert build_context([[5, 6]], 1, 4, [[7], [8, 9]], 1) == [5, 6, 3, 7]
    assert build_context([], 1, 4, [[7], [8, 9]], 2) == [4, 3, 7, 3, 8, 9]
    assert build_context([[5, 6]], 1, 4, [], 1) == [5, 6, 3, 4]


def test_documents_with_one_following_sentence_feed_it_as_context():
    class Recording(ToyAttnModel):
        def encode(self, src, src_lens, **extra):
            for row, n in zip(extra["ctx"].tolist(), extra["ctx_lens"].tolist(), strict=True):
                self.seen.append(row[:n])
            return super().encode(src, src_lens, **extra)

    model = Recording(src_vocab=len(SRC_VOCAB), tgt_vocab=len(TGT_VOCAB), seed=7)
    model.seen = []
    docs = [["Der Hund bellt.", "Die Katze schläft.", "Der Hund."], ["Die Katze bellt."]]
    out = translate_documents(model, SRC_VOCAB, TGT_VOCAB, DE, EN, docs, beam=1,
                              batch_size=8, ctx_sentences=1, ctx_following=1)
    ids = [[SRC_VOCAB.encode(DE.tokenize(t)) for t in doc] for doc in docs]
    a, b = ids
    # one batch, position-major order: (0, 0), (1, 0), (0, 1), (0, 2)
    assert model.seen == [
        [4, 3, *a[1]],          # document start, then the following sentence
        [4, 3, 4],              # a one-sentence document: both edges
        [*a[0], 3, *a[2]],      # previous, break, following
        [*a[1], 3, 4],          # document end: nothing of document 1 leaks in
    ]
    # and the translations are what the model gives for exactly that context
    seen = list(model.seen)
    for (d, i), context in zip([(0, 0), (1, 0), (0, 1), (0, 2)], seen, strict=True):
        src = ids[d][i]
        want = greedy(model, torch.tensor([src]), torch.tensor([len(src)]),
                      ctx=torch.tensor([context]), ctx_lens=torch.tensor([len(context)]))[0]
        assert out[d][i].target_ids == want.tokens
    # the following sentence changes the result: without it, another score
    prev_only = translate_documents(model, SRC_VOCAB, TGT_VOCAB, DE, EN, docs, beam=1,
                                    ctx_sentences=1)
    assert prev_only[0][1].score != pytest.approx(out[0][1].score, abs=1e-5)
    # the model's own translations cannot stand for sentences not translated yet
    with pytest.raises(ConfigError, match="following"):
        translate_documents(model, SRC_VOCAB, TGT_VOCAB, DE, EN, docs, beam=1,
                            ctx_following=1, target_context=True)


def test_documents_get_previous_sentences_as_context():
    model = ToyAttnModel(src_vocab=len(SRC_VOCAB), tgt_vocab=len(TGT_VOCAB), seed=7)
    docs = [["Der Hund bellt.", "Die Katze schläft.", "Der Hund."],
            ["Die Katze bellt.", "Der Hund schläft."]]
    out = translate_documents(model, SRC_VOCAB, TGT_VOCAB, DE, EN, docs, beam=2, ctx_sentences=1)
    assert [len(d) for d in out] == [3, 2]

    def direct(text, context):
        ids = SRC_VOCAB.encode(DE.tokenize(text))
        return beam_search(model, torch.tensor([ids]), torch.tensor([len(ids)]), beam=2,
                           ctx=torch.tensor([context]), ctx_lens=torch.tensor([len(context)]))[0][0]

    for d, doc in enumerate(docs):
        for i, text in enumerate(doc):
            context = [4] if i == 0 else SRC_VOCAB.encode(DE.tokenize(doc[i - 1]))
            want = direct(text, context)
            assert out[d][i].target_ids == want.tokens
            assert out[d][i].score == pytest.approx(want.score, abs=1e-5)
    # the context matters for this model: another context gives another score
    assert direct(docs[0][1], [4]).score != pytest.approx(out[0][1].score, abs=1e-5)
    # target-side context: the model's own previous translation
    tgt = translate_documents(model, SRC_VOCAB, TGT_VOCAB, DE, EN, docs, beam=2,
                              target_context=True)
    want = direct(docs[1][1], tgt[1][0].target_ids)
    assert tgt[1][1].target_ids == want.tokens
    assert tgt[1][1].score == pytest.approx(want.score, abs=1e-5)


def test_one_long_document_fills_whole_batches_with_source_context():
    """Source context is known up front, so one document's sentences share batches; only
    the model's own translations as context force one sentence per batch per document."""

    class Counting(ToyAttnModel):
        def encode(self, src, src_lens, **extra):
            self.batches.append(int(src.size(0)))
            return super().encode(src, src_lens, **extra)

    model = Counting(src_vocab=len(SRC_VOCAB), tgt_vocab=len(TGT_VOCAB), seed=7)
    doc = ["Der Hund bellt.", "Die Katze schläft.", "Der Hund.", "Die Katze bellt.",
           "Der Hund schläft."]
    model.batches = []
    batched = translate_documents(model, SRC_VOCAB, TGT_VOCAB, DE, EN, [doc], beam=2,
                                  batch_size=2)[0]
    assert model.batches == [2, 2, 1]
    model.batches = []
    alone = translate_documents(model, SRC_VOCAB, TGT_VOCAB, DE, EN, [doc], beam=2,
                                batch_size=1)[0]
    assert [t.target_ids for t in batched] == [t.target_ids for t in alone]
    assert [t.score for t in batched] == pytest.approx([t.score for t in alone], abs=1e-5)
    model.batches = []
    translate_documents(model, SRC_VOCAB, TGT_VOCAB, DE, EN, [doc], beam=2, batch_size=2,
                        target_context=True)
    assert model.batches == [1, 1, 1, 1, 1]

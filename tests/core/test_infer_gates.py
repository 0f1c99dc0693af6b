"""The context model's gate values lambda reach every translation result: one value per
source token, equal to what the model's forward pass reports for the same source and
context, in document order, averaged over an ensemble's gated members, None otherwise."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from core.config import ModelConfig
from core.data.preprocess import Preprocessor
from core.data.vocab import Vocab
from core.infer.beam import beam_search
from core.infer.ensemble import Ensemble
from core.infer.forced import score_targets
from core.infer.greedy import greedy
from core.infer.translate import translate_documents, translate_sentences
from core.models import context_transformer, luong
from core.models.base import BOS
from core.services.translation import to_record
from tests.core.toy_models import ToyAttnModel

SRC_VOCAB = Vocab(["<pad>", "<unk>", "<s>", "</s>", "<doc>", "der", "hund", "bellt", "die",
                   "katze", "schläft", "."])
TGT_VOCAB = Vocab(["<pad>", "<unk>", "<s>", "</s>", "<doc>", "the", "dog", "barks", "cat",
                   "sleeps", "."])
DE, EN = Preprocessor("de", lowercase=True), Preprocessor("en")
DOCS = [["Der Hund bellt.", "Die Katze schläft.", "Der Hund."],
        ["Die Katze bellt.", "Der Hund schläft die Katze."]]


def make_context(seed: int = 0) -> context_transformer.ContextTransformer:
    torch.manual_seed(seed)
    cfg = ModelConfig(family="context_transformer", d_model=16, ff_size=32, heads=2,
                      enc_layers=2, dec_layers=1, ctx_layers=1, dropout=0.0)
    model = context_transformer.build(cfg, len(SRC_VOCAB), len(TGT_VOCAB)).eval()
    with torch.no_grad():  # a sharper gate: lambda spreads over (0, 1) instead of ~0.5
        model.encoder[-1].gate.weight.mul_(6.0)
    return model


def forward_gates(model, ids: list[int], context: list[int], out_ids: list[int]) -> np.ndarray:
    """lambda per source token from the teacher-forced forward pass of one sentence."""
    out = model(torch.tensor([ids]), torch.tensor([len(ids)]), torch.tensor([[BOS, *out_ids]]),
                ctx=torch.tensor([context]), ctx_lens=torch.tensor([len(context)]))
    return out.gates[0].detach().numpy()


def hand_gates(model, ids: list[int], context: list[int]) -> np.ndarray:
    """The same from the gate layer's own output: sigmoid(W [O; O_ctx] + b), averaged
    over the d_model dimensions (the per-token value the strip shows)."""
    seen = []
    hook = model.encoder[-1].gate.register_forward_hook(lambda _m, _i, out: seen.append(out))
    with torch.no_grad():
        model.encode(torch.tensor([ids]), torch.tensor([len(ids)]),
                     ctx=torch.tensor([context]), ctx_lens=torch.tensor([len(context)]))
    hook.remove()
    return torch.sigmoid(seen[0][0]).mean(dim=-1).numpy()  # S


def ids_of(text: str) -> list[int]:
    return list(SRC_VOCAB.encode(DE.tokenize(text)))


@pytest.mark.parametrize("beam", [1, 3])
def test_search_gates_have_source_length_and_equal_the_forward_gates(beam):
    model = make_context()
    sources = [ids_of(s) for s in ("Der Hund bellt.", "Die Katze.", "Der Hund schläft die Katze.")]
    contexts = [[4], ids_of("Die Katze schläft."), [9, 10, 11, 5]]
    src = torch.zeros(3, 6, dtype=torch.long)
    ctx = torch.zeros(3, 4, dtype=torch.long)
    for b in range(3):
        src[b, : len(sources[b])] = torch.tensor(sources[b])
        ctx[b, : len(contexts[b])] = torch.tensor(contexts[b])
    lens = torch.tensor([len(s) for s in sources])
    ctx_lens = torch.tensor([len(c) for c in contexts])
    if beam == 1:
        hyps = greedy(model, src, lens, ctx=ctx, ctx_lens=ctx_lens)
    else:
        hyps = [h[0] for h in beam_search(model, src, lens, beam=beam, ctx=ctx, ctx_lens=ctx_lens)]
    spread = []
    for b, hyp in enumerate(hyps):
        assert hyp.gates is not None and hyp.gates.shape == (len(sources[b]),)
        assert hyp.attention.shape[1] == len(sources[b])
        assert np.all((hyp.gates > 0.0) & (hyp.gates < 1.0))
        want = forward_gates(model, sources[b], contexts[b], hyp.tokens)
        assert np.allclose(hyp.gates, want, atol=1e-6)
        assert np.allclose(hyp.gates, hand_gates(model, sources[b], contexts[b]), atol=1e-6)
        spread.append(float(hyp.gates.max() - hyp.gates.min()))
    assert max(spread) > 0.05  # the values really vary per token (not a constant 0.5)
    # forced decoding reports the same gates
    forced = score_targets(model, src, lens, [h.tokens for h in hyps], ctx=ctx, ctx_lens=ctx_lens)
    for hyp, res in zip(hyps, forced, strict=True):
        assert np.allclose(res.gates, hyp.gates, atol=1e-6)


@pytest.mark.parametrize("beam", [1, 2])
def test_documents_give_each_sentence_the_gates_of_its_own_context(beam):
    model = make_context(seed=1)
    out = translate_documents(model, SRC_VOCAB, TGT_VOCAB, DE, EN, DOCS, beam=beam,
                              ctx_sentences=1, batch_size=4)
    for d, doc in enumerate(DOCS):
        for i, text in enumerate(doc):
            tr = out[d][i]
            assert len(tr.gates) == len(tr.source_tokens) == tr.attention.shape[1]
            context = [4] if i == 0 else ids_of(doc[i - 1])
            want = forward_gates(model, ids_of(text), context, tr.target_ids)
            assert np.allclose(tr.gates, want, atol=1e-6)
    # JSON lines exports (CLI --json) carry them in meta
    record = to_record(out[0][1], 1, doc_id="d0")
    assert record.meta["gates"] == pytest.approx(out[0][1].gates.tolist())
    assert "gates" not in to_record(replace(out[0][1], gates=None), 1).meta
    # the context really changes lambda: the start-of-document context gives other values
    alone = forward_gates(model, ids_of(DOCS[0][1]), [4], out[0][1].target_ids)
    assert np.abs(alone - out[0][1].gates).max() > 1e-3


def test_models_without_gates_give_none():
    rnn = luong.build(ModelConfig(family="luong", emb_size=8, hidden_size=8, layers=1,
                                  dropout=0.0), len(SRC_VOCAB), len(TGT_VOCAB)).eval()
    for beam in (1, 2):
        out = translate_sentences(rnn, SRC_VOCAB, TGT_VOCAB, DE, EN, ["Der Hund bellt."], beam=beam)
        assert out[0].gates is None and len(out[0].source_tokens) == 4
    toy = ToyAttnModel(src_vocab=len(SRC_VOCAB), tgt_vocab=len(TGT_VOCAB), seed=3)
    docs = translate_documents(toy, SRC_VOCAB, TGT_VOCAB, DE, EN, DOCS, beam=2)
    assert all(tr.gates is None for doc in docs for tr in doc)


def test_ensemble_gates_are_the_mean_of_the_gated_members():
    a, b = make_context(seed=2), make_context(seed=3)
    toy = ToyAttnModel(src_vocab=len(SRC_VOCAB), tgt_vocab=len(TGT_VOCAB), seed=4)
    pair = translate_documents(Ensemble([a, b]), SRC_VOCAB, TGT_VOCAB, DE, EN, DOCS, beam=2)
    mixed = translate_documents(Ensemble([a, toy]), SRC_VOCAB, TGT_VOCAB, DE, EN, DOCS, beam=1)
    for d, doc in enumerate(DOCS):
        for i, text in enumerate(doc):
            context = [4] if i == 0 else ids_of(doc[i - 1])
            ga, gb = hand_gates(a, ids_of(text), context), hand_gates(b, ids_of(text), context)
            assert np.abs(ga - gb).max() > 1e-3  # the members disagree, so the mean is a test
            assert np.allclose(pair[d][i].gates, (ga + gb) / 2, atol=1e-6)
            # a member without gates does not count: the gated member's values alone
            assert np.allclose(mixed[d][i].gates, ga, atol=1e-6)

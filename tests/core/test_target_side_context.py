"""A context encoder on the target side (model.ctx_side = 'target'): the
previous target sentence, embedded with the target embeddings, through the same context
encoder and gate; the reference in training and scoring, the model's own translation
when translating."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.config import ModelConfig, load_preset
from core.errors import ConfigError
from core.models.context_transformer import ContextTransformer
from tests.core.tiny_runs import SENTENCES, tiny_transformer_config

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_the_option_is_checked_and_has_a_preset():
    cfg = load_preset("context-tgt-cpu")
    assert (cfg.model.family, cfg.model.ctx_side) == ("context_transformer", "target")
    with pytest.raises(ConfigError, match=r"ctx_side = 'target' needs a family .*"
                                          r"\(context_transformer\), not 'concat'"):
        ModelConfig(family="concat", d_model=16, heads=2, ctx_side="target").validate()
    with pytest.raises(ConfigError, match="ctx_following must be 0 with model.ctx_side"):
        ModelConfig(family="context_transformer", d_model=16, heads=2, ctx_side="target",
                    ctx_following=1).validate()
    with pytest.raises(ConfigError, match="ctx_side"):
        ModelConfig(family="context_transformer", ctx_side="both").validate()


def tiny_model(side: str) -> ContextTransformer:
    config = ModelConfig(family="context_transformer", d_model=16, ff_size=32, heads=2,
                         enc_layers=2, dec_layers=1, ctx_layers=1, dropout=0.0, ctx_side=side)
    torch.manual_seed(0)
    return ContextTransformer(config, src_vocab_size=12, tgt_vocab_size=30)


def test_the_context_is_embedded_with_the_target_embeddings():
    src = torch.tensor([[5, 6, 7]])
    ctx = torch.tensor([[20, 25, 29]])  # ids only the target vocabulary has
    tgt_in = torch.tensor([[2, 8, 9]])  # the decoder sees none of 20, 25, 29
    lens = torch.tensor([3])
    model = tiny_model("target")
    out = model(src, lens, tgt_in, ctx=ctx, ctx_lens=lens)
    out.scores.sum().backward()
    grad = model.tgt_embed.weight.grad
    assert grad[[20, 25, 29]].abs().sum() > 0  # reached only through the context
    assert grad[[21, 22, 23]].abs().sum() == 0
    with pytest.raises(IndexError):  # the source side has no such ids
        tiny_model("source")(src, lens, tgt_in, ctx=ctx, ctx_lens=lens)


def test_training_data_takes_the_previous_reference():
    from core.config import DataConfig
    from core.data.context import CONTEXT_START
    from core.data.dataset import prepare_dataset
    from core.data.readers import read_parallel

    corpus = read_parallel(DEMO / "demo.es", DEMO / "demo.en", "es", "en",
                           docids_path=DEMO / "demo.docids", name="demo")
    data = prepare_dataset(corpus, corpus.subset(range(20), name="dev"),
                           DataConfig(src_vocab_size=2000, tgt_vocab_size=2000), "es", "en",
                           context_k=1, context_side="target")
    start = data.tgt_vocab.encode([CONTEXT_START])[0]
    train = data.train
    docs = [p.doc_id for p in train.corpus.pairs]
    checked = 0
    for i in range(1, len(docs)):
        if docs[i] and docs[i] == docs[i - 1]:
            assert train.ctx_ids[i] == train.tgt_ids[i - 1] != train.src_ids[i - 1]
            checked += 1
        elif docs[i] != docs[i - 1]:
            assert train.ctx_ids[i] == [start]
    assert checked > 100


@pytest.fixture(scope="module")
def tgt_ws(tmp_path_factory):
    """The demo corpus, a target-side context model with separate vocabularies ('tgt')
    and a source-side one ('src')."""
    from core.jobs import JobContext
    from core.services.demo import import_demo_corpus
    from core.services.training import create_run, train_run
    from core.workspace.store import Workspace

    root = tmp_path_factory.mktemp("tgtctx") / "ws"
    with Workspace.open(root) as ws:
        corpus_id = import_demo_corpus(ws)
        for name, side in (("tgt", "target"), ("src", "source")):
            cfg = tiny_transformer_config(name, "context_transformer", 20, joint=False)
            cfg.model.ctx_side = side
            run_id = create_run(ws, corpus_id, cfg)
            assert train_run(ws, run_id, JobContext()).status == "finished"
    return root


class EncodeSpy:
    """Records the ctx ids every encode of a ContextTransformer receives."""

    def __init__(self, monkeypatch):
        self.seen: list[list[int]] = []
        real = ContextTransformer.encode

        def encode(model, src, src_lens, ctx=None, ctx_lens=None):
            for row, n in zip(ctx.tolist(), ctx_lens.tolist(), strict=True):
                self.seen.append(row[:n])
            return real(model, src, src_lens, ctx, ctx_lens)

        monkeypatch.setattr(ContextTransformer, "encode", encode)


def test_a_document_is_translated_with_its_own_previous_translations(tgt_ws, monkeypatch):
    from core.data.context import CONTEXT_START
    from core.services import translation
    from core.workspace.store import Workspace

    with Workspace.open(tgt_ws) as ws:
        session = translation.open_session(ws, ["tgt"])
    assert session.context_side == "target" and not session.shares_vocabulary
    spy = EncodeSpy(monkeypatch)
    # no --target-context asked: a target-side model has no other context to read
    result = session.translate(SENTENCES, beam=1)
    start = session.first.tgt_vocab.encode([CONTEXT_START])[0]
    assert spy.seen[0] == [start]
    # each later sentence saw the previous translation's target ids as they are (no
    # mapping to source ids, although the vocabularies differ)
    firsts = [ids for ids in spy.seen if ids != [start]]
    assert result[0].target_ids in firsts and result[1].target_ids in firsts
    assert session.target_context_note() is None


def test_scoring_reads_the_previous_reference_and_contrastive_sets_their_target_context(
        tgt_ws, monkeypatch):
    from core.infer.scoring import ForcedScorer
    from core.services import contrastive_eval, eval_scores, translation
    from core.workspace.store import Workspace

    with Workspace.open(tgt_ws) as ws:
        tgt, src = (translation.open_session(ws, [n]) for n in ("tgt", "src"))
        scorer = ForcedScorer.for_session(tgt)
        assert scorer.ctx_side == "target"
        assert scorer.context_ids(["The table is new ."]) == \
            scorer.target_ids("The table is new .")
        assert ForcedScorer.for_session(src).context_ids(["La mesa ."]) == \
            ForcedScorer.for_session(src).source_ids("La mesa .")
        # a DiscEvalMT set: the target-side model is given each example's previous target
        asked: list[list[str]] = []
        real = ForcedScorer.context_ids

        def spy(self, previous=(), following=()):
            asked.append(list(previous))
            return real(self, previous, following)

        monkeypatch.setattr(ForcedScorer, "context_ids", spy)
        # the test-set perplexity: each pair's context is the previous pair's reference
        pairs = ws.load_corpus("demo").pairs[:12]
        assert eval_scores.forced_perplexity(tgt, pairs) > 1
        same_doc = {pairs[i - 1].tgt for i in range(1, 12)
                    if pairs[i].doc_id and pairs[i].doc_id == pairs[i - 1].doc_id}
        assert same_doc and {s for prev in asked for s in prev} == same_doc
        asked.clear()
        path = FIXTURES / "contrastive" / "discevalmt-style.json"
        examples = contrastive_eval.contrastive_examples(path)
        contrastive_eval.contrastive_and_store(
            ws, {"tgt": tgt}, {"tgt": [ws.get_run("tgt").id]}, path, examples)
    previous_targets = {s for ex in examples for s in ex.context_tgt}
    previous_sources = {s for ex in examples for s in ex.context_src}
    shown = {s for prev in asked for s in prev}
    assert shown and shown <= previous_targets and not shown & previous_sources


def test_a_target_side_and_a_source_side_run_make_no_ensemble(tgt_ws):
    from core.services import translation
    from core.workspace.store import Workspace

    with Workspace.open(tgt_ws) as ws, pytest.raises(
            ConfigError, match="reads its context from another side"):
        translation.open_session(ws, ["tgt", "src"])


def test_a_set_without_target_context_is_refused_for_a_target_side_model(tgt_ws):
    from core.evaluate.contrastive import ContrastiveExample
    from core.services import contrastive_eval, translation
    from core.workspace.store import Workspace

    examples = [ContrastiveExample("Es bonita.", ["Compré una mesa."], [], "It is pretty.",
                                   "He is pretty.", "it")]
    with Workspace.open(tgt_ws) as ws:
        session = translation.open_session(ws, ["tgt"])
        with pytest.raises(ConfigError, match="no target-side context .* 'tgt' reads the "
                                              "previous target sentence"):
            contrastive_eval.contrastive_and_store(ws, {"tgt": session}, {"tgt": [1]},
                                                   Path("pronouns"), examples)


def test_test_pairs_without_a_document_are_documents_of_their_own(tgt_ws, monkeypatch):
    """As in training: a pair without a document id has no previous sentence."""
    from types import SimpleNamespace

    from core.data.context import CONTEXT_START
    from core.services import eval_scores, translation
    from core.workspace.store import Workspace

    with Workspace.open(tgt_ws) as ws:
        session = translation.open_session(ws, ["src"])
    spy = EncodeSpy(monkeypatch)
    pairs = [SimpleNamespace(src=s, tgt="", doc_id=None) for s in SENTENCES]
    assert len(eval_scores.translate_pairs(session, pairs, beam=1)) == 3
    start = session.first.src_vocab.encode([CONTEXT_START])[0]
    assert spy.seen == [[start]] * 3

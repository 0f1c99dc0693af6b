"""The Attention screen's AER is `align`'s: core.services.attention_set.corpus_aer_rows
over the views of core.services.attention_view (what the screen shows) gives, on the
toy runs and the demo gold set, the links and the AER that `align` computes
(core.evaluate.attention_aer.reading_alignments) for every reading, with and without the
sink, every gold pair scored."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.evaluate.aer import corpus_aer
from core.evaluate.attention_aer import reading_alignments
from core.evaluate.goldsets import load_gold_set
from core.jobs import JobContext
from core.services.attention_set import attention_views, corpus_aer_rows, gold_pairs
from core.services.attention_view import present_view
from core.services.demo import DEMO_GOLD, ensure_demo_workspace
from core.services.translation import SessionCache
from core.workspace.store import Workspace

TOY_MODELS = Path(__file__).resolve().parents[1] / "fixtures" / "toy-models"
VARIANTS = [(r, sink) for r in ("predict", "shift", "sum", "previous") for sink in (False, True)]


@pytest.fixture(scope="module")
def toy_views(tmp_path_factory):
    """(workspace, gold set, runs, the screen's views of every gold pair under each run)."""
    root = ensure_demo_workspace(tmp_path_factory.mktemp("views") / "demo",
                                 models_dir=TOY_MODELS)
    ws = Workspace.open(root)
    gold = load_gold_set(ws, DEMO_GOLD)
    runs = [(r.id, r.name) for r in ws.list_runs()
            if r.name in ("demo-luong-global", "demo-rnnsearch")]
    assert len(runs) == 2
    pairs = list(enumerate(gold_pairs(ws, DEMO_GOLD)))
    views = attention_views(ws, SessionCache(), runs, pairs, True, JobContext())
    yield ws, gold, runs, views
    ws.close()


@pytest.mark.parametrize("reading, no_sink", VARIANTS)
def test_the_screen_s_whole_set_aer_is_align_s(toy_views, reading, no_sink):
    ws, gold, runs, views = toy_views
    cache = SessionCache()
    for run_id, name in runs:
        expected = reading_alignments(cache.get(ws, [run_id]), gold,
                                      [(reading, no_sink)])[(reading, no_sink)]
        shown = [present_view(views[(i, run_id)], g, (reading, no_sink)).predicted
                 for i, g in enumerate(gold.alignments)]
        assert shown == [a.sure for a in expected], name
        row = corpus_aer_rows(views, gold.alignments, [(run_id, name)],
                              {run_id: (reading, no_sink)})[0]
        counts = corpus_aer(expected, gold.alignments)
        assert row[:5] == [name, len(gold), counts.aer, counts.precision, counts.recall]
        assert 0.2 < counts.aer < 0.95  # trained runs, not a trivial score


def test_each_gold_pair_is_forced_on_the_gold_s_words(toy_views):
    """One model token per gold word (the words are not tokenised again): every pair of
    a word-level run is scored, on the gold's words, with the EOS row kept."""
    _, gold, runs, views = toy_views
    run_id = runs[0][0]
    for i, (src, tgt) in enumerate(zip(gold.src_tokens, gold.tgt_tokens, strict=True)):
        view = views[(i, run_id)]
        assert view.aer is not None and view.word_readings is None
        assert view.matrix.shape == (len(tgt) + 1, len(src))

"""The one computation of attention AER on a gold set, core.evaluate.attention_aer.
score_gold over GoldForcing.links (the per-pair reading), that `align`
(core.services.alignment_runs) and the Attention screen's whole-set table
(core.services.attention_set.corpus_aer_rows) both run: by hand on made-up forced pairs
(every variant, a reverse run in its own orientation, the symmetrised row), and on the
toy runs and the demo gold set with the numbers both fronts gave before they shared it."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from core.evaluate.aer import corpus_aer
from core.evaluate.alignment import Alignment
from core.evaluate.attention_aer import GoldForcing, score_gold
from core.evaluate.goldsets import load_gold_set
from core.jobs import JobContext
from core.services.alignment_runs import attention_systems, system_name
from core.services.attention_set import attention_views, corpus_aer_rows, gold_pairs
from core.services.demo import DEMO_GOLD, ensure_demo_workspace
from core.services.translation import SessionCache
from core.workspace.store import Workspace

TOY_MODELS = Path(__file__).resolve().parents[1] / "fixtures" / "toy-models"


def forcing(attention, src: list[str], tgt: list[str]) -> GoldForcing:
    """A word-level pair forced on its words: (tgt + 1) x src attention, EOS row last."""
    result = SimpleNamespace(attention=np.array(attention, dtype=np.float32), alignment=None)
    return GoldForcing(result, src, tgt, list(range(len(src))), list(range(len(tgt))), False,
                       src, tgt)


# two gold pairs, a run's forced pairs and a reverse run's (in ITS orientation)
GOLDS = [Alignment({(0, 0), (1, 1), (1, 2)}), Alignment({(0, 0), (1, 1)})]


def forward():
    return [forcing([[0.8, 0.1, 0.1], [0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.1, 0.1, 0.8]],
                    ["a", "b", "."], ["x", "y", "z"]),
            forcing([[0.6, 0.4], [0.3, 0.7], [0.2, 0.8]], ["c", "d"], ["u", "v"])]


def backward():
    return [forcing([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]],
                    ["x", "y", "z"], ["a", "b", "."]),
            forcing([[0.9, 0.1], [0.4, 0.6], [0.5, 0.5]], ["u", "v"], ["c", "d"])]


def test_score_gold_reads_each_pair_at_each_variant_and_counts_the_set():
    variants = [("predict", False), ("predict", True), ("shift", False)]
    scores = score_gold(iter(forward()), GOLDS, variants)  # a generator, as align gives it
    rows = scores.readings
    assert [a.sure for a in rows[("predict", False)].links] == [{(0, 0), (0, 1), (2, 2)},
                                                                {(0, 0), (1, 1)}]
    # without the sink, 'z' no longer links to the final '.'; 'd' is no punctuation
    assert [a.sure for a in rows[("predict", True)].links] == [{(0, 0), (0, 1), (1, 2)},
                                                               {(0, 0), (1, 1)}]
    assert [a.sure for a in rows[("shift", False)].links] == [{(0, 0), (2, 1), (2, 2)},
                                                              {(1, 0), (1, 1)}]
    # 5 links against 5 sure ones: 3, 4 and 2 of them right
    for variant, right in zip(variants, (3, 4, 2), strict=True):
        c = rows[variant].counts
        assert (c.aer, c.precision, c.recall) == pytest.approx(
            (1 - 2 * right / 10, right / 5, right / 5)), variant
    assert scores.reverse is None and scores.symmetrized is None


def test_score_gold_symmetrises_with_a_reverse_run_read_in_its_own_orientation():
    scores = score_gold(forward(), GOLDS, [("predict", False)],
                        reverse=(backward(), ("predict", False)), heuristic="intersection")
    # the reverse run's links, turned to the run's (source, target), against the same gold
    assert [a.sure for a in scores.reverse.links] == [{(0, 0), (1, 1), (2, 2)},
                                                      {(0, 0), (1, 1)}]
    assert scores.reverse.counts.aer == pytest.approx(0.2)
    assert [a.sure for a in scores.symmetrized.links] == [{(0, 0), (2, 2)}, {(0, 0), (1, 1)}]
    c = scores.symmetrized.counts  # 4 links, 3 of them among the 5 sure ones
    assert (c.aer, c.precision, c.recall) == pytest.approx((1 - 6 / 9, 3 / 4, 3 / 5))


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


#: AER of the toy runs' attention on the demo gold set (56 pairs) per (reading, no sink),
#: as `align` printed it and the screen's whole-set table showed it before both ran
#: score_gold (their numbers did not move)
TOY_AER = {
    ("predict", False): (0.8877, 0.7047), ("predict", True): (0.8426, 0.7047),
    ("shift", False): (0.8757, 0.8196), ("shift", True): (0.8247, 0.8179),
    ("sum", False): (0.8809, 0.7209), ("sum", True): (0.8323, 0.7209),
    ("previous", False): (0.8877, 0.7285), ("previous", True): (0.8409, 0.7285),
}


@pytest.mark.parametrize("variant", list(TOY_AER))
def test_both_fronts_give_the_toy_runs_aer_on_the_demo_gold(toy_views, variant):
    """The screen's whole-set row (over the views' forced pairs) and `align`'s system
    (forcing the gold set itself), each at its measured AER."""
    ws, gold, runs, views = toy_views
    cache = SessionCache()
    for (run_id, name), expected in zip(runs, TOY_AER[variant], strict=True):
        row = corpus_aer_rows(views, gold.alignments, [(run_id, name)], {run_id: variant})[0]
        assert row[:2] == [name, len(gold)] and row[2] == pytest.approx(expected, abs=5e-5)
        systems = attention_systems(cache.get(ws, [run_id]), name, gold, [variant[0]],
                                    variant[1])
        aligned = corpus_aer(systems[system_name(name, *variant)], gold.alignments)
        assert aligned.aer == pytest.approx(expected, abs=5e-5)


def test_each_gold_pair_is_forced_on_the_gold_s_words(toy_views):
    """One model token per gold word (the words are not tokenised again): every pair of
    a word-level run is scored, on the gold's words, with the EOS row kept; its links
    are read off the forced pair the whole-set row counts."""
    _, gold, runs, views = toy_views
    run_id = runs[0][0]
    for i, (src, tgt) in enumerate(zip(gold.src_tokens, gold.tgt_tokens, strict=True)):
        view = views[(i, run_id)]
        assert view.aer is not None and not view.in_words
        assert view.matrix.shape == (len(tgt) + 1, len(src))
        assert view.forced.src_words == src and view.forced.tgt_words == tgt
        assert view.predicted == view.forced.links("predict")[1].sure

"""Greedy and beam search against forced decoding on toy models (tests/core/toy_models.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from core.infer.beam import beam_search
from core.infer.forced import score_targets
from core.infer.greedy import greedy
from core.infer.search import lp_divisor, max_output_lengths
from core.models.base import BOS, EOS, UNK
from tests.core.toy_models import BigramTableModel, ToyAttnModel, greedy_trap_table

SRC = torch.tensor([[4, 5, 6, 7, 8, 9], [5, 6, 7, 0, 0, 0], [9, 4, 0, 0, 0, 0], [10, 11, 4, 5, 0, 0]])
LENS = torch.tensor([6, 3, 2, 4])


@pytest.fixture(scope="module")
def toy():
    return ToyAttnModel(seed=1, with_positions=True)


def test_length_penalty_values():
    assert lp_divisor(7) == 1.0
    assert lp_divisor(7, alpha=1.0) == pytest.approx(2.0)  # (5 + 7) / 6
    assert lp_divisor(1, alpha=0.5) == pytest.approx(1.0)
    assert lp_divisor(4, normalise=True) == 4.0
    assert max_output_lengths(torch.tensor([3, 50]), 1.5, 60) == [5, 60]


def test_beam_one_equals_greedy(toy):
    g = greedy(toy, SRC, LENS)
    b = beam_search(toy, SRC, LENS, beam=1)
    assert len(g) == len(b) == 4
    for gh, (bh,) in zip(g, b, strict=True):
        assert gh.tokens == bh.tokens
        assert gh.token_log_probs == bh.token_log_probs
        assert gh.score == bh.score
        np.testing.assert_array_equal(gh.attention, bh.attention)
        np.testing.assert_array_equal(gh.positions, bh.positions)


@pytest.mark.parametrize("beam,n_best,alpha,norm",
                         [(1, 1, 0.0, False), (4, 3, 0.0, False), (5, 5, 0.8, False),
                          (3, 2, 0.0, True)])
def test_reported_scores_equal_forced_scores(toy, beam, n_best, alpha, norm):
    nbest = beam_search(toy, SRC, LENS, beam=beam, n_best=n_best, length_penalty=alpha,
                        length_norm=norm)
    for b, hyps in enumerate(nbest):
        assert len(hyps) == n_best
        for h in hyps:
            f = score_targets(toy, SRC[b : b + 1], LENS[b : b + 1], [h.tokens])[0]
            assert h.log_prob == pytest.approx(f.log_prob, abs=1e-4)
            np.testing.assert_allclose(h.token_log_probs, f.token_log_probs, atol=1e-4)
            np.testing.assert_allclose(h.attention, f.attention, atol=1e-5)
            np.testing.assert_allclose(h.positions, f.positions, atol=1e-4)
            expected = h.log_prob / lp_divisor(len(h.tokens) + 1, alpha, norm)
            assert h.score == pytest.approx(expected, rel=1e-9)


def test_nbest_sorted_distinct_with_own_attention(toy):
    nbest = beam_search(toy, SRC, LENS, beam=6, n_best=6)
    for b, hyps in enumerate(nbest):
        scores = [h.score for h in hyps]
        assert scores == sorted(scores, reverse=True)
        assert len({tuple(h.tokens) for h in hyps}) == len(hyps) == 6
        for h in hyps:
            assert h.attention.shape == (len(h.tokens) + 1, int(LENS[b]))
            np.testing.assert_allclose(h.attention.sum(1), 1.0, atol=1e-5)
            assert h.positions.shape == (len(h.tokens) + 1,)
            assert len(h.token_log_probs) == len(h.tokens) + 1
            assert EOS not in h.tokens
            assert h.log_prob == pytest.approx(sum(h.token_log_probs))


def test_attention_rows_follow_back_pointers(toy):
    """Two hypotheses sharing a prefix share those attention rows; rows after the
    divergence point differ (histories were reordered with their beams)."""
    hyps = beam_search(toy, SRC[:1], LENS[:1], beam=6, n_best=6)[0]
    for h in hyps:
        ref = score_targets(toy, SRC[:1], LENS[:1], [h.tokens])[0]
        np.testing.assert_allclose(h.attention, ref.attention, atol=1e-5)
    assert len({h.attention.tobytes() for h in hyps}) == len(hyps)


def test_beam_beats_greedy_where_greedy_is_suboptimal():
    model = BigramTableModel(greedy_trap_table())
    src, lens = torch.tensor([[4, 5, 6]]), torch.tensor([3])
    g = greedy(model, src, lens)[0]
    p = greedy_trap_table()
    # greedy: 'a' six times (limit ceil(2 * 3)), then forced EOS
    assert g.tokens == [4] * 6
    expected_g = math.log(p[2, 4]) + 5 * math.log(p[4, 4]) + math.log(p[4, EOS])
    assert g.log_prob == pytest.approx(expected_g, abs=1e-5)
    best = beam_search(model, src, lens, beam=2)[0][0]
    assert best.tokens == [5]
    assert best.log_prob == pytest.approx(math.log(p[2, 5] * p[5, EOS]), abs=1e-5)
    assert best.score > g.score
    for k in (3, 4, 6):
        assert beam_search(model, src, lens, beam=k)[0][0].score >= best.score - 1e-9
    # attention of a model with uniform attention: every row is 1/3
    np.testing.assert_allclose(best.attention, np.full((2, 3), 1 / 3), atol=1e-6)
    assert UNK not in best.tokens


def test_length_limit_forces_eos():
    model = BigramTableModel(greedy_trap_table())
    src, lens = torch.tensor([[4, 5, 6]]), torch.tensor([3])
    hyps = beam_search(model, src, lens, beam=1, max_len_ratio=1.0)[0]
    # with 'b EOS' out of beam-1 reach, greedy's path is cut at 3 tokens + EOS
    assert hyps[0].tokens == [4, 4, 4]
    assert len(hyps[0].token_log_probs) == 4
    assert greedy(model, src, lens, max_len_abs=2)[0].tokens == [4, 4]


def test_batching_invariance(toy):
    batch_g = greedy(toy, SRC, LENS)
    batch_b = beam_search(toy, SRC, LENS, beam=4, n_best=2)
    for i in range(SRC.size(0)):
        n = int(LENS[i])
        alone_g = greedy(toy, SRC[i : i + 1, :n], LENS[i : i + 1])[0]
        alone_b = beam_search(toy, SRC[i : i + 1, :n], LENS[i : i + 1], beam=4, n_best=2)[0]
        assert alone_g.tokens == batch_g[i].tokens
        assert alone_g.score == pytest.approx(batch_g[i].score, abs=1e-5)
        np.testing.assert_allclose(alone_g.attention, batch_g[i].attention, atol=1e-5)
        assert [h.tokens for h in alone_b] == [h.tokens for h in batch_b[i]]
        np.testing.assert_allclose([h.score for h in alone_b],
                                   [h.score for h in batch_b[i]], atol=1e-5)


def test_search_leaves_training_mode_and_grad_off(toy):
    toy.train()
    hyp = greedy(toy, SRC[:1], LENS[:1])[0]
    assert not toy.training
    assert hyp.attention.dtype == np.float32
    with pytest.raises(ValueError):
        beam_search(toy, SRC, LENS, beam=2, n_best=3)


@pytest.mark.parametrize("beam", [1, 3])
def test_min_len_fixes_the_output_length_and_scores_stay_true(toy, beam):
    """min_len = max_len_abs = N: every output has exactly N tokens then EOS (the
    decoding benchmark's fixed length), and the reported score is still the forced
    score of those tokens; without min_len the toy stops earlier for some sentence."""
    free = beam_search(toy, SRC, LENS, beam=beam, max_len_abs=12)
    assert any(len(h[0].tokens) < 12 for h in free)
    fixed = beam_search(toy, SRC, LENS, beam=beam, max_len_abs=12, max_len_ratio=100.0,
                        min_len=12)
    assert [len(h[0].tokens) for h in fixed] == [12] * len(LENS)
    forced = score_targets(toy, SRC, LENS, [h[0].tokens for h in fixed])
    for h, f in zip(fixed, forced, strict=True):
        assert h[0].log_prob == pytest.approx(f.log_prob, abs=1e-4)
        assert EOS not in h[0].tokens
    g = greedy(toy, SRC, LENS, max_len_abs=7, max_len_ratio=100.0, min_len=7)
    assert [len(h.tokens) for h in g] == [7] * len(LENS)


@pytest.mark.parametrize("beam", [1, 3])
def test_a_length_limit_below_min_len_still_ends_every_sentence(toy, beam):
    """min_len beyond a sentence's length limit: the limit wins, every sentence gets a
    hypothesis of exactly `limit` tokens with a finite score (EOS was once banned and
    forced at the same step: -inf from greedy, no hypothesis from beam search)."""
    found = beam_search(toy, SRC, LENS, beam=beam, max_len_abs=5, max_len_ratio=100.0,
                        min_len=9)
    assert [len(h) for h in found] == [1] * len(LENS)
    assert all(len(h[0].tokens) == 5 and np.isfinite(h[0].log_prob) for h in found)
    g = greedy(toy, SRC, LENS, max_len_abs=5, max_len_ratio=100.0, min_len=9)
    assert all(len(h.tokens) == 5 and np.isfinite(h.log_prob) for h in g)


class _WeightCasts(TorchDispatchMode):
    """Counts the dtype casts whose input is `weight`'s storage (aten.to or aten._to_copy:
    which one the mode sees depends on the grad mode; one cast never shows as both)."""

    def __init__(self, weight: torch.Tensor):
        super().__init__()
        self.ptr, self.count = weight.data_ptr(), 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if (func.overloadpacket in (torch.ops.aten.to, torch.ops.aten._to_copy)
                and args[0].data_ptr() == self.ptr):
            self.count += 1
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("search", ["greedy", "beam", "forced"])
def test_bf16_autocast_casts_the_output_weight_once_per_call(toy, search):
    """Decoding under bf16 autocast casts each weight once per call, not once per output
    step: torch keeps autocast's weight casts only outside inference mode, so the searches
    and forced scoring run under no_grad. Here: 6 steps, 1 cast of the output layer."""
    length = 5
    with torch.autocast("cpu", dtype=torch.bfloat16), _WeightCasts(toy.out.weight) as casts:
        if search == "greedy":
            out = [len(h.tokens) for h in greedy(toy, SRC, LENS, max_len_abs=length,
                                                 max_len_ratio=1e9, min_len=length)]
        elif search == "beam":
            out = [len(h[0].tokens) for h in beam_search(toy, SRC, LENS, beam=3,
                   max_len_abs=length, max_len_ratio=1e9, min_len=length)]
        else:
            out = [len(r.token_log_probs) - 1
                   for r in score_targets(toy, SRC, LENS, [[4] * length] * len(LENS))]
    assert out == [length] * len(LENS)
    assert casts.count == 1


def test_beam_search_takes_the_first_step_once_per_sentence(toy, monkeypatch):
    """Before the first word all k beams of a sentence are the same, so the first step
    runs on one row per sentence and later steps on k rows per sentence; the result is
    the forced-decoding score of the words found, as for every search."""
    rows = []
    step = type(toy).step
    monkeypatch.setattr(type(toy), "step",
                        lambda m, y, *a, **kw: rows.append(y.size(0)) or step(m, y, *a, **kw))
    nbest = beam_search(toy, SRC, LENS, beam=3, max_len_abs=4, max_len_ratio=1e9, min_len=4)
    assert rows == [4, 12, 12, 12, 12]
    for b, (h,) in enumerate(nbest):
        assert len(h.tokens) == 4
        f = score_targets(toy, SRC[b : b + 1], LENS[b : b + 1], [h.tokens])[0]
        assert h.log_prob == pytest.approx(f.log_prob, abs=1e-4)


@pytest.mark.parametrize("beam", [1, 5])
def test_a_large_vocabulary_takes_row_topk_and_finds_what_torch_topk_finds(monkeypatch, beam):
    """Over 30,000 target words each step's per-row top-k (2 greedy, 2 x beam) goes
    through row_topk's blocks; with torch.topk in its place the searches find the same
    hypotheses (fp32 scores of random weights: no ties)."""
    import core.infer.beam
    import core.infer.greedy
    from core.infer.topk import uses_blocks

    model = ToyAttnModel(tgt_vocab=30_000, seed=3, with_positions=True)
    run = (lambda: greedy(model, SRC, LENS, min_len=3)) if beam == 1 else \
        (lambda: [h[0] for h in beam_search(model, SRC, LENS, beam=beam, min_len=3)])
    search = core.infer.greedy if beam == 1 else core.infer.beam  # the module that calls it
    calls = []
    real = search.row_topk
    monkeypatch.setattr(search, "row_topk",
                        lambda x, k: calls.append((k, uses_blocks(x, k))) or real(x, k))
    blocked = run()
    assert {k for k, _ in calls} == {2 * beam if beam > 1 else 2}
    assert calls[0][1]  # the first step, every sentence still running: the blocks
    monkeypatch.setattr(search, "row_topk", lambda x, k: x.topk(k, dim=-1))
    plain = run()
    for a, b in zip(blocked, plain, strict=True):
        assert a.tokens == b.tokens and len(a.tokens) >= 3
        assert a.score == b.score



class _TensorOps(TorchDispatchMode):
    """Counts the tensor operations run, and among them the reads of one value to the
    host (`int(t)`, `float(t)`, `t.item()`: on a GPU each waits for the GPU)."""

    def __init__(self):
        super().__init__()
        self.ops = self.scalar_reads = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops += 1
        self.scalar_reads += func is torch.ops.aten._local_scalar_dense.default
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("beam", [1, 5])
def test_finished_hypotheses_reach_the_host_together_not_one_by_one(toy, monkeypatch, beam):
    """At a fixed length every hypothesis ends at the last step. Their histories reach
    the host in one copy a history (to_host), and each hypothesis is then built from
    numpy arrays without a tensor operation of its own: one sentence and four cost the
    search the same tensor operations, and no value is read one by one. (A read or copy
    per hypothesis and history made a GPU search wait for the GPU some 1,800 times a
    batch of 64 sentences at beam 5.) Each hypothesis owns its arrays, not a view of
    the step's batch."""
    import core.infer.beam
    import core.infer.greedy

    search = core.infer.greedy if beam == 1 else core.infer.beam  # the module that calls it
    copies = []
    real = search.to_host
    monkeypatch.setattr(search, "to_host",
                        lambda rows, *h: copies.append(rows.numel()) or real(rows, *h))

    def run(n):
        copies.clear()
        opts = dict(max_len_abs=5, max_len_ratio=1e9, min_len=5)
        with _TensorOps() as counted:
            if beam == 1:
                hyps = greedy(toy, SRC[:n], LENS[:n], **opts)
            else:
                hyps = [h for hs in beam_search(toy, SRC[:n], LENS[:n], beam=beam, n_best=beam,
                                                **opts) for h in hs]
        assert all(len(h.tokens) == 5 for h in hyps) and len(hyps) == n * beam
        return counted, list(copies), hyps

    one, one_copies, _ = run(1)
    four, four_copies, hyps = run(4)
    assert one.ops == four.ops and one.scalar_reads == four.scalar_reads == 0
    # the last step's hypotheses: one copy for all of them (beam search also sets aside
    # the EOS candidates among each sentence's k best: all k at the last step)
    assert one_copies == [beam] and four_copies == [4 * beam]
    for h in hyps:
        assert h.attention.base is None and h.positions.base is None


class _Broken(ToyAttnModel):
    """The toy model with one weight made NaN (`where`: 'out' poisons every word, 'eos'
    only EOS's row); each step counted, and a search that runs far past its length
    limit stopped with an AssertionError instead of running for ever."""

    def __init__(self, where: str):
        super().__init__(seed=1)
        with torch.no_grad():
            if where == "out":
                self.out.weight.fill_(float("nan"))
            else:
                self.out.weight[EOS] = float("nan")
        self.steps = 0

    def step(self, *args, **kwargs):
        self.steps += 1
        assert self.steps < 500, "the search does not stop"
        return super().step(*args, **kwargs)


@pytest.mark.parametrize("where", ["out", "eos"])
@pytest.mark.parametrize("beam", [1, 5])
def test_non_finite_scores_end_the_search_with_an_error(where, beam):
    """NaN weights made beam search loop for ever and greedy return '<pad> <pad> ...'
    (#round-2 item 7): the search stops with NonFiniteScores, naming the step."""
    from core.infer.search import NonFiniteScores

    model = _Broken(where)
    with pytest.raises(NonFiniteScores, match=r"not finite .* at output step \d+"):
        if beam == 1:
            greedy(model, SRC, LENS, max_len_abs=20)
        else:
            beam_search(model, SRC, LENS, beam=beam, max_len_abs=20)
    assert model.steps <= 21  # at the latest one step past the length limit


def test_onmt_style_beam_ranks_by_average_and_stops_when_the_best_candidate_ends():
    """OpenNMT-py's beam (onmt_style, its default -length_penalty avg). Vocabulary PAD UNK
    BOS EOS a=4 c=5 d=6. After BOS: a 0.6, EOS 0.3; after a: c 0.4, d 0.35, EOS 0.25;
    after c or d: EOS. Beam 2: step 1 finishes '' (log 0.3) while 'a' stays alive alone;
    step 2 keeps 'a c', 'a d'; step 3's best candidate 'a c EOS' ends the search. Ranked
    by log-prob / (length + 1), 'a c' (log 0.24 / 4) beats '' (log 0.3 / 2); the workbench's own
    beam, by log-prob, keeps '' (no alive beam can beat log 0.3 after step 2)."""
    eps = 1e-4
    p = torch.full((7, 7), eps)
    p[BOS, 4], p[BOS, EOS] = 0.6, 0.3
    p[4, 5], p[4, 6], p[4, EOS] = 0.4, 0.35, 0.25
    p[5, EOS], p[6, EOS] = 1.0, 1.0
    p = p / p.sum(1, keepdim=True)
    model = BigramTableModel(p)
    src, lens = torch.tensor([[4, 5, 6]]), torch.tensor([3])
    onmt = beam_search(model, src, lens, beam=2, onmt_style=True)[0][0]
    assert onmt.tokens == [4, 5]
    assert onmt.score == pytest.approx(math.log(p[BOS, 4] * p[4, 5] * p[5, EOS]) / 4, abs=1e-5)
    assert beam_search(model, src, lens, beam=2)[0][0].tokens == []

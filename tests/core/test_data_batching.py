"""BatchPlan determinism, bucketing, token budget, padding and masks."""
from __future__ import annotations

import random

import torch

from core.data.batching import BatchPlan
from core.data.vocab import BOS, EOS, PAD


def _data(n=500, seed=0):
    rng = random.Random(seed)
    src = [[rng.randrange(5, 50) for _ in range(rng.randrange(1, 30))] for _ in range(n)]
    tgt = [[rng.randrange(5, 50) for _ in range(rng.randrange(1, 30))] for _ in range(n)]
    return src, tgt


def test_same_seed_same_epoch_same_batches():
    src, tgt = _data()
    a = BatchPlan(src, tgt, batch_size=16, seed=7, pool_batches=4)
    b = BatchPlan(src, tgt, batch_size=16, seed=7, pool_batches=4)
    assert a.epoch(3) == b.epoch(3)
    assert a.epoch(3) != a.epoch(4)
    assert a.epoch(3) != BatchPlan(src, tgt, batch_size=16, seed=8, pool_batches=4).epoch(3)


def test_every_index_exactly_once_and_sizes():
    src, tgt = _data()
    plan = BatchPlan(src, tgt, batch_size=16, seed=1, pool_batches=4)
    batches = plan.epoch(0)
    assert sorted(i for b in batches for i in b) == list(range(500))
    assert all(len(b) <= 16 for b in batches)
    # 500 = 7 full pools of 64 + 52: 7*4 + ceil(52/16) = 32 batches
    assert len(batches) == 32


def test_bucketing_reduces_padding():
    src, tgt = _data()
    plan = BatchPlan(src, tgt, batch_size=16, seed=1, pool_batches=8)

    def padded(batches):
        return sum(len(b) * max(len(tgt[i]) + 1 for i in b) for b in batches)

    rng = random.Random(1)
    perm = list(range(500))
    rng.shuffle(perm)
    unsorted = [perm[i:i + 16] for i in range(0, 500, 16)]
    assert padded(plan.epoch(0)) < 0.75 * padded(unsorted)
    # inside a batch, target lengths come from one sorted run of the pool
    for b in plan.epoch(0):
        lens = [len(tgt[i]) for i in b]
        assert lens == sorted(lens)


def test_token_budget_respected():
    src, tgt = _data()
    tgt[10] = list(range(5, 205))  # one pair longer than the whole budget
    plan = BatchPlan(src, tgt, batch_tokens=120, seed=3, pool_batches=10)
    batches = plan.epoch(2)
    assert sorted(i for b in batches for i in b) == list(range(500))
    for b in batches:
        width = max(len(tgt[i]) + 1 for i in b)
        assert len(b) * width <= 120 or len(b) == 1
    assert [10] in batches


def test_no_shuffle_is_epoch_independent_and_sorted():
    src, tgt = _data(100)
    plan = BatchPlan(src, tgt, batch_size=10, shuffle=False)
    assert plan.epoch(0) == plan.epoch(5)
    flat = [i for b in plan.epoch(0) for i in b]
    assert [len(tgt[i]) for i in flat] == sorted(len(t) for t in tgt)


def test_collate_padding_and_teacher_forcing():
    src = [[5, 6, 7], [8]]
    tgt = [[9], [10, 11, 12]]
    ctx = [[2 + 2], [13, 14]]
    plan = BatchPlan(src, tgt, batch_size=2, ctx_ids=ctx)
    batch = plan.collate([1, 0])
    assert batch.indices == [1, 0]
    assert batch.src.tolist() == [[8, PAD, PAD], [5, 6, 7]]
    assert batch.src_lens.tolist() == [1, 3]
    assert batch.tgt_in.tolist() == [[BOS, 10, 11, 12], [BOS, 9, PAD, PAD]]
    assert batch.tgt_out.tolist() == [[10, 11, 12, EOS], [9, EOS, PAD, PAD]]
    assert batch.tgt_lens.tolist() == [4, 2]
    assert batch.n_tgt_tokens == 6
    assert batch.ctx.tolist() == [[13, 14], [4, PAD]] and batch.ctx_lens.tolist() == [2, 1]
    # padding exactly where the lengths say
    mask = torch.arange(4)[None, :] < batch.tgt_lens[:, None]
    assert torch.equal(batch.tgt_out != PAD, mask)
    assert batch.src.dtype == torch.long and batch.to("cpu").src.equal(batch.src)


def test_collate_equals_padding_row_by_row():
    """collate fills the padded tensors in one vectorised pass; on random batches (empty
    sources and targets among them) it gives exactly what padding each row would."""
    rng = random.Random(3)

    def seqs(n, longest):
        return [[rng.randrange(4, 500) for _ in range(rng.randrange(0, longest))] for _ in range(n)]

    def padded(rows, width):
        return [row + [PAD] * (width - len(row)) for row in rows]

    src, tgt, ctx = seqs(300, 30), seqs(300, 25), seqs(300, 12)
    plan = BatchPlan(src, tgt, batch_tokens=900, ctx_ids=ctx, seed=4)
    for indices in plan.epoch(0)[:20] + [[0], [299, 7, 7]]:
        batch = plan.collate(indices)
        s, t, c = [src[i] for i in indices], [tgt[i] for i in indices], [ctx[i] for i in indices]
        s_w, t_w, c_w = (max(1, *map(len, s)), 1 + max(map(len, t)), max(1, *map(len, c)))
        assert batch.src.tolist() == padded(s, s_w)
        assert batch.tgt_in.tolist() == padded([[BOS, *y] for y in t], t_w)
        assert batch.tgt_out.tolist() == padded([[*y, EOS] for y in t], t_w)
        assert batch.ctx.tolist() == padded(c, c_w)
        assert batch.src_lens.tolist() == list(map(len, s))
        assert batch.tgt_lens.tolist() == [len(y) + 1 for y in t]
        assert batch.ctx_lens.tolist() == list(map(len, c))
        assert batch.src.dtype == batch.tgt_in.dtype == batch.tgt_lens.dtype == torch.long

"""row_topk (core/infer/topk.py) against torch.topk: the same values, indices that hold
them, wherever the k best entries sit in the row."""
from __future__ import annotations

import pytest
import torch

from core.infer.topk import BLOCK, row_topk, uses_blocks


def check(scores: torch.Tensor, k: int, blocks: bool = True) -> None:
    assert uses_blocks(scores, k) == blocks  # which path the case tests
    values, indices = row_topk(scores, k)
    expected = scores.topk(k, dim=-1).values
    assert values.shape == indices.shape == (scores.size(0), k)
    assert torch.equal(values, expected)  # the k best values, best first
    assert torch.equal(scores.gather(1, indices), values)  # each index holds its value
    for row in indices.tolist():
        assert len(set(row)) == k  # k different entries


@pytest.mark.parametrize("vocab", [14_790, 45 * BLOCK, 45 * BLOCK + 1, 3 * BLOCK, 50])
@pytest.mark.parametrize("k", [1, 2, 10])
def test_random_rows_give_torchs_top_k(vocab, k):
    g = torch.Generator().manual_seed(vocab + k)
    scores = torch.randn(37, vocab, generator=g).log_softmax(dim=-1)
    check(scores, k, blocks=vocab // BLOCK > 4 * k)  # a few blocks: torch.topk itself


def test_few_scores_take_torch_topk_and_many_the_blocks():
    small = torch.randn(4, 14_790)  # 59,160 scores: below MIN_SCORES
    check(small, 2, blocks=False)
    check(torch.randn(8, 14_790), 2)


def test_the_best_entries_anywhere_in_the_row():
    """All k best in one block, in the last partial block, at both ends, or spread one
    per block: each row of one batch puts them somewhere else."""
    vocab, k = 100 * BLOCK + 77, 10  # 20 rows: above MIN_SCORES for any BLOCK >= 50
    scores = torch.rand(20, vocab) - 5.0  # everything else in [-5, -4); rows 5-19 random
    high = torch.arange(k, dtype=torch.float32)  # the k best: 0 .. 9
    scores[0, 7 * BLOCK: 7 * BLOCK + k] = high  # one block
    scores[1, vocab - k:] = high  # the partial block at the end
    scores[2, :5] = high[:5]  # the first entries and the last ones
    scores[2, vocab - 5:] = high[5:]
    scores[3, torch.arange(k) * 5 * BLOCK + 3] = high  # one per block
    scores[4, torch.randperm(vocab, generator=torch.Generator().manual_seed(0))[:k]] = high
    check(scores, k)


def test_ties_and_masked_entries_keep_torchs_values():
    """Equal scores (the indices may be others of the equal ones) and -inf entries, as a
    search's masked EOS."""
    vocab, k = 100 * BLOCK, 10
    scores = torch.full((20, vocab), -2.0)  # rows 3-19 all tied
    scores[0, ::97] = 1.0  # more tied best entries than k
    scores[1] = float("-inf")
    scores[1, 300:305] = 0.5  # fewer finite entries than k: -inf fills the rest
    scores[2, 2] = float("-inf")
    check(scores, k)


def test_a_non_contiguous_score_view():
    scores = torch.randn(14_790, 12).log_softmax(dim=0).t()  # 12 x 14,790, transposed
    check(scores, 10)

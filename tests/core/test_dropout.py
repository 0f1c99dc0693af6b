"""core.models.dropout: the CPU dropout drawn from random 16-bit lanes has nn.Dropout's
distribution and gradient, and is the identity outside training."""
from __future__ import annotations

import pytest
import torch

from core.models.dropout import Dropout, draw_keep, dropout


def test_it_drops_p_of_the_elements_and_keeps_the_mean():
    torch.manual_seed(0)
    x = torch.rand(400, 1000) + 0.5
    for p in (0.1, 0.3, 0.5):
        y = dropout(x, p, training=True)
        zero = (y == 0).float().mean().item()
        assert zero == pytest.approx(p, abs=0.005)  # 400k draws: ~0.001 standard error
        kept = y != 0
        torch.testing.assert_close(y[kept], x[kept] / (1 - p))
        assert y.mean().item() == pytest.approx(x.mean().item(), rel=0.01)


def test_the_four_lanes_of_a_random_word_are_independent():
    """Four neighbouring elements share one 64-bit draw: each position in the word drops
    p of its elements, and a pair of neighbours (in one word or across two) both drop
    with probability p^2, as independent draws do."""
    torch.manual_seed(2)
    p = 0.3
    drop = ~draw_keep(torch.empty(1_000_000), p)
    by_lane = drop.view(-1, 4).float().mean(dim=0)
    torch.testing.assert_close(by_lane, torch.full((4,), p), atol=0.004, rtol=0)
    for gap in (1, 2, 3, 4, 5):  # within a word, and into the next one
        both = (drop[:-gap] & drop[gap:]).float().mean().item()
        assert both == pytest.approx(p * p, abs=0.002)


def test_p_is_kept_to_16_bits_at_both_ends():
    x = torch.ones(200_000)
    torch.manual_seed(4)
    assert draw_keep(x, 1e-7).all()  # rounds to 0: nothing drops
    assert not draw_keep(x, 1 - 1e-7).any()  # rounds to 1: the threshold must not wrap
    assert draw_keep(x, 0.99999).float().mean().item() < 1e-4


def test_its_gradient_is_the_mask_times_the_scale():
    torch.manual_seed(1)
    x = (torch.rand(50, 60) + 0.5).requires_grad_()
    y = dropout(x, 0.2, training=True)
    g = torch.randn(50, 60)
    y.backward(g)
    keep = (y != 0).float()
    torch.testing.assert_close(x.grad, g * keep / 0.8)


def test_outside_training_and_at_p_0_it_changes_nothing():
    x = torch.randn(7, 9)
    assert dropout(x, 0.5, training=False) is x
    assert dropout(x, 0.0, training=True) is x
    module = Dropout(0.4).eval()
    assert module(x) is x
    assert torch.equal(dropout(x, 1.0, training=True), torch.zeros_like(x))


def test_bf16_stays_bf16_and_a_seed_repeats_the_mask():
    x = torch.randn(30, 40).bfloat16()
    torch.manual_seed(3)
    a = dropout(x, 0.3, training=True)
    torch.manual_seed(3)
    b = Dropout(0.3).train()(x)
    assert a.dtype == torch.bfloat16 and torch.equal(a, b)
    kept = a != 0  # each kept element is x times the scale rounded to bf16, the rest 0
    scale = torch.tensor(1 / 0.7).bfloat16()
    assert 0.6 < kept.float().mean().item() < 0.8
    assert torch.equal(a, torch.where(kept, x * scale, torch.zeros_like(x)))


def test_models_built_with_it_load_nn_dropout_checkpoints():
    """No parameters or buffers: the state dict of a layer stack is unchanged."""
    plain = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.1), torch.nn.Linear(8, 4))
    ours = torch.nn.Sequential(torch.nn.Linear(4, 8), Dropout(0.1), torch.nn.Linear(8, 4))
    assert list(plain.state_dict()) == list(ours.state_dict())
    ours.load_state_dict(plain.state_dict())

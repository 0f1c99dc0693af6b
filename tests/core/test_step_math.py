"""A decoding step's cheaper math: the log-softmax written over the step's own logits
(core.models.base.step_log_probs) and tanh as 2 sigmoid(2x) - 1 in a search
(core.models.activations.tanh) give the values of torch's functions, and neither touches
training."""
from __future__ import annotations

import torch

from core.models import matmul
from core.models.activations import tanh
from core.models.base import step_log_probs


def test_step_log_probs_overwrites_the_logits_only_without_gradients():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(32, 14790, generator=g) * 4
    expected = torch.log_softmax(logits, dim=-1)
    fresh = logits.clone()
    out = step_log_probs(fresh)
    assert out.data_ptr() == fresh.data_ptr()  # in place: no new 32 x V tensor
    assert torch.equal(out, expected)
    assert torch.allclose(out.exp().sum(-1), torch.ones(32), atol=1e-4)

    trained = logits.clone().requires_grad_()
    out = step_log_probs(trained)
    assert out.data_ptr() != trained.data_ptr() and torch.equal(trained.detach(), logits)
    out[:, 7].sum().backward()  # d log p_7 / d logit_j = [j = 7] - p_j
    grad = -expected.exp()
    grad[:, 7] += 1
    assert torch.allclose(trained.grad, grad, atol=1e-6)

    half = logits.to(torch.bfloat16)
    out = step_log_probs(half)
    assert out.dtype == torch.float32 and torch.equal(half, logits.to(torch.bfloat16))
    assert torch.equal(out, torch.log_softmax(half.float(), dim=-1))


def test_search_tanh_is_within_2e_7_of_tanh_and_only_in_a_search():
    x = torch.cat([torch.linspace(-12, 12, 200001), torch.tensor([0.0, 1e-8, -1e-30])])
    exact = torch.tanh(x.double())
    with torch.no_grad(), matmul.packed_weights():
        fast = tanh(x)
    assert fast.dtype == torch.float32 and fast.shape == x.shape
    err = (fast.double() - exact).abs()
    assert err.max() < 2e-7
    assert not torch.equal(fast, torch.tanh(x))  # it is the other formula here
    assert fast.min() == -1 and fast.max() == 1  # saturates exactly, as tanh does
    # outside a search, with gradients, or in bf16: torch.tanh itself, to the bit
    assert torch.equal(tanh(x), torch.tanh(x))
    with matmul.packed_weights():
        leaf = x[:1000].clone().requires_grad_()
        assert torch.equal(tanh(leaf), torch.tanh(leaf))
        half = x.to(torch.bfloat16)
        assert torch.equal(tanh(half), torch.tanh(half))

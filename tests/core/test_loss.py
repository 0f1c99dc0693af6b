"""The chunked cross-entropy (core/train/loss.py) equals log_softmax + gather, forward
and backward, in fp32 and bf16, with label smoothing and PAD, over several chunks."""
from __future__ import annotations

import math

import pytest
import torch

from core.models.base import PAD, Seq2SeqOutput
from core.train import loss as loss_mod
from core.train.loss import sequence_nll


def reference(scores: torch.Tensor, target: torch.Tensor, smoothing: float):
    """The plain way: log-softmax (in the scores' dtype, at least fp32), gather the
    targets, mask PAD."""
    if scores.dtype not in (torch.float32, torch.float64):
        scores = scores.float()
    lp = torch.log_softmax(scores, dim=-1).reshape(-1, scores.size(-1))
    gold = target.reshape(-1)
    mask = gold != PAD
    nll = -lp.gather(1, gold[:, None]).squeeze(1)
    loss = ((1 - smoothing) * nll + smoothing * -lp.mean(1)).mul(mask).sum()
    return loss, (nll * mask).sum(), int(mask.sum())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("chunk", [1 << 20, 3000])  # one chunk; rows of 1 (3000 < V)
@pytest.mark.parametrize("reduction", [False, True])  # log-sum-exp as on a CPU / a GPU
@pytest.mark.parametrize("consume", [False, True])  # the softmax over the scores (fp32 CPU)
def test_equals_log_softmax_and_gather(dtype, smoothing, chunk, reduction, consume,
                                       monkeypatch):
    monkeypatch.setattr(loss_mod, "CHUNK_ELEMENTS", chunk)
    monkeypatch.setattr(loss_mod, "lse_by_reduction", lambda device: reduction)
    torch.manual_seed(0)
    scores = (torch.randn(3, 6, 5000) * 4).to(dtype).requires_grad_()
    target = torch.randint(4, 5000, (3, 6))
    target[0, 4:], target[2, 1:] = PAD, PAD  # padding rows count nothing
    # consumed scores are a step's own (a product's output), not the leaf itself
    loss, nll, n = sequence_nll(scores.clone() if consume else scores, target, smoothing,
                                consume_scores=consume)
    (2.5 * loss).backward()
    grad = scores.grad.double()
    # The reference in float64 is the exact value to within 1e-13: an fp32 reference
    # is itself off by up to 4e-5 on AVX2 kernels (its own summation order over V).
    exact = scores.detach().double().requires_grad_()
    ref_loss, ref_nll, ref_n = reference(exact, target, smoothing)
    (2.5 * ref_loss).backward()
    assert n == ref_n == 18 - 2 - 5
    assert loss.item() == pytest.approx(ref_loss.item(), rel=1e-5)
    assert nll.item() == pytest.approx(ref_nll.item(), rel=1e-5)
    assert scores.grad.dtype == dtype  # the gradient comes back in the scores' dtype
    # Rounding model of d/ds = 2.5 * (p - (1 - eps) onehot - eps / V) computed in fp32:
    # p = exp(s - lse) carries the absolute fp32 error of (s - lse), a few ulps of
    # |s| + |lse| <= 2 max|s| + log V, as a relative error; the other terms a few ulps of
    # 1. The result is then rounded to the scores' dtype (half an ulp of |grad|).
    eps32 = torch.finfo(torch.float32).eps
    p = torch.softmax(exact.detach(), dim=-1)
    scale = 2 * exact.detach().abs().max() + math.log(exact.size(-1))
    bound = 2.5 * 8 * eps32 * (p * scale + 1) + torch.finfo(dtype).eps * exact.grad.abs()
    error = (grad - exact.grad).abs()
    assert (error <= bound).all(), float((error / bound).max())
    assert grad[2, 1:].abs().max().item() == 0.0  # PAD rows get no gradient


def test_scores_are_not_modified_and_log_probs_normalise_them():
    torch.manual_seed(1)
    scores = torch.randn(2, 3, 40, requires_grad=True)
    before = scores.detach().clone()
    sequence_nll(scores, torch.randint(4, 40, (2, 3)))[0].backward()
    assert torch.equal(scores.detach(), before)  # the fp32 backward works on a copy
    out = Seq2SeqOutput(scores=scores.detach(), attention=torch.zeros(2, 3, 5))
    assert torch.allclose(out.log_probs, torch.log_softmax(before, -1))
    assert out.log_probs is out.log_probs  # computed once
    # log-probs as scores (an ensemble's output) give the same loss as their logits
    target = torch.randint(4, 40, (2, 3))
    assert sequence_nll(out.log_probs, target)[0].item() == \
        pytest.approx(sequence_nll(before, target)[0].item(), rel=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_consumed_scores_give_the_same_loss_and_gradient_to_the_bit(dtype, monkeypatch):
    """consume_scores (a training step's): in fp32 on a CPU the softmax is written over
    the scores, with the loss and the gradient of the default way to the bit; bf16
    scores are left as they were (their softmax is computed in fp32 chunks anyway)."""
    monkeypatch.setattr(loss_mod, "CHUNK_ELEMENTS", 20_000)  # several chunks
    torch.manual_seed(6)
    logits = (torch.randn(4, 9, 3000) * 4).to(dtype)
    target = torch.randint(4, 3000, (4, 9))
    target[1, 5:] = PAD
    results = []
    for consume in (False, True):
        leaf = logits.clone().requires_grad_()
        scores = leaf * 1.0  # a product's output, as the softmax layer's
        loss, nll, n = sequence_nll(scores, target, 0.1, consume_scores=consume)
        (loss / n).backward()
        results.append((loss.item(), nll.item(), leaf.grad, scores.detach()))
    (loss_a, nll_a, grad_a, kept_a), (loss_b, nll_b, grad_b, kept_b) = results
    assert (loss_a, nll_a) == (loss_b, nll_b)
    assert torch.equal(grad_a, grad_b)
    assert torch.equal(kept_a, logits)  # the default leaves the scores as they were
    # consumed: the scores' storage became the gradient (fp32), or stayed (bf16)
    assert torch.equal(kept_b, logits) == (dtype == torch.bfloat16)
    # a leaf (a user's own tensor) is never consumed: its values and gradient stay apart
    leaf = logits.clone().requires_grad_()
    loss, _, n = sequence_nll(leaf, target, 0.1, consume_scores=True)
    (loss / n).backward()
    assert torch.equal(leaf.detach(), logits) and torch.equal(leaf.grad, grad_a)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_any_upstream_gradient_gets_the_exact_gradient(dtype):
    """Any per-row upstream gradients, negative ones included (no loss of ours gives them,
    but autograd allows them), give the float64 autograd gradient."""
    torch.manual_seed(2)
    scores = (torch.randn(7, 300) * 3).to(dtype)
    target = torch.randint(0, 300, (7,))
    for weights in (torch.rand(7) + 0.1, torch.randn(7)):
        s = scores.clone().requires_grad_()
        nll, smooth = loss_mod._CrossEntropy.apply(s, target, True, False)
        (nll * weights + 0.3 * smooth * weights.abs()).sum().backward()
        exact = scores.double().requires_grad_()
        lp = torch.log_softmax(exact, -1)
        ref = (-lp.gather(1, target[:, None]).squeeze(1) * weights.double()
               + 0.3 * -lp.mean(1) * weights.abs().double()).sum()
        ref.backward()
        tolerance = 1e-5 + 2 * torch.finfo(dtype).eps * exact.grad.abs()
        assert ((s.grad.double() - exact.grad).abs() <= tolerance).all()


def test_a_second_backward_over_one_forward_is_refused():
    scores = torch.randn(4, 30, requires_grad=True)
    nll, _ = loss_mod._CrossEntropy.apply(scores, torch.randint(0, 30, (4,)), False, False)
    nll.sum().backward(retain_graph=True)
    first = scores.grad.clone()
    with pytest.raises(RuntimeError, match="backward ran twice over one forward"):
        nll.sum().backward()
    assert torch.equal(scores.grad, first)  # nothing half-added


def test_the_loss_without_gradients_equals_the_loss_with_them():
    torch.manual_seed(4)
    scores = torch.randn(5, 9, 700)
    target = torch.randint(4, 700, (5, 9))
    with torch.no_grad():
        evaluated = sequence_nll(scores, target, 0.1)
    trained = sequence_nll(scores.clone().requires_grad_(), target, 0.1)
    assert evaluated[0].item() == trained[0].item() and evaluated[1].item() == trained[1].item()
    assert not evaluated[0].requires_grad


@pytest.mark.parametrize("gap", [80.0, 95.0, 101.0, 130.0])
@pytest.mark.parametrize("reduction", [False, True])  # log-sum-exp as on a CPU / a GPU
def test_a_target_far_below_the_best_word_gets_its_exact_loss(gap, reduction, monkeypatch):
    """A target probability below fp32's normal range (gap > ~87 nats), subnormal or 0:
    the log-sum-exp comes from the scores themselves, not from log p_target."""
    monkeypatch.setattr(loss_mod, "lse_by_reduction", lambda device: reduction)
    scores = torch.zeros(2, 50)
    scores[:, 7] = gap
    target = torch.tensor([3, 7])
    nll, _ = loss_mod._CrossEntropy.apply(scores, target, False, False)
    exact = -torch.log_softmax(scores.double(), -1)[torch.arange(2), target]
    assert torch.allclose(nll.double(), exact, rtol=1e-6, atol=1e-5)
    # the same when the softmax overwrote the scores (a training step's, fp32 on a CPU):
    # the log-sum-exp from the row's maximum and its best word's probability
    leaf = scores.clone().requires_grad_()
    nll, _ = loss_mod._CrossEntropy.apply(leaf * 1.0, target, False, True)
    assert torch.allclose(nll.double(), exact, rtol=1e-6, atol=1e-5)
    (grad,) = torch.autograd.grad(nll.sum(), leaf)
    want = torch.softmax(scores.double(), -1) - torch.nn.functional.one_hot(target, 50)
    torch.testing.assert_close(grad.double(), want, rtol=1e-6, atol=1e-7)


def test_one_weight_finds_the_mean_over_real_tokens_only():
    coef = torch.full((6,), 1 / 637)
    coef[[1, 4]] = 0  # PAD rows
    assert loss_mod._one_weight(coef) == pytest.approx(1 / 637, rel=1e-7)
    assert loss_mod._one_weight(torch.zeros(4)) == 0.0
    assert loss_mod._one_weight(torch.tensor([0.5, 0.25, 0.5])) is None
    assert loss_mod._one_weight(torch.tensor([0.5, -0.5])) is None
    assert loss_mod._one_weight(torch.tensor([0.5, float("nan")])) is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_one_weight_pass_equals_the_per_row_pass_to_the_bit(dtype, monkeypatch):
    """1/637 is not a bf16 number: the bf16 pass must multiply in fp32 and round once, as
    the per-row chunks do, or the gradients differ in their last bit."""
    monkeypatch.setattr(loss_mod, "CHUNK_ELEMENTS", 20_000)  # several chunks of 4 rows
    torch.manual_seed(5)
    probs = torch.softmax(torch.randn(30, 5000) * 4, dim=1).to(dtype)
    coef = torch.full((30,), 1 / 637)
    coef[[0, 13, 29]] = 0
    per_row, at_once = probs.clone(), probs.clone()
    loss_mod._scale_rows(per_row, coef, None)
    loss_mod._scale_uniform(at_once, coef, loss_mod._one_weight(coef))
    assert torch.equal(per_row, at_once)
    assert at_once[13].abs().max().item() == 0.0 and at_once[12].abs().max().item() > 0


def test_the_training_loss_takes_the_one_weight_pass(monkeypatch):
    """sequence_nll / n (the trainer's loss) has one weight over real rows: its backward
    makes one pass in the scores' dtype; a label-smoothed loss keeps the per-row pass."""
    calls = []
    for name in ("_scale_uniform", "_scale_rows"):
        original = getattr(loss_mod, name)
        monkeypatch.setattr(loss_mod, name, lambda *a, _o=original, _n=name: (calls.append(_n), _o(*a)))
    target = torch.randint(4, 300, (3, 5))
    target[1, 3:] = PAD
    for smoothing in (0.0, 0.1):
        scores = torch.randn(3, 5, 300, dtype=torch.bfloat16, requires_grad=True)
        loss, _, n = sequence_nll(scores, target, smoothing)
        (loss / n).backward()
    assert calls == ["_scale_uniform", "_scale_rows"]


def test_scores_laid_out_column_major_get_the_exact_gradient(monkeypatch):
    """The fp32 softmax is written straight into the kept probabilities, which must not
    inherit a transposed layout from the scores (the kernel writes as if contiguous)."""
    monkeypatch.setattr(loss_mod, "CHUNK_ELEMENTS", 64)  # several chunks
    g = torch.Generator().manual_seed(3)
    scores = torch.randn(40, 150, generator=g).t().requires_grad_()  # 150 x 40, transposed
    target = torch.randint(0, 40, (150,), generator=g)
    nll, _ = loss_mod._CrossEntropy.apply(scores, target, False, False)
    (grad,) = torch.autograd.grad(nll.sum(), scores)
    exact = scores.detach().double().requires_grad_()
    (want,) = torch.autograd.grad(
        torch.nn.functional.cross_entropy(exact, target, reduction="sum"), exact)
    torch.testing.assert_close(grad.double(), want, rtol=1e-5, atol=1e-6)

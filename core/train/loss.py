"""The training loss: cross-entropy over the softmax layer's scores, computed in row
chunks so the N x V log-probabilities never exist as one tensor.

The softmax layer dominates a step of these models on a CPU (a 256 x 15k projection,
forward and backward). After the projection, the plain way (log_softmax, gather, and
their backward passes) reads and writes several N x V fp32 tensors. Here the forward
runs torch's fused softmax over fp32 chunks of the scores (each in cache) and keeps the
probabilities in the scores' own dtype (bf16 under autocast); the backward scales them
into the gradient in place, without a second exponential. The math is the same: per
row, -log p(target) = logsumexp(s) - s_target, and d/ds = p - onehot(target).
"""
from __future__ import annotations

import torch
from torch import Tensor

from core.models.base import PAD

#: scores per chunk (rows x V) on a CPU: ~4 MB of fp32, so a chunk's softmax stays in cache
CHUNK_ELEMENTS = 1 << 20
#: on a GPU: 128 MB of fp32. Each chunk is a dozen kernel launches, and the GPU gains
#: nothing from small ones: in 1M-element chunks a thesis Transformer batch of 65k
#: target tokens (15k words) took over 900 chunks, some 11,000 launches a step
GPU_CHUNK_ELEMENTS = 1 << 25


def _chunks(n_rows: int, n_cols: int, device: torch.device) -> list[tuple[int, int]]:
    """Row ranges [(i, j)] covering n_rows rows of n_cols scores, each at most
    CHUNK_ELEMENTS (GPU_CHUNK_ELEMENTS off the CPU) scores, at least one row."""
    elements = CHUNK_ELEMENTS if device.type == "cpu" else GPU_CHUNK_ELEMENTS
    step = max(1, elements // max(1, n_cols))
    return [(i, min(n_rows, i + step)) for i in range(0, n_rows, step)]


def lse_by_reduction(device: torch.device) -> bool:
    """Whether the loss takes each row's log-sum-exp by a reduction over the scores
    (on a GPU) rather than from the target's probability (on the CPU)."""
    return device.type != "cpu"


class _CrossEntropy(torch.autograd.Function):
    """scores N x V (any float dtype), target N -> (nll N, smooth N), both fp32:
    nll = -log softmax(s)[target], smooth = mean_v(-log softmax(s)_v).

    The forward keeps softmax(s) (written over the scores themselves when the caller
    consumes them, in fp32 on a CPU; else a new N x V tensor in the scores' dtype) for the
    backward, which scales it into the gradient in place instead of exponentiating
    again. Every pass is one of torch's own vectorised kernels in one dtype: on a CPU its
    fused softmax runs at twice the speed of exp or logsumexp, and a kernel mixing bf16
    and fp32 operands at a tenth of it."""

    @staticmethod
    def forward(ctx, scores: Tensor, target: Tensor, with_smooth: bool, consume: bool):
        n, v = scores.shape
        picked = scores.gather(1, target[:, None]).squeeze(1).float()
        p_target = torch.empty(n, dtype=torch.float32, device=scores.device)
        mean = torch.empty(n, dtype=torch.float32, device=scores.device) if with_smooth else None
        keep = ctx.needs_input_grad[0]  # no backward (evaluation): nothing to keep
        ctx.with_smooth = with_smooth
        # on a GPU the log-sum-exp is a reduction of its own: the CPU's way (from p_t,
        # with a fallback for the rows where it underflows) would wait for the GPU
        on_gpu = lse_by_reduction(scores.device)
        lse = torch.empty(n, dtype=torch.float32, device=scores.device) if on_gpu else None
        # consume (the caller reads the scores no more), fp32 on a CPU: the softmax
        # overwrites the scores. A fresh N x V buffer over glibc's mmap threshold (32 MiB:
        # 570 rows of 15k words) costs a page fault per 4 KiB (about 10 ms a bench step).
        # Each row's maximum is kept for the rows whose p_t underflows (see below).
        overwrite = (consume and keep and not on_gpu and scores.dtype == torch.float32
                     and scores.is_contiguous())
        row_max = torch.empty(n, dtype=torch.float32, device=scores.device) if overwrite else None
        probs = None
        if overwrite:
            probs = scores
        elif keep:  # contiguous whatever the scores' layout: _softmax.out writes as if it were
            probs = torch.empty_like(scores, memory_format=torch.contiguous_format)
        in_place = keep and probs.dtype == torch.float32  # softmax written into probs
        for i, j in _chunks(n, v, scores.device):
            chunk = scores[i:j].float()
            if with_smooth:
                mean[i:j] = chunk.mean(dim=1)
            if overwrite:
                row_max[i:j] = chunk.amax(dim=1)
            if in_place:  # no chunk-sized copy (about 5 ms of a thesis Transformer step)
                p = torch.ops.aten._softmax.out(chunk, 1, False, out=probs[i:j])
            else:
                p = torch.softmax(chunk, dim=1)
            p_target[i:j] = p.gather(1, target[i:j, None]).squeeze(1)
            if keep and not in_place:
                probs[i:j] = p
            if on_gpu:
                lse[i:j] = torch.logsumexp(chunk, dim=1)
        if not on_gpu:
            # log-sum-exp from the target's probability: s_t - log p_t; where p_t is
            # below fp32's normal range (a target more than ~87 nats below the best
            # word), from the scores themselves
            lse = picked - p_target.log()
            lost = p_target < torch.finfo(torch.float32).tiny  # subnormal or 0: log is off
            if bool(lost.any()):
                if overwrite:
                    # the scores are probabilities now: the row's best word has p_max =
                    # exp(max - lse) >= 1/V, which cannot underflow: lse = max - log p_max
                    lse[lost] = row_max[lost] - probs[lost].amax(dim=1).log()
                else:
                    lse[lost] = torch.logsumexp(scores[lost].float(), dim=1)
        nll = lse - picked
        smooth = lse - mean if with_smooth else torch.zeros_like(lse)
        if not with_smooth:
            ctx.mark_non_differentiable(smooth)
        ctx.save_for_backward(probs, target, lse, picked)
        return nll, smooth

    @staticmethod
    def backward(ctx, g_nll: Tensor, g_smooth: Tensor):
        # d nll / d s = p - onehot(target); d smooth / d s = p - 1/V: per row the gradient
        # is (g_nll + g_smooth) p - g_smooth / V - g_nll onehot, computed in fp32 and
        # rounded once to the scores' dtype, written over the kept probabilities (one
        # N x V tensor fewer to allocate: a fresh one costs page faults on a CPU)
        if getattr(ctx, "consumed", False):
            raise RuntimeError("the training loss's backward ran twice over one forward; "
                               "it reuses its memory, so compute the loss again")
        ctx.consumed = True
        probs, target, lse, picked = ctx.saved_tensors
        n, v = probs.shape
        g_nll = g_nll.float()
        g_smooth = None if g_smooth is None or not ctx.with_smooth else g_smooth.float()
        coef = g_nll if g_smooth is None else g_nll + g_smooth
        weight = _one_weight(coef) if g_smooth is None and probs.device.type == "cpu" else None
        if weight is not None:
            _scale_uniform(probs, coef, weight)
        else:
            _scale_rows(probs, coef, g_smooth)
        # the target entries from the scores in fp32: c p_t - g_nll cancels when p_t is
        # near 1, which a p_t rounded to bf16 would lose
        p_target = (picked - lse).exp()
        fix = coef * p_target - g_nll - (0.0 if g_smooth is None else g_smooth / v)
        probs[torch.arange(n, device=probs.device), target] = fix.to(probs.dtype)
        return probs, None, None, None


def _one_weight(coef: Tensor) -> float | None:
    """coef N (fp32) -> its one nonzero value when every row's is that value or 0 (a mean
    over real tokens: 1/n, and 0 on PAD rows), else None."""
    value = float(coef[coef.abs().argmax()])
    return value if bool(((coef == value) | (coef == 0)).all()) else None


def _scale_rows(probs: Tensor, coef: Tensor, g_smooth: Tensor | None) -> None:
    """probs N x V <- probs * coef[:, None] - g_smooth[:, None] / V, in place: each row in
    fp32, rounded once to probs' dtype (any per-row coefficients)."""
    n, v = probs.shape
    for i, j in _chunks(n, v, probs.device):
        rows = probs[i:j] if probs.dtype == torch.float32 else probs[i:j].float()
        rows.mul_(coef[i:j, None])
        if g_smooth is not None:
            rows.sub_(g_smooth[i:j, None] / v)
        if probs.dtype != torch.float32:
            probs[i:j] = rows


def _scale_uniform(probs: Tensor, coef: Tensor, weight: float) -> None:
    """_scale_rows without smoothing where every coef is `weight` or 0 (_one_weight): one
    in-place pass in probs' dtype. torch multiplies a bf16 tensor by a scalar in fp32 and
    rounds once, so the result is _scale_rows' to the bit, without its two bf16 <-> fp32
    copies of every chunk (about 2 ms of a 65 ms bf16 step of the bench model)."""
    probs.mul_(weight)
    zero = (coef == 0).nonzero().squeeze(1)
    if weight != 0.0 and zero.numel():
        probs.index_fill_(0, zero, 0.0)


def sequence_nll(scores: Tensor, target: Tensor, smoothing: float = 0.0,
                 n_tokens: int | None = None, consume_scores: bool = False):
    """Summed loss over real target tokens and their count.

    scores: batch x tgt_len x vocab, the softmax layer's logits (Seq2SeqOutput.scores)
    or already normalised log-probs (same result); target: batch x tgt_len (PAD ignored).
    With label smoothing eps the loss is (1 - eps) * NLL + eps * mean_v(-log p_v).
    Returns (loss_sum, nll_sum, n_tokens); nll_sum is the plain NLL for perplexity.
    n_tokens: the count when the caller has it on the host (Batch.n_tgt_tokens before
    the batch went to a GPU); counting `target` there would wait for the GPU.
    consume_scores: the caller reads `scores` no more (a training step's): in fp32 on a
    CPU the loss then keeps its softmax over them (their values are lost) instead of in
    a new tensor of their size. Never for a leaf tensor (a user's own, whose gradient
    would share its storage): those are left as they are.
    """
    flat = scores.reshape(-1, scores.size(-1))
    gold = target.reshape(-1)
    mask = gold != PAD
    consume = consume_scores and not scores.is_leaf
    nll, smooth = _CrossEntropy.apply(flat, gold.clamp(min=0), smoothing > 0, consume)
    nll_sum = (nll * mask).sum()
    if smoothing > 0:
        loss_sum = ((1 - smoothing) * nll + smoothing * smooth).mul(mask).sum()
    else:
        loss_sum = nll_sum
    return loss_sum, nll_sum, int(mask.sum()) if n_tokens is None else n_tokens

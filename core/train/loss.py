"""The training loss: cross-entropy over the softmax layer's scores, computed in row
chunks so the N x V log-probabilities never exist as one tensor.

The softmax layer dominates a step of these models on a CPU (a 256 x 15k projection,
forward and backward). After the projection, the plain way (log_softmax, gather, and
their backward passes) reads and writes several N x V fp32 tensors; this module reads
the scores once forward and once backward, with each chunk's fp32 work done while it is
in cache, and writes the gradient in the scores' own dtype (bf16 under autocast). The
math is the same: per row, -log p(target) = logsumexp(s) - s_target.
"""
from __future__ import annotations

import torch
from torch import Tensor

from core.models.base import PAD

#: scores per chunk (rows x V): ~4 MB of fp32, so a chunk's softmax stays in cache
CHUNK_ELEMENTS = 1 << 20


def _chunks(n_rows: int, n_cols: int) -> list[tuple[int, int]]:
    step = max(1, CHUNK_ELEMENTS // max(1, n_cols))
    return [(i, min(n_rows, i + step)) for i in range(0, n_rows, step)]


class _CrossEntropy(torch.autograd.Function):
    """scores N x V (any float dtype), target N -> (nll N, smooth N), both fp32:
    nll = -log softmax(s)[target], smooth = mean_v(-log softmax(s)_v)."""

    @staticmethod
    def forward(ctx, scores: Tensor, target: Tensor, with_smooth: bool):
        n, v = scores.shape
        lse = torch.empty(n, dtype=torch.float32, device=scores.device)
        mean = torch.empty(n, dtype=torch.float32, device=scores.device) if with_smooth else None
        for i, j in _chunks(n, v):
            chunk = scores[i:j].float()
            lse[i:j] = torch.logsumexp(chunk, dim=1)
            if with_smooth:
                mean[i:j] = chunk.mean(dim=1)
        nll = lse - scores.gather(1, target[:, None]).squeeze(1).float()
        smooth = lse - mean if with_smooth else torch.zeros_like(lse)
        if not with_smooth:
            ctx.mark_non_differentiable(smooth)
        ctx.save_for_backward(scores, target, lse)
        return nll, smooth

    @staticmethod
    def backward(ctx, g_nll: Tensor, g_smooth: Tensor):
        # d nll / d s = p - onehot(target); d smooth / d s = p - 1/V
        scores, target, lse = ctx.saved_tensors
        n, v = scores.shape
        g_nll = g_nll.float()
        g_smooth = torch.zeros_like(g_nll) if g_smooth is None else g_smooth.float()
        grad = torch.empty_like(scores)
        rows = torch.arange(n, device=scores.device)
        for i, j in _chunks(n, v):
            p = scores[i:j].to(torch.float32, copy=True).sub_(lse[i:j, None]).exp_()
            p.mul_((g_nll[i:j] + g_smooth[i:j])[:, None])
            p.sub_(g_smooth[i:j, None] / v)
            p[rows[: j - i], target[i:j]] -= g_nll[i:j]
            grad[i:j] = p
        return grad, None, None


def sequence_nll(scores: Tensor, target: Tensor, smoothing: float = 0.0):
    """Summed loss over real target tokens and their count.

    scores: batch x tgt_len x vocab, the softmax layer's logits (Seq2SeqOutput.scores)
    or already normalised log-probs (same result); target: batch x tgt_len (PAD ignored).
    With label smoothing eps the loss is (1 - eps) * NLL + eps * mean_v(-log p_v).
    Returns (loss_sum, nll_sum, n_tokens); nll_sum is the plain NLL for perplexity.
    """
    flat = scores.reshape(-1, scores.size(-1))
    gold = target.reshape(-1)
    mask = gold != PAD
    nll, smooth = _CrossEntropy.apply(flat, gold.clamp(min=0), smoothing > 0)
    nll_sum = (nll * mask).sum()
    if smoothing > 0:
        loss_sum = ((1 - smoothing) * nll + smoothing * smooth).mul(mask).sum()
    else:
        loss_sum = nll_sum
    return loss_sum, nll_sum, int(mask.sum())

"""Attention mechanisms of the recurrent families.

`LuongAttention` (Luong, Pham & Manning 2015, section 3) combines one alignment score
(dot | general | concat | mlp | location) with global, local-m or local-p attention. It works on
whole target sequences at once (batch x tgt x src), so a decoder without input feeding
scores every step in one batched matmul; an incremental decoder calls it with tgt = 1.

`AdditiveAttention` is Bahdanau et al. (2015)'s e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j).

Both work on the source in NATURAL order: a model that reverses its source maps the
encoder outputs back to natural positions before attending, so windows, p_t and the
location score's positions are natural-order positions, and the returned weights need no
flipping.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from core.models import matmul
from core.models.activations import tanh
from core.models.base import length_mask

NEG_INF = float("-inf")


class LuongScore(nn.Module):
    """score(h_t, h_s) of Luong et al. eq. (8) and the location score of eq. (9).

    dot:      h_t . h_s
    general:  h_t^T W_a h_s            (W_a h_s is precomputed once per sentence)
    concat:   v_a^T tanh(W_a [h_t; h_s]) = v_a^T tanh(W_q h_t + W_k h_s)  (W_k h_s precomputed)
    mlp:      v_a^T tanh(W_q h_t + b_q + W_k h_s), concat with a query bias: OpenNMT-py's
              'mlp' (its attentional state is then linear, LuongModel's `linear_out`)
    location: a_t = softmax(W_a h_t), W_a: hidden -> max_src_len; the scores are cut to the
              batch's source length and masked to each sentence's real length, so the
              softmax renormalises over real positions (the paper's footnote). Source
              positions >= max_src_len get no weight.
    """

    def __init__(self, kind: str, hidden_size: int, max_src_len: int = 100) -> None:
        super().__init__()
        self.kind = kind
        if kind == "general":
            self.w_a = matmul.Linear(hidden_size, hidden_size, bias=False)
        elif kind in ("concat", "mlp"):
            self.w_q = matmul.Linear(hidden_size, hidden_size, bias=kind == "mlp")
            self.w_k = matmul.Linear(hidden_size, hidden_size, bias=False)
            self.v_a = matmul.Linear(hidden_size, 1, bias=False)
        elif kind == "location":
            self.w_loc = matmul.Linear(hidden_size, max_src_len, bias=False)
        elif kind != "dot":
            raise ValueError(f"unknown Luong score {kind!r}")

    def prepare(self, memory: Tensor) -> Tensor:
        """memory: batch x S x H -> keys batch x S x H, the per-sentence precomputation."""
        if self.kind == "general":
            return self.w_a(memory)
        if self.kind in ("concat", "mlp"):
            return self.w_k(memory)
        return memory

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:
        """query: batch x T x H, keys: batch x S x H -> scores batch x T x S (unmasked;
        location fills positions beyond max_src_len with -inf)."""
        if self.kind in ("dot", "general"):
            return torch.bmm(query, keys.transpose(1, 2))
        if self.kind in ("concat", "mlp"):
            # batch x T x S x H: memory-hungry but one fused op; T is 1 when stepping
            hidden = tanh(self.w_q(query)[:, :, None, :] + keys[:, None, :, :])
            return self.v_a(hidden).squeeze(-1)
        src_len = keys.size(1)
        scores = self.w_loc(query)[:, :, :src_len]  # batch x T x min(S, max_src_len)
        if scores.size(2) < src_len:
            pad = scores.new_full((*scores.shape[:2], src_len - scores.size(2)), NEG_INF)
            scores = torch.cat([scores, pad], dim=2)
        return scores


class LuongAttention(nn.Module):
    """Global / local-m / local-p attention with a Luong score.

    global:  a_t = softmax over all real source positions.
    local-m: p_t = t (the target step, as a natural-order source position, clipped to the
             last word); window [p_t - D, p_t + D] clipped to the sentence; a_t = softmax
             over the window. No Gaussian: the paper applies it to local-p only.
             Monotone means monotone in natural order: with reverse_source the encoder
             still reads the sentence backwards, but p_t = t points at the t-th word as
             written, the position a roughly monotone translation aligns to.
    local-p: p_t = S * sigmoid(v_p^T tanh(W_p h_t)) with S the sentence's length; window
             centred on round(p_t) (clipped, so never empty); a_t = softmax over the
             window times exp(-(s - p_t)^2 / (2 sigma^2)), sigma = D / 2 (eq. 10). The
             context vector uses exactly these weights (they sum to < 1); the weights
             REPORTED for heatmaps/AER are renormalised to sum to 1, so every model
             reports a distribution with the same support and argmax.
    Positions outside the window and padding get exactly 0.
    """

    def __init__(
        self,
        kind: str,
        score: str,
        hidden_size: int,
        window: int = 10,
        max_src_len: int = 100,
    ) -> None:
        super().__init__()
        if kind not in ("global", "local-m", "local-p"):
            raise ValueError(f"unknown attention kind {kind!r}")
        if kind != "global" and window < 1:
            raise ValueError(f"local attention needs window D >= 1, not {window}")
        self.kind = kind
        self.window = window
        self.score = LuongScore(score, hidden_size, max_src_len)
        if kind == "local-p":
            self.w_p = matmul.Linear(hidden_size, hidden_size, bias=False)
            self.v_p = matmul.Linear(hidden_size, 1, bias=False)

    def prepare(self, memory: Tensor) -> Tensor:
        """memory: batch x S x H -> keys for `forward` (computed once per sentence)."""
        return self.score.prepare(memory)

    def forward(
        self,
        query: Tensor,
        keys: Tensor,
        memory: Tensor,
        src_lens: Tensor,
        t0: Tensor | int = 0,
        mask: Tensor | None = None,
        trace: dict | None = None,
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """Attend for every query at once.

        query:  batch x T x H  (top-layer decoder states h_t)
        keys:   batch x S x H  (from `prepare`), memory: batch x S x H (encoder states)
        src_lens: batch; t0: target index of query[:, 0] (batch long or int; local-m)
        mask:   batch x S bool (True on real tokens), optional: a decoder calling once per
                step builds it once instead of every step
        trace:  local-p only, a dict that receives what a hand-written backward reads
                (core/models/feed_decoder.py): u = tanh(W_p h_t) batch x T x H, sig =
                sigmoid(v_p u) batch x T, soft (the window's softmax), gauss, weights
                (their product, the context's weights) batch x T x S, total (its clamped
                sum) batch x T x 1
        returns context batch x T x H, reported attention batch x T x S,
                positions batch x T (local-m/local-p) or None
        """
        bsz, tgt_len, _ = query.shape
        src_len = memory.size(1)
        scores = self.score(query, keys)  # batch x T x S
        if mask is None:
            mask = length_mask(src_lens, src_len)
        mask = mask[:, None, :]  # batch x 1 x S
        positions = None
        if self.kind != "global":
            last = (src_lens - 1)[:, None].to(query.dtype)  # batch x 1
            if self.kind == "local-m":
                steps = torch.arange(tgt_len, device=query.device)[None, :] + torch.as_tensor(
                    t0, device=query.device
                ).view(-1, 1)  # batch|1 x T
                positions = torch.minimum(steps.to(query.dtype), last).expand(bsz, tgt_len)
                center = positions
            else:
                u = torch.tanh(self.w_p(query))
                sig = torch.sigmoid(self.v_p(u).squeeze(-1))  # batch x T
                positions = src_lens[:, None].to(query.dtype) * sig
                if trace is not None:
                    trace.update(u=u, sig=sig)
                center = torch.minimum(torch.round(positions), last)
            src_pos = torch.arange(src_len, device=query.device, dtype=query.dtype)
            dist = src_pos[None, None, :] - center[:, :, None]  # batch x T x S
            mask = mask & (dist.abs() <= self.window)
        weights = torch.softmax(scores.masked_fill(~mask, NEG_INF), dim=-1)  # batch x T x S
        reported = weights
        if self.kind == "local-p":
            sigma = self.window / 2.0
            src_pos = torch.arange(src_len, device=query.device, dtype=query.dtype)
            gauss = torch.exp(-((src_pos[None, None, :] - positions[:, :, None]) ** 2) / (2 * sigma**2))
            soft, weights = weights, weights * gauss
            total = weights.sum(-1, keepdim=True).clamp_min(1e-30)
            reported = weights / total
            if trace is not None:
                trace.update(soft=soft, gauss=gauss, weights=weights, total=total)
        context = torch.bmm(weights, memory)  # batch x T x H
        return context, reported, positions

    @property
    def has_fast_step(self) -> bool:
        """True when `fast_step` applies: global attention with the dot or general score."""
        return self.kind == "global" and self.score.kind in ("dot", "general")

    @property
    def has_fused_local_p(self) -> bool:
        """True when core.models.feed_decoder covers this attention through `trace`:
        local-p with the dot or general score."""
        return self.kind == "local-p" and self.score.kind in ("dot", "general")

    @staticmethod
    def mask_bias(mask: Tensor, dtype: torch.dtype) -> Tensor:
        """mask: batch x S bool (True on real tokens) -> batch x S, 0 there and -inf on
        padding: added to the scores it masks like masked_fill, with one op per step."""
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, NEG_INF)

    @staticmethod
    def fast_step(query: Tensor, keys: Tensor, memory: Tensor, bias: Tensor) -> tuple[Tensor, Tensor]:
        """Global dot/general attention for ONE target step, the same math as `forward`
        with T = 1 and fewer ops (no reshapes, the mask precomputed as `bias`).

        query: batch x H, keys/memory: batch x S x H, bias: batch x S from `mask_bias`
        -> context batch x H, weights batch x S.
        """
        # as query x keys^T: 4-7x faster on a CPU than keys x query (batch x S x 1 with
        # a batch x H x 1 operand), the same sums
        scores = torch.bmm(query.unsqueeze(1), keys.transpose(1, 2)).squeeze(1) + bias
        weights = torch.softmax(scores, dim=-1)
        context = torch.bmm(weights.unsqueeze(1), memory).squeeze(1)  # batch x H
        return context, weights


class AdditiveAttention(nn.Module):
    """Bahdanau et al. (2015): e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j), a_i = softmax(e_i)."""

    def __init__(self, query_size: int, key_size: int, attn_size: int) -> None:
        super().__init__()
        self.w_a = matmul.Linear(query_size, attn_size, bias=False)
        self.u_a = matmul.Linear(key_size, attn_size, bias=False)
        self.v_a = matmul.Linear(attn_size, 1, bias=False)

    def prepare(self, memory: Tensor) -> Tensor:
        """memory: batch x S x K -> U_a h: batch x S x A, once per sentence."""
        return self.u_a(memory)

    def forward(
        self, query: Tensor, proj_keys: Tensor, memory: Tensor, mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        """query: batch x Q (s_{i-1}), proj_keys: batch x S x A, memory: batch x S x K,
        mask: batch x S bool -> context batch x K, weights batch x S."""
        energy = self.v_a(tanh(self.w_a(query)[:, None, :] + proj_keys)).squeeze(-1)
        weights = torch.softmax(energy.masked_fill(~mask, NEG_INF), dim=-1)  # batch x S
        context = torch.bmm(weights[:, None, :], memory).squeeze(1)  # batch x K
        return context, weights

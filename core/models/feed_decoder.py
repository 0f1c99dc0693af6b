"""Luong's teacher-forced input-feeding decoder as one autograd node.

Input feeding makes the decoder run step by step, and autograd records some 40 small
operations per step and replays their backward one by one: on a CPU, where each costs a
few microseconds, that bookkeeping was a large share of a training step. `feed_decoder`
runs the same forward with no graph (the same functions: `lstm_pointwise`, which
LuongModel's cells call too, `LuongAttention.fast_step` and core.models.dropout's mask,
so the same values, under autocast too), keeps what the backward needs, and walks the
steps back by hand. The weight gradients of all steps are then one matrix product each
instead of one per step.

It covers global attention with the dot or general score (`LuongAttention.has_fast_step`),
the bench model's, and local-p with those scores (`has_fused_local_p`, Luong et al.'s
best model; each step calls the attention's own forward, tracing what the backward
reads), with dropout drawn as `core.models.dropout` draws it on the CPU (the same random
numbers in the same order, so a run's dropout masks do not change). LuongModel falls back
to the step-by-step graph elsewhere (concat and location scores, local-m).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from core.models import matmul
from core.models.activations import tanh
from core.models.attention import LuongAttention
from core.models.dropout import draw_keep, keep_and_scale


def lstm_pointwise(gates: Tensor, c_prev: Tensor) -> tuple[Tensor, ...]:
    """nn.LSTMCell's math after the products, for LuongModel's input-feeding cells and
    for `feed_decoder`. gates: batch x 4H (i, f, g, o, biases added), c_prev: batch x H
    -> (h, c, sigmoid(gates), g, tanh(c)): batch x H each but sigmoid(gates), batch x 4H.
    One sigmoid over all four gates (the g quarter unused) beats three slices."""
    hidden = c_prev.size(1)
    sig = torch.sigmoid(gates)
    g = tanh(gates[:, 2 * hidden: 3 * hidden])
    c = torch.addcmul(sig[:, hidden: 2 * hidden] * c_prev, sig[:, :hidden], g)
    tc = tanh(c)
    return sig[:, 3 * hidden:] * tc, c, sig, g, tc


def _cell_backward(dh: Tensor, dc: Tensor, sig: Tensor, g: Tensor, tc: Tensor,
                   c_prev: Tensor, wide: torch.dtype) -> tuple[Tensor, Tensor]:
    """The backward of `lstm_pointwise` in dtype `wide`: dh, dc batch x H (the gradients reaching h
    and c) -> (d gates batch x 4H, d c_prev batch x H)."""
    hidden = tc.size(1)
    sig, g = sig.to(wide), g.to(wide)
    i, f, o = sig[:, :hidden], sig[:, hidden: 2 * hidden], sig[:, 3 * hidden:]
    dct = dh * o
    dct = dc + dct - dct * tc * tc  # d c: through h = o tanh(c), and from the next step
    dsig = sig - sig * sig  # sigmoid' = s (1 - s)
    dgates = torch.empty_like(sig)
    torch.mul(dct * g, dsig[:, :hidden], out=dgates[:, :hidden])
    torch.mul(dct * c_prev, dsig[:, hidden: 2 * hidden], out=dgates[:, hidden: 2 * hidden])
    torch.mul(dct * i, 1 - g * g, out=dgates[:, 2 * hidden: 3 * hidden])
    torch.mul(dh * tc, dsig[:, 3 * hidden:], out=dgates[:, 3 * hidden:])
    return dgates, dct * f


def _keep_scale(x: Tensor, keep: Tensor | None, scale: float) -> Tensor:
    """Dropout with a drawn mask (None: no dropout), as core.models.dropout applies it."""
    return x if keep is None else keep_and_scale(x, keep, scale)


@dataclass(frozen=True)
class LocalP:
    """Local-p attention (dot or general score) for `feed_decoder`: the model's
    LuongAttention, whose `forward` each step calls (the same forward as the step-by-
    step graph), src_lens batch and mask batch x S (True on real tokens)."""

    attention: LuongAttention
    src_lens: Tensor
    mask: Tensor


def decoder_forward(x_pre: Tensor, h0: Tensor, c0: Tensor, keys: Tensor, memory: Tensor,
                    bias: Tensor | None, w_c: Tensor, p: float, keep_for_backward: bool,
                    local: LocalP | None,
                    weights: tuple[Tensor, ...]) -> tuple[Tensor, Tensor, Tensor | None, list]:
    """The forward of `feed_decoder`, with no autograd graph. Arguments as `_FeedDecoder`
    takes them (weights: the layers' W, then the biases of layers 2..L, then with local
    W_p and v_p) -> (h~ batch x T x H, attention batch x T x S, local-p's positions
    batch x T or None, what `decoder_backward` reads: an entry per step, none without
    keep_for_backward)."""
    steps, layers, hidden = x_pre.size(0), h0.size(1), h0.size(2)
    ws, bs = weights[:layers], (None, *weights[layers: 2 * layers - 1])
    scale = 1.0 / (1.0 - p) if p > 0 else 1.0
    h, c = list(h0.unbind(1)), list(c0.unbind(1))
    feed = h0.new_zeros(h0.size(0), hidden)
    w_c_t = w_c.to(x_pre.dtype).t()  # cast once (x_pre is in autocast's dtype): 2H x H
    saved = []  # per step: what its backward reads
    outs, attns, positions = [], [], []
    for t in range(steps):
        x, layer_saved = feed, []
        for i in range(layers):
            keep = None
            if i > 0 and p > 0:  # Zaremba et al.'s dropout between layers
                keep = draw_keep(x, p)
                x = _keep_scale(x, keep, scale)
            inputs = torch.cat([x, h[i]], dim=1)
            gates = matmul.addmm(x_pre[t] if i == 0 else bs[i], inputs, ws[i])
            x, c_new, sig, g, tc = lstm_pointwise(gates, c[i])
            layer_saved.append((keep, inputs, sig, g, tc, c[i]))
            h[i], c[i] = x, c_new
        top = h[-1]
        trace = None
        if local is None:
            context, attn = LuongAttention.fast_step(top, keys, memory, bias)
        else:  # the step graph's own call (LuongModel._feed_attend), tracing its values
            trace = {}
            context, attn, pos = local.attention(top[:, None], keys, memory, local.src_lens,
                                                 t, mask=local.mask, trace=trace)
            context, attn = context[:, 0], attn[:, 0]
            positions.append(pos[:, 0])
        joined = torch.cat([context, top], dim=-1)
        h_att = tanh(matmul.mm(joined, w_c_t))
        keep = draw_keep(h_att, p) if p > 0 else None
        feed = _keep_scale(h_att, keep, scale)
        if keep_for_backward:
            saved.append((layer_saved, top, attn, joined, h_att, keep, trace))
        outs.append(feed)
        attns.append(attn)
    return torch.stack(outs, dim=1), torch.stack(attns, dim=1), \
        torch.stack(positions, dim=1) if positions else None, saved


def _local_p_backward(trace: dict, d_weights: Tensor, d_reported: Tensor | None,
                      reported: Tensor, src_pos: Tensor, lens: Tensor, sigma: float,
                      wide: torch.dtype) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """One step of local-p attention backwards, in dtype `wide` (LuongAttention.forward:
    context = (softmax(window scores) * gauss) memory, gauss = exp(-(s - p_t)^2 / 2
    sigma^2), p_t = S sigmoid(v_p tanh(W_p h_t)), reported = weights / their sum).
    d_weights batch x S (the gradient reaching the context's weights), d_reported batch x
    S or None, reported batch x S, src_pos S, lens batch -> (d scores batch x S, d pred
    batch (v_p's output), u batch x H, 1 - u^2 batch x H (tanh's derivative))."""
    soft, gauss = trace["soft"][:, 0].to(wide), trace["gauss"][:, 0].to(wide)
    if d_reported is not None:  # reported = weights / total (total clamped, never 0 here)
        r, dr = reported.to(wide), d_reported.to(wide)
        d_weights = d_weights + (dr - (dr * r).sum(1, keepdim=True)) / trace["total"][:, 0].to(wide)
    d_soft = d_weights * gauss
    d_scores = soft * (d_soft - (d_soft * soft).sum(1, keepdim=True))
    sig = trace["sig"][:, 0].to(wide)
    position = (lens * sig)[:, None]  # batch x 1
    # d gauss / d p_t = gauss (s - p_t) / sigma^2; round(p_t) (the window) has none
    d_position = (d_weights * soft * gauss * (src_pos - position)).sum(1) / sigma ** 2
    d_pred = d_position * lens * sig * (1 - sig)
    u = trace["u"][:, 0].to(wide)
    return d_scores, d_pred, u, 1 - u * u


def decoder_backward(saved: list, d_out: Tensor, d_attn: Tensor | None, keys: Tensor,
                     memory: Tensor, w_c: Tensor, weights: tuple[Tensor, ...], p: float,
                     need: tuple[bool, ...], dtypes: tuple[torch.dtype, ...],
                     local: LocalP | None = None) -> list[Tensor | None]:
    """The backward of `decoder_forward`: saved from it, d_out batch x T x H and d_attn
    batch x T x S (or None) the gradients reaching its outputs; need: which of the
    forward's arguments (as `_FeedDecoder.forward` takes them) want a gradient; dtypes:
    those of x_pre, h0, c0, keys, memory, w_c -> the gradients in forward's argument
    order (None where not needed). The steps are walked back one by one (`_Backward`'s
    output_step, then cell_step), then each weight's gradient is one product over all
    steps (input_gradients)."""
    walk = _Backward(saved, d_out, keys, memory, w_c, weights, p, local)
    d_feed = torch.zeros_like(walk.dh[0])
    for t in reversed(range(walk.steps)):
        layer_saved, _, attn, _, h_att, keep, trace = saved[t]
        d_h_att = _keep_scale(d_out[:, t].to(walk.wide) + d_feed, keep, walk.scale)
        walk.output_step(t, d_h_att, h_att, attn, trace,
                         None if d_attn is None else d_attn[:, t])
        d_feed = walk.cell_step(t, layer_saved)
    return walk.input_gradients(need, dtypes)


class _Backward:
    """`decoder_backward`'s walk back over the T steps of `decoder_forward`: its constants
    (`compute`: the products' dtype, bf16 under autocast; `wide`: everything else's), the
    running gradients of each layer's h and c (dh, dc: per layer batch x H in `wide`),
    and what each step stores for the products over all steps after the walk (d_gates
    per layer T x batch x 4H, d_pre and d_context T x batch x H, d_scores T x batch x S;
    with local-p also d_preds T x batch, d_z and us T x batch x H)."""

    def __init__(self, saved: list, d_out: Tensor, keys: Tensor, memory: Tensor, w_c: Tensor,
                 weights: tuple[Tensor, ...], p: float, local: LocalP | None) -> None:
        self.saved, self.weights, self.local = saved, weights, local
        self.scale = 1.0 / (1.0 - p) if p > 0 else 1.0
        self.layers = layers = len(saved[0][0])
        self.ws = ws = weights[:layers]
        self.steps, self.batch, self.hidden = steps, batch, hidden = \
            len(saved), keys.size(0), w_c.size(0)
        self.compute = compute = ws[0].dtype  # the products' dtype (bf16 under autocast)
        self.wide = wide = torch.promote_types(compute, torch.float32)  # everything else
        self.w_c_c, self.keys_c, self.memory_c = \
            w_c.to(compute), keys.to(compute), memory.to(compute)
        self.dh = [d_out.new_zeros(batch, hidden, dtype=wide) for _ in range(layers)]
        self.dc = [torch.zeros_like(x) for x in self.dh]
        # per step, stacked for the weight gradients after the loop
        self.d_gates = [ws[i].new_empty(steps, batch, ws[i].size(1)) for i in range(layers)]
        self.d_pre = self.w_c_c.new_empty(steps, batch, hidden)
        self.d_scores = keys.new_empty(steps, batch, keys.size(1), dtype=compute)
        self.d_context = keys.new_empty(steps, batch, hidden, dtype=compute)
        if local is not None:
            self.w_p, self.v_p = weights[2 * layers - 1:]
            self.w_p_c, self.v_p_w = self.w_p.to(compute), self.v_p.to(wide)[0]  # H x H, H
            self.src_pos = torch.arange(keys.size(1), device=keys.device, dtype=wide)
            self.lens = local.src_lens.to(wide)
            self.sigma = local.attention.window / 2.0
            self.d_preds = keys.new_empty(steps, batch, dtype=wide)
            self.d_z = keys.new_empty(steps, batch, hidden, dtype=compute)
            self.us = keys.new_empty(steps, batch, hidden, dtype=wide)

    def output_step(self, t: int, d_h_att: Tensor, h_att: Tensor, attn: Tensor,
                    trace: dict | None, d_attn_t: Tensor | None) -> None:
        """Step t's output layer (h~ = tanh(W_c [context; h])) and attention backwards:
        d_h_att batch x H (the gradient reaching h~), h_att batch x H (h~), attn batch x S
        (the step's attention), trace local-p's (None for global), d_attn_t batch x S or
        None (the gradient reaching the reported attention). Stores d_pre, d_context and
        d_scores (and local-p's) of step t; adds what reaches the top layer's h to dh."""
        hidden, wide = self.hidden, self.wide
        d_pre_t = d_h_att - d_h_att * h_att * h_att  # tanh' = 1 - tanh^2
        self.d_pre[t] = d_pre_t
        d_joined = matmul.mm(self.d_pre[t], self.w_c_c)  # batch x 2H
        self.d_context[t] = d_joined[:, :hidden]
        # batch x 1 x S as d_context x memory^T (fast_step's layout: faster on a CPU)
        d_weights = torch.bmm(self.d_context[t].unsqueeze(1),
                              self.memory_c.transpose(1, 2)).squeeze(1).to(wide)
        self.dh[-1] = self.dh[-1] + d_joined[:, hidden:]  # in `wide`: bf16 sums would round
        if trace is None:
            if d_attn_t is not None:
                d_weights = d_weights + d_attn_t
            a = attn.to(wide)
            self.d_scores[t] = a * (d_weights - (d_weights * a).sum(dim=1, keepdim=True))
        else:
            self.d_scores[t], self.d_preds[t], self.us[t], du_dz = _local_p_backward(
                trace, d_weights, d_attn_t, attn, self.src_pos, self.lens, self.sigma, wide)
            self.d_z[t] = self.d_preds[t][:, None] * self.v_p_w * du_dz  # tanh' = 1 - u^2
            self.dh[-1] = self.dh[-1] + matmul.mm(self.d_z[t], self.w_p_c)
        self.dh[-1] = self.dh[-1] + torch.bmm(self.d_scores[t].unsqueeze(1),
                                              self.keys_c).squeeze(1)

    def cell_step(self, t: int, layer_saved: list) -> Tensor:
        """Step t's LSTM layers backwards, top first (layer_saved: decoder_forward's per
        layer): stores each layer's d gates of step t, carries dh and dc to step t - 1
        and the gradient between layers through their dropout -> the gradient reaching
        the step's input feed (batch x H, in `wide`)."""
        dh, dc, hidden, wide = self.dh, self.dc, self.hidden, self.wide
        for i in reversed(range(self.layers)):
            keep_i, inputs, sig, g, tc, c_prev = layer_saved[i]
            d_g, dc[i] = _cell_backward(dh[i], dc[i], sig, g, tc, c_prev, wide)
            self.d_gates[i][t] = d_g
            d_inputs = matmul.mm(self.d_gates[i][t], self.ws[i].t())
            dh[i] = d_inputs[:, hidden:].to(wide)
            d_x = d_inputs[:, :hidden].to(wide)
            if i > 0:
                dh[i - 1] = dh[i - 1] + _keep_scale(d_x, keep_i, self.scale)
            else:
                d_feed = d_x
        return d_feed

    def input_gradients(self, need: tuple[bool, ...],
                        dtypes: tuple[torch.dtype, ...]) -> list[Tensor | None]:
        """After the walk: the products over all steps, for the inputs that need a
        gradient (a frozen weight's is left out: None), in forward's argument order."""
        saved, steps, batch, hidden = self.saved, self.steps, self.batch, self.hidden
        compute, ws, layers = self.compute, self.ws, self.layers
        grads: list[Tensor | None] = [None] * len(need)
        x_dt, h_dt, c_dt, k_dt, m_dt, wc_dt = dtypes
        grads[0] = self.d_gates[0].to(x_dt)
        grads[1] = torch.stack(self.dh, dim=1).to(h_dt)
        grads[2] = torch.stack(self.dc, dim=1).to(c_dt)
        tops = None
        if need[3] or self.local is not None:
            tops = torch.stack([s[1] for s in saved], dim=1).to(compute)  # batch x T x H
        if need[3]:
            grads[3] = torch.bmm(self.d_scores.permute(1, 2, 0), tops).to(k_dt)  # batch x S x H
        if need[4]:  # the context's weights: the attention, or local-p's before renormalising
            attns = torch.stack([s[2] if s[6] is None else s[6]["weights"][:, 0]
                                 for s in saved], dim=1).to(compute)  # batch x T x S
            grads[4] = torch.bmm(attns.transpose(1, 2), self.d_context.transpose(0, 1)).to(m_dt)
        if need[6]:
            joined = torch.stack([s[3] for s in saved]).reshape(steps * batch, -1)
            grads[6] = matmul.mm(self.d_pre.reshape(steps * batch, hidden).t(),
                                 joined.to(compute)).to(wc_dt)
        first = _WEIGHTS  # forward's position of the first weight
        for i in range(layers):
            if need[first + i]:
                inputs = torch.stack([s[0][i][1] for s in saved])  # T x batch x in
                grads[first + i] = matmul.mm(
                    inputs.reshape(steps * batch, -1).t().to(compute),
                    self.d_gates[i].reshape(steps * batch, -1)).to(ws[i].dtype)
            if i > 0 and need[first + layers + i - 1]:
                b = self.weights[layers + i - 1]
                grads[first + layers + i - 1] = self.d_gates[i].sum(
                    dim=(0, 1), dtype=self.wide).to(b.dtype)
        if self.local is not None:
            self._local_p_gradients(grads, need, first + 2 * layers - 1, tops)
        return [g if needed else None for g, needed in zip(grads, need, strict=True)]

    def _local_p_gradients(self, grads: list, need: tuple[bool, ...], at: int,
                           tops: Tensor) -> None:
        """Local-p's W_p and v_p gradients into grads[at] and grads[at + 1], where needed
        (tops batch x T x H: the top layer's h of each step)."""
        steps, batch, hidden = self.steps, self.batch, self.hidden
        if need[at]:  # z = h W_p^T: d W_p = d z^T h over all steps
            grads[at] = matmul.mm(self.d_z.reshape(steps * batch, hidden).t(),
                                  tops.transpose(0, 1).reshape(steps * batch, hidden)
                                  ).to(self.w_p.dtype)
        if need[at + 1]:  # pred = u v_p^T: d v_p = d pred^T u
            grads[at + 1] = (self.d_preds.reshape(1, -1) @ self.us.reshape(steps * batch, hidden)
                             ).to(self.v_p.dtype)


def input_dtypes(x_pre: Tensor, h0: Tensor, c0: Tensor, keys: Tensor, memory: Tensor,
                 w_c: Tensor) -> tuple[torch.dtype, ...]:
    """The dtypes `decoder_backward` returns its gradients in, those of its inputs
    (x_pre T x batch x 4H, h0 and c0 batch x L x H, keys and memory batch x S x H, w_c
    H x 2H): a tuple of six."""
    return x_pre.dtype, h0.dtype, c0.dtype, keys.dtype, memory.dtype, w_c.dtype


#: forward's argument position of the first weight (after x_pre, h0, c0, keys, memory,
#: bias, w_c, p, keep_for_backward, local)
_WEIGHTS = 10


class _FeedDecoder(torch.autograd.Function):
    """See `feed_decoder`; `keep_for_backward` says whether a backward may follow (else
    the steps' values are not kept); `local` a LocalP or None (global dot/general, with
    `bias`); inputs after it are the layers' weights, then the biases of layers 2..L
    (layer 1's is in x_pre), then with local W_p and v_p."""

    @staticmethod
    def forward(ctx, x_pre, h0, c0, keys, memory, bias, w_c, p, keep_for_backward, local,
                *weights):
        out, attn, positions, saved = decoder_forward(x_pre, h0, c0, keys, memory, bias, w_c,
                                                      p, keep_for_backward, local, weights)
        ctx.saved, ctx.p, ctx.local = saved, p, local
        ctx.dtypes = input_dtypes(x_pre, h0, c0, keys, memory, w_c)
        ctx.save_for_backward(keys, memory, w_c, *weights)
        if positions is None:
            return out, attn
        ctx.mark_non_differentiable(positions)
        return out, attn, positions

    @staticmethod
    @once_differentiable
    def backward(ctx, d_out, d_attn, d_positions=None):
        keys, memory, w_c, *weights = ctx.saved_tensors
        saved = ctx.saved
        ctx.saved = None  # a second backward would find nothing: free the steps now
        if saved is None:
            raise RuntimeError("the input-feeding decoder's backward ran twice over one "
                               "forward; run the forward again")
        return tuple(decoder_backward(saved, d_out, d_attn, keys, memory, w_c,
                                      tuple(weights), ctx.p, ctx.needs_input_grad,
                                      ctx.dtypes, ctx.local))


def node_weights(weights: list[tuple[Tensor, Tensor]], local: LocalP | None) -> list[Tensor]:
    """weights: per layer (W, b) as `_feed_weights` gives them -> the node's weight
    arguments in order: the layers' W ((in + H) x 4H), the biases of layers 2..L (4H),
    then with local W_p (H x H) and v_p (1 x H)."""
    extra = [] if local is None else [local.attention.w_p.weight, local.attention.v_p.weight]
    return [w for w, _ in weights] + [b for _, b in weights[1:]] + extra


def feed_decoder(x_pre: Tensor, h0: Tensor, c0: Tensor, keys: Tensor, memory: Tensor,
                 bias: Tensor | None, w_c: Tensor, weights: list[tuple[Tensor, Tensor]],
                 p: float, local: LocalP | None = None) -> tuple[Tensor, Tensor, Tensor | None]:
    """The teacher-forced input-feeding decoder of LuongModel with global or local-p
    attention (dot or general score), as one autograd node.

    x_pre: T x batch x 4H (layer 1's embedding gates and both biases, `_feed_inputs`);
    h0, c0: batch x L x H; keys, memory: batch x S x H; bias: batch x S (`mask_bias`;
    global) or None (local); w_c: H x 2H; weights: per layer (W (in + H) x 4H, b 4H) as
    `_feed_weights` gives them (layer 1's b unused); p: the dropout probability, 0
    outside training; local: local-p's LocalP, None for global attention -> (h~ batch x
    T x H after dropout, attention batch x T x S, local-p's positions batch x T or
    None)."""
    flat = node_weights(weights, local)
    inputs = (x_pre, h0, c0, keys, memory, w_c, *flat)
    # without a backward to come (no_grad, or every input frozen) the steps' values are
    # not kept: the graph would not have kept them either
    keep = torch.is_grad_enabled() and any(x.requires_grad for x in inputs)
    out = _FeedDecoder.apply(x_pre, h0, c0, keys, memory, bias, w_c, p, keep, local, *flat)
    return (*out, None) if local is None else out

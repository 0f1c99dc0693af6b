"""Luong's teacher-forced input-feeding decoder as one autograd node.

Input feeding makes the decoder run step by step, and autograd records some 40 small
operations per step and replays their backward one by one: on a CPU, where each costs a
few microseconds, that bookkeeping was a large share of a training step. `feed_decoder`
runs the same forward with no graph (the same functions: `lstm_pointwise`, which
LuongModel's cells call too, `LuongAttention.fast_step` and core.models.dropout's mask,
so the same values, under autocast too), keeps what the backward needs, and walks the
steps back by hand. The weight gradients of all steps are then one matrix product each
instead of one per step.

It covers the case training spends its time in: global attention with the dot or
general score (`LuongAttention.has_fast_step`), dropout drawn as `core.models.dropout`
draws it on the CPU (the same random numbers in the same order, so a run's dropout masks
do not change). LuongModel falls back to the step-by-step graph elsewhere.
"""
from __future__ import annotations

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from core.models import matmul
from core.models.attention import LuongAttention
from core.models.dropout import draw_keep, keep_and_scale


def lstm_pointwise(gates: Tensor, c_prev: Tensor) -> tuple[Tensor, ...]:
    """nn.LSTMCell's math after the products, for LuongModel's input-feeding cells and
    for `feed_decoder`. gates: batch x 4H (i, f, g, o, biases added), c_prev: batch x H
    -> (h, c, sigmoid(gates), g, tanh(c)): batch x H each but sigmoid(gates), batch x 4H.
    One sigmoid over all four gates (the g quarter unused) beats three slices."""
    hidden = c_prev.size(1)
    sig = torch.sigmoid(gates)
    g = torch.tanh(gates[:, 2 * hidden: 3 * hidden])
    c = torch.addcmul(sig[:, hidden: 2 * hidden] * c_prev, sig[:, :hidden], g)
    tc = torch.tanh(c)
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


def decoder_forward(x_pre: Tensor, h0: Tensor, c0: Tensor, keys: Tensor, memory: Tensor,
                    bias: Tensor, w_c: Tensor, p: float, keep_for_backward: bool,
                    weights: tuple[Tensor, ...]) -> tuple[Tensor, Tensor, list]:
    """The forward of `feed_decoder`, with no autograd graph. Arguments as `_FeedDecoder`
    takes them (weights: the layers' W, then the biases of layers 2..L) -> (h~ batch x T
    x H, attention batch x T x S, what `decoder_backward` reads: an entry per step, none
    without keep_for_backward)."""
    steps, layers, hidden = x_pre.size(0), h0.size(1), h0.size(2)
    ws, bs = weights[:layers], (None, *weights[layers:])
    scale = 1.0 / (1.0 - p) if p > 0 else 1.0
    h, c = list(h0.unbind(1)), list(c0.unbind(1))
    feed = h0.new_zeros(h0.size(0), hidden)
    w_c_t = w_c.to(x_pre.dtype).t()  # cast once (x_pre is in autocast's dtype): 2H x H
    saved = []  # per step: what its backward reads
    outs, attns = [], []
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
        context, attn = LuongAttention.fast_step(top, keys, memory, bias)
        joined = torch.cat([context, top], dim=-1)
        h_att = torch.tanh(matmul.mm(joined, w_c_t))
        keep = draw_keep(h_att, p) if p > 0 else None
        feed = _keep_scale(h_att, keep, scale)
        if keep_for_backward:
            saved.append((layer_saved, top, attn, joined, h_att, keep))
        outs.append(feed)
        attns.append(attn)
    return torch.stack(outs, dim=1), torch.stack(attns, dim=1), saved


def decoder_backward(saved: list, d_out: Tensor, d_attn: Tensor | None, keys: Tensor,
                     memory: Tensor, w_c: Tensor, weights: tuple[Tensor, ...], p: float,
                     need: tuple[bool, ...], dtypes: tuple[torch.dtype, ...]) -> list[Tensor | None]:
    """The backward of `decoder_forward`: saved from it, d_out batch x T x H and d_attn
    batch x T x S (or None) the gradients reaching its outputs; need: which of the
    forward's arguments (as `_FeedDecoder.forward` takes them) want a gradient; dtypes:
    those of x_pre, h0, c0, keys, memory, w_c -> the gradients in forward's argument
    order (None where not needed)."""
    scale = 1.0 / (1.0 - p) if p > 0 else 1.0
    layers = len(saved[0][0])
    ws = weights[:layers]
    steps, batch, hidden = len(saved), keys.size(0), w_c.size(0)
    compute = ws[0].dtype  # the products' dtype (bf16 under autocast)
    wide = torch.promote_types(compute, torch.float32)  # everything else
    w_c_c, keys_c, memory_c = w_c.to(compute), keys.to(compute), memory.to(compute)
    dh = [d_out.new_zeros(batch, hidden, dtype=wide) for _ in range(layers)]
    dc = [torch.zeros_like(x) for x in dh]
    d_feed = torch.zeros_like(dh[0])
    # per step, stacked for the weight gradients after the loop
    d_gates = [ws[i].new_empty(steps, batch, ws[i].size(1)) for i in range(layers)]
    d_pre = w_c_c.new_empty(steps, batch, hidden)
    d_scores = keys.new_empty(steps, batch, keys.size(1), dtype=compute)
    d_context = keys.new_empty(steps, batch, hidden, dtype=compute)
    for t in reversed(range(steps)):
        layer_saved, top, attn, joined, h_att, keep = saved[t]
        d_h_att = _keep_scale(d_out[:, t].to(wide) + d_feed, keep, scale)
        d_pre_t = d_h_att - d_h_att * h_att * h_att  # tanh' = 1 - tanh^2
        d_pre[t] = d_pre_t
        d_joined = matmul.mm(d_pre[t], w_c_c)  # batch x 2H
        d_context[t] = d_joined[:, :hidden]
        d_weights = torch.bmm(memory_c, d_context[t].unsqueeze(2)).squeeze(2).to(wide)
        if d_attn is not None:
            d_weights = d_weights + d_attn[:, t]
        a = attn.to(wide)
        d_scores[t] = a * (d_weights - (d_weights * a).sum(dim=1, keepdim=True))
        d_top = torch.bmm(d_scores[t].unsqueeze(1), keys_c).squeeze(1)
        dh[-1] = dh[-1] + d_joined[:, hidden:] + d_top
        for i in reversed(range(layers)):
            keep_i, inputs, sig, g, tc, c_prev = layer_saved[i]
            d_g, dc[i] = _cell_backward(dh[i], dc[i], sig, g, tc, c_prev, wide)
            d_gates[i][t] = d_g
            d_inputs = matmul.mm(d_gates[i][t], ws[i].t())
            dh[i] = d_inputs[:, hidden:].to(wide)
            d_x = d_inputs[:, :hidden].to(wide)
            if i > 0:
                dh[i - 1] = dh[i - 1] + _keep_scale(d_x, keep_i, scale)
            else:
                d_feed = d_x
    # the products over all steps, for the inputs that need a gradient (a frozen
    # weight's is left out: None); the indices are forward's argument positions
    grads: list[Tensor | None] = [None] * len(need)
    x_dt, h_dt, c_dt, k_dt, m_dt, wc_dt = dtypes
    grads[0] = d_gates[0].to(x_dt)
    grads[1], grads[2] = torch.stack(dh, dim=1).to(h_dt), torch.stack(dc, dim=1).to(c_dt)
    if need[3]:
        tops = torch.stack([s[1] for s in saved], dim=1).to(compute)  # batch x T x H
        grads[3] = torch.bmm(d_scores.permute(1, 2, 0), tops).to(k_dt)  # batch x S x H
    if need[4]:
        attns = torch.stack([s[2] for s in saved], dim=1).to(compute)  # batch x T x S
        grads[4] = torch.bmm(attns.transpose(1, 2), d_context.transpose(0, 1)).to(m_dt)
    if need[6]:
        joined = torch.stack([s[3] for s in saved]).reshape(steps * batch, -1)
        grads[6] = matmul.mm(d_pre.reshape(steps * batch, hidden).t(),
                            joined.to(compute)).to(wc_dt)
    for i in range(layers):
        if need[9 + i]:
            inputs = torch.stack([s[0][i][1] for s in saved])  # T x batch x in
            grads[9 + i] = matmul.mm(inputs.reshape(steps * batch, -1).t().to(compute),
                                    d_gates[i].reshape(steps * batch, -1)).to(ws[i].dtype)
        if i > 0 and need[9 + layers + i - 1]:
            b = weights[layers + i - 1]
            grads[9 + layers + i - 1] = d_gates[i].sum(dim=(0, 1), dtype=wide).to(b.dtype)
    return [g if needed else None for g, needed in zip(grads, need, strict=True)]


def input_dtypes(x_pre: Tensor, h0: Tensor, c0: Tensor, keys: Tensor, memory: Tensor,
                 w_c: Tensor) -> tuple[torch.dtype, ...]:
    """The dtypes `decoder_backward` returns its gradients in, those of its inputs
    (x_pre T x batch x 4H, h0 and c0 batch x L x H, keys and memory batch x S x H, w_c
    H x 2H): a tuple of six."""
    return x_pre.dtype, h0.dtype, c0.dtype, keys.dtype, memory.dtype, w_c.dtype


class _FeedDecoder(torch.autograd.Function):
    """See `feed_decoder`; `keep_for_backward` says whether a backward may follow (else
    the steps' values are not kept); inputs after it are the layers' weights, then the
    biases of layers 2..L (layer 1's is in x_pre)."""

    @staticmethod
    def forward(ctx, x_pre, h0, c0, keys, memory, bias, w_c, p, keep_for_backward, *weights):
        out, attn, saved = decoder_forward(x_pre, h0, c0, keys, memory, bias, w_c, p,
                                           keep_for_backward, weights)
        ctx.saved, ctx.p = saved, p
        ctx.dtypes = input_dtypes(x_pre, h0, c0, keys, memory, w_c)
        ctx.save_for_backward(keys, memory, w_c, *weights)
        return out, attn

    @staticmethod
    @once_differentiable
    def backward(ctx, d_out, d_attn):
        keys, memory, w_c, *weights = ctx.saved_tensors
        saved = ctx.saved
        ctx.saved = None  # a second backward would find nothing: free the steps now
        if saved is None:
            raise RuntimeError("the input-feeding decoder's backward ran twice over one "
                               "forward; run the forward again")
        return tuple(decoder_backward(saved, d_out, d_attn, keys, memory, w_c,
                                      tuple(weights), ctx.p, ctx.needs_input_grad,
                                      ctx.dtypes))


def feed_decoder(x_pre: Tensor, h0: Tensor, c0: Tensor, keys: Tensor, memory: Tensor,
                 bias: Tensor, w_c: Tensor, weights: list[tuple[Tensor, Tensor]],
                 p: float) -> tuple[Tensor, Tensor]:
    """The teacher-forced input-feeding decoder of LuongModel with global dot/general
    attention, as one autograd node.

    x_pre: T x batch x 4H (layer 1's embedding gates and both biases, `_feed_inputs`);
    h0, c0: batch x L x H; keys, memory: batch x S x H; bias: batch x S (`mask_bias`);
    w_c: H x 2H; weights: per layer (W (in + H) x 4H, b 4H) as `_feed_weights` gives
    them (layer 1's b unused); p: the dropout probability, 0 outside training ->
    (h~ batch x T x H after dropout, attention batch x T x S)."""
    ws = [w for w, _ in weights]
    bs = [b for _, b in weights[1:]]
    inputs = (x_pre, h0, c0, keys, memory, w_c, *ws, *bs)
    # without a backward to come (no_grad, or every input frozen) the steps' values are
    # not kept: the graph would not have kept them either
    keep = torch.is_grad_enabled() and any(x.requires_grad for x in inputs)
    return _FeedDecoder.apply(x_pre, h0, c0, keys, memory, bias, w_c, p, keep, *ws, *bs)

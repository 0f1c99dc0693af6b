"""A Luong model with input feeding and a batch for it, and the outputs and gradients of
one forward/backward through the whole model (forward_backward) or through its decoder
alone (decoder_only): what the fused decoder (core/models/feed_decoder.py) and its shape
buckets (core/models/feed_graphs.py) are compared on against the step-by-step graph."""
from __future__ import annotations

import torch

from core.models.base import BOS, PAD, length_mask
from core.models.registry import build_model, variant_config

VOCAB = 40


def model_and_batch(name: str, dtype=torch.float64, hidden=16, batch=5, **over):
    """Variant `name` (input feeding unless `over` says otherwise; embeddings hidden/2)
    in `dtype`, training mode, weights from seed 0; -> (model, src batch x 11, lens
    batch (the first 11), tgt batch x 7 with BOS first)."""
    torch.manual_seed(0)
    over.setdefault("input_feeding", True)  # the dot and -rev variants' papers had none
    cfg = variant_config(name, emb_size=hidden // 2, hidden_size=hidden, max_src_len=14,
                         **over)
    model = build_model(cfg, VOCAB, VOCAB).to(dtype).train()
    g = torch.Generator().manual_seed(1)
    lens = torch.randint(2, 12, (batch,), generator=g)
    lens[0] = 11
    src = torch.randint(4, VOCAB, (batch, 11), generator=g).masked_fill(~length_mask(lens), PAD)
    tgt = torch.randint(4, VOCAB, (batch, 7), generator=g)
    tgt[:, 0] = BOS
    return model, src, lens, tgt


def forward_backward(model, src, lens, tgt, fused: bool, amp: bool = False,
                     attention_loss: bool = True, dtype=torch.float64):
    """Scores, attention and every parameter's gradient of a loss that weighs the scores
    (and the attention) by fixed random numbers; dropout drawn from seed 7."""
    model.fuse_decoder = fused
    model.zero_grad(set_to_none=True)
    torch.manual_seed(7)
    with torch.autocast(src.device.type, dtype=torch.bfloat16, enabled=amp):
        out = model(src, lens, tgt)
    g = torch.Generator().manual_seed(5)
    device = out.scores.device
    loss = (out.scores.to(dtype)
            * torch.randn(out.scores.shape, generator=g, dtype=dtype).to(device)).sum()
    if attention_loss:  # as guided alignment does: gradients reach the attention weights
        loss = loss + (out.attention.to(dtype) * torch.randn(
            out.attention.shape, generator=g, dtype=dtype).to(device)).sum()
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    positions = None if out.positions is None else out.positions.detach()
    return out.scores.detach(), out.attention.detach(), grads, positions


def decoder_only(model, tgt, fused: bool, amp: bool, seed: int = 3):
    """The decoder alone (`_feed_forward`) over a random encoding, as the encoder gives it
    (bf16 memory under autocast): no LSTM primitive, which oneDNN trains in bf16 only on
    CPUs with native bf16, so this runs on every CPU. -> (h~, attention, gradients of
    the decoder's weights and of the encoding)."""
    model.fuse_decoder = fused
    model.zero_grad(set_to_none=True)
    g = torch.Generator().manual_seed(seed)
    batch, hidden = tgt.size(0), model.hidden_size
    lens = torch.randint(3, 10, (batch,), generator=g)
    lens[0] = 9
    leaves = {"memory": torch.randn(batch, 9, hidden, generator=g),
              "h0": torch.randn(batch, model.layers, hidden, generator=g) * 0.5,
              "c0": torch.randn(batch, model.layers, hidden, generator=g) * 0.5}
    for leaf in leaves.values():
        leaf.requires_grad_(True)
    torch.manual_seed(7)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
        memory = leaves["memory"].to(torch.bfloat16 if amp else torch.float32)
        enc = {"memory": memory, "keys": model.attention.prepare(memory), "src_lens": lens,
               "h0": leaves["h0"], "c0": leaves["c0"]}
        h_tilde, attn, _ = model._feed_forward(tgt, enc)
    loss = (h_tilde.float() * torch.randn(h_tilde.shape, generator=g)).sum() \
        + (attn.float() * torch.randn(attn.shape, generator=g)).sum()
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    grads.update({n: leaf.grad.clone() for n, leaf in leaves.items()})
    return h_tilde.detach(), attn.detach(), grads

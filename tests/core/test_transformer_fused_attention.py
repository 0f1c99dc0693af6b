"""The Transformer's self-attention through torch's fused kernel (a GPU in bf16 only):
which attentions take it, and that it gives the explicit attention's outputs and
gradients.

The fused kernel also runs on the CPU and in fp32, so the CPU tests force the fused path
there (a patched `fused_attention_applies` that ignores device and precision) and compare
the two paths."""
from __future__ import annotations

import pytest
import torch

from core.config import ModelConfig
from core.infer.search import greedy
from core.models import context_transformer, transformer
from core.models.transformer import MultiHeadAttention, fused_attention_applies

CUDA, CPU, BF16 = torch.device("cuda"), torch.device("cpu"), torch.bfloat16


@pytest.mark.parametrize("queries,keys,masked,causal,expected", [
    (7, 9, True, False, True),  # encoder self-attention over padded keys
    (7, 7, False, True, True),  # decoder self-attention in training
    (1, 9, False, True, True),  # one incremental step over its cache
    (3, 9, False, True, False),  # several new positions over a cache: a mask the flag lacks
    (7, 7, True, True, False),  # the kernel takes a key mask or the causal flag, not both
])
def test_which_attentions_take_the_kernel(queries, keys, masked, causal, expected):
    assert fused_attention_applies(CUDA, BF16, queries, keys, masked, causal) is expected
    assert fused_attention_applies(CUDA, torch.float16, queries, keys, masked, causal) is expected
    assert fused_attention_applies(CUDA, torch.float32, queries, keys, masked, causal) is False
    assert fused_attention_applies(CPU, BF16, queries, keys, masked, causal) is False


def force_fused(monkeypatch) -> list[bool]:
    """Lets the fused kernel run on the CPU and in fp32, under the same shape rules as on a
    GPU in bf16; returns the list of what each attention since then took (True: fused)."""
    taken = []

    def applies(device, dtype, queries, keys, masked, causal):
        ok = fused_attention_applies(CUDA, BF16, queries, keys, masked, causal)
        taken.append(ok)
        return ok

    monkeypatch.setattr(transformer, "fused_attention_applies", applies)
    return taken


def test_one_attention_matches_the_explicit_one(monkeypatch):
    taken = force_fused(monkeypatch)
    torch.manual_seed(0)
    attn = MultiHeadAttention(16, 4, dropout=0.0).eval()
    x, past = torch.randn(3, 5, 16), torch.randn(3, 4, 16)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], dtype=torch.bool)
    cases = [(x, x, mask, False), (x, x, None, True),
             (x[:, :1], torch.cat([past, x[:, :1]], 1), None, True)]
    for query, key, key_mask, causal in cases:
        explicit, weights = attn(query, key, key_mask, causal)
        fused, none = attn(query, key, key_mask, causal, need_weights=False)
        assert weights is not None and none is None
        assert torch.allclose(fused, explicit, atol=1e-6), (query.shape, causal)
    assert taken == [True, True, True]


def tiny(family: str) -> torch.nn.Module:
    torch.manual_seed(0)
    cfg = ModelConfig(family=family, d_model=32, ff_size=64, heads=4, enc_layers=2,
                      dec_layers=2, ctx_layers=1, dropout=0.0)
    mod = context_transformer if family == "context_transformer" else transformer
    return mod.build(cfg, 20, 22)


def inputs() -> dict[str, torch.Tensor]:
    return {"src": torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0], [11, 0, 0, 0]]),
            "src_lens": torch.tensor([4, 2, 1]),
            "tgt_in": torch.tensor([[2, 5, 6, 7, 8], [2, 8, 9, 0, 0], [2, 4, 4, 4, 0]]),
            "ctx": torch.tensor([[12, 13, 14], [4, 0, 0], [15, 16, 0]]),
            "ctx_lens": torch.tensor([3, 1, 2])}


def loss_and_grads(model) -> tuple[torch.Tensor, list[torch.Tensor]]:
    model.zero_grad(set_to_none=True)
    out = model(**inputs())
    loss = out.log_probs.logsumexp(-1).sum() - out.log_probs[..., 5].sum()
    loss.backward()
    return out.log_probs.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]


@pytest.mark.parametrize("family", ["transformer", "concat", "context_transformer"])
def test_training_pass_and_search_match_the_explicit_attention(family, monkeypatch):
    model = tiny(family).train()  # dropout 0: the two paths draw no random numbers
    explicit_out, explicit_grads = loss_and_grads(model)
    b = inputs()
    enc_args = {"ctx": b["ctx"], "ctx_lens": b["ctx_lens"]}
    model.eval()
    explicit_search = greedy(model, b["src"], b["src_lens"], max_len_abs=6, **enc_args)

    taken = force_fused(monkeypatch)
    model.train()
    fused_out, fused_grads = loss_and_grads(model)
    assert taken and all(taken)  # every self-attention took the kernel
    assert torch.allclose(fused_out, explicit_out, atol=1e-5)
    assert len(fused_grads) == len(explicit_grads)
    for f, e in zip(fused_grads, explicit_grads, strict=True):
        assert torch.allclose(f, e, atol=1e-5)
    model.eval()
    fused_search = greedy(model, b["src"], b["src_lens"], max_len_abs=6, **enc_args)
    for f, e in zip(fused_search, explicit_search, strict=True):
        assert f.tokens == e.tokens and len(f.tokens) > 0
        assert f.score == pytest.approx(e.score, abs=1e-5)


def test_dropout_on_the_fused_weights_keeps_the_mean(monkeypatch):
    """In training the kernel drops weights with the layer's probability and rescales the
    rest: over many draws the output's mean is the output without dropout."""
    force_fused(monkeypatch)
    torch.manual_seed(0)
    attn = MultiHeadAttention(16, 2, dropout=0.3)
    x = torch.randn(2, 6, 16)
    with torch.no_grad():
        attn.eval()
        clean, _ = attn(x, x, None, True, need_weights=False)
        attn.train()
        draws = torch.stack([attn(x, x, None, True, need_weights=False)[0] for _ in range(4000)])
    assert not torch.allclose(draws[0], clean, atol=1e-3)  # dropout did happen
    assert torch.allclose(draws.mean(0), clean, atol=0.03)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (CI has none)")
def test_on_a_gpu_the_fused_attention_matches_the_explicit_one(monkeypatch):
    model = tiny("transformer").cuda().train()

    def on(dev: torch.device):
        model.zero_grad(set_to_none=True)
        b = {k: v.to(dev) for k, v in inputs().items() if not k.startswith("ctx")}
        out = model(**b)
        out.log_probs[..., 5].sum().backward()
        return out.log_probs.detach().cpu(), [p.grad.cpu() for p in model.parameters()
                                              if p.grad is not None]

    monkeypatch.setattr(transformer, "fused_attention_applies",  # in fp32 too
                        lambda device, dtype, *shape: fused_attention_applies(device, BF16, *shape))
    fused_out, fused_grads = on(CUDA)
    monkeypatch.setattr(transformer, "fused_attention_applies", lambda *a: False)
    explicit_out, explicit_grads = on(CUDA)
    assert torch.allclose(fused_out, explicit_out, atol=1e-4)
    for f, e in zip(fused_grads, explicit_grads, strict=True):
        assert torch.allclose(f, e, atol=1e-4)

"""The input-feeding decoder as one autograd node (core/models/feed_decoder.py) against
the step-by-step graph it replaces: the same outputs, the same gradients, the same
dropout masks; under bf16 autocast gradients no further from the fp32 ones."""
from __future__ import annotations

import pytest
import torch

import core.models.luong as luong
from core.models.registry import build_model, variant_config
from tests.core.decoder_gradients import VOCAB, decoder_only, forward_backward, model_and_batch


@pytest.fixture
def calls(count_calls):
    """How many times LuongModel ran the fused decoder."""
    return count_calls(luong, "feed_decoder")


@pytest.mark.parametrize("name, layers, dropout, attention_loss", [
    ("luong-global-general", 1, 0.0, True),
    ("luong-global-general", 2, 0.3, True),
    ("luong-global-general-rev", 2, 0.3, False),
    ("luong-global-dot", 3, 0.3, True),
    ("luong-local-p-general", 2, 0.3, True),
    ("luong-local-p-general", 1, 0.0, False),
    ("luong-local-p-dot", 3, 0.3, True),
])
def test_fused_decoder_matches_the_step_graph(calls, name, layers, dropout, attention_loss):
    """float64: outputs identical (the same dropout masks; local-p's positions too),
    gradients equal to rounding, local-p's W_p and v_p included. The source is up to 11
    words, the window D = 3 here, so local-p's windows cut real words off."""
    over = {"window": 3} if "local-p" in name else {}
    model, src, lens, tgt = model_and_batch(name, layers=layers, dropout=dropout, **over)
    graph = forward_backward(model, src, lens, tgt, False, attention_loss=attention_loss)
    assert calls == []
    fused = forward_backward(model, src, lens, tgt, True, attention_loss=attention_loss)
    assert calls == [1]
    assert torch.equal(graph[0], fused[0]) and torch.equal(graph[1], fused[1])
    if "local-p" in name:
        assert torch.equal(graph[3], fused[3])
        assert (graph[1] == 0).float().mean() > 0.2  # the windows leave words out
    else:
        assert graph[3] is None and fused[3] is None
    assert graph[2].keys() == fused[2].keys()
    assert len(graph[2]) == len(list(model.parameters()))  # every weight has a gradient
    for name_, g in graph[2].items():
        scale = g.abs().max()
        assert scale > 0, name_
        assert (fused[2][name_] - g).abs().max() <= 1e-10 * scale, name_


@pytest.mark.parametrize("name, params", [("luong-global-general", 14),
                                          ("luong-local-p-general", 16)])
def test_fused_decoder_bf16_gradients_no_further_from_fp32(calls, name, params):
    """Under bf16 autocast the forward is the same to the bit; the hand-written backward
    computes its elementwise steps in fp32, so every gradient (the decoder's weights, the
    encoder's memory and final states) is at least as close to the fp32 gradient as the
    graph's (measured: 0.4-0.8 % against 0.6-1.0 % relative error at these sizes)."""
    model, _, _, tgt = model_and_batch(name, dtype=torch.float32,
                                       hidden=64, batch=16, layers=2, dropout=0.3)
    reference = decoder_only(model, tgt, False, amp=False)
    graph = decoder_only(model, tgt, False, amp=True)
    fused = decoder_only(model, tgt, True, amp=True)
    assert calls == [1]
    assert fused[0].dtype == torch.bfloat16
    assert torch.equal(graph[0], fused[0]) and torch.equal(graph[1], fused[1])

    def error(grads, name):
        return ((grads[name] - reference[2][name]).norm() / reference[2][name].norm()).item()

    # 2 cells x 4, W_c, W_a, the target embedding, 3 leaves; local-p's W_p and v_p
    assert len(reference[2]) == params
    for name in reference[2]:
        assert error(fused[2], name) <= 1.05 * error(graph[2], name), name
        assert error(fused[2], name) < 0.03, name


def test_other_attentions_keep_the_step_graph(calls):
    """The concat score and local-m have no fused decoder: the model records every step."""
    for name in ("luong-global-concat", "luong-local-p-concat", "luong-local-m-general"):
        model, src, lens, tgt = model_and_batch(name, layers=2, dropout=0.3)
        scores = model(src, lens, tgt).scores
        assert scores.grad_fn is not None
    assert calls == []


def test_a_second_backward_over_one_forward_is_refused():
    model, src, lens, tgt = model_and_batch("luong-global-general", layers=2, dropout=0.3)
    loss = model(src, lens, tgt).scores.sum()
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="twice"):
        loss.backward()


def test_steps_are_kept_only_when_a_backward_can_follow(monkeypatch):
    """Under no_grad (dev perplexity) and over a frozen model (an alignment head's stage
    2) the node keeps nothing, as the graph would; training keeps every step."""
    from core.models import feed_decoder as fd

    kept = []
    forward = fd._FeedDecoder.forward

    def spy(ctx, *args):
        out = forward(ctx, *args)
        kept.append(len(ctx.saved))
        return out

    monkeypatch.setattr(fd._FeedDecoder, "forward", staticmethod(spy))
    model, src, lens, tgt = model_and_batch("luong-global-general", layers=2, dropout=0.3)
    with torch.no_grad():
        model(src, lens, tgt)
    model.requires_grad_(False)
    model(src, lens, tgt)
    model.requires_grad_(True)
    model(src, lens, tgt)
    assert kept == [0, 0, tgt.size(1)]


def test_frozen_weights_get_no_gradient_and_the_others_the_graphs(calls):
    """Cells and encoder frozen (as under an alignment head): the rest's gradients are the
    graph's, the frozen weights get none."""
    model, src, lens, tgt = model_and_batch("luong-global-general", layers=2, dropout=0.3)
    frozen = [p for n, p in model.named_parameters() if n.startswith(("cells.", "encoder."))]
    for p in frozen:
        p.requires_grad_(False)
    graph = forward_backward(model, src, lens, tgt, False)
    fused = forward_backward(model, src, lens, tgt, True)
    assert calls == [1]
    assert all(p.grad is None for p in frozen)
    assert graph[2].keys() == fused[2].keys()
    assert {"w_c.weight", "attention.score.w_a.weight", "tgt_embed.weight"} <= graph[2].keys()
    for name, g in graph[2].items():
        assert (fused[2][name] - g).abs().max() <= 1e-10 * g.abs().max(), name


def test_a_gradient_of_the_gradient_is_refused_clearly():
    model, src, lens, tgt = model_and_batch("luong-global-general", layers=2, dropout=0.0)
    loss = model(src, lens, tgt).scores.pow(2).sum()
    (grad,) = torch.autograd.grad(loss, model.w_c.weight, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        grad.sum().backward()


def test_the_devices_it_runs_on(calls):
    """LuongModel.fuse_decoder_devices gates the fused node by device: the CPU by default;
    `bench train --fused-decoder-gpu` adds the GPU to compare there."""
    model, src, lens, tgt = model_and_batch("luong-global-general", layers=2, dropout=0.0)
    assert luong.LuongModel.fuse_decoder_devices == ("cpu",)
    forward_backward(model, src, lens, tgt, True)
    assert calls == [1]
    model.fuse_decoder_devices = ("cuda",)
    forward_backward(model, src, lens, tgt, True)
    assert calls == [1]  # not on this device: the step graph


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (CI has none)")
def test_fused_decoder_on_a_gpu_matches_the_step_graph(calls):
    """On CUDA (float64, no dropout: the step graph draws torch's masks there, the fused
    node core.models.dropout's): the same outputs, gradients equal to rounding."""
    model, src, lens, tgt = model_and_batch("luong-global-general", layers=2, dropout=0.0)
    model = model.cuda()
    model.fuse_decoder_devices = ("cuda",)
    model.graph_decoder_devices = ()  # the node itself (its graphs: test_feed_graphs.py)
    src, lens, tgt = src.cuda(), lens.cuda(), tgt.cuda()
    graph = forward_backward(model, src, lens, tgt, False)
    fused = forward_backward(model, src, lens, tgt, True)
    assert calls == [1]
    assert torch.allclose(graph[0], fused[0], rtol=0, atol=1e-12)
    assert torch.allclose(graph[1], fused[1], rtol=0, atol=1e-12)
    for name_, g in graph[2].items():
        assert (fused[2][name_] - g).abs().max() <= 1e-10 * g.abs().max(), name_


def test_a_search_step_takes_the_onednn_product_and_training_keeps_autograd(count_calls):
    """The step graph's LSTM cell (`_feed_cell`): without gradients (a search) its fp32
    products go to matmul.addmm (oneDNN where available) and give nn.LSTMCell's gates to
    rounding; with gradients it stays torch.addmm and gradients reach every weight."""
    from core.models import matmul

    torch.manual_seed(0)
    cfg = variant_config("luong-global-general", emb_size=64, hidden_size=128, layers=2,
                         dropout=0.0)
    model = build_model(cfg, VOCAB, VOCAB).eval()
    rows, hidden = 48, 128  # 48 x 256 x 512 multiply-adds: above matmul.MIN_MACS
    x_pre, x = torch.randn(rows, 4 * hidden), torch.randn(rows, hidden)
    h = [torch.randn(rows, hidden) for _ in range(2)]
    c = [torch.randn(rows, hidden) for _ in range(2)]
    weights = model._feed_weights()
    calls, products = count_calls(matmul, "addmm"), count_calls(matmul, "_product")
    with torch.no_grad():
        hs, cs = model._feed_cell(x_pre, x, weights, h, c)
    assert len(calls) == 2  # one product per layer
    # layer 2 adds a bias inside oneDNN's product (layer 1 adds x_pre's rows, another call)
    assert len(products) == (1 if matmul.uses_onednn(x, rows * 2 * hidden * 4 * hidden) else 0)
    with torch.no_grad():  # the reference: torch.addmm in float64
        ref_x, ref = x.double(), []
        for i, (w, b) in enumerate(weights):
            base = x_pre.double() if i == 0 else b.double()
            gates = torch.addmm(base, torch.cat([ref_x, h[i].double()], 1), w.double())
            i_g, f_g, g_g, o_g = gates.chunk(4, 1)
            c_new = f_g.sigmoid() * c[i].double() + i_g.sigmoid() * g_g.tanh()
            ref_x = o_g.sigmoid() * c_new.tanh()
            ref.append((ref_x, c_new))
    for (h_ref, c_ref), h_new, c_new in zip(ref, hs, cs, strict=True):
        assert (h_new.double() - h_ref).abs().max() < 1e-5
        assert (c_new.double() - c_ref).abs().max() < 1e-5
    calls.clear()
    hs, _ = model._feed_cell(x_pre, x, model._feed_weights(), h, c)
    hs[-1].sum().backward()
    assert not calls
    cells = [p for n, p in model.named_parameters() if n.startswith("cells.") and "weight" in n]
    assert len(cells) == 4 and all(p.grad is not None and p.grad.abs().sum() > 0 for p in cells)

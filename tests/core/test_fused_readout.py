"""The softmax layer left to the loss (core/models/base.py `deferred_readout`,
core/train/loss.py `_LinearCrossEntropy`): the same losses and gradients as the logits
computed in the model, by slabs of rows, in fp32 and bf16, with label smoothing and PAD;
every family defers it inside the scope and only there; the trainer's forward defers it
on a CPU."""
from __future__ import annotations

import pytest
import torch

from core.config import ModelConfig
from core.data.batching import Batch
from core.models import matmul
from core.models.base import PAD, Readout, deferred_readout
from core.models.registry import build_model
from core.train import loss as loss_mod
from core.train.loop import forward_batch
from core.train.loss import fuses_readout, sequence_nll

CPU = torch.device("cpu")


def _readout(rows: int, hidden: int, vocab: int, dtype=None, seed: int = 0):
    torch.manual_seed(seed)
    h = torch.randn(2, rows // 2, hidden).requires_grad_()
    w = (torch.randn(vocab, hidden) * 0.3).requires_grad_()
    b = torch.randn(vocab).requires_grad_()
    return h, w, b, Readout(h, w, b, dtype)


def _loss_and_grads(make, target, smoothing, use_readout):
    h, w, b, readout = make()
    loss, nll, n = sequence_nll(readout if use_readout else readout.scores(), target, smoothing)
    (loss / n).backward()
    return loss.detach(), nll.detach(), n, h.grad, w.grad, b.grad


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_the_loss_by_slabs_equals_the_loss_over_the_logits(smoothing, monkeypatch):
    # 150 rows x 9,000 words, slabs of 20,000 scores: 2 rows a slab, 75 slabs
    monkeypatch.setattr(loss_mod, "LINEAR_CHUNK_ELEMENTS", 20_000)
    seen = []
    original = loss_mod._LinearCrossEntropy.forward
    monkeypatch.setattr(loss_mod._LinearCrossEntropy, "forward",
                        staticmethod(lambda *a: seen.append(1) or original(*a)))

    def make():
        return _readout(150, 64, 9000)

    target = torch.randint(4, 9000, (2, 75))
    target[0, 60:], target[1, 3:9] = PAD, PAD
    assert fuses_readout(make()[3])
    fused = _loss_and_grads(make, target, smoothing, True)
    assert seen == [1]  # the slab path did run
    whole = _loss_and_grads(make, target, smoothing, False)
    assert fused[2] == whole[2] == 150 - 15 - 6
    assert fused[0].item() == pytest.approx(whole[0].item(), rel=1e-6)
    assert fused[1].item() == pytest.approx(whole[1].item(), rel=1e-6)
    for mine, theirs in zip(fused[3:], whole[3:], strict=True):
        scale = theirs.abs().max().item()
        assert (mine - theirs).abs().max().item() <= 1e-5 * scale


def test_bf16_by_slabs_where_onednn_has_bf16_kernels(monkeypatch):
    """Under autocast the product is in bf16; with oneDNN's bf16 kernels by slabs, and
    with the same result as the bf16 logits; elsewhere the logits are computed whole."""
    monkeypatch.setattr(loss_mod, "LINEAR_CHUNK_ELEMENTS", 20_000)

    def make():
        return _readout(120, 64, 6000, torch.bfloat16, seed=3)

    target = torch.randint(4, 6000, (2, 60))
    assert fuses_readout(make()[3]) == matmul._bf16_supported()
    fused = _loss_and_grads(make, target, 0.1, True)
    whole = _loss_and_grads(make, target, 0.1, False)
    assert fused[0].item() == pytest.approx(whole[0].item(), rel=1e-4)
    for mine, theirs in zip(fused[3:], whole[3:], strict=True):
        assert mine.dtype == theirs.dtype == torch.float32  # back through the casts
        assert (mine - theirs).abs().max().item() <= 1e-2 * theirs.abs().max().item()


def test_a_row_whose_target_underflows_gets_its_exact_loss(monkeypatch):
    monkeypatch.setattr(loss_mod, "LINEAR_CHUNK_ELEMENTS", 20_000)
    h, w, b, readout = _readout(40, 32, 5000)
    target = torch.randint(4, 5000, (2, 20))
    with torch.no_grad():
        b[target[1, 7]] -= 200.0  # p_t = 0 in fp32: lse from the row's scores instead
    _, nll, _ = sequence_nll(readout, target)
    exact = torch.log_softmax(readout.scores().double(), -1).gather(
        2, target[..., None]).neg().sum()
    assert nll.item() == pytest.approx(exact.item(), rel=1e-6)
    assert nll.item() > 200


def test_without_gradients_nothing_is_kept_and_the_loss_is_the_same(monkeypatch):
    monkeypatch.setattr(loss_mod, "LINEAR_CHUNK_ELEMENTS", 20_000)
    h, w, b, readout = _readout(100, 32, 5000)
    target = torch.randint(4, 5000, (2, 50))
    with torch.no_grad():
        evaluated = sequence_nll(readout, target, 0.1)
        whole = sequence_nll(readout.scores(), target, 0.1)
    trained = sequence_nll(readout, target, 0.1)
    assert evaluated[0].item() == pytest.approx(trained[0].item(), rel=1e-6)
    assert evaluated[0].item() == pytest.approx(whole[0].item(), rel=1e-6)
    assert not evaluated[0].requires_grad and trained[0].requires_grad


def test_a_small_or_gpu_readout_is_not_taken_by_slabs():
    assert not fuses_readout(_readout(4, 8, 100)[3])  # one slab: nothing to gain
    assert fuses_readout(_readout(400, 64, 20_000)[3])
    h, w, b, _ = _readout(400, 64, 20_000)
    assert not fuses_readout(Readout(h.double(), w.double(), b.double(), None))  # float64


FAMILIES = {
    "luong": dict(family="luong", emb_size=16, hidden_size=16, layers=1,
                  attention="global", score="general", input_feeding=True),
    "rnnsearch": dict(family="rnnsearch", cell="gru", emb_size=16, hidden_size=16,
                      layers=1, attention="global", score="additive"),
    "rnnencdec": dict(family="rnnencdec", emb_size=16, hidden_size=16, layers=1,
                      attention="none"),
    "transformer": dict(family="transformer", d_model=16, ff_size=32, heads=2,
                        enc_layers=1, dec_layers=1),
    "context_transformer": dict(family="context_transformer", d_model=16, ff_size=32,
                                heads=2, enc_layers=1, dec_layers=1),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_defers_its_softmax_layer_inside_the_scope_only(family):
    torch.manual_seed(0)
    model = build_model(ModelConfig(**FAMILIES[family]), 30, 40).eval()
    src = torch.randint(4, 30, (3, 5))
    lens = torch.tensor([5, 4, 2])
    tgt = torch.randint(4, 40, (3, 6))
    extra = {}
    if family == "context_transformer":
        extra = {"ctx": torch.randint(4, 30, (3, 4)), "ctx_lens": torch.tensor([4, 2, 1])}
    eager = model(src, lens, tgt, **extra)
    assert eager.readout is None and eager.logits is not None
    with deferred_readout():
        deferred = model(src, lens, tgt, **extra)
    assert deferred.logits is None and deferred.readout is not None
    assert deferred.for_loss() is deferred.readout
    assert torch.allclose(deferred.scores, eager.scores, atol=1e-6)  # computed on demand
    assert deferred.for_loss() is deferred.logits  # and kept
    again = model(src, lens, tgt, **extra)  # the scope ended: eager again
    assert again.readout is None


def _batch() -> Batch:
    return Batch(src=torch.randint(4, 30, (2, 4)), src_lens=torch.tensor([4, 3]),
                 tgt_in=torch.randint(4, 40, (2, 5)), tgt_out=torch.randint(4, 40, (2, 5)),
                 tgt_lens=torch.tensor([5, 5]), indices=[0, 1])


def test_the_trainers_forward_defers_on_a_cpu():
    torch.manual_seed(0)
    model = build_model(ModelConfig(**FAMILIES["luong"]), 30, 40)
    out, _, targets = forward_batch(model, _batch(), CPU, False)
    assert out.logits is None and isinstance(out.for_loss(), Readout)
    loss = sequence_nll(out.for_loss(), targets)[0]
    assert loss.item() == pytest.approx(sequence_nll(out.scores, targets)[0].item(), rel=1e-6)

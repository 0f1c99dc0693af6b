"""bf16 mixed precision (train.amp) on the CPU: autocast only where the CPU has native
bf16, fp32 softmax and loss, losses that follow the fp32 run, and a clear log otherwise.

torch runs bf16 autocast on any CPU (emulated where there are no bf16 instructions), so
the bf16 path is tested everywhere by declaring native support; only speed differs."""
from __future__ import annotations

import pytest
import torch

from core.config import ModelConfig
from core.data.batching import BatchPlan
from core.jobs import RecordingContext
from core.models.registry import build_model, variant_config
from core.train import device as device_mod
from core.train.loop import forward_batch, sequence_nll, train_model
from tests.core.test_sampled_softmax import tiny_run, wide_reversal_data

CPU = torch.device("cpu")


@pytest.fixture
def native_bf16(monkeypatch):
    monkeypatch.setattr(device_mod, "cpu_supports_bf16", lambda: True)


@pytest.fixture
def no_bf16(monkeypatch):
    monkeypatch.setattr(device_mod, "cpu_supports_bf16", lambda: False)


def test_autocast_only_when_enabled_and_the_cpu_has_bf16(monkeypatch):
    x, w = torch.randn(4, 8), torch.randn(8, 3)
    for native, enabled, dtype in ((True, True, torch.bfloat16), (True, False, torch.float32),
                                   (False, True, torch.float32)):
        monkeypatch.setattr(device_mod, "cpu_supports_bf16", lambda n=native: n)
        assert device_mod.amp_active(CPU, enabled) == (dtype == torch.bfloat16)
        with device_mod.autocast(CPU, enabled):
            assert (x @ w).dtype == dtype


@pytest.mark.parametrize("name", ["luong-global-general", "luong-local-p-general", "rnnsearch",
                                  "transformer"])
def test_bf16_forward_keeps_the_softmax_in_fp32_and_the_loss_close(name, native_bf16):
    torch.manual_seed(0)
    cfg = ModelConfig(family="transformer", d_model=32, ff_size=64, heads=2, enc_layers=1,
                      dec_layers=1, dropout=0.0) if name == "transformer" else \
        variant_config(name, emb_size=32, hidden_size=32, dropout=0.0)
    model = build_model(cfg, 50, 60).eval()
    gen = torch.Generator().manual_seed(1)
    src = [torch.randint(5, 50, (n,), generator=gen).tolist() for n in (9, 9, 8, 7, 5, 3)]
    tgt = [torch.randint(5, 60, (n,), generator=gen).tolist() for n in (6, 7, 5, 6, 4, 3)]
    batch = BatchPlan(src, tgt, batch_size=6, seed=0, shuffle=False).collate(list(range(6)))
    with torch.no_grad():
        full, _, tgt = forward_batch(model, batch, CPU, False)
        half, _, _ = forward_batch(model, batch, CPU, True)
    assert full.log_probs.dtype == half.log_probs.dtype == torch.float32
    # rows of the bf16 run are exact fp32 distributions (softmax after the cast) ...
    sums = half.log_probs.exp().sum(-1)
    assert torch.allclose(sums, torch.ones_like(sums), atol=1e-5)
    # ... and its loss is within bf16's precision of the fp32 one (not equal: bf16 ran)
    loss_full = sequence_nll(full.log_probs, tgt)[0]
    loss_half = sequence_nll(half.log_probs, tgt)[0]
    assert abs(loss_half - loss_full) / loss_full < 0.02
    assert not torch.equal(full.log_probs, half.log_probs)


def test_bf16_training_follows_the_fp32_run(tmp_path, native_bf16):
    """Same seed, same batches: every bf16 loss within 1 % of the fp32 one, and both fall."""
    runs = {}
    for amp in (False, True):
        rec = RecordingContext()
        train_model(tiny_run(sampled_softmax=0, amp=amp, max_steps=40, lr=1e-2), wide_reversal_data(),
                    tmp_path / str(amp), rec)
        runs[amp] = [e.data["loss"] for e in rec.of_kind("step")]
    fp32, bf16 = runs[False], runs[True]
    assert len(fp32) == len(bf16) == 40
    assert fp32 != bf16  # bf16 really ran
    assert all(abs(a - b) / a < 0.01 for a, b in zip(fp32, bf16, strict=True))
    for losses in (fp32, bf16):  # both learn: the last ten steps well below the first
        assert sum(losses[-10:]) / 10 < 0.9 * losses[0]


def test_amp_without_native_bf16_trains_in_fp32_and_says_so(tmp_path, no_bf16):
    rec, plain = RecordingContext(), RecordingContext()
    train_model(tiny_run(sampled_softmax=0, amp=True, max_steps=4), wide_reversal_data(),
                tmp_path / "a", rec)
    train_model(tiny_run(sampled_softmax=0, max_steps=4), wide_reversal_data(), tmp_path / "b",
                plain)
    logs = [e.data["message"] for e in rec.of_kind("log")]
    assert any("no native bf16" in m and "fp32" in m for m in logs)
    assert [e.data["loss"] for e in rec.of_kind("step")] == \
        [e.data["loss"] for e in plain.of_kind("step")]

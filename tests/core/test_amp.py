"""bf16 mixed precision (train.amp) on the CPU: autocast only where the CPU has native
bf16, fp32 softmax and loss, losses that follow the fp32 run, and a clear log otherwise.

Inference-only bf16 kernels exist on every x86-64 CPU (emulated without bf16
instructions), so the forward-pass numerics are tested everywhere by declaring native
support. bf16 *training* of LSTMs needs native kernels (oneDNN refuses the primitive on
AVX2-only CPUs): that test trains in bf16 where the CPU has them and otherwise checks what
a user gets there, an fp32 run and the log line. The subprocess test at the end runs every
user path on an emulated AVX2-only CPU, whatever CPU runs the suite."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from core.config import ModelConfig
from core.data.batching import BatchPlan
from core.jobs import RecordingContext
from core.models.registry import build_model, variant_config
from core.train import device as device_mod
from core.train.loop import forward_batch, sequence_nll, train_model
from tests.core.reversal import wide_reversal_train_data
from tests.core.tiny_runs import tiny_sampled_config

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


def test_bf16_training_follows_the_fp32_run(tmp_path):
    """Same seed, same batches. With native bf16: every bf16 loss within 1 % of the fp32
    one, and both fall. Without (the real detection, nothing declared): train.amp gives
    the fp32 run bit for bit, and the log says why."""
    native, why = device_mod.cpu_bf16_status()
    runs, logs = {}, {}
    for amp in (False, True):
        rec = RecordingContext()
        train_model(tiny_sampled_config(sampled_softmax=0, amp=amp, max_steps=40, lr=1e-2),
                    wide_reversal_train_data(), tmp_path / str(amp), rec)
        runs[amp] = [e.data["loss"] for e in rec.of_kind("step")]
        logs[amp] = [e.data["message"] for e in rec.of_kind("log")]
    fp32, amp_run = runs[False], runs[True]
    assert len(fp32) == len(amp_run) == 40
    for losses in (fp32, amp_run):  # both learn: the last ten steps well below the first
        assert sum(losses[-10:]) / 10 < 0.9 * losses[0]
    if native:
        assert "train.amp: bf16 autocast" in logs[True]
        assert fp32 != amp_run  # bf16 really ran
        assert all(abs(a - b) / a < 0.01 for a, b in zip(fp32, amp_run, strict=True))
    else:
        assert fp32 == amp_run  # the fallback is exactly the fp32 run
        assert f"train.amp: cpu has no native bf16 ({why}); training in fp32" in logs[True]


def test_amp_without_native_bf16_trains_in_fp32_and_says_so(tmp_path, no_bf16):
    rec, plain = RecordingContext(), RecordingContext()
    train_model(tiny_sampled_config(sampled_softmax=0, amp=True, max_steps=4),
                wide_reversal_train_data(), tmp_path / "a", rec)
    train_model(tiny_sampled_config(sampled_softmax=0, max_steps=4), wide_reversal_train_data(),
                tmp_path / "b", plain)
    logs = [e.data["message"] for e in rec.of_kind("log")]
    assert any("no native bf16" in m and "fp32" in m for m in logs)
    assert [e.data["loss"] for e in rec.of_kind("step")] == \
        [e.data["loss"] for e in plain.of_kind("step")]


def test_bf16_status_names_the_reason(monkeypatch):
    """The detection's three conditions, each reported as the reason when it fails."""
    device_mod.cpu_bf16_status.cache_clear()
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    assert device_mod.cpu_bf16_status() == (False, "no AVX512-BF16/AMX instructions")
    device_mod.cpu_bf16_status.cache_clear()
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True)
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX2")
    assert device_mod.cpu_bf16_status() == (False, "torch's CPU kernels are AVX2, not AVX-512")
    device_mod.cpu_bf16_status.cache_clear()
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX512")
    monkeypatch.setattr(device_mod, "_probe_bf16_training", lambda: "could not create a primitive")
    assert device_mod.cpu_bf16_status() == \
        (False, "a bf16 LSTM training step fails here (could not create a primitive)")
    device_mod.cpu_bf16_status.cache_clear()
    monkeypatch.setattr(device_mod, "_probe_bf16_training", lambda: None)
    assert device_mod.cpu_bf16_status() == (True, "AVX512-BF16")
    assert device_mod.precision_note("cpu", True) == "bf16 autocast"
    device_mod.cpu_bf16_status.cache_clear()


def test_the_bf16_probe_leaves_the_random_stream_alone():
    """The probe builds a small LSTM: with the global generator it would shift every
    later draw of a run that seeded first (the first bf16 run of a process would then
    start from other weights than the same run again)."""
    torch.manual_seed(5)
    expected = torch.rand(4)
    torch.manual_seed(5)
    device_mod._probe_bf16_training()
    assert torch.equal(torch.rand(4), expected)


def test_precision_note_says_what_a_run_will_compute_in(no_bf16):
    assert device_mod.precision_note("cpu", False) == "fp32"
    note = device_mod.precision_note("cpu", True)
    assert note.startswith("fp32: this CPU has no native bf16 (")
    if not torch.cuda.is_available():
        assert "no CUDA GPU is visible" in device_mod.precision_note("cuda", True)


def test_every_user_path_falls_back_on_a_cpu_without_native_bf16(tmp_path):
    """CLI training with train.amp, translate, align, evaluate and bench train --amp, on
    this CPU capped to AVX2 kernels (ATen) and AVX2 instructions (oneDNN): each exits 0,
    training and the bench say they run fp32, and no bf16 row is measured."""
    env = dict(os.environ, ATEN_CPU_CAPABILITY="avx2", ONEDNN_MAX_CPU_ISA="AVX2",
               OMP_NUM_THREADS="1")
    script = Path(__file__).with_name("no_bf16_paths.py")
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.splitlines()[-1])
    native, why = result["bf16"]
    assert not native and why == "torch's CPU kernels are AVX2, not AVX-512"
    for path in ("import", "train", "translate", "align", "evaluate", "bench"):
        assert result[path]["rc"] == 0, (path, result[path]["err"][-1000:])
    assert f"train.amp: cpu has no native bf16 ({why}); training in fp32" in result["train"]["err"]
    assert "finished after 6 steps" in result["train"]["out"]
    assert len(result["translate"]["out"].split("\n")) == 3  # two lines, each ended
    assert "| amp attention (previous) |" in result["align"]["out"]
    assert "| amp |" in result["evaluate"]["out"] or "amp" in result["evaluate"]["out"]
    bench = result["bench"]["out"]
    assert f"no native bf16 ({why}); bf16 rows skipped" in bench
    rows = [ln for ln in bench.splitlines() if ln.startswith("luong-global-general")]
    assert len(rows) == 1 and "+bf16" not in rows[0] and "failed" not in rows[0]


def test_the_bf16_probe_answers_the_same_inside_inference_mode():
    """cpu_bf16_status is cached for the process: its probe must not depend on whether
    the first caller decodes (inference mode, no gradients) or trains."""
    from core.train.device import _probe_bf16_training

    outside = _probe_bf16_training()
    with torch.inference_mode():
        assert _probe_bf16_training() == outside
    with torch.no_grad():
        assert _probe_bf16_training() == outside

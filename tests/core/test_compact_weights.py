"""Compact shipped weights (core.train.compact): int8 per row within half a step of each
weight, fp16 exact to fp16, sizes a quarter / half of fp32, and a compact checkpoint that
loads through load_model and translates like the original."""
from __future__ import annotations

import pytest
import torch

from core.train.compact import MIN_INT8, compact_state, expand_state, state_bytes


def test_int8_rows_are_within_half_a_quantisation_step():
    torch.manual_seed(0)
    w = torch.randn(64, 128) * torch.linspace(0.01, 3.0, 64)[:, None]  # rows of many scales
    bias = torch.randn(64)
    tensors, scales = compact_state({"w": w, "b": bias, "steps": torch.tensor(7)}, "int8")
    assert tensors["w"].dtype == torch.int8 and scales["w"].shape == (64,)
    assert tensors["b"].dtype == torch.float16 and "b" not in scales  # vectors stay fp16
    assert tensors["steps"].dtype == torch.int64  # integers untouched
    back = expand_state(tensors, scales)
    step = scales["w"].float()[:, None]
    assert ((back["w"] - w).abs() <= step / 2 + 1e-6 * w.abs()).all()
    assert back["w"].dtype == back["b"].dtype == torch.float32
    # each row's largest weight maps to +-127: the whole int8 range is used
    assert tensors["w"].abs().amax(dim=1).min().item() == 127


def test_zero_and_tiny_rows_get_a_usable_scale():
    """An all-zero row (PAD's embedding) and a row below float16's range get a positive
    finite scale, quantise to 0 without a 0 / 0, and come back as they were to within
    float16's smallest step."""
    w = torch.randn(128, 64)
    w[0] = 0.0
    w[1] = 1e-9
    tensors, scales = compact_state({"emb": w}, "int8")
    assert torch.isfinite(scales["emb"]).all() and (scales["emb"] > 0).all()
    assert tensors["emb"][0].abs().max().item() == 0 == tensors["emb"][1].abs().max().item()
    back = expand_state(tensors, scales)["emb"]
    assert back[0].abs().max().item() == 0.0 and back[1].abs().max().item() < 1e-8


def test_sizes_and_small_matrices():
    state = {"big": torch.randn(256, 64), "small": torch.randn(8, 8)}
    assert 64 * 8 < MIN_INT8 <= 256 * 64
    fp32 = state_bytes(*compact_state(state, "fp32"))
    fp16 = state_bytes(*compact_state(state, "fp16"))
    int8_t, int8_s = compact_state(state, "int8")
    assert fp16 * 2 == fp32
    assert int8_t["small"].dtype == torch.float16  # too small to be worth a scale per row
    assert state_bytes(int8_t, int8_s) == 256 * 64 + 256 * 2 + 64 * 2
    with pytest.raises(ValueError, match="unknown weight format 'int4'"):
        compact_state(state, "int4")


def test_an_int8_checkpoint_loads_and_translates_like_the_original(tmp_path):
    """A demo-corpus run stripped to int8: load_model expands it; forced log-probs of
    the dev sentences stay within 0.05 nats per token of the fp32 model's, and greedy
    translations of them are mostly the same."""
    from core.infer.session import TranslationSession
    from core.jobs import JobContext
    from core.services.demo import demo_config, import_demo_corpus
    from core.services.demo_bundle import strip_checkpoint
    from core.services.training import create_run, load_split_corpora, train_run
    from core.train import artifacts
    from core.workspace.store import Workspace

    with Workspace.open(tmp_path / "ws") as ws:
        corpus_id = import_demo_corpus(ws)
        config = demo_config("q", dict(emb_size=64, hidden_size=128), max_steps=150,
                             valid_every=150, device="cpu")
        config.data.dev_sample = 2
        run_id = create_run(ws, corpus_id, config, "q")
        train_run(ws, run_id, JobContext())
        run_dir = ws.run_dir(run_id)
        _, parts = load_split_corpora(ws, corpus_id, config.train.seed)
        dev = parts["dev"].pairs[:30]
    small = tmp_path / "small"
    small.mkdir()
    for f in run_dir.iterdir():
        if f.is_file() and not f.name.endswith(".pt"):
            (small / f.name).write_bytes(f.read_bytes())
    best = artifacts.pick_checkpoint(run_dir, "best")
    strip_checkpoint(best, small / "best-00000150.pt", weights="int8")
    assert (small / "best-00000150.pt").stat().st_size < 0.3 * best.stat().st_size
    full = TranslationSession.from_loaded([artifacts.load_model(run_dir, "best")], ["fp32"])
    quant = TranslationSession.from_loaded([artifacts.load_model(small, "best")], ["int8"])
    diffs = []
    for p in dev:
        a, b = full.force(p.src, p.tgt), quant.force(p.src, p.tgt)
        n = len(a.target_tokens) + 1
        diffs.append(abs(a.log_prob - b.log_prob) / n)
    assert max(diffs) < 0.05, max(diffs)
    same = sum(x.text == y.text for x, y in zip(full.translate([p.src for p in dev], beam=1),
                                                 quant.translate([p.src for p in dev], beam=1),
                                                 strict=True))
    assert same >= 0.8 * len(dev), same

"""`bench train --flops` (core/tooling/bench_roofline.py): the counted matrix-product
FLOP of a training step, the machine's peak and the ceiling they give."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
import torch

from core.tooling.bench import run_train_bench
from core.tooling.bench_roofline import count_flops, matmul_peak_gflops, roofline

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


def test_a_linear_layer_step_counts_its_three_products():
    layer = torch.nn.Linear(32, 50, bias=False)
    x = torch.randn(7, 32, requires_grad=True)

    def step():
        layer(x).square().sum().backward()

    # forward x W^T, backward dL/dx = g W and dL/dW = g^T x: 2 * 7 * 32 * 50 each
    assert count_flops(step) == 3 * 2 * 7 * 32 * 50


def test_recurrent_layers_are_counted_though_the_flop_counter_misses_them():
    """torch's counter does not see the fused CPU kernel of a padded LSTM (the bench
    encoders'); count_flops adds the products there and only there."""
    torch.manual_seed(0)
    for cls, gates in ((torch.nn.LSTM, 4), (torch.nn.GRU, 3)):
        rnn = cls(10, 6, num_layers=2, bidirectional=True, batch_first=True)
        x = torch.randn(3, 5, 10, requires_grad=True)
        per_token = 2 * 2 * gates * 6 * ((10 + 6) + (12 + 6))  # 2 directions, 2 layers

        def padded(rnn=rnn, x=x):
            rnn(x)[0].sum().backward()

        def packed(rnn=rnn, x=x):
            seqs = torch.nn.utils.rnn.pack_padded_sequence(x, [5, 4, 2], batch_first=True)
            rnn(seqs)[0].data.sum().backward()

        for step, tokens in ((padded, 15), (packed, 11)):
            seen = count_flops(step)
            # the forward product and the two backward ones, of the real tokens only
            assert count_flops(step, rnn) == (seen or 3 * tokens * per_token)
        if cls is torch.nn.LSTM:
            assert count_flops(padded) == 0  # the fused kernel: invisible to the counter


def test_the_roofline_fields_follow_from_the_two_measurements():
    row = {"tgt_tok_per_s": 2_000.0}
    fields = roofline(row, flop_per_token=30e6, peak_gflops=150.0)
    assert fields["mflop_per_tok"] == pytest.approx(30.0)
    assert fields["gflops"] == pytest.approx(60.0)
    assert fields["peak_share"] == pytest.approx(0.4)
    assert fields["ceiling_tok_per_s"] == pytest.approx(5_000.0)


def test_the_peak_is_a_rate_of_real_products():
    peak = matmul_peak_gflops(torch.device("cpu"), torch.float32, seconds=0.05)
    assert 0.5 < peak < 100_000  # GFLOP/s of a CPU, not of a clock glitch


def test_bench_rows_carry_the_roofline(tmp_path):
    for side in ("es", "en"):
        (tmp_path / f"train.tok.{side}").write_text(
            (DEMO / f"demo.{side}").read_text(encoding="utf-8"), encoding="utf-8")
    out = io.StringIO()
    rows = run_train_bench(["luong-global-general"], steps=2, warmup=1, device="cpu",
                           data_dir=str(tmp_path), threads=1, out=out, sampled_softmax=20,
                           flops=True)
    full, sampled = rows
    assert "MFLOP/tok" in out.getvalue() and "ceiling" in out.getvalue()
    # the output layer alone: forward and two backward products of hidden x vocabulary
    # per target position (the bench preset's 256 units)
    output_layer = 3 * 2 * 256 * full["tgt_vocab"] / 1e6
    assert full["mflop_per_tok"] > output_layer
    assert sampled["mflop_per_tok"] < full["mflop_per_tok"]  # 20 candidate words, not V
    for row in rows:
        assert row["ceiling_tok_per_s"] == pytest.approx(
            row["peak_gflops"] * 1e3 / row["mflop_per_tok"])
        assert row["peak_share"] == pytest.approx(row["gflops"] / row["peak_gflops"])


def test_decoding_rows_carry_the_roofline(tmp_path):
    from core.tooling.bench_translate import run_translate_bench

    for side in ("es", "en"):
        (tmp_path / f"train.tok.{side}").write_text(
            (DEMO / f"demo.{side}").read_text(encoding="utf-8"), encoding="utf-8")
    out = io.StringIO()
    greedy, beam = run_translate_bench("luong-global-general", sentences=6, length=7,
                                       beams=[1, 3], batch_size=3, device="cpu",
                                       data_dir=str(tmp_path), threads=1, out=out, flops=True)
    assert "MFLOP/tok" in out.getvalue()
    # each output token passes the output layer (256 x V) once per hypothesis
    assert greedy["mflop_per_tok"] > 2 * 256 * greedy["mean_candidates"] / 1e6
    # three hypotheses through the decoder, the encoder's share paid once per sentence
    assert 1.5 < beam["mflop_per_tok"] / greedy["mflop_per_tok"] < 3.0
    assert beam["peak_gflops"] == greedy["peak_gflops"]  # measured once per precision

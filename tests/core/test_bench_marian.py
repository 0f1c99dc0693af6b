"""`bench translate --marian` (core/tooling/bench_marian.py): an imported Marian model
decoded by the workbench's search and by transformers' generate on the same sentences
and beam, at a fixed length; here at a tiny size (the command's is OPUS-MT's)."""
from __future__ import annotations

import pytest

from core.cli import run_cli
from tests.core.marian_folder import DEMO

transformers = pytest.importorskip("transformers")  # the `dev` extra installs it

TINY = dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
            max_position_embeddings=128, scale_embedding=True, activation_function="swish")


@pytest.fixture
def tiny(monkeypatch):
    import core.tooling.bench_marian as bench_marian

    lines = (DEMO / "demo.es").read_text(encoding="utf-8").splitlines()
    monkeypatch.setattr(bench_marian, "OPUS_SIZE", TINY)
    monkeypatch.setattr(bench_marian, "load_bench_pairs",
                        lambda data, split: ([s.split() for s in lines], []))
    return bench_marian


def test_both_sides_decode_the_same_outputs_and_are_timed(tiny, capsys):
    rows = tiny.run_marian_bench(sentences=7, length=5, beams=[1, 3], batch_size=3, threads=1,
                                 data_dir=None, vocab_size=400, rounds=2)
    assert [r["beam"] for r in rows] == [1, 3]
    for row in rows:
        # the same work: every output of the workbench's search is generate's
        assert row["same_output"] == row["sentences"] == 7
        assert (row["length"], row["rounds"], row["batch"]) == (5, 2, 3)
        assert row["ratio"] == pytest.approx(row["ours_sent_per_s"] / row["generate_sent_per_s"])
        assert row["ours_sent_per_s"] > 0 and row["generate_sent_per_s"] > 0
    out = capsys.readouterr().out
    assert "2 + 2 layers, d_model 32, 4 heads, ffn 64, vocabulary 400" in out
    assert "output fixed at 5 pieces + </s>, batches of 3, 2 alternating rounds" in out
    assert "load average before" in out and "load average after" in out
    assert "  beam 3      3" in out and "7/7" in out


def test_the_folder_is_read_as_runs_import_reads_it(tiny, tmp_path):
    from core.services.marian_import import read_marian

    lines = (DEMO / "demo.es").read_text(encoding="utf-8").splitlines()
    folder = tiny.opus_folder(tmp_path / "opus-mt-es-en", lines, 500)
    loaded = read_marian(folder, "bench")
    assert len(loaded.src_vocab) == 500 + 1  # Marian's <pad> is the workbench's PAD and BOS
    assert loaded.model.hf.config.vocab_size == 500
    assert loaded.model.hf.config.decoder_layers == 2
    assert loaded.model.hf.config.forced_eos_token_id == 0


def test_cli_passes_its_options_and_refuses_the_others(monkeypatch, capsys):
    import core.tooling.bench_marian as bench_marian

    calls = []
    monkeypatch.setattr(bench_marian, "run_marian_bench",
                        lambda *a: calls.append(a) or [{"beam": 1}])
    assert run_cli(["bench", "translate", "--marian", "--device", "cpu", "--threads", "1"]) == 0
    assert calls == [(60, 20, [1, 5], 30, 1, None, "default", 58101, 3)]
    assert run_cli(["bench", "translate", "--marian", "--device", "cpu", "--beam", "4",
                    "--sentences", "9", "--marian-vocab", "32000", "--rounds", "5"]) == 0
    assert calls[-1][0] == 9 and calls[-1][2] == [4] and calls[-1][7:] == (32000, 5)
    for options, message in ((["--shortlist"], "--shortlist is not measured with --marian"),
                             (["--rounds", "0"], "--rounds must be 1 or more, not 0"),
                             (["--marian-vocab", "8"], "--marian-vocab must be 16 or more")):
        assert run_cli(["bench", "translate", "--marian", "--device", "cpu", *options]) == 2
        assert message in capsys.readouterr().err
    assert len(calls) == 2

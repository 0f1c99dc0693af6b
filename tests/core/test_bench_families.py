"""`bench train` covers the Transformer families beside the recurrent ones: each trains in
its own process (context models with the previous pair as context) and reports its
throughput, memory and size (numbers are for benchmarks, never asserted as targets)."""
from __future__ import annotations

import io
from pathlib import Path

from core.tooling.bench import bench_variants, run_train_bench

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


def test_every_family_is_a_bench_variant():
    families = {cfg.family for _, cfg in bench_variants()}
    assert families == {"rnnencdec", "rnnsearch", "luong", "transformer", "concat",
                        "context_transformer"}
    names = [n for n, _ in bench_variants()]
    assert {"transformer", "concat", "context-ws", "context-ts", "context-tgt",
            "transformer-thesis"} <= set(names)


def test_transformer_and_context_models_train_in_the_bench(tmp_path):
    for side in ("es", "en"):  # the bench's data layout: whitespace-tokenised lines
        (tmp_path / f"train.tok.{side}").write_text(
            (DEMO / f"demo.{side}").read_text(encoding="utf-8"), encoding="utf-8")
    out = io.StringIO()
    rows = run_train_bench(["transformer", "context-ws", "context-ts", "context-tgt"], steps=2,
                           warmup=1, device="cpu", data_dir=str(tmp_path), threads=1, out=out)
    by_name = {r["variant"]: r for r in rows}
    assert set(by_name) == {"transformer", "context-ws", "context-ts", "context-tgt"}, \
        out.getvalue()
    assert all(r["tgt_tok_per_s"] > 0 and r["peak_mem_mb"] > 0 for r in rows)
    # the multi-encoder adds a context encoder and a gate; two-stage keeps its own copy
    params = {n: r["params"] for n, r in by_name.items()}
    assert params["transformer"] < params["context-ws"] < params["context-ts"]
    assert params["context-tgt"] == params["context-ws"]  # the same parts, another input


def test_decoding_bench_emits_exactly_the_fixed_length(tmp_path):
    """bench translate forces every output to N tokens, greedy and beam alike, so the
    throughput compares equal work (the run fails if one token more or less came out)."""
    import pytest

    from core.errors import ConfigError
    from core.tooling.bench_translate import run_translate_bench

    for side in ("es", "en"):
        (tmp_path / f"train.tok.{side}").write_text(
            (DEMO / f"demo.{side}").read_text(encoding="utf-8"), encoding="utf-8")
    out = io.StringIO()
    rows = run_translate_bench("rnnsearch", sentences=12, length=9, beams=[1, 3], batch_size=5,
                               device="cpu", data_dir=str(tmp_path), threads=1, out=out)
    assert [r["beam"] for r in rows] == [1, 3]
    for r in rows:
        assert r["tgt_tok_per_s"] == pytest.approx(12 * 9 / r["seconds"])
    assert "beam 3" in out.getvalue()
    with pytest.raises(ConfigError, match="unknown variant"):
        run_translate_bench("gpt", 1, 1, [1], 1, "cpu", str(tmp_path), 1)


def test_decoding_bench_with_int8_decodes_the_same_work_in_int8(tmp_path):
    """`bench translate --int8`: each beam size a second time with int8 products, the
    same fixed-length work; the table names the engine and the CPU capability."""
    from core.models import int8
    from core.tooling.bench_translate import run_translate_bench

    for side in ("es", "en"):
        (tmp_path / f"train.tok.{side}").write_text(
            (DEMO / f"demo.{side}").read_text(encoding="utf-8"), encoding="utf-8")
    out = io.StringIO()
    rows = run_translate_bench("luong-global-general", sentences=6, length=5, beams=[2],
                               batch_size=3, device="cpu", data_dir=str(tmp_path), threads=1,
                               out=out, q8=True)
    assert [r["precision"] for r in rows] == ["fp32", "int8"]
    assert rows[0]["sentences"] == rows[1]["sentences"] == 6
    text = out.getvalue()
    assert f"# --int8: int8 ({int8.engine()} engine" in text and "ATEN_CPU_CAPABILITY=" in text
    assert "luong-global-general+int8" in text


def test_decoding_bench_with_a_shortlist_decodes_the_same_work_over_fewer_words(tmp_path):
    """`bench translate --shortlist`: the same fixed-length work a second time, over each
    batch's candidates; the lexicon's eflomal links are cached in the data folder."""
    from core.tooling.bench_translate import run_translate_bench

    for side in ("es", "en"):
        (tmp_path / f"train.tok.{side}").write_text(
            (DEMO / f"demo.{side}").read_text(encoding="utf-8"), encoding="utf-8")
    out = io.StringIO()
    rows = run_translate_bench("luong-global-general", sentences=10, length=6, beams=[3],
                               batch_size=5, device="cpu", data_dir=str(tmp_path), threads=1,
                               out=out, shortlist=(2, 5))
    full, short = rows
    assert full["shortlist"] is None and short["shortlist"] == "2,5"
    assert full["sentences"] == short["sentences"] == 10
    # specials + 5 frequent words + at most 2 per distinct source word of a batch
    assert 9 <= short["mean_candidates"] < full["mean_candidates"] / 4
    assert "training pairs with eflomal" in out.getvalue()  # aligned once, then stored
    assert list((tmp_path / "alignments").glob("*.pharaoh"))
    out2 = io.StringIO()
    run_translate_bench("luong-global-general", sentences=10, length=6, beams=[1],
                        batch_size=5, device="cpu", data_dir=str(tmp_path), threads=1,
                        out=out2, shortlist=(2, 5))
    assert "reusing the stored alignments" in out2.getvalue()  # the cached links are read


def test_paper_size_variant_and_batch_overrides(tmp_path):
    """luong-paper is Luong et al.'s 4 x 1000 with its preset's vocabularies, batch and SGD;
    --batch-tokens cuts every variant's batches by padded target tokens instead."""
    from core.tooling.bench import variant_data

    names = dict(bench_variants())
    paper = names["luong-paper"]
    assert (paper.layers, paper.hidden_size, paper.attention) == (4, 1000, "local-p")
    assert variant_data("luong-paper") == (50000, 50000, 128, 0)
    assert variant_data("luong-global-general") == (20000, 20000, 64, 0)
    assert variant_data("transformer", batch_size=32) == (20000, 20000, 32, 0)
    assert variant_data("luong-paper", batch_tokens=8192) == (50000, 50000, 0, 8192)

    for side in ("es", "en"):
        (tmp_path / f"train.tok.{side}").write_text(
            (DEMO / f"demo.{side}").read_text(encoding="utf-8"), encoding="utf-8")
    out = io.StringIO()
    rows = run_train_bench(["transformer"], steps=3, warmup=1, device="cpu",
                           data_dir=str(tmp_path), threads=1, out=out, batch_tokens=200)
    assert rows[0]["batch"] == "200 tokens"
    assert "# batches of 200 tokens" in out.getvalue()
    # 64-sentence batches of the demo hold about 1,000 target tokens; these hold <= 200
    assert 3 * 50 < rows[0]["tgt_tokens"] <= 3 * 200

    from core.tooling.bench_translate import run_translate_bench

    out = io.StringIO()  # decoding names the paper size, not the bench's
    rows = run_translate_bench("luong-paper", sentences=2, length=3, beams=[1], batch_size=2,
                               device="cpu", data_dir=str(tmp_path), threads=1, out=out)
    assert "luong-paper at the luong-paper size" in out.getvalue() and len(rows) == 1


def test_profile_reports_where_the_steps_time_goes(tmp_path):
    """bench train --profile N: N more steps under torch.profiler, after the timed ones;
    the report names the operators by their own time, the products first here."""
    import re

    import torch

    from core.tooling.bench_profile import profile_steps

    a = torch.randn(300, 300)
    calls = []
    report = profile_steps(lambda i: calls.append(i) or (a @ a).relu_(), range(7, 10),
                           torch.device("cpu"))
    assert calls == [7, 8, 9]
    assert re.match(r"# profile of 3 steps: \d+\.\d ms a step", report)
    table = [ln for ln in report.splitlines() if ln.strip().startswith("aten::")]
    assert table[0].split()[0] == "aten::mm" and "aten::relu_" in report

    for side in ("es", "en"):
        (tmp_path / f"train.tok.{side}").write_text(
            (DEMO / f"demo.{side}").read_text(encoding="utf-8"), encoding="utf-8")
    out = io.StringIO()
    rows = run_train_bench(["rnnencdec"], steps=1, warmup=1, device="cpu", data_dir=str(tmp_path),
                           threads=1, out=out, profile=2)
    assert rows[0]["profile"].startswith("# profile of 2 steps") and rows[0]["steps"] == 1
    assert rows[0]["profile"] in out.getvalue()

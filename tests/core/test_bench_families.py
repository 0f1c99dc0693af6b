"""`bench train` covers the Transformer families beside the recurrent ones: each trains in
its own process (context models with the previous pair as context) and reports its
throughput, memory and size (numbers are for benchmarks, never asserted as targets)."""
from __future__ import annotations

import io
from pathlib import Path

from core.bench import bench_variants, run_train_bench

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


def test_every_family_is_a_bench_variant():
    families = {cfg.family for _, cfg in bench_variants()}
    assert families == {"rnnencdec", "rnnsearch", "luong", "transformer", "concat",
                        "context_transformer"}
    names = [n for n, _ in bench_variants()]
    assert {"transformer", "concat", "context-ws", "context-ts", "transformer-thesis"} <= set(names)


def test_transformer_and_context_models_train_in_the_bench(tmp_path):
    for side in ("es", "en"):  # the bench's data layout: whitespace-tokenised lines
        (tmp_path / f"train.tok.{side}").write_text(
            (DEMO / f"demo.{side}").read_text(encoding="utf-8"), encoding="utf-8")
    out = io.StringIO()
    rows = run_train_bench(["transformer", "context-ws", "context-ts"], steps=2, warmup=1,
                           device="cpu", data_dir=str(tmp_path), threads=1, out=out)
    by_name = {r["variant"]: r for r in rows}
    assert set(by_name) == {"transformer", "context-ws", "context-ts"}, out.getvalue()
    assert all(r["tgt_tok_per_s"] > 0 and r["peak_mem_mb"] > 0 for r in rows)
    # the multi-encoder adds a context encoder and a gate; two-stage keeps its own copy
    params = {n: r["params"] for n, r in by_name.items()}
    assert params["transformer"] < params["context-ws"] < params["context-ts"]

"""Benchmarks that print numbers (never timed unit tests).

`python main.py bench train` measures, for every model family and attention variant,
steady-state training throughput (target tokens/s) and peak memory for a fixed model
size (2 x 256, batch 64 sentences of 10-40 tokens from Tatoeba es->en). Each variant
runs in its own subprocess so its peak memory (RSS on the CPU, the allocator's peak on
a GPU) is its own.
"""
from __future__ import annotations

import dataclasses
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import torch

from core.config import ModelConfig, load_preset
from core.errors import ConfigError

SHARED_SPA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tatoeba-spa-eng" / "spa.txt"


def load_bench_pairs(data_dir: str | None, limit: int = 20000) -> tuple[list[list[str]], list[list[str]]]:
    """Tokenised (es, en) pairs with 10-40 tokens on both sides.

    data_dir: the folder written by ../shared/bench/prepare_tatoeba.py (train.tok.es/en);
    without it, spa.txt beside the checkout is tokenised here with sacremoses.
    """
    if data_dir:
        root = Path(data_dir)
        src = (root / "train.tok.es").read_text(encoding="utf-8").splitlines()
        tgt = (root / "train.tok.en").read_text(encoding="utf-8").splitlines()
        pairs = list(zip((s.split() for s in src), (t.split() for t in tgt), strict=True))
    else:
        if not SHARED_SPA.exists():
            raise ConfigError(
                f"no benchmark data: {SHARED_SPA} is absent; pass --data DIR written by "
                "../shared/bench/prepare_tatoeba.py")
        from sacremoses import MosesTokenizer

        tok_es, tok_en = MosesTokenizer("es"), MosesTokenizer("en")
        pairs = []
        with SHARED_SPA.open(encoding="utf-8") as f:
            for line in f:
                en, es = line.rstrip("\n").split("\t")[:2]
                if not (10 <= len(es.split()) <= 40 and 10 <= len(en.split()) <= 40):
                    continue
                pairs.append((tok_es.tokenize(es, escape=False), tok_en.tokenize(en, escape=False)))
    pairs = [(s, t) for s, t in pairs if 10 <= len(s) <= 40 and 10 <= len(t) <= 40]
    return [p[0] for p in pairs[:limit]], [p[1] for p in pairs[:limit]]


def bench_variants() -> list[tuple[str, ModelConfig]]:
    from core.models.registry import VARIANTS

    base = load_preset("bench-onmt").model
    out = []
    for name, overrides in VARIANTS:
        fields = overrides if isinstance(overrides, dict) else dataclasses.asdict(overrides)
        keep = {k: v for k, v in fields.items() if k not in ("emb_size", "hidden_size", "layers")}
        out.append((name, dataclasses.replace(base, **keep)))
    return out


def measure_variant(name: str, steps: int, warmup: int, device: str, data_dir: str | None,
                    threads: int) -> dict:
    """Train `steps` batches after `warmup` and return throughput and peak memory."""
    from core.data.batching import BatchPlan
    from core.data.vocab import Vocab
    from core.models.registry import build_model
    from core.train.loop import sequence_nll

    torch.set_num_threads(threads)
    cfg = dict(bench_variants())[name]
    src_tok, tgt_tok = load_bench_pairs(data_dir)
    src_vocab = Vocab.build(src_tok, max_size=20000)
    tgt_vocab = Vocab.build(tgt_tok, max_size=20000)
    src_ids = [src_vocab.encode(s) for s in src_tok]
    tgt_ids = [tgt_vocab.encode(t) for t in tgt_tok]
    plan = BatchPlan(src_ids, tgt_ids, batch_size=64, seed=1)
    dev = torch.device(device)
    torch.manual_seed(1)
    model = build_model(cfg, len(src_vocab), len(tgt_vocab)).to(dev).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = plan.epoch(0)
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    tokens, start = 0, 0.0
    for i in range(warmup + steps):
        if i == warmup:
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
            tokens, start = 0, time.perf_counter()
        batch = plan.collate(batches[i % len(batches)]).to(dev)
        out = model(batch.src, batch.src_lens, batch.tgt_in)
        loss_sum, _, n = sequence_nll(out.log_probs, batch.tgt_out)
        opt.zero_grad(set_to_none=True)
        (loss_sum / n).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        tokens += n
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
        peak_mb = torch.cuda.max_memory_allocated(dev) / 2**20
    else:
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    elapsed = time.perf_counter() - start
    return {"variant": name, "device": device, "steps": steps, "tgt_tok_per_s": tokens / elapsed,
            "peak_mem_mb": peak_mb, "params": sum(p.numel() for p in model.parameters())}


def run_train_bench(variants: list[str] | None, steps: int, warmup: int, device: str,
                    data_dir: str | None, threads: int, out=sys.stdout) -> list[dict]:
    names = [n for n, _ in bench_variants()]
    if variants:
        unknown = sorted(set(variants) - set(names))
        if unknown:
            raise ConfigError(f"unknown variant(s) {unknown}; known: {names}")
        names = [n for n in names if n in variants]
    rows = []
    print(f"{'variant':<28} {'device':<8} {'tgt tok/s':>10} {'peak MB':>9} {'params':>10}", file=out)
    for name in names:
        cmd = [sys.executable, "-c",
               "import json,sys; from core.bench import measure_variant; "
               f"print('RESULT', json.dumps(measure_variant({name!r}, {steps}, {warmup}, "
               f"{device!r}, {data_dir!r}, {threads})))"]
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parents[1], env=dict(os.environ))
        line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        if proc.returncode or not line:
            print(f"{name:<28} failed: {proc.stderr.strip().splitlines()[-1:]}", file=out)
            continue
        row = json.loads(line[0][7:])
        rows.append(row)
        print(f"{name:<28} {device:<8} {row['tgt_tok_per_s']:>10.0f} {row['peak_mem_mb']:>9.0f} "
              f"{row['params']:>10,}", file=out, flush=True)
    return rows

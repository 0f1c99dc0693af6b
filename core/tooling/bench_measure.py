"""One variant of `bench train` measured in its own process (run_train_bench starts it).

measure_variant builds the variant's data and model, trains its warm-up and timed steps
(core.tooling.bench.bench_step, as the trainer updates) and returns the row: target
tokens/s, peak memory (on the CPU the peak RSS and the RSS before the model was built,
on a GPU the allocator's peak), the GPU's utilisation, and with --profile / --flops their
reports.
"""
from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from core.config import ModelConfig, load_preset
from core.data.context import CONTEXT_START
from core.families import family_traits
from core.tooling.bench import (
    batch_label,
    bench_forward_backward,
    bench_step,
    bench_variants,
    bench_vocabularies,
    previous_sentence_context,
    variant_data,
    variant_preset,
)
from core.tooling.bench_profile import profile_steps
from core.tooling.bench_roofline import count_flops, matmul_peak_gflops, roofline
from core.tooling.gpu_utilisation import GpuUtilisation
from core.train.device import amp_active
from core.train.optim import build_optimizer


def _rss_mb() -> float:
    """Current resident set size in MB (Linux /proc; 0 where unavailable)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass
class BenchData:
    """A variant's bench data: its batch plan (core.data.batching.BatchPlan) over the
    pairs, the vocabularies (core.data.vocab.Vocab), the number of pairs and the batch
    (variant_data)."""

    plan: Any
    src_vocab: Any
    tgt_vocab: Any
    pairs: int
    batch_size: int
    batch_tokens: int


def bench_data(name: str, cfg: ModelConfig, pairs_file: str, batch_size: int,
               batch_tokens: int) -> BenchData:
    """The pairs in `pairs_file` (JSON [src, tgt], tokenised) as variant `name`'s ids, with
    the previous pair as context for context models, planned in batches (variant_data)."""
    # lazy: a top-level import would load numpy, sentencepiece
    from core.data.batching import BatchPlan

    with open(pairs_file, encoding="utf-8") as f:
        src_tok, tgt_tok = json.load(f)
    _, _, batch_size, batch_tokens = variant_data(name, batch_size, batch_tokens)
    src_vocab, tgt_vocab = bench_vocabularies(name, src_tok, tgt_tok)
    src_ids = [src_vocab.encode(s) for s in src_tok]
    tgt_ids = [tgt_vocab.encode(t) for t in tgt_tok]
    del src_tok, tgt_tok
    ctx_ids = None
    if family_traits(cfg.family).context:  # the previous pair's source, or its target
        side = tgt_ids if cfg.ctx_side == "target" else src_ids
        ctx_ids = previous_sentence_context(side, src_vocab.encode([CONTEXT_START])[0])
    plan = BatchPlan(src_ids, tgt_ids, batch_size=batch_size, batch_tokens=batch_tokens,
                     seed=1, ctx_ids=ctx_ids)
    return BenchData(plan, src_vocab, tgt_vocab, len(src_ids), batch_size, batch_tokens)


def set_decoder_switches(dev: torch.device, fused_decoder_gpu: bool,
                         decoder_graphs: bool) -> bool:
    """Set Luong's input-feeding decoder switches for this process (measure_variant's
    fused_decoder_gpu and decoder_graphs) -> whether the fused decoder runs on `dev` as
    well as on the CPU."""
    # lazy: a top-level import would load numpy, sentencepiece (its decoder switches are
    # set for this process only)
    from core.models.luong import LuongModel

    fused = fused_decoder_gpu and dev.type != "cpu"
    if fused:
        LuongModel.fuse_decoder_devices = ("cpu", dev.type)
    if not decoder_graphs:
        LuongModel.graph_decoder_devices = ()
    return fused


@dataclass
class Timing:
    """What the timed steps measured: target tokens, seconds, the GPU's mean utilisation
    (None off CUDA), and where CUDA graphs ran the buckets recorded and the seconds of the
    untimed recording pass (0 where none ran)."""

    tokens: int
    seconds: float
    gpu_util: float | None
    graph_buckets: int
    capture_s: float


def time_steps(train_step: Callable[[int], int], model, warmup: int, steps: int,
               dev: torch.device) -> Timing:
    """`warmup` untimed steps, then `steps` timed ones (train_step(i) -> its target tokens).
    Where the model's decoder graphs ran (LuongModel's `_graphs`), the timed steps'
    batches are first trained once more, untimed, so that the timing sees only replays."""
    for i in range(warmup):
        train_step(i)
    graphs = model.__dict__.get("_graphs")  # LuongModel's decoder graphs, where they ran
    capture_s = 0.0
    if graphs is not None and graphs[1].captured:
        # a real run records each bucket once in thousands of steps; a short timing
        # would mostly measure the recording
        start = time.perf_counter()
        for i in range(warmup, warmup + steps):
            train_step(i)
        capture_s = time.perf_counter() - start
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    with GpuUtilisation(dev) as utilisation:
        start = time.perf_counter()
        tokens = sum(train_step(i) for i in range(warmup, warmup + steps))
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        elapsed = time.perf_counter() - start
    buckets = graphs[1].captured if capture_s else 0
    return Timing(tokens, elapsed, utilisation.percent, buckets, capture_s)


def memory_columns(dev: torch.device, base_mb: float) -> dict[str, float]:
    """A row's peak_mem_mb and base_mem_mb: on CUDA the allocator's peak (base 0), else
    the process's peak RSS and `base_mb` (the RSS before the model was built)."""
    if dev.type == "cuda":
        return {"peak_mem_mb": torch.cuda.max_memory_allocated(dev) / 2**20,
                "base_mem_mb": 0.0}
    # ru_maxrss is in KiB on Linux
    return {"peak_mem_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "base_mem_mb": base_mb}


def variant_label(name: str, sampled_softmax: int, fused: bool, graphs: bool,
                  amp: bool) -> str:
    """A row's variant: the name with its suffixes ('+ssK', '+fused', '+graphs', '+bf16')."""
    return name + (f" +ss{sampled_softmax}" if sampled_softmax else "") + \
        (" +fused" if fused else "") + (" +graphs" if graphs else "") + \
        (" +bf16" if amp else "")


def measure_variant(name: str, steps: int, warmup: int, device: str, pairs_file: str,
                    threads: int, sampled_softmax: int = 0, amp: bool = False,
                    flops: bool = False, batch_size: int = 0, batch_tokens: int = 0,
                    profile: int = 0, fused_decoder_gpu: bool = False,
                    decoder_graphs: bool = True) -> dict:
    """Train `steps` batches after `warmup` on the pairs in `pairs_file` (JSON [src, tgt])
    and return throughput and peak memory. Runs in a fresh process (see core.tooling.bench.run_train_bench).
    sampled_softmax: 0 = full softmax, K = Jean et al.'s K-word candidate softmax;
    amp: bf16 autocast (train.amp); flops: afterwards, count the timed batches' matrix-
    product FLOP and measure the machine's peak (core/tooling/bench_roofline.py);
    batch_size / batch_tokens: see variant_data. On CUDA the row also holds the GPU's
    mean utilisation over the timed steps (core/tooling/gpu_utilisation.py). profile:
    afterwards, `profile` more steps under torch.profiler, their report in row["profile"]
    (core/tooling/bench_profile.py). fused_decoder_gpu: Luong's input-feeding decoder as
    one autograd node on a GPU too (LuongModel.fuse_decoder_devices; row suffix
    '+fused'). decoder_graphs: False turns off the CUDA graphs of that decoder
    (LuongModel.graph_decoder_devices; on by default on a GPU, for global and local-p
    attention: LuongModel.graph_decoder_attentions). Where graphs
    ran, the timed steps' batches are first trained once more, untimed, so that the
    timing sees only replays (row suffix '+graphs'; graph_buckets and capture_s: the
    buckets recorded, the seconds of that pass)."""
    # imported when called: tests patch the name where it is defined
    from core.models.registry import build_model

    torch.set_num_threads(threads)
    cfg = dict(bench_variants())[name]
    data = bench_data(name, cfg, pairs_file, batch_size, batch_tokens)
    dev = torch.device(device)
    base_mb = _rss_mb()
    fused = set_decoder_switches(dev, fused_decoder_gpu, decoder_graphs)
    torch.manual_seed(1)
    model = build_model(cfg, len(data.src_vocab), len(data.tgt_vocab)).to(dev).train()
    train_cfg = load_preset(variant_preset(name)).train  # luong-paper: its SGD
    opt = build_optimizer(model.parameters(), train_cfg)
    clip = train_cfg.clip_norm
    batches = data.plan.epoch(0)
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)

    def forward_backward(i: int) -> tuple[int, dict | None]:
        return bench_forward_backward(model, opt, data.plan.collate(batches[i % len(batches)]),
                                      dev, amp, clip, sampled_softmax, len(data.tgt_vocab))

    def train_step(i: int) -> int:
        return bench_step(model, opt, data.plan.collate(batches[i % len(batches)]), dev, amp,
                          clip, sampled_softmax, len(data.tgt_vocab))

    timing = time_steps(train_step, model, warmup, steps, dev)
    amp = amp_active(dev, amp)  # a row says bf16 only if bf16 really ran
    row = {"variant": variant_label(name, sampled_softmax, fused, bool(timing.capture_s), amp),
           "sampled_softmax": sampled_softmax, "amp": amp, "device": device,
           "threads": torch.get_num_threads(), "steps": steps, "tgt_tokens": timing.tokens,
           "seconds": round(timing.seconds, 3), "tgt_tok_per_s": timing.tokens / timing.seconds,
           "params": sum(p.numel() for p in model.parameters()),
           "src_vocab": len(data.src_vocab), "tgt_vocab": len(data.tgt_vocab),
           "pairs": data.pairs,
           "batch": batch_label(data.batch_size, data.batch_tokens)}
    if timing.capture_s:
        row.update(graph_buckets=timing.graph_buckets, capture_s=round(timing.capture_s, 3))
    if timing.gpu_util is not None:
        row["gpu_util"] = timing.gpu_util
    row.update(memory_columns(dev, base_mb))
    if profile:  # after the timing and the memory: the profiler costs time and memory
        first = warmup + steps
        row["profile"] = profile_steps(train_step, range(first, first + profile), dev)
    if flops:  # after the memory: counting holds no more than a step does
        total = sum(count_flops(lambda i=i: forward_backward(i), model)
                    for i in range(warmup, warmup + steps))
        peak = matmul_peak_gflops(dev, torch.bfloat16 if amp else torch.float32)
        row.update(roofline(row, total / timing.tokens, peak))
    return row

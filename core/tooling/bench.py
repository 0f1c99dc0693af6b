"""Benchmarks that print numbers (never timed unit tests).

`python main.py bench train` measures, for every model family and attention variant,
steady-state training throughput (target tokens/s, EOS included, padding excluded: the
count OpenNMT-py reports) and peak memory for a fixed model size (the bench-onmt preset:
2 x 256, batch 64 sentences, Adam, clip 5, loss normalised by target tokens).

Two data sets:
- split "default": Tatoeba es->en pairs with 10-40 tokens on both sides (at most 20,000);
- split "onmt": exactly what ../shared/bench/peers-onmt.sh gives OpenNMT-py: every pair of
  prepare_tatoeba.py's train.tok.{es,en} with at most 50 tokens a side (its filtertoolong),
  vocabularies of 20,000 words from that training data.

The parent loads and tokenises the pairs once and writes them to a temporary file; each
variant then runs in its own subprocess so its peak memory is its own: on the CPU the
peak RSS (ru_maxrss) and, to separate it from the interpreter and the data, the RSS just
before the model is built; on a GPU the allocator's peak.
"""
from __future__ import annotations

import dataclasses
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import torch

from core.config import ModelConfig, RunConfig, load_preset
from core.data.context import CONTEXT_START, sentence_context
from core.errors import ConfigError
from core.families import family_traits
from core.models.registry import VARIANTS
from core.tooling.bench_profile import profile_steps
from core.tooling.bench_roofline import HEADER as ROOFLINE_HEADER
from core.tooling.bench_roofline import count_flops, matmul_peak_gflops, roofline, roofline_columns
from core.tooling.gpu_utilisation import GpuUtilisation
from core.train.device import amp_active, cpu_bf16_status
from core.train.optim import build_optimizer, clip_gradients, embedding_rows

SHARED_SPA = Path(__file__).resolve().parents[3] / "shared" / "data" / "tatoeba-spa-eng" / "spa.txt"
SPLITS = ("default", "onmt")
SPECIALS = 4  # <pad> <unk> <s> </s>: vocab sizes below count words, as OpenNMT-py does
PRESET = "bench-onmt"
#: variants at a paper's full size, measured only when named (--variant): their own preset
#: also gives the batch and the vocabulary sizes
PAPER_SIZE = {"luong-paper": "luong-paper"}

Pairs = tuple[list[list[str]], list[list[str]]]


def load_bench_pairs(data_dir: str | None, split: str = "default", limit: int = 20000) -> Pairs:
    """Tokenised (es, en) sentence pairs of `split` (see the module docstring).

    data_dir: the folder written by ../shared/bench/prepare_tatoeba.py (train.tok.es/en);
    without it, spa.txt beside the checkout is tokenised here with sacremoses (default
    split only).
    """
    if split not in SPLITS:
        raise ConfigError(f"unknown bench split {split!r}; use one of {SPLITS}")
    if data_dir:
        root = Path(data_dir)
        files = [root / "train.tok.es", root / "train.tok.en"]
        for f in files:
            if not f.is_file():
                raise ConfigError(f"{f}: missing; pass --data DIR written by "
                                  "../shared/bench/prepare_tatoeba.py")
        src = files[0].read_text(encoding="utf-8").splitlines()
        tgt = files[1].read_text(encoding="utf-8").splitlines()
        if len(src) != len(tgt):
            raise ConfigError(f"{files[0]} has {len(src)} lines but {files[1]} has {len(tgt)}")
        pairs = [(s.split(), t.split()) for s, t in zip(src, tgt, strict=True)]
    else:
        if split == "onmt":
            raise ConfigError("--split onmt needs --data DIR (prepare_tatoeba.py's output, the "
                              "folder peers-onmt.sh trains OpenNMT-py on)")
        if not SHARED_SPA.exists():
            raise ConfigError(
                f"no benchmark data: {SHARED_SPA} is absent; pass --data DIR written by "
                "../shared/bench/prepare_tatoeba.py")
        from sacremoses import MosesTokenizer  # lazy: a top-level import would load sacremoses

        tok_es, tok_en = MosesTokenizer("es"), MosesTokenizer("en")
        pairs = []
        with SHARED_SPA.open(encoding="utf-8") as f:
            for line in f:
                en, es = line.rstrip("\n").split("\t")[:2]
                if not (10 <= len(es.split()) <= 40 and 10 <= len(en.split()) <= 40):
                    continue
                pairs.append((tok_es.tokenize(es, escape=False), tok_en.tokenize(en, escape=False)))
    if split == "onmt":  # filtertoolong: src_seq_length = tgt_seq_length = 50, no cap on count
        pairs = [(s, t) for s, t in pairs if 0 < len(s) <= 50 and 0 < len(t) <= 50]
    else:
        pairs = [(s, t) for s, t in pairs if 10 <= len(s) <= 40 and 10 <= len(t) <= 40][:limit]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def bench_preset() -> RunConfig:
    """The RunConfig of preset PRESET ('bench-onmt'), the sizes every benchmark variant
    starts from."""
    return load_preset(PRESET)


def bench_variants() -> list[tuple[str, ModelConfig]]:
    """Every registry variant at the preset's size (2 x 256, dropout 0.2, ...), then the
    Transformer families (transformer_variants), then the paper-size models (PAPER_SIZE:
    luong-paper, Luong et al.'s 4 x 1000)."""
    base = bench_preset().model
    out = []
    for name, overrides in VARIANTS:
        fields = overrides if isinstance(overrides, dict) else dataclasses.asdict(overrides)
        keep = {k: v for k, v in fields.items() if k not in ("emb_size", "hidden_size", "layers")}
        out.append((name, dataclasses.replace(base, **keep)))
    paper = [(name, load_preset(preset).model) for name, preset in PAPER_SIZE.items()]
    return out + transformer_variants() + paper


def transformer_variants() -> list[tuple[str, ModelConfig]]:
    """The Transformer families: at the bench size (d_model 256, FF 1024, 4 heads, 2 + 2
    layers: about the recurrent bench model's parameters), the context models (previous
    sentence as context: concat, multi-encoder with weight sharing and two-stage
    weights, and the previous target sentence as context) at that size, and the thesis-size Transformer (transformer-thesis preset)."""
    dropout = bench_preset().model.dropout
    size = dict(d_model=256, ff_size=1024, heads=4, enc_layers=2, dec_layers=2,
                dropout=dropout, ctx_sentences=1)
    return [
        ("transformer", ModelConfig(family="transformer", **size)),
        ("concat", ModelConfig(family="concat", **size)),
        ("context-ws", ModelConfig(family="context_transformer", strategy="ws", **size)),
        ("context-ts", ModelConfig(family="context_transformer", strategy="ts", **size)),
        ("context-tgt", ModelConfig(family="context_transformer", strategy="ws",
                                    ctx_side="target", **size)),
        ("transformer-thesis", load_preset("transformer-thesis").model),
    ]


def previous_sentence_context(src_ids: list[list[int]], start_id: int) -> list[list[int]]:
    """Context ids for context models on bench pairs (no documents): each pair's previous
    pair in the list is its previous sentence, the first one starts the 'document'."""
    return [sentence_context([src_ids[i - 1]] if i else [], [], 1, 0, start_id)
            for i in range(len(src_ids))]


def _rss_mb() -> float:
    """Current resident set size in MB (Linux /proc; 0 where unavailable)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def batch_label(batch_size: int, batch_tokens: int) -> str:
    """'64 sentences' or '4,096 tokens': how a bench row's batches were cut."""
    return f"{batch_tokens:,} tokens" if batch_tokens > 0 else f"{batch_size} sentences"


def variant_preset(name: str) -> str:
    """The preset whose data and training settings variant `name` runs with: its own for a
    paper-size variant, else the bench's (PRESET)."""
    return PAPER_SIZE.get(name, PRESET)


def variant_data(name: str, batch_size: int = 0, batch_tokens: int = 0) -> tuple[int, int, int, int]:
    """(source vocab, target vocab, batch sentences, batch tokens) for variant `name`
    (from variant_preset); batch_size or batch_tokens (> 0) override the batch (tokens win
    when both are given)."""
    data = load_preset(variant_preset(name)).data
    sentences, tokens = data.batch_size, data.batch_tokens
    if batch_tokens > 0:
        sentences, tokens = 0, batch_tokens
    elif batch_size > 0:
        sentences, tokens = batch_size, 0
    return data.src_vocab_size, data.tgt_vocab_size, sentences, tokens


def bench_vocabularies(name: str, src_tok, tgt_tok):
    """(source Vocab, target Vocab) of variant `name` built from the tokenised bench pairs,
    at the vocabulary sizes its preset gives (variant_data)."""
    from core.data.vocab import Vocab  # lazy: a top-level import would load sentencepiece

    src_size, tgt_size, _, _ = variant_data(name)
    return (Vocab.build(src_tok, max_size=src_size + SPECIALS),
            Vocab.build(tgt_tok, max_size=tgt_size + SPECIALS))


def bench_forward_backward(model, opt, host_batch, device: torch.device, amp: bool,
                           clip: float, sampled_softmax: int = 0,
                           vocab_size: int = 0) -> tuple[int, dict | None]:
    """The forward and backward pass of one bench update on `host_batch` (a collated
    Batch on the host), as the trainer does them: loss over target tokens, counted on the
    host (no wait for a GPU), gradients zeroed to None first -> (target tokens, the
    embedding rows for clip_gradients on the CPU, else None)."""
    # lazy: a top-level import would load numpy
    from core.train.loop import forward_batch, sequence_nll

    out, _, targets = forward_batch(model, host_batch, device, amp, sampled_softmax, vocab_size)
    loss_sum, _, n = sequence_nll(out.scores, targets, n_tokens=host_batch.n_tgt_tokens,
                                  consume_scores=True)
    opt.zero_grad(set_to_none=True)
    loss = loss_sum / n  # normalization: tokens
    rows = embedding_rows(loss) if clip > 0 and device.type == "cpu" else None  # as the trainer
    loss.backward()
    return n, rows


def bench_step(model, opt, host_batch, device: torch.device, amp: bool, clip: float,
               sampled_softmax: int = 0, vocab_size: int = 0) -> int:
    """One bench update on `host_batch` (bench_forward_backward, the clip, the optimiser's
    step) -> its target tokens."""
    n, rows = bench_forward_backward(model, opt, host_batch, device, amp, clip,
                                     sampled_softmax, vocab_size)
    if clip > 0:
        clip_gradients(model.parameters(), clip, rows)
    opt.step()
    return n


@dataclasses.dataclass
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


@dataclasses.dataclass
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
    and return throughput and peak memory. Runs in a fresh process (see run_train_bench).
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


def machine_line(device: str, threads: int) -> str:
    """One line naming the machine, e.g. 'cpu, 2 threads (nproc 2), torch 2.13.0, x86_64'."""
    where = device
    if device.startswith("cuda") and torch.cuda.is_available():
        where = f"{torch.cuda.get_device_name(torch.device(device))} ({device})"
    bf16 = "native bf16" if amp_active(torch.device(device), True) else \
        f"no native bf16 ({cpu_bf16_status()[1]})"
    return (f"{where}, {threads} threads (nproc {os.cpu_count()}), torch {torch.__version__}, "
            f"{platform.machine()}, {bf16}")


def format_row(row: dict) -> str:
    """One aligned line of a benchmark row under HEADER: variant, target tokens/s, peak MB,
    training MB (peak - base) and parameters in millions; with --flops also the matmul
    MFLOP per token, GFLOP/s achieved, the machine's peak, its share and the ceiling."""
    train = row["peak_mem_mb"] - row["base_mem_mb"]
    line = (f"{row['variant']:<36} {row['tgt_tok_per_s']:>9.0f} {row['peak_mem_mb']:>8.0f} "
            f"{train:>8.0f} {row['params'] / 1e6:>7.2f}M")
    if "gflops" in row:
        line += roofline_columns(row)
    if "gpu_util" in row:
        line += f"  GPU {row['gpu_util']:.0f} % busy"
    return line


HEADER = f"{'variant':<36} {'tgt tok/s':>9} {'peak MB':>8} {'train MB':>8} {'params':>8}"


def run_train_bench(variants: list[str] | None, steps: int, warmup: int, device: str,
                    data_dir: str | None, threads: int, split: str = "default",
                    out: TextIO = sys.stdout, sampled_softmax: int = 0,
                    amp: bool = False, flops: bool = False, batch_size: int = 0,
                    batch_tokens: int = 0, profile: int = 0,
                    fused_decoder_gpu: bool = False, decoder_graphs: bool = True) -> list[dict]:
    """Measure every variant (or `variants`), print a table to `out`, return the rows.
    With sampled_softmax = K, each variant is measured a second time with Jean et al.'s
    K-word candidate softmax (row suffix '+ssK'); with amp, every measurement is repeated
    in bf16 autocast (suffix '+bf16') where the device has native bf16.

    'peak MB' is the subprocess's peak (RSS on the CPU), 'train MB' that peak minus the
    RSS before the model was built (interpreter, torch and the data excluded).
    With flops, each row also gets the roofline of core/tooling/bench_roofline.py:
    matmul MFLOP per target token, GFLOP/s achieved, this machine's matmul peak at the
    row's precision, the share of it used, and the ceiling in target tok/s.
    Batches: each variant's preset's (64 sentences; luong-paper 128), or batch_size
    sentences, or batch_tokens padded target tokens (see variant_data). The paper-size
    variants (PAPER_SIZE) run only when named. With profile = N, N more steps of each
    run are profiled and the report printed under its row (core/tooling/bench_profile.py).
    With fused_decoder_gpu, Luong's fused input-feeding decoder runs on a GPU too (rows
    '+fused'; the CPU always runs it); without decoder_graphs, not as CUDA graphs (see
    measure_variant).
    """
    names = [n for n, _ in bench_variants()]
    if variants:
        unknown = sorted(set(variants) - set(names))
        if unknown:
            raise ConfigError(f"unknown variant(s) {unknown}; known: {names}")
        names = [n for n in names if n in variants]
    else:
        names = [n for n in names if n not in PAPER_SIZE]
    src, tgt = load_bench_pairs(data_dir, split)
    n_tgt = sum(len(t) + 1 for t in tgt)
    print(f"# bench train: {machine_line(device, threads)}", file=out)
    print(f"# split {split}: {len(src)} pairs, mean target {n_tgt / max(1, len(tgt)):.1f} "
          f"tokens + EOS; preset {PRESET}; {warmup} warm-up + {steps} timed steps", file=out)
    batches = sorted({batch_label(*variant_data(n, batch_size, batch_tokens)[2:]) for n in names})
    print(f"# batches of {' or '.join(batches)}" + (
        " (paper-size variants: their own preset's vocabularies and optimiser)"
        if any(n in PAPER_SIZE for n in names) else ""), file=out)
    if flops:
        print("# matmul FLOP counted by torch's FlopCounterMode over the timed batches; peak: "
              "the best large square product at the row's precision; ceiling = peak / "
              "FLOP per token", file=out)
    print(HEADER + (ROOFLINE_HEADER if flops else ""), file=out, flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="nmt-bench-") as tmp:
        pairs_file = os.path.join(tmp, "pairs.json")
        with open(pairs_file, "w", encoding="utf-8") as f:
            json.dump([src, tgt], f)
        del src, tgt
        precisions = [False]
        if amp and amp_active(torch.device(device), True):
            precisions.append(True)
        elif amp:
            print(f"# --amp: {device} has no native bf16 ({cpu_bf16_status()[1]}); "
                  "bf16 rows skipped", file=out)
        ks = [0, sampled_softmax] if sampled_softmax else [0]
        runs = [(n, k, a) for n in names for k in ks for a in precisions]
        for name, k, use_amp in runs:
            # the child starts as main.py does: glibc keeps freed memory (core.allocator)
            cmd = [sys.executable, "-c",
                   "from core.allocator import keep_freed_memory; keep_freed_memory(); "
                   "import json; from core.tooling.bench import measure_variant; "
                   f"print('RESULT', json.dumps(measure_variant({name!r}, {steps}, {warmup}, "
                   f"{device!r}, {pairs_file!r}, {threads}, {k}, {use_amp}, {flops}, "
                   f"{batch_size}, {batch_tokens}, {profile}, {fused_decoder_gpu}, "
                   f"{decoder_graphs})))"]
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  cwd=Path(__file__).resolve().parents[2], env=dict(os.environ))
            line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
            if proc.returncode or not line:
                print(f"{name:<36} failed: {proc.stderr.strip().splitlines()[-1:]}", file=out)
                continue
            row = json.loads(line[0][7:])
            row["split"] = split
            rows.append(row)
            print(format_row(row), file=out, flush=True)
            if "profile" in row:
                print(row["profile"], file=out, flush=True)
    return rows

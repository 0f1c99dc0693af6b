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
variant then runs in its own subprocess (core.tooling.bench_measure) so its peak memory
is its own: on the CPU the peak RSS (ru_maxrss) and, to separate it from the
interpreter and the data, the RSS just before the model is built; on a GPU the
allocator's peak.
"""
from __future__ import annotations

import dataclasses
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TextIO

import torch

from core.config import ModelConfig, RunConfig, load_preset
from core.data.context import sentence_context
from core.errors import ConfigError
from core.models.registry import VARIANTS
from core.tooling.bench_roofline import HEADER as ROOFLINE_HEADER
from core.tooling.bench_roofline import roofline_columns
from core.train.device import amp_active, cpu_bf16_status
from core.train.optim import clip_gradients, embedding_rows

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
    core.tooling.bench_measure.measure_variant).
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
                   "import json; from core.tooling.bench_measure import measure_variant; "
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

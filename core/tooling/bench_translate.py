"""`bench translate`: decoding speed at a fixed output length, greedy and beam search.

Every sentence's output is forced to exactly `length` tokens (then EOS): search's
min_len = max_len_abs = length, so two tools (or two versions) emit the same number of
tokens whatever their weights, as `onmt_translate -min_length N -max_length N` does for
OpenNMT-py. The model is a bench variant (core.tooling.bench, the bench-onmt size) with its
initial weights, or a trained run of a workspace; the sentences are the first
`sentences` sources of the bench split, decoded `batch_size` at a time in input order
after one untimed warm-up batch. Speed does not depend on the weights at a fixed length.

With a shortlist (`bench translate --shortlist 50,100`) the same batches are decoded a
second time over each batch's lexical shortlist (core.infer.shortlist), its lexicon
aligned by eflomal on the bench pairs (cached in the data folder); the time to pick each
batch's candidates is part of the timed work.

With `--int8` each beam size is also decoded with int8 products (core.models.int8, as
`translate --int8`): the bench model's weights quantised per row, packed once before the
timing.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

import torch

from core.errors import ConfigError
from core.models import int8
from core.tooling.bench import (
    bench_variants,
    bench_vocabularies,
    load_bench_pairs,
    machine_line,
    variant_preset,
)
from core.tooling.bench_roofline import HEADER as ROOFLINE_HEADER
from core.tooling.bench_roofline import count_flops, matmul_peak_gflops, roofline, roofline_columns
from core.train import guidance
from core.train.device import amp_active, autocast

HEADER = f"{'model':<34} {'search':>8} {'batch':>6} {'sent/s':>8} {'tgt tok/s':>10} {'ms/sent':>8}"


def decode_all(model, batches: list[list[list[int]]], beam: int, length: int,
               device: torch.device, amp: bool = False, shortlist=None,
               q8: bool = False) -> tuple[int, int]:
    """Decode every batch at the fixed length (in bf16 autocast with `amp`, where the
    device has it; with int8 products with `q8`, the model prepared; over each batch's
    candidates with a Shortlist); returns (output tokens (EOS excluded), candidate words
    summed over batches)."""
    # lazy: a top-level import would load numpy
    from core.infer.beam import beam_search
    from core.infer.greedy import greedy  # lazy, as above

    # lazy: a top-level import would load numpy, sacremoses, sentencepiece
    from core.infer.translate import pad_batch

    produced = words = 0
    # autocast caches weight casts
    with torch.no_grad(), autocast(device, amp), int8.products(q8):
        for sents in batches:
            src, lens = pad_batch(sents, device)
            opts = dict(max_len_abs=length, max_len_ratio=1e9, min_len=length)
            if shortlist is not None:
                opts["out_vocab"] = shortlist.candidates(src)
                words += len(opts["out_vocab"])
            if beam == 1:
                hyps = greedy(model, src, lens, **opts)
            else:
                hyps = [h[0] for h in beam_search(model, src, lens, beam=beam, **opts)]
            produced += sum(len(h.tokens) for h in hyps)
    return produced, words


def bench_lexicon(src_tok, tgt_tok, src_vocab, tgt_vocab, data_dir: str | None, out: TextIO):
    """LexicalCounts of the bench pairs: eflomal (grow-diag-final-and) links on the
    vocabulary's tokens, stored under `data_dir`/alignments (a temporary folder without
    one)."""
    # lazy: a top-level import would load numpy
    from core.evaluate.baseline import stored_or_aligned_links
    from core.infer.shortlist import count_links  # lazy: a top-level import would load numpy

    src_ids = [src_vocab.encode(s) for s in src_tok]
    tgt_ids = [tgt_vocab.encode(t) for t in tgt_tok]
    src_lines = guidance.token_lines(src_ids, src_vocab)
    tgt_lines = guidance.token_lines(tgt_ids, tgt_vocab)
    with tempfile.TemporaryDirectory(prefix="nmtwb-bench-") as tmp:
        links = stored_or_aligned_links(
            Path(data_dir or tmp), src_lines, tgt_lines,
            lambda m: print(f"# shortlist of the bench pairs: {m}", file=out, flush=True))
    return count_links(src_ids, tgt_ids, links, len(src_vocab), len(tgt_vocab))


def run_translate_bench(variant: str, sentences: int, length: int, beams: list[int],
                        batch_size: int, device: str, data_dir: str | None, threads: int,
                        split: str = "default", out: TextIO = sys.stdout,
                        amp: bool = False, shortlist: tuple[int, int] | None = None,
                        flops: bool = False, q8: bool = False) -> list[dict]:
    """Measure `variant` (a bench variant name) decoding, in fp32 and (with `amp`, where
    the device has native bf16) in bf16 autocast, over the whole vocabulary and (with
    `shortlist` = (per_word, frequent)) over each batch's shortlist; print a table,
    return rows; with `q8` also with int8 products (not on CUDA). With `flops`, each row also gets the roofline of
    core/tooling/bench_roofline.py: matrix-product MFLOP per output token (the decoding
    run again under the counter), GFLOP/s, this machine's peak, its share, the ceiling."""
    # imported when called: tests patch the name where it is defined
    from core.models.registry import build_model

    variants = dict(bench_variants())
    if variant not in variants:
        raise ConfigError(f"unknown variant {variant!r}; known: {sorted(variants)}")
    if min(beams) < 1 or length < 1 or sentences < 1 or batch_size < 1:
        raise ConfigError("--beam, --length, --sentences and --batch must be >= 1")
    torch.set_num_threads(threads)
    src_tok, tgt_tok = load_bench_pairs(data_dir, split)
    # luong-paper: its own vocabularies
    src_vocab, tgt_vocab = bench_vocabularies(variant, src_tok, tgt_tok)
    ids = [src_vocab.encode(s) for s in src_tok[:sentences]]
    if len(ids) < sentences:
        raise ConfigError(f"the bench split has {len(ids)} sentences, fewer than {sentences}")
    batches = [ids[i:i + batch_size] for i in range(0, len(ids), batch_size)]
    dev = torch.device(device)
    torch.manual_seed(1)
    model = build_model(variants[variant], len(src_vocab), len(tgt_vocab)).to(dev).eval()
    print(f"# bench translate: {machine_line(device, threads)}", file=out)
    print(f"# {len(ids)} sentences of split {split}, output fixed at {length} tokens + EOS, "
          f"batches of {batch_size} in input order; {variant} at the "
          f"{variant_preset(variant)} size",
          file=out)
    print(HEADER + (ROOFLINE_HEADER if flops else ""), file=out, flush=True)
    rows = []
    peaks: dict[bool, float] = {}
    precisions = ["fp32"] + (["bf16"] if amp and amp_active(dev, True) else [])
    if amp and len(precisions) == 1:
        print(f"# --amp: {dev} has no native bf16; fp32 only", file=out)
    if q8:
        if dev.type != "cpu":
            raise ConfigError("--int8 runs on the CPU only: use --device cpu")
        int8.prepare(model)
        precisions.append("int8")
        print(f"# --int8: {int8.status_text([model])}; ATEN_CPU_CAPABILITY="
              f"{os.environ.get('ATEN_CPU_CAPABILITY', 'default')}", file=out)
    lists = [None]
    if shortlist is not None:
        from core.infer.shortlist import Shortlist  # lazy: a top-level import would load numpy

        lists.append(Shortlist(bench_lexicon(src_tok, tgt_tok, src_vocab, tgt_vocab,
                                             data_dir, out), *shortlist))
    for sl, beam, mode in ((s, b, p) for s in lists for p in precisions for b in beams):
        bf16, q8 = mode == "bf16", mode == "int8"
        decode_all(model, batches[:1], beam, length, dev, bf16, sl, q8)  # warm-up
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        start = time.perf_counter()
        produced, words = decode_all(model, batches, beam, length, dev, bf16, sl, q8)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        elapsed = time.perf_counter() - start
        if produced != length * len(ids):
            raise RuntimeError(f"decoded {produced} tokens, expected {length * len(ids)}")
        row = {"variant": variant, "beam": beam, "batch": batch_size, "sentences": len(ids),
               "length": length, "seconds": elapsed, "sent_per_s": len(ids) / elapsed,
               "tgt_tok_per_s": produced / elapsed, "device": device,
               "threads": torch.get_num_threads(), "precision": mode,
               "shortlist": None if sl is None else f"{sl.per_word},{sl.frequent}",
               "mean_candidates": words / len(batches) if sl is not None else len(tgt_vocab)}
        if flops and not q8:  # the counter sees no quantized products
            total = count_flops(lambda b=beam, a=bf16, lst=sl: decode_all(
                model, batches, b, length, dev, a, lst), model)
            if bf16 not in peaks:
                peaks[bf16] = matmul_peak_gflops(dev, torch.bfloat16 if bf16 else torch.float32)
            row.update(roofline(row, total / produced, peaks[bf16]))
        rows.append(row)
        search = "greedy" if beam == 1 else f"beam {beam}"
        name = variant + ("" if mode == "fp32" else f"+{mode}")
        if sl is not None:
            name += f"+sl{sl.per_word},{sl.frequent}"
        line = (f"{name:<34} {search:>8} {batch_size:>6} {row['sent_per_s']:>8.1f} "
                f"{row['tgt_tok_per_s']:>10.0f} {1000 * elapsed / len(ids):>8.1f}")
        if flops and not q8:
            line += roofline_columns(row)
        print(line, file=out, flush=True)
    if shortlist is not None:
        mean = next(r["mean_candidates"] for r in rows if r["shortlist"])
        print(f"# shortlist: {mean:,.0f} candidate words per batch on average, of "
              f"{len(tgt_vocab):,}", file=out)
    return rows

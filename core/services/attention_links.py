"""Guide links read off trained runs' own attention (train.guide_runs), instead of
eflomal's: guided alignment with no aligner outside the models, after Chen et al. (2020,
"Accurate Word Alignment Induction from Neural Machine Translation"), who train an
alignment module on their model's own symmetrised attention alignments.

    links = attention_guide_links(ws, corpus_dir, src_lines, tgt_lines, ["fwd", "rev"])

Each run force-decodes the training pairs on its own vocabulary (the reverse run reads
them target -> source), its attention is read at the run's default reading
(core.evaluate.readings.default_reading) without the final-punctuation sink, and each
target token is linked to its argmax source token; two runs' links are symmetrised with
grow-diag-final-and. The links are stored beside eflomal's in the corpus's folder
(`corpora/<id>/alignments/<sha256>-attention-<sha256>.pharaoh`), keyed by the token lines
and by each run's name, checkpoint step and reading, so a second head over the same runs
reuses them.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from core.atomic import write_text_atomic
from core.errors import ConfigError
from core.evaluate.extract import argmax_alignment
from core.evaluate.readings import default_reading, drop_sink, read_attention
from core.evaluate.symmetrize import symmetrize_corpus
from core.families import family_traits
from core.infer.forced import teacher_forcing_tensors
from core.jobs import JobContext
from core.train import guidance
from core.train.device import autocast
from core.workspace.store import Workspace

Links = list[tuple[int, int]]
BATCH = 256


def guide_run_names(spec: str) -> list[str]:
    """train.guide_runs 'RUN' or 'RUN,REVERSE_RUN' -> the names (ConfigError otherwise)."""
    names = [n.strip() for n in spec.split(",")]
    if not 1 <= len(names) <= 2 or not all(names):
        raise ConfigError(f"train.guide_runs = {spec!r}: give one trained run, or a run and "
                          "its reverse-direction run, separated by a comma")
    return names


def run_attention_links(loaded, src_lines: Sequence[Sequence[str]],
                        tgt_lines: Sequence[Sequence[str]], ctx: JobContext | None = None,
                        what: str = "", amp: bool = False) -> list[Links]:
    """(source, target) links of each pair: `loaded` (core.train.artifacts.LoadedModel)
    force-decodes the token lines (its own vocabularies; unknown tokens read as <unk>),
    and each target token links to the argmax of its attention at the run's default
    reading, the sink left out. Pairs are batched by length, results in input order.
    Only the attention is computed: the softmax layer runs over the 4 special ids. With
    `amp`, in bf16 autocast where the device has it (twice as fast on a CPU with native
    bf16; 94 % of the pairs got the same links as in fp32 on a Hansards run)."""
    reading = default_reading(loaded.config)
    return links_by_reading(loaded, src_lines, tgt_lines, [reading], ctx, what, amp)[reading]


def links_by_reading(loaded, src_lines: Sequence[Sequence[str]],
                     tgt_lines: Sequence[Sequence[str]], readings: Sequence[str],
                     ctx: JobContext | None = None, what: str = "",
                     amp: bool = False) -> dict[str, list[Links]]:
    """{reading: links of each pair} for each of `readings` (core.evaluate.readings),
    from one forced pass: as run_attention_links, at these readings instead of the
    run's default."""
    if family_traits(loaded.config.model.family).context:
        raise ConfigError(f"run {loaded.config.name!r} is a context model, whose attention "
                          "needs the previous sentences: its links are read from "
                          "sentence-level runs only")
    model, sv, tv = loaded.model.eval(), loaded.src_vocab, loaded.tgt_vocab
    device = next(model.parameters()).device
    specials = torch.arange(4, device=device)  # PAD, UNK, BOS, EOS: a cheap softmax layer
    order = sorted(range(len(src_lines)), key=lambda i: (len(src_lines[i]), len(tgt_lines[i])))
    out: dict[str, list[Links]] = {r: [[] for _ in src_lines] for r in readings}
    for start in range(0, len(order), BATCH):
        if ctx is not None:
            ctx.wait_if_paused()
            ctx.check_cancelled()
        batch = [i for i in order[start:start + BATCH] if src_lines[i] and tgt_lines[i]]
        if not batch:
            continue
        src_ids = [sv.encode(list(src_lines[i])) for i in batch]
        tgt_ids = [tv.encode(list(tgt_lines[i])) for i in batch]
        src = torch.zeros(len(batch), max(len(s) for s in src_ids), dtype=torch.long)
        for b, ids in enumerate(src_ids):
            src[b, : len(ids)] = torch.tensor(ids)
        lens = torch.tensor([len(s) for s in src_ids], device=device)
        tgt_in, _ = teacher_forcing_tensors(tgt_ids, device)
        with torch.no_grad(), autocast(device, amp):  # autocast caches weight casts
            found = model(src.to(device), lens, tgt_in, out_vocab=specials)
        attention = found.attention.float().cpu()
        head = found.alignment.float().cpu() if found.alignment is not None else None
        for reading in readings:
            if reading == "head" and head is None:
                raise ConfigError(f"run {loaded.config.name!r} has no alignment head to read")
            matrices = head if reading == "head" else attention
            for b, i in enumerate(batch):
                full = matrices[b, : len(tgt_ids[b]) + 1, : len(src_ids[b])].numpy()
                rows = drop_sink(read_attention(full, reading), list(src_lines[i]),
                                 list(tgt_lines[i]))
                out[reading][i] = sorted(argmax_alignment(rows).sure)
        if ctx is not None and (start // BATCH) % 50 == 0:
            ctx.progress(min(start + BATCH, len(order)), len(order),
                         f"{what}attention links of {len(order):,} training pairs")
    return out


def link_file(corpus_dir: Path, src_lines, tgt_lines, loaded: Sequence) -> Path:
    """Where the links of these token lines under these runs (name, checkpoint step,
    reading) are stored."""
    runs = hashlib.sha256("\n".join(f"{m.config.name}@{m.step}:{default_reading(m.config)}"
                                    for m in loaded).encode())
    plain = guidance.link_file(corpus_dir, src_lines, tgt_lines)
    return plain.with_name(f"{plain.stem}-attention-{runs.hexdigest()[:16]}.pharaoh")


def attention_guide_links(ws: Workspace, corpus_dir: Path, src_lines: Sequence[Sequence[str]],
                          tgt_lines: Sequence[Sequence[str]], runs: Sequence[str],
                          device: str | torch.device = "cpu", ctx: JobContext | None = None,
                          log: Callable[[str], None] = lambda _m: None) -> list[Links]:
    """The guide of train.guide_runs = `runs` ([forward] or [forward, reverse]) for the
    training token lines: stored links when these runs made them before, else computed
    (run_attention_links, in bf16 for a run trained with train.amp; two runs symmetrised
    with grow-diag-final-and) and stored atomically."""
    # lazy: a top-level import would load sacremoses, sentencepiece
    from core.train.artifacts import load_model

    loaded = []
    for name in runs:
        info = ws.get_run(name)
        loaded.append(load_model(ws.run_dir(info.id), "best", device, run_config=info.config))
    path = link_file(corpus_dir, src_lines, tgt_lines, loaded)
    if path.is_file():
        log(f"reusing the stored attention links {path.name}")
        return guidance.read_links(path, len(src_lines))
    log(f"reading the attention of {', '.join(runs)} over {len(src_lines):,} training pairs "
        "(stored for reuse)")
    links = run_attention_links(loaded[0], src_lines, tgt_lines, ctx, f"{runs[0]}: ",
                                amp=loaded[0].config.train.amp)
    if len(loaded) == 2:
        reverse = run_attention_links(loaded[1], tgt_lines, src_lines, ctx, f"{runs[1]}: ",
                                      amp=loaded[1].config.train.amp)
        swapped = [[(s, t) for t, s in pairs] for pairs in reverse]
        links = [sorted(a.sure) for a in symmetrize_corpus(links, swapped, guidance.HEURISTIC)]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, guidance.links_text(links))
    return links

"""Choosing where to read a run's attention without gold alignments: anchor words.

    (reading, table), n = choose_by_anchors(ws, "en-fr", pairs=2000)

A run's attention may align at the step predicting a word, one step later or one step
earlier (core.evaluate.readings); which one is a property of the trained run, not of its
family (experiments/RESULTS.md, section E). `align --remember` picks it on gold links.
Without gold, the training pairs carry their own small gold: a token spelled the same on
both sides and found once on each (a name, a number, an acronym; punctuation left out,
it is where attention sinks) is almost always translated by itself. Each reading's
argmax links, read without the sink as the guide reads them
(core.services.attention_links), are scored by the share of such anchors they link to
their twin; the reading with the most becomes the run's (config.alignment_reading), as
`align --remember` stores its choice. A run with an alignment head is left alone: its
head, which may link no source word (NULL), is its reading, and anchors would undercount
it.

A tempting alternative, the readings at which a src->tgt and a tgt->src run agree most,
does not work: on near-monotone pairs a forward run read one word ahead and a reverse
run read one word behind produce the same links, and on the Hansards runs that pair won
(experiments/RESULTS.md, section E, sixth session).
"""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from core.errors import ConfigError
from core.evaluate.readings import READINGS
from core.jobs import JobContext
from core.services.alignment_runs import store_reading
from core.services.corpora import load_split_corpora
from core.workspace.store import Workspace

#: fewer anchors than this make the choice a coin toss: refuse and point at a gold set
MIN_ANCHORS = 100


def anchors(src: Sequence[str], tgt: Sequence[str]) -> dict[int, int]:
    """{target position: source position} of the tokens spelled the same on both sides
    (case-folded), once on each, with a letter or digit in them."""
    src_key = [w.casefold() for w in src]
    tgt_key = [w.casefold() for w in tgt]
    src_count, tgt_count = Counter(src_key), Counter(tgt_key)
    return {t: src_key.index(w) for t, w in enumerate(tgt_key)
            if tgt_count[w] == 1 and src_count[w] == 1 and any(c.isalnum() for c in w)}


def anchor_hits(links: Sequence[Sequence[tuple[int, int]]], src_lines: Sequence[Sequence[str]],
                tgt_lines: Sequence[Sequence[str]]) -> tuple[int, int]:
    """(anchors linked to their twin, anchors) over the pairs; links are (source, target)."""
    hits = total = 0
    for pairs, src, tgt in zip(links, src_lines, tgt_lines, strict=True):
        twins = anchors(src, tgt)
        total += len(twins)
        hits += len({(s, t) for t, s in twins.items()} & set(pairs))
    return hits, total


def run_readings(config) -> list[str]:
    """The readings a run can be read at: the attention's four, and its head if it has one."""
    return [r for r in READINGS if r != "head" or config.model.alignment_head]


def reading_anchor_table(loaded, src_lines: Sequence[Sequence[str]],
                         tgt_lines: Sequence[Sequence[str]], ctx: JobContext | None = None
                         ) -> tuple[dict[str, float], int]:
    """({reading: share of anchors linked to their twin}, number of anchors) of `loaded`
    (core.train.artifacts.LoadedModel) over the token pairs, one forced pass."""
    # lazy: a top-level import would load torch
    from core.services.attention_links import links_by_reading

    links = links_by_reading(loaded, src_lines, tgt_lines, run_readings(loaded.config), ctx,
                             f"{loaded.config.name}: ")
    table, total = {}, 0
    for reading, found in links.items():
        hits, total = anchor_hits(found, src_lines, tgt_lines)
        table[reading] = hits / total if total else 0.0
    return table, total


def best_reading(table: dict[str, float]) -> str:
    """The reading with the highest share; ties go to the one earlier in READINGS."""
    return max(table, key=lambda r: (table[r], -READINGS.index(r)))


def training_token_pairs(ws: Workspace, run_ref: int | str, loaded, pairs: int, seed: int = 1
                         ) -> tuple[list[list[str]], list[list[str]]]:
    """`pairs` training pairs of run `run_ref`'s corpus (a seeded sample of its training
    split, in split order), as the tokens that run's model sees (its words, or its
    sentencepiece pieces): (source, target)."""
    # lazy: a top-level import would load sacremoses, sentencepiece
    from core.data.dataset import text_to_tokens

    info = ws.get_run(run_ref)
    if info.corpus_id is None:
        raise ConfigError(f"run {info.name!r} has no corpus in this workspace: the anchors "
                          "are read from its training pairs; use align --remember with a "
                          "gold set instead")
    _corpus, parts = load_split_corpora(ws, info.corpus_id, loaded.config.train.seed)
    train = parts["train"].pairs
    chosen = sorted(random.Random(seed).sample(range(len(train)), min(pairs, len(train))))
    src = [text_to_tokens(train[i].src, loaded.src_pre, loaded.src_vocab) for i in chosen]
    tgt = [text_to_tokens(train[i].tgt, loaded.tgt_pre, loaded.tgt_vocab) for i in chosen]
    keep = [k for k in range(len(chosen)) if src[k] and tgt[k]]
    return [src[k] for k in keep], [tgt[k] for k in keep]


def choose_by_anchors(ws: Workspace, run_ref: int | str, pairs: int = 2000,
                      checkpoint: str = "best", device: str = "cpu", ctx: JobContext | None = None
                      ) -> tuple[str, dict[str, float], int]:
    """Score every reading of run `run_ref` on the anchors of `pairs` of its training
    pairs and store the best as its reading (config.alignment_reading).
    -> (the reading stored, {reading: share of anchors linked}, number of anchors)."""
    # lazy: a top-level import would load sacremoses, sentencepiece, torch
    from core.train.artifacts import load_model
    from core.train.device import pick_device  # lazy: a top-level import would load torch

    if pairs < 1:
        raise ConfigError(f"--pairs {pairs}: give a positive number of training pairs")
    info = ws.get_run(run_ref)
    if info.config["model"].get("alignment_head"):
        # the head abstains (NULL) where it is unsure, so it links fewer anchors than an
        # attention reading while aligning better (experiments/RESULTS.md, sixth session)
        raise ConfigError(f"run {info.name!r} has an alignment head, trained to align and "
                          "read by default; the anchors choose among the attention readings "
                          "of a run without one")
    loaded = load_model(ws.run_dir(info.id), checkpoint, pick_device(device),
                        run_config=info.config)
    src, tgt = training_token_pairs(ws, info.id, loaded, pairs)
    table, total = reading_anchor_table(loaded, src, tgt, ctx)
    if total < MIN_ANCHORS:
        raise ConfigError(
            f"run {info.name!r}: only {total} anchor words (tokens spelled the same on both "
            f"sides) in {len(src):,} training pairs, fewer than {MIN_ANCHORS}; raise --pairs, "
            "or choose the reading on gold links with align --remember")
    best = best_reading(table)
    store_reading(ws, info.id, best)  # on the config as it is now: reading took a while
    return best, table, total


def choose_readings_job(ws: Workspace, run_ids: list[int], ctx: JobContext) -> list[str]:
    """The Attention screen's "Choose readings": each run's reading chosen by anchor words
    and stored (choose_by_anchors); -> one line per run: the reading and its share of
    anchors, or why the run was left as it was."""
    lines = []
    for run_id in run_ids:
        name = ws.get_run(run_id).name
        try:
            best, table, total = choose_by_anchors(ws, run_id, ctx=ctx)
        except ConfigError as exc:
            lines.append(f"{name}: unchanged ({exc})")
            continue
        lines.append(f"{name}: '{best}' ({100 * table[best]:.0f} % of {total} anchor words "
                     "linked)")
    return lines

"""The Attention screen's sets: the pairs of a gold set (or of a run's test split), the
views of every pair under every run checked (`attention_views`, each run in its own
orientation of the gold set; gold pairs forced in batches, as `align` forces them), and
the whole-set AER table (`corpus_aer_rows`): core.evaluate.attention_aer.score_gold, the
computation `align` prints, over the forced pairs the views hold; eflomal's links beside
them (`gold_baseline`), in the gold's orientation. The screens submit `pairs_job`,
`attention_views`, `pairs_attention_job` and `gold_baseline` as jobs (app/workers.py).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from core.errors import ConfigError
from core.evaluate.alignment import Alignment
from core.evaluate.attention_aer import Variant, at_layer, force_gold, score_gold
from core.evaluate.goldsets import (
    NO_MATCH,
    REVERSED,
    SAME,
    gold_orientation,
    gold_set_for,
    load_gold_set,
    orientation_note,
)
from core.jobs import JobContext
from core.services import alignment_runs
from core.services.attention_view import (
    NO_HEAD,
    PairInput,
    PairView,
    gold_view,
    has_head,
    joined,
    layer_text,
    pair_view,
    reversed_pair,
    skipped_view,
    view_gold,
)
from core.services.test_pairs import run_test_pairs
from core.services.translation import SessionCache
from core.workspace.store import Workspace

if TYPE_CHECKING:  # annotations only: importing the session would load torch
    from core.infer.session import TranslationSession


def gold_pairs(ws: Workspace, gold_name: str, limit: int = 0) -> list[PairInput]:
    """The gold set's sentence pairs with their links (the first `limit`; 0 = all)."""
    gold = load_gold_set(ws, gold_name)
    n = limit or len(gold)
    langs = (gold.src_lang, gold.tgt_lang)
    return [PairInput(" ".join(s), " ".join(t), a, s, t, langs, gold.name) for s, t, a in
            zip(gold.src_tokens[:n], gold.tgt_tokens[:n], gold.alignments[:n], strict=True)]


def run_orientation(ws: Workspace, run_id: int, pairs: Sequence[tuple[int, PairInput]]
                    ) -> tuple[str, str]:
    """(orientation, note) of run `run_id` on the pairs `pairs` of a gold set or a test
    split (core.evaluate.goldsets.gold_orientation: same, reversed or no match; the note
    says why a run of another language pair is not computed). Pairs without languages
    (typed) are read as they are."""
    if not pairs or not all(pairs[0][1].langs):
        return SAME, ""
    langs = alignment_runs.run_languages(ws, ws.get_run(run_id))
    first = pairs[0][1]
    found = gold_orientation(langs, first.langs)
    kind = "gold set" if first.gold is not None else "test split"
    return found, (orientation_note(langs, first.gold_name, first.langs, kind)
                   if found == NO_MATCH else "")


def attention_views(ws: Workspace, cache: SessionCache, runs: Sequence[tuple[int, str]],
                    pairs: Sequence[tuple[int, PairInput]], forced: bool, ctx: JobContext
                    ) -> dict[tuple[int, int], PairView]:
    """Views of every (pair index, run) asked for, reported as they come; each run on
    the gold pairs in its own orientation (run_orientation): a run of the reversed pair
    reads them from the other side, a run of another pair is not computed (skipped_view:
    no model loaded, no pair decoded)."""
    out: dict[tuple[int, int], PairView] = {}
    plan = [(run_id, label, *run_orientation(ws, run_id, pairs)) for run_id, label in runs]
    total = len(pairs) * sum(found != NO_MATCH for _, _, found, _ in plan)
    kind = "gold" if pairs and pairs[0][1].gold is not None else "test"
    done = 0
    for run_id, label, found, note in plan:
        if found == NO_MATCH:
            out.update({(index, run_id): skipped_view(run_id, label, note) for index, _ in pairs})
            continue
        session = cache.get(ws, [run_id])
        own = [(i, reversed_pair(p) if found == REVERSED else p) for i, p in pairs]
        for index, view in run_views(session, run_id, label, own, forced, ctx):
            if found == REVERSED:
                view = replace(view, reversed=True)
                view.note = joined(view.note, f"{kind} pairs read from the other side")
            out[(index, run_id)] = view
            done += 1
            if done % 8 == 0 or done == total:
                ctx.progress(done, total, f"{done}/{total} attention matrices")
    return out


def run_views(session: TranslationSession,
              run_id: int, label: str, pairs: Sequence[tuple[int, PairInput]],
              forced: bool, ctx: JobContext) -> Iterator[tuple[int, PairView]]:
    """(pair index, view) of each pair under one run, the pairs in the run's orientation:
    gold pairs under forced decoding forced on the gold's words in batches
    (attention_aer.force_gold, as `align` forces them; attention_view.gold_view), the
    others one by one (attention_view.pair_view)."""
    on_words = [(i, p) for i, p in pairs if forced and p.gold is not None
                and p.gold_src is not None and p.gold_tgt is not None]
    batched = force_gold(session, [p.gold_src for _, p in on_words],
                         [p.gold_tgt for _, p in on_words])
    for (index, pair), pair_forced in zip(on_words, batched, strict=True):
        ctx.check_cancelled()
        yield index, gold_view(session, run_id, label, pair_forced, pair.gold)
    taken = {i for i, _ in on_words}
    for index, pair in pairs:
        if index not in taken:
            ctx.check_cancelled()
            yield index, pair_view(session, run_id, label, pair, forced)


@dataclass(frozen=True)
class Symmetrization:
    """The "symmetrise with" choice: the links of the `forward` runs become the
    symmetrisation by `heuristic` (core.evaluate.symmetrize) of theirs and those of the
    reverse-direction run `reverse` (labelled `label`), each read as the screen reads it."""

    reverse: int
    label: str
    heuristic: str
    forward: tuple[int, ...]


def reverse_pair_runs(langs: dict[int, tuple[str, str]], run_id: int) -> list[int]:
    """The runs of `langs` ({run: (source, target) language}) that translate run
    `run_id`'s pair the other way round (both pairs known): the runs its links can be
    symmetrised with."""
    own = langs.get(run_id, ("", ""))
    if not all(own):
        return []
    return [r for r, pair in langs.items()
            if r != run_id and all(pair) and gold_orientation(pair, own) == REVERSED]


def corpus_aer_rows(views: dict[tuple[int, int], PairView], golds: Sequence[Alignment],
                    runs: Sequence[tuple[int, str]],
                    readings: dict[int, tuple[str, bool]] | None = None,
                    sym: Symmetrization | None = None,
                    layers: dict[int, tuple[int, int | None]] | None = None
                    ) -> list[list[Any]]:
    """[model, sentences scored, AER, precision, recall, note] per run over the pairs
    forced on the gold's words (others are left out and counted), each run in its own
    orientation (a run of the reversed pair against the swapped gold links: the same
    AER either way round); a run of another language pair scores nothing, its note says
    why. The numbers are attention_aer.score_gold's (what `align` prints) over the
    forced pairs the views hold (`views` as attention_views made them: the averaged
    attention, whatever layer a heatmap shows), each run's read as readings[run] =
    (reading, no_sink) (default: the predicting step; 'head' of a run without an
    alignment head: its predicting step, with a note). With `sym`, each forward run's row
    is followed by the row of its links symmetrised with the reverse run's. With
    `layers` = {run: (layer, head or None)}, 0-based (a Transformer run's heatmap showing
    one decoder layer or head), that run's rows are followed by the same rows read from
    that layer or head (attention_aer.at_layer, as `align --layer` reads it)."""
    rows = []
    for run_id, label in runs:
        first = views.get((0, run_id))
        if first is not None and first.skipped:
            rows.append([label, 0, None, None, None, first.note])
            continue
        selections = [None] + ([layers[run_id]] if layers and run_id in layers else [])
        for layer in selections:
            # what tells a row from the run's first comes first: a narrow column elides
            # the end ("layer 1 · head 2 of 8: hansards-…", "grow-diag-final-and: 4: …")
            shown = label if layer is None else f"{layer_text(*layer)} of {label}"
            rows.append(_aer_row(shown, views, golds, run_id, readings or {}, None, layer))
            if sym is not None and run_id in sym.forward and run_id != sym.reverse:
                rows.append(_aer_row(f"{sym.heuristic}: {shown} + {sym.label}", views, golds,
                                     run_id, readings or {}, sym, layer))
    return rows



def _shown_reading(views: dict[tuple[int, int], PairView], run_id: int,
                   readings: dict[int, tuple[str, bool]]) -> tuple[Variant, bool]:
    """(the (reading, no_sink) run `run_id`'s links are read at, whether 'head' was
    asked of a run without an alignment head: its predicting step is read then)."""
    reading, no_sink = readings.get(run_id, ("predict", False))
    first = views.get((0, run_id))
    if reading == "head" and first is not None and not has_head(first):
        return ("predict", no_sink), True
    return (reading, no_sink), False


def _aer_row(label: str, views: dict[tuple[int, int], PairView], golds: Sequence[Alignment],
             run_id: int, readings: dict[int, tuple[str, bool]],
             sym: Symmetrization | None, layer: tuple[int, int | None] | None = None
             ) -> list[Any]:
    """One row of corpus_aer_rows: run `run_id`'s links (read from `layer` where given;
    symmetrised with `sym`'s reverse run's, where given) over the pairs scored
    (attention_aer.score_gold)."""
    runs = [run_id] if sym is None else [run_id, sym.reverse]
    scored = [i for i in range(len(golds))
              if all(views.get((i, r)) is not None and views[(i, r)].forced is not None
                     for r in runs)]
    variant, no_head = _shown_reading(views, run_id, readings)
    notes = [NO_HEAD] if no_head else []
    if not scored:
        return [label, 0, None, None, None, "; ".join(notes)]
    own = [views[(i, run_id)] for i in scored]
    reverse = None
    if sym is not None:
        reverse = ([views[(i, sym.reverse)].forced for i in scored],
                   _shown_reading(views, sym.reverse, readings)[0])
    forced = [v.forced if layer is None else at_layer(v.forced, *layer) for v in own]
    scores = score_gold(forced, [view_gold(v, golds[i]) for i, v in
                                                  zip(scored, own, strict=True)],
                        [variant], reverse=reverse,
                        heuristic=sym.heuristic if sym is not None else "grow-diag-final-and")
    c = (scores.symmetrized if sym is not None else scores.readings[variant]).counts
    notes += ["gold read from the other side"] if own[-1].reversed else []
    return [label, len(scored), c.aer, c.precision, c.recall, "; ".join(notes)]


def gold_baseline(ws: Workspace, run_id: int, words: Sequence[tuple[list[str], list[str]]],
                  ctx: JobContext, pairs: Sequence[PairInput] = ()) -> tuple[list[Alignment], int]:
    """eflomal alignments of the given (source words, target words) pairs, trained on the
    run's corpus (core.services.alignment_runs.run_baseline_alignments); gold `pairs` of the
    run's reversed language pair are aligned from the other side and turned back, those
    of another pair are a ConfigError (run_orientation). -> (the alignments, the training
    pairs eflomal learned from besides the given ones)."""
    found, note = run_orientation(ws, run_id, list(enumerate(pairs)))
    if found == NO_MATCH:
        raise ConfigError(f"eflomal baseline: {note}; check a run of the gold set's pair "
                          "first")
    ctx.progress(0, None, "training eflomal on the run's corpus")
    if found == REVERSED:
        back, trained = alignment_runs.run_baseline_alignments(ws, run_id, [t for _, t in words],
                                                               [s for s, _ in words])
        return [a.swapped() for a in back], trained
    return alignment_runs.run_baseline_alignments(ws, run_id, [s for s, _ in words],
                                                  [t for _, t in words])


def pairs_job(ws: Workspace, gold_name: str | None, run_id: int | None, limit: int,
              ctx: JobContext) -> list[PairInput]:
    """A gold set's pairs (`gold_name`), else the first `limit` pairs of the run's test
    split (none for a run without a corpus, e.g. an imported one) with its corpus's
    languages and the split's name (so a run of another pair is skipped and one of the
    reversed pair reads them from the other side, as on gold pairs), read in a job: a big
    corpus takes seconds to load, and its split may be created and saved on the way."""
    ctx.progress(0, None, f"reading {gold_name or 'the test split'}")
    if gold_name:
        return gold_pairs(ws, gold_name, limit)
    if run_id is None or ws.get_run(run_id).corpus_id is None:
        return []  # an imported run has no test split: gold sets and typed pairs remain
    pairs, langs, name = run_test_pairs(ws, run_id, limit)
    return [PairInput(s, t, langs=langs, gold_name=name) for s, t in pairs]


def pairs_attention_job(ws: Workspace, cache: SessionCache, runs: Sequence[tuple[int, str]],
                        limit: int, forced: bool, ctx: JobContext
                        ) -> tuple[dict[int, list[PairInput]], dict]:
    """Each run on pairs of its own language pair (the Evaluation screen's Export
    heatmaps): the first `limit` pairs of the gold set of its pair (goldsets.gold_set_for,
    read from the other side by a run of the reversed pair), else of its own test split;
    runs on the same gold set computed together. -> ({run id: its pairs (none for a run
    without either)}, {(pair index, run id): PairView})."""
    groups: dict[tuple[str | None, int | None], list[tuple[int, str]]] = {}
    for run_id, label in runs:
        gold = gold_set_for(ws, alignment_runs.run_languages(ws, ws.get_run(run_id)))
        groups.setdefault((gold, None if gold else run_id), []).append((run_id, label))
    pairs_of: dict[int, list[PairInput]] = {}
    views: dict[tuple[int, int], PairView] = {}
    for (gold, own), members in groups.items():
        pairs = pairs_job(ws, gold, own, limit, ctx)
        pairs_of.update({run_id: pairs for run_id, _ in members})
        views.update(attention_views(ws, cache, members, list(enumerate(pairs)), forced, ctx))
    return pairs_of, views

"""The Attention screen's sets: the pairs of a gold set (or of a run's test split), the
views of every pair under every run checked (`attention_views`, each run in its own
orientation of the gold set), and the whole-set AER table (`corpus_aer_rows`) beside
`align`'s: the same links (core.services.attention_view) over the pairs scored, counted
by core.evaluate.aer.corpus_aer; eflomal's links beside them (`gold_baseline`), in the
gold's orientation. app/core_jobs.py runs these as the screen's jobs.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.errors import ConfigError
from core.evaluate.aer import corpus_aer
from core.evaluate.alignment import Alignment
from core.evaluate.attention_aer import (
    NO_MATCH,
    REVERSED,
    SAME,
    gold_orientation,
    orientation_note,
)
from core.evaluate.goldsets import load_gold_set
from core.jobs import JobContext
from core.services import alignment_runs
from core.services.attention_view import (
    NO_HEAD,
    PairInput,
    PairView,
    has_head,
    joined,
    pair_view,
    present_view,
    reversed_pair,
    skipped_view,
    view_gold,
)
from core.services.translation import SessionCache
from core.workspace.store import Workspace


def gold_pairs(ws: Workspace, gold_name: str, limit: int = 0) -> list[PairInput]:
    """The gold set's sentence pairs with their links (the first `limit`; 0 = all)."""
    gold = load_gold_set(ws, gold_name)
    n = limit or len(gold)
    langs = (gold.src_lang, gold.tgt_lang)
    return [PairInput(" ".join(s), " ".join(t), a, s, t, langs, gold.name) for s, t, a in
            zip(gold.src_tokens[:n], gold.tgt_tokens[:n], gold.alignments[:n], strict=True)]


def run_orientation(ws: Workspace, run_id: int, pairs: Sequence[tuple[int, PairInput]]
                    ) -> tuple[str, str]:
    """(orientation, note) of run `run_id` on gold pairs `pairs`
    (core.evaluate.attention_aer.gold_orientation: same, reversed or no match; the note
    says why a run of another language pair is not computed). Pairs without languages
    (typed, the test split) are read as they are."""
    if not pairs or not all(pairs[0][1].langs):
        return SAME, ""
    langs = alignment_runs.run_languages(ws, ws.get_run(run_id))
    gold = pairs[0][1]
    found = gold_orientation(langs, gold.langs)
    return found, orientation_note(langs, gold.gold_name, gold.langs) if found == NO_MATCH else ""


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
    done = 0
    for run_id, label, found, note in plan:
        if found == NO_MATCH:
            out.update({(index, run_id): skipped_view(run_id, label, note) for index, _ in pairs})
            continue
        session = cache.get(ws, [run_id])
        for index, pair in pairs:
            ctx.check_cancelled()
            if found == REVERSED:
                view = replace(pair_view(session, run_id, label, reversed_pair(pair), forced),
                               reversed=True)
                view.note = joined(view.note, "gold pairs read from the other side")
            else:
                view = pair_view(session, run_id, label, pair, forced)
            out[(index, run_id)] = view
            done += 1
            if done % 8 == 0 or done == total:
                ctx.progress(done, total, f"{done}/{total} attention matrices")
    return out


@dataclass(frozen=True)
class Symmetrization:
    """The "symmetrise with" choice: the links of the `forward` runs become the
    symmetrisation by `heuristic` (core.evaluate.symmetrize) of theirs and those of the
    reverse-direction run `reverse` (labelled `label`), each read as the screen reads it."""

    reverse: int
    label: str
    heuristic: str
    forward: tuple[int, ...]


def shown_view(views: dict[tuple[int, int], PairView], index: int, run_id: int,
               gold: Alignment | None, readings: dict[int, tuple[str, bool]] | None = None,
               selection: tuple[int | None, int | None] = (None, None),
               sym: Symmetrization | None = None) -> PairView | None:
    """present_view of pair `index` under run `run_id` (None when not computed), read at
    readings[run] (default the predicting step); with `sym`, a forward run's links
    symmetrised with the reverse run's."""
    view = views.get((index, run_id))
    if view is None:
        return None
    readings = readings or {}
    reverse = None
    if sym is not None and run_id in sym.forward and run_id != sym.reverse:
        reverse = views.get((index, sym.reverse))
    return present_view(view, gold, readings.get(run_id, ("predict", False)), selection,
                        reverse, readings.get(sym.reverse, ("predict", False)) if sym else
                        ("predict", False), sym.heuristic if sym else "")


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
                    sym: Symmetrization | None = None) -> list[list[Any]]:
    """[model, sentences scored, AER, precision, recall, note] per run over the pairs
    whose tokens match the gold (others are left out and counted), each run in its own
    orientation (a run of the reversed pair against the swapped gold links: the same
    AER either way round); a run of another language pair scores nothing, its note says
    why. The averaged attention (`views` as `pair_view` made them, whatever layer a
    heatmap shows), each run's read as readings[run] = (reading, no_sink) (select_reading;
    default: the predicting step). With `sym`, each forward run's row is followed by
    the row of its links symmetrised with the reverse run's (shown_view)."""
    rows = []
    for run_id, label in runs:
        first = views.get((0, run_id))
        if first is not None and first.skipped:
            rows.append([label, 0, None, None, None, first.note])
            continue
        rows.append(_aer_row(label, views, golds, run_id, readings, None))
        if sym is not None and run_id in sym.forward and run_id != sym.reverse:
            rows.append(_aer_row(f"{label} + {sym.label}: {sym.heuristic}", views, golds,
                                 run_id, readings, sym))
    return rows


def _aer_row(label: str, views: dict[tuple[int, int], PairView], golds: Sequence[Alignment],
             run_id: int, readings: dict[int, tuple[str, bool]] | None,
             sym: Symmetrization | None) -> list[Any]:
    """One row of corpus_aer_rows: run `run_id`'s links (symmetrised with `sym`'s reverse
    run's, where given) over the pairs scored."""
    preds, gold, other_side = [], [], False
    for i, g in enumerate(golds):
        v = views.get((i, run_id))
        rev = views.get((i, sym.reverse)) if sym is not None else v
        if v is None or v.aer is None or rev is None or rev.aer is None:
            continue
        preds.append(shown_view(views, i, run_id, g, readings, sym=sym).predicted)
        gold.append(view_gold(v, g))
        other_side = v.reversed
    first = views.get((0, run_id))
    no_head = (readings or {}).get(run_id, ("predict", False))[0] == "head" \
        and first is not None and not has_head(first)
    notes = [NO_HEAD] if no_head else []
    if not gold:
        return [label, 0, None, None, None, "; ".join(notes)]
    c = corpus_aer(preds, gold)
    notes += ["gold read from the other side"] if other_side else []
    return [label, len(gold), c.aer, c.precision, c.recall, "; ".join(notes)]


def gold_baseline(ws: Workspace, run_id: int, words: Sequence[tuple[list[str], list[str]]],
                  ctx: JobContext, pairs: Sequence[PairInput] = ()) -> list[Alignment]:
    """eflomal alignments of the given (source words, target words) pairs, trained on the
    run's corpus (core.services.alignment_runs.run_baseline_alignments); gold `pairs` of the
    run's reversed language pair are aligned from the other side and turned back, those
    of another pair are a ConfigError (run_orientation)."""
    found, note = run_orientation(ws, run_id, list(enumerate(pairs)))
    if found == NO_MATCH:
        raise ConfigError(f"eflomal baseline: {note}; check a run of the gold set's pair "
                          "first")
    ctx.progress(0, None, "training eflomal on the run's corpus")
    if found == REVERSED:
        back = alignment_runs.run_baseline_alignments(ws, run_id, [t for _, t in words],
                                                      [s for s, _ in words])
        return [a.swapped() for a in back]
    return alignment_runs.run_baseline_alignments(ws, run_id, [s for s, _ in words],
                                                  [t for _, t in words])

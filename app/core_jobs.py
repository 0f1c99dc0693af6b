"""Job functions the panels submit to the JobManager: thin compositions of core calls.

Everything here is Qt-free (it runs on worker threads and could move to core as is):
open translation sessions once and reuse them, translate a document, compute the
attention of sentence pairs under several models with their AER, evaluate runs on
their corpus's test split and record the scores in the workspace.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ConfigError
from core.evaluate.aer import corpus_aer, sentence_aer
from core.evaluate.alignment import Alignment
from core.evaluate.extract import argmax_alignment
from core.evaluate.readings import drop_sink, read_attention
from core.families import family_traits
from core.infer.session import TranslationSession
from core.jobs import JobContext
from core.services import translation
from core.services.translation import SessionCache

Link = tuple[int, int]  # (source index, target index)


# --- translating --------------------------------------------------------------------------------
def read_document_job(path: str | Path, lang: str,
                      ctx: JobContext) -> translation.Document:
    """A document file as paragraphs of sentences (core.services.translation.
    read_document), read in a job: a big .docx takes seconds to parse and split."""
    ctx.progress(0, 1, f"reading {Path(path).name}")
    return translation.read_document(path, lang)


def translate_job(ws: Any, cache: SessionCache, run_ids: Sequence[int], sentences: list[str],
                  beam: int, unk_replace: bool, ctx: JobContext,
                  target_context: bool = False, amp: bool = False,
                  shortlist: bool = False, int8: bool = False) -> list[Any]:
    """Translate `sentences` with the run(s) (several = an ensemble); a context model
    reads them as one document, with `target_context` seeing its own previous
    translations as context instead of the previous source sentences; `amp`: in bf16
    where the CPU has it; `shortlist`: over the first run's lexical shortlist (built
    from its training split on first use); `int8`: int8 products (core.models.int8)."""
    session = cache.get(ws, run_ids)
    ctx.emit("log", message=f"loaded {', '.join(session.names)}")
    if target_context and session.is_context_model:
        note = session.target_context_note()
        if note:
            ctx.emit("log", message=note)
    lexicon = _shortlist(ws, run_ids[0], ctx) if shortlist else None
    _emit_decoding(ctx, session, beam, unk_replace, target_context, amp, lexicon, int8)
    return translation.translate(session, sentences, beam=beam, unk_replace=unk_replace,
                                 ctx=ctx, target_context=target_context, amp=amp,
                                 shortlist=lexicon, int8=int8)


def _emit_decoding(ctx: JobContext, session: Any, beam: int, unk_replace: bool,
                   target_context: bool, amp: bool, shortlist: Any, int8: bool) -> None:
    """A 'log' event naming the arithmetic ('decoding: int8 (x86 engine, ...)') and a
    'decoding' event: the settings (core.infer.decoding) an export of this translation
    records. `int8` is this job's alone: the session, shared by the screens, keeps its
    own setting (fp32), so the Attention and Evaluation screens never turn int8 silently."""
    from core.infer.decoding import decoding_settings

    ctx.emit("log", message=f"decoding: {session.path_text(amp, int8)}")
    ctx.emit("decoding", settings=decoding_settings(
        session, beam=beam, amp=amp, shortlist=shortlist, unk_replace=unk_replace,
        target_context=target_context, int8=int8))


def _shortlist(ws: Any, run_id: int, ctx: JobContext):
    """Run `run_id`'s lexical shortlist (its default size), progress logged to the job."""
    from core.services.shortlist_store import load_shortlist

    return load_shortlist(ws, run_id, log=lambda m: ctx.emit("log", message=m))


def compare_job(ws: Any, cache: SessionCache, run_ids: Sequence[int], baseline_id: int,
                sentences: list[str], beam: int, unk_replace: bool, ctx: JobContext,
                target_context: bool = False, amp: bool = False,
                shortlist: bool = False, int8: bool = False) -> translation.Comparison:
    """The run(s) and a baseline run on the same sentences (translation.compare); with
    `shortlist`, each over its own run's shortlist."""
    lists = ((_shortlist(ws, run_ids[0], ctx), _shortlist(ws, baseline_id, ctx))
             if shortlist else (None, None))
    session = cache.get(ws, run_ids)
    _emit_decoding(ctx, session, beam, unk_replace, target_context, amp, lists[0], int8)
    return translation.compare(session, cache.get(ws, [baseline_id]),
                               sentences, beam=beam, unk_replace=unk_replace, ctx=ctx,
                               target_context=target_context, amp=amp, shortlists=lists,
                               int8=int8)


# --- attention of sentence pairs ------------------------------------------------------------------
@dataclass
class PairView:
    """What one model says about one sentence pair."""

    run_id: int
    label: str
    matrix: np.ndarray  # (tgt + 1) x src: the last row is the target EOS
    src_tokens: list[str]
    tgt_tokens: list[str]  # without EOS
    positions: np.ndarray | None = None  # local-p's p_t per target row
    window: int = 0
    gates: np.ndarray | None = None  # context models' lambda per source token
    predicted: set[Link] = field(default_factory=set)
    aer: float | None = None  # None when there is no gold or tokens do not match it
    precision: float | None = None
    recall: float | None = None
    note: str = ""
    #: Transformer families under forced decoding: every decoder layer's and head's
    #: cross-attention, layers x heads x (tgt + 1) x src; `matrix` (as computed) is the
    #: last layer's mean over heads
    layers: np.ndarray | None = None
    #: the model has layers and heads (a Transformer family), even where this view (free
    #: decoding) kept only the averaged attention
    layered: bool = False
    #: what `matrix` shows: (None, None) the averaged attention, (layer, None) one
    #: layer's mean over its heads, (layer, head) one head (0-based)
    selection: tuple[int | None, int | None] = (None, None)
    #: where the rows were read (core.evaluate.readings): 'predict' keeps the EOS row;
    #: 'shift' and 'sum' give one row per target token, without it
    reading: str = "predict"
    no_sink: bool = False
    #: subword models on gold pairs: the attention summed back to the gold words, one
    #: tgt_words x src_words matrix per reading (core.evaluate.attention_aer, the `align`
    #: command's route); None when the view is on the model's own tokens
    word_readings: dict[str, np.ndarray] | None = None
    #: a run with an alignment head (model.alignment_head), forced decoding: the head's
    #: (tgt + 1) x src rows, the 'head' reading; None otherwise
    alignment: np.ndarray | None = None
    #: the run translates the gold set's reversed pair: the view is of the pair read from
    #: the other side (its source = the gold's target), its links and AER against the
    #: gold links swapped (view_gold)
    reversed: bool = False
    #: the run's language pair is not the gold set's: nothing was computed (an empty
    #: matrix), `note` says why
    skipped: bool = False

    @property
    def row_labels(self) -> list[str]:
        """The heatmap's row labels: the target tokens (and </s> when its row is there)."""
        return self.tgt_tokens + (["</s>"] if self.matrix.shape[0] > len(self.tgt_tokens) else [])

    @property
    def selection_label(self) -> str:
        layer, head = self.selection
        if layer is None:
            return "average"
        return f"layer {layer + 1}" + (" (mean of heads)" if head is None else f" · head {head + 1}")


@dataclass
class PairInput:
    source: str
    target: str  # the reference ('' = free decoding only)
    gold: Alignment | None = None
    gold_src: list[str] | None = None  # gold tokenisation (to check the model's matches)
    gold_tgt: list[str] | None = None
    langs: tuple[str, str] = ("", "")  # the gold set's (source, target) languages
    gold_name: str = ""


def reversed_pair(pair: PairInput) -> PairInput:
    """`pair` read from the other side: target as source, the gold links swapped."""
    return PairInput(pair.target, pair.source, None if pair.gold is None else pair.gold.swapped(),
                     pair.gold_tgt, pair.gold_src, pair.langs[::-1], pair.gold_name)


def view_gold(view: PairView, gold: Alignment | None) -> Alignment | None:
    """The gold links of a pair (in the gold set's orientation) as `view` reads them."""
    return gold.swapped() if gold is not None and view.reversed else gold


def gold_pairs(ws: Any, gold_name: str, limit: int = 0) -> list[PairInput]:
    """The gold set's sentence pairs with their links (the first `limit`; 0 = all)."""
    from core.goldsets import load_gold_set

    gold = load_gold_set(ws, gold_name)
    n = limit or len(gold)
    langs = (gold.src_lang, gold.tgt_lang)
    return [PairInput(" ".join(s), " ".join(t), a, s, t, langs, gold.name) for s, t, a in
            zip(gold.src_tokens[:n], gold.tgt_tokens[:n], gold.alignments[:n], strict=True)]


def pairs_job(ws: Any, gold_name: str | None, run_id: int | None, limit: int,
              ctx: JobContext) -> list[PairInput]:
    """A gold set's pairs (`gold_name`), else the first `limit` pairs of the run's test
    split (none for a run without a corpus, e.g. an imported one), read in a job: a big corpus takes seconds to load, and its split may be
    created and saved on the way."""
    ctx.progress(0, None, f"reading {gold_name or 'the test split'}")
    if gold_name:
        return gold_pairs(ws, gold_name, limit)
    if run_id is None or ws.get_run(run_id).corpus_id is None:
        return []  # an imported run has no test split: gold sets and typed pairs remain
    return [PairInput(s, t) for s, t in split_test_pairs(ws, run_id, limit)]


def pair_view(session: TranslationSession, run_id: int, label: str, pair: PairInput,
              forced: bool, beam: int = 1) -> PairView:
    """Attention of `pair` under one model: forced decoding of the reference, or the
    model's own translation; the argmax alignment; AER against gold when the model's
    tokens are the gold's."""
    if forced and pair.target:
        tr = session.force(pair.source, pair.target)
    else:
        tr = session.translate([pair.source], beam=beam)[0]
    cfg = session.first.config.model
    matrix = np.asarray(tr.attention, dtype=np.float32)
    layers = getattr(tr, "layer_attention", None)  # forced decoding only
    head = getattr(tr, "alignment", None)  # forced decoding of a run with an alignment head
    view = PairView(run_id, label, matrix, list(tr.source_tokens), list(tr.target_tokens),
                    None if tr.positions is None else np.asarray(tr.positions, dtype=float),
                    cfg.window if cfg.attention == "local-p" else 0,
                    None if tr.gates is None else np.asarray(tr.gates, dtype=np.float32),
                    layers=None if layers is None else np.asarray(layers, dtype=np.float32),
                    layered=family_traits(cfg.family).layered,
                    alignment=None if head is None else np.asarray(head, dtype=np.float32))
    view.predicted = set(argmax_alignment(matrix, drop_eos=True).sure)
    if pair.gold is not None and forced:
        # one model token per gold token (normalisation such as lowercasing may differ)
        same = (pair.gold_src is None or len(view.src_tokens) == len(pair.gold_src)) and \
               (pair.gold_tgt is None or len(view.tgt_tokens) == len(pair.gold_tgt))
        if same:
            _score(view, pair.gold)
        elif pair.gold_src is not None and pair.gold_tgt is not None:
            view = gold_word_view(session, view, pair)
        else:
            view.note = "model tokens differ from the gold tokens: no AER"
    elif pair.gold is not None:
        view.note = "free decoding: AER needs forced decoding of the reference"
    return view


def gold_word_view(session: TranslationSession, view: PairView, pair: PairInput) -> PairView:
    """`view` of a subword model on a gold pair, in the gold's words: each gold word is
    forced as its own pieces and the piece attention is summed back to words, for every
    reading (core.evaluate.attention_aer.word_attention: the numbers `align` prints);
    tgt_words x src_words, no EOS row, no per-piece extras (positions, gates, layers)."""
    from core.evaluate.attention_aer import word_attention
    from core.evaluate.readings import ATTENTION_READINGS, READINGS

    readings = READINGS if session.first.config.model.alignment_head else ATTENTION_READINGS
    found = word_attention(session, [list(pair.gold_src)], [list(pair.gold_tgt)],
                           readings=readings)
    readings = {r: np.asarray(m[0], dtype=np.float32) for r, m in found.items()}
    out = replace(view, matrix=readings["predict"], src_tokens=list(pair.gold_src),
                  tgt_tokens=list(pair.gold_tgt), positions=None, gates=None, layers=None,
                  word_readings=readings,
                  note="subword attention summed to the gold words")
    out.predicted = set(argmax_alignment(out.matrix).sure)
    if pair.gold is not None:
        _score(out, pair.gold)
    return out


def _joined(note: str, more: str) -> str:
    return f"{note}; {more}" if note else more


def _score(view: PairView, gold: Alignment) -> None:
    counts = sentence_aer(view.predicted, gold)
    view.aer, view.precision, view.recall = counts.aer, counts.precision, counts.recall


def select_layer(view: PairView, gold: Alignment | None, layer: int | None = None,
                 head: int | None = None) -> PairView:
    """`view` (as `pair_view` made it: the averaged attention) showing instead one decoder
    layer's cross-attention, the mean of its heads (`head` None) or one head (0-based):
    a copy with that matrix, its argmax alignment and, where the view had an AER against
    `gold`, the AER of that alignment. `layer` None gives `view` itself."""
    if layer is None or view.skipped:
        return view
    if view.layers is None:
        raise ValueError(f"{view.label}: no per-layer attention (forced decoding of a "
                         "Transformer-family model has it)")
    per_layer = view.layers[layer]  # heads x (tgt + 1) x src
    matrix = per_layer.mean(axis=0) if head is None else per_layer[head]
    out = replace(view, matrix=np.ascontiguousarray(matrix, dtype=np.float32),
                  selection=(layer, head))
    out.predicted = set(argmax_alignment(out.matrix, drop_eos=True).sure)
    if view.aer is not None and gold is not None:
        _score(out, gold)
    return out


NO_HEAD = "no alignment head: predicting step shown"


def has_head(view: PairView) -> bool:
    """Whether the view's run has an alignment head (reading 'head' can be shown)."""
    return view.alignment is not None or (view.word_readings is not None
                                          and "head" in view.word_readings)


def select_reading(view: PairView, gold: Alignment | None, reading: str = "predict",
                   no_sink: bool = False) -> PairView:
    """`view` read another way (core.evaluate.readings): a copy whose matrix holds, per
    target token, the attention at its predicting step ('predict', EOS row kept), one
    step later ('shift', Shift-Att) or both ('sum'), or the alignment head's rows
    ('head', a run that has one; other runs show their predicting step, with a note),
    without the final-punctuation sink when `no_sink`; its argmax links and, where the
    view had one, its AER follow. 'predict' without `no_sink` gives `view` itself."""
    if view.skipped:
        return view
    if reading == "head" and not has_head(view):  # the note first: it is cut last
        out = select_reading(view, gold, "predict", no_sink)
        return replace(out, note="; ".join(n for n in (NO_HEAD, out.note) if n))
    if reading == "predict" and not no_sink:
        return view
    full = np.asarray(view.matrix, dtype=np.float32)  # (tgt + 1) x src
    if reading == "head":
        full = view.alignment
    if view.word_readings is not None:  # read on the pieces already, then summed to words
        rows = view.word_readings[reading]
        if no_sink:
            rows = drop_sink(rows, view.src_tokens, view.tgt_tokens)
        out = replace(view, matrix=np.ascontiguousarray(rows, dtype=np.float32),
                      reading=reading, no_sink=no_sink)
        out.predicted = set(argmax_alignment(rows).sure)
        if view.aer is not None and gold is not None:
            _score(out, gold)
        return out
    rows = read_attention(full, reading)  # tgt x src
    if no_sink:
        rows = drop_sink(rows, view.src_tokens, view.tgt_tokens)
    matrix = rows if reading not in ("predict", "head") else np.vstack([rows, full[-1:]])
    positions = view.positions
    if positions is not None and reading == "shift":
        positions = positions[1:]
    elif positions is not None and reading == "sum":
        positions = (positions[:-1] + positions[1:]) / 2
    elif positions is not None and reading == "previous":
        positions = np.concatenate([positions[:1], positions[:-2]])
    out = replace(view, matrix=np.ascontiguousarray(matrix, dtype=np.float32),
                  positions=positions, reading=reading, no_sink=no_sink)
    out.predicted = set(argmax_alignment(matrix[: len(view.tgt_tokens)]).sure)
    if view.aer is not None and gold is not None:
        _score(out, gold)
    return out


def run_orientation(ws: Any, run_id: int, pairs: Sequence[tuple[int, PairInput]]
                    ) -> tuple[str, str]:
    """(orientation, note) of run `run_id` on gold pairs `pairs`
    (core.evaluate.attention_aer.gold_orientation: same, reversed or no match; the note
    says why a run of another language pair is not computed). Pairs without languages
    (typed, the test split) are read as they are."""
    from core.evaluate.attention_aer import NO_MATCH, SAME, gold_orientation, orientation_note
    from core.services.alignment_runs import run_languages

    if not pairs or not all(pairs[0][1].langs):
        return SAME, ""
    langs = run_languages(ws, ws.get_run(run_id))
    gold = pairs[0][1]
    found = gold_orientation(langs, gold.langs)
    return found, orientation_note(langs, gold.gold_name, gold.langs) if found == NO_MATCH else ""


def skipped_view(run_id: int, label: str, note: str) -> PairView:
    """The place of a run not computed on a pair (another language pair): a note, no matrix."""
    return PairView(run_id, label, np.zeros((0, 0), dtype=np.float32), [], [], note=note,
                    skipped=True)


def attention_job(ws: Any, cache: SessionCache, runs: Sequence[tuple[int, str]],
                  pairs: Sequence[tuple[int, PairInput]], forced: bool, ctx: JobContext
                  ) -> dict[tuple[int, int], PairView]:
    """Views of every (pair index, run) asked for, reported as they come; each run on
    the gold pairs in its own orientation (run_orientation): a run of the reversed pair
    reads them from the other side, a run of another pair is not computed (skipped_view:
    no model loaded, no pair decoded)."""
    from core.evaluate.attention_aer import NO_MATCH, REVERSED

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
                view.note = _joined(view.note, "gold pairs read from the other side")
            else:
                view = pair_view(session, run_id, label, pair, forced)
            out[(index, run_id)] = view
            done += 1
            if done % 8 == 0 or done == total:
                ctx.progress(done, total, f"{done}/{total} attention matrices")
    return out


def pairs_attention_job(ws: Any, cache: SessionCache, runs: Sequence[tuple[int, str]],
                        gold_name: str | None, run_id: int, limit: int, forced: bool,
                        ctx: JobContext) -> tuple[list[PairInput], dict]:
    """pairs_job then attention_job in one worker: -> (pairs, views)."""
    pairs = pairs_job(ws, gold_name, run_id, limit, ctx)
    return pairs, attention_job(ws, cache, runs, list(enumerate(pairs)), forced, ctx)


@dataclass(frozen=True)
class Symmetrization:
    """The "symmetrise with" choice: the links of the `forward` runs become the
    symmetrisation by `heuristic` (core.evaluate.symmetrize) of theirs and those of the
    reverse-direction run `reverse` (labelled `label`), each read as the screen reads it."""

    reverse: int
    label: str
    heuristic: str
    forward: tuple[int, ...]


NO_SYMMETRISATION = "symmetrisation needs gold pairs under forced decoding"


def symmetrized_view(view: PairView, reverse: PairView, gold: Alignment | None,
                     heuristic: str) -> PairView:
    """`view` (read as shown) with its links replaced by their symmetrisation with the
    links of `reverse` (the reverse-direction run's view of the same pair, read as shown)
    by `heuristic`: core.evaluate.attention_aer.symmetrize_with_reverse, what `align
    --reverse-run` uses; the AER against `gold` (in `view`'s orientation) follows. Both
    must be on the gold's words (an AER each), else `view` with a note."""
    from core.evaluate.attention_aer import symmetrize_with_reverse

    if view.skipped:
        return view
    if view.aer is None or reverse.aer is None:
        return replace(view, note=_joined(view.note, NO_SYMMETRISATION))
    links = symmetrize_with_reverse([view.predicted], [reverse.predicted], heuristic)[0]
    out = replace(view, predicted=set(links.sure),
                  note=_joined(view.note, f"links: {heuristic} with {reverse.label}"))
    if gold is not None:
        _score(out, gold)
    return out


def present_view(view: PairView, gold: Alignment | None, reading: tuple[str, bool],
                 selection: tuple[int | None, int | None] = (None, None),
                 reverse: PairView | None = None,
                 reverse_reading: tuple[str, bool] = ("predict", False),
                 heuristic: str = "") -> PairView:
    """`view` as the screen shows it: the layer/head `selection` (select_layer), read at
    `reading` = (reading, no_sink) (select_reading), against the pair's `gold` (in the
    gold set's orientation) turned to the run's (view_gold); with `reverse` (the
    reverse-direction run's view of the pair, read at `reverse_reading`), its links
    symmetrised with that run's by `heuristic` (symmetrized_view)."""
    own = view_gold(view, gold)
    out = select_reading(select_layer(view, own, *selection), own, *reading)
    if reverse is None:
        return out
    rev = select_reading(reverse, view_gold(reverse, gold), *reverse_reading)
    return symmetrized_view(out, rev, own, heuristic)


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
    from core.evaluate.attention_aer import REVERSED, gold_orientation

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


def baseline_job(ws: Any, run_id: int, words: Sequence[tuple[list[str], list[str]]],
                 ctx: JobContext, pairs: Sequence[PairInput] = ()) -> list:
    """eflomal alignments of the given (source words, target words) pairs, trained on the
    run's corpus (core.services.alignment_runs.run_baseline_alignments); gold `pairs` of the
    run's reversed language pair are aligned from the other side and turned back, those
    of another pair are a ConfigError (run_orientation)."""
    from core.evaluate.attention_aer import NO_MATCH, REVERSED
    from core.services.alignment_runs import run_baseline_alignments

    found, note = run_orientation(ws, run_id, list(enumerate(pairs)))
    if found == NO_MATCH:
        raise ConfigError(f"eflomal baseline: {note}; check a run of the gold set's pair "
                          "first")
    ctx.progress(0, None, "training eflomal on the run's corpus")
    if found == REVERSED:
        back = run_baseline_alignments(ws, run_id, [t for _, t in words], [s for s, _ in words])
        return [a.swapped() for a in back]
    return run_baseline_alignments(ws, run_id, [s for s, _ in words], [t for _, t in words])


# --- evaluation ----------------------------------------------------------------------------------------
def split_test_pairs(ws: Any, run_id: int, limit: int = 0) -> list[tuple[str, str]]:
    """(source, reference) of the run's corpus's test split (the split training used)."""
    from core.services.evaluation import evaluation_pairs

    pairs, _, _, _ = evaluation_pairs(ws, ws.get_run(run_id), "test", max_sentences=limit)
    return [(p.src, p.tgt) for p in pairs]


def evaluate_job(ws: Any, cache: SessionCache, run_ids: Sequence[int], beam: int,
                 gold_name: str | None, ctx: JobContext, limit: int = 0) -> list[int]:
    """Each run on its corpus's test split through core.services.evaluation, as the
    CLI's `evaluate --run R --test test` does (same translation, document grouping for
    context models, metrics and keys), with the AER of its forced attention when there
    is a gold set. Returns the evaluation ids."""
    from core.services import evaluation as service

    gold = None
    if gold_name:
        from core.goldsets import load_gold_set

        gold = load_gold_set(ws, gold_name)
    ids: list[int] = []
    for k, run_id in enumerate(run_ids):
        ctx.check_cancelled()
        info = ws.get_run(run_id)
        ctx.progress(k, len(run_ids), f"evaluating {info.name}")
        pairs, test_name, src_lang, tgt_lang = service.evaluation_pairs(
            ws, info, "test", max_sentences=limit)
        if not pairs:
            raise ConfigError(f"run {info.name!r}: the test split is empty; import a bigger corpus")
        sessions = {info.name: cache.get(ws, [run_id])}
        _, _, new = service.evaluate_and_store(ws, sessions, {info.name: [run_id]}, pairs,
                                               test_name, src_lang, tgt_lang, beam,
                                               gold=gold, ctx=ctx)
        ids += new
    ctx.progress(len(run_ids), len(run_ids), "evaluated")
    return ids


# --- start-up ------------------------------------------------------------------------------------------
def warm_up(ctx: JobContext) -> None:
    """Import the training and inference stack and take one optimiser step on a dummy
    tensor (the first Adam step imports torch._dynamo and sympy: ~2-3 s of imports
    that would otherwise run inside the first training job, holding the GIL long
    enough to make the GUI stutter for a few hundred ms). Run once at start-up."""
    import sacrebleu  # noqa: F401
    import torch

    import core.infer.search  # noqa: F401
    import core.train.loop  # noqa: F401

    weight = torch.zeros(2, requires_grad=True)
    optimiser = torch.optim.Adam([weight])
    weight.sum().backward()
    optimiser.step()

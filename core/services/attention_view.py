"""One sentence pair under one run, as the Attention screen shows it: the forced (or
free) attention of the pair (`pair_view`), on a gold pair in the gold's words and with
its AER; read another way (`select_reading`: at the predicting step, one step later,
both, one step earlier or the alignment head's rows, without the sink), one decoder
layer or head (`select_layer`), its links symmetrised with a reverse-direction run's
(`symmetrized_view`), all three at once (`present_view`).

A gold pair forced on the gold's words (`gold_view`) keeps its forced pair
(core.evaluate.attention_aer.GoldForcing) and reads its links, at every reading, through
GoldForcing.links: the per-pair reading that attention_aer.score_gold counts for `align`
and for the screen's whole-set table (core.services.attention_set), so a pair's links
here are by construction the ones in the whole-set row.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from core.evaluate.aer import sentence_aer
from core.evaluate.alignment import Alignment
from core.evaluate.attention_aer import (
    GoldForcing,
    at_layer,
    force_gold,
    read_links,
    symmetrize_with_reverse,
)
from core.evaluate.extract import argmax_alignment
from core.evaluate.readings import read_attention
from core.families import family_traits
from core.infer.session import TranslationSession

Link = tuple[int, int]  # (source index, target index)


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
    #: last layer's mean over heads. On the model's tokens, also where the view is in the
    #: gold's words (select_layer sums the layer chosen to words through `forced`)
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
    #: a gold pair under forced decoding: the forced pair (attention_aer.force_gold), its
    #: links at every reading are forced.links (what attention_aer.score_gold counts)
    forced: GoldForcing | None = None
    #: subword models on gold pairs: the view is in the gold's words, the attention
    #: summed back from the pieces (tgt_words x src_words, no EOS row); False when the
    #: view is on the model's own tokens
    in_words: bool = False
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
        """What the matrix shows: "average", "layer L (mean of heads)" or "layer L · head H"
        (1-based), for the heatmap's title."""
        layer, head = self.selection
        return "average" if layer is None else layer_text(layer, head)


def layer_text(layer: int, head: int | None) -> str:
    """'layer 1 (mean of heads)' or 'layer 1 · head 2' for a 0-based (layer, head)."""
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


def skipped_view(run_id: int, label: str, note: str) -> PairView:
    """The place of a run not computed on a pair (another language pair): a note, no matrix."""
    return PairView(run_id, label, np.zeros((0, 0), dtype=np.float32), [], [], note=note,
                    skipped=True)


def pair_view(session: TranslationSession, run_id: int, label: str, pair: PairInput,
              forced: bool, beam: int = 1) -> PairView:
    """Attention of `pair` under one model: forced decoding of the reference, or the
    model's own translation; the argmax alignment. A gold pair under forced decoding is
    gold_pair_view (the gold's words, with its AER)."""
    if forced and pair.gold is not None and pair.gold_src is not None \
            and pair.gold_tgt is not None:
        return gold_pair_view(session, run_id, label, pair)
    if forced and pair.target:
        tr = session.force(pair.source, pair.target)
    else:
        tr = session.translate([pair.source], beam=beam)[0]
    view = _token_view(session, run_id, label, tr, tr.source_tokens, tr.target_tokens)
    if pair.gold is not None and forced:  # gold links without the gold's tokens
        if (pair.gold_src is None or len(view.src_tokens) == len(pair.gold_src)) and \
                (pair.gold_tgt is None or len(view.tgt_tokens) == len(pair.gold_tgt)):
            score_view(view, pair.gold)
        else:
            view.note = "model tokens differ from the gold tokens: no AER"
    elif pair.gold is not None:
        view.note = "free decoding: AER needs forced decoding of the reference"
    return view


def _token_view(session: TranslationSession, run_id: int, label: str, forced: Any,
                src_tokens: Sequence[str], tgt_tokens: Sequence[str]) -> PairView:
    """The view of a forced or free decoding `forced` (attention (T + 1) x S, positions,
    gates, per-layer attention and the alignment head's rows where it has them) on the
    model's tokens, its argmax links."""
    cfg = session.first.config.model
    matrix = np.asarray(forced.attention, dtype=np.float32)
    layers = getattr(forced, "layer_attention", None)  # forced decoding only
    head = getattr(forced, "alignment", None)  # forced decoding of a run with an alignment head
    view = PairView(run_id, label, matrix, list(src_tokens), list(tgt_tokens),
                    None if forced.positions is None
                    else np.asarray(forced.positions, dtype=float),
                    cfg.window if cfg.attention == "local-p" else 0,
                    None if forced.gates is None else np.asarray(forced.gates, dtype=np.float32),
                    layers=None if layers is None else np.asarray(layers, dtype=np.float32),
                    layered=family_traits(cfg.family).layered,
                    alignment=None if head is None else np.asarray(head, dtype=np.float32))
    view.predicted = set(argmax_alignment(matrix, drop_eos=True).sure)
    return view


def gold_pair_view(session: TranslationSession, run_id: int, label: str,
                   pair: PairInput) -> PairView:
    """A gold pair forced alone on the gold's own words (force_gold), as gold_view
    shows it."""
    forced = next(force_gold(session, [list(pair.gold_src)], [list(pair.gold_tgt)]))
    return gold_view(session, run_id, label, forced, pair.gold)


def gold_view(session: TranslationSession, run_id: int, label: str, forced: GoldForcing,
              gold: Alignment) -> PairView:
    """The view of a gold pair forced on the gold's own words (core.evaluate.attention_aer.
    force_gold: the pass `align` reads, not the text tokenised again), its links
    (forced.links at the predicting step) and AER against `gold` (in the pair's
    orientation). With one model token per gold word, the view is on those tokens (EOS
    row, positions, gates, layers and heads kept); a subword run's is in the gold's words
    (`in_words`): the piece attention summed back to words, tgt_words x src_words, no EOS
    row, no per-piece extras."""
    src, tgt = forced.src_words, forced.tgt_words
    if (len(forced.src_tokens), len(forced.tgt_tokens)) == (len(src), len(tgt)):
        view = _token_view(session, run_id, label, forced.result, forced.src_tokens,
                           forced.tgt_tokens)
    else:
        layers = getattr(forced.result, "layer_attention", None)
        view = PairView(run_id, label, np.asarray(forced.word_rows("predict"), dtype=np.float32),
                        list(src), list(tgt), in_words=True,
                        layers=None if layers is None else np.asarray(layers, dtype=np.float32),
                        layered=family_traits(session.first.config.model.family).layered,
                        note="subword attention summed to the gold words")
    view.forced = forced
    view.predicted = set(forced.links("predict")[1].sure)
    score_view(view, gold)
    return view


def joined(note: str, more: str) -> str:
    """`note`, then `more` after a semicolon (`more` alone when there is no note)."""
    return f"{note}; {more}" if note else more


def score_view(view: PairView, gold: Alignment) -> None:
    """Set the AER, precision and recall of `view`'s links against `gold`."""
    counts = sentence_aer(view.predicted, gold)
    view.aer, view.precision, view.recall = counts.aer, counts.precision, counts.recall


def select_layer(view: PairView, gold: Alignment | None, layer: int | None = None,
                 head: int | None = None) -> PairView:
    """`view` (as `pair_view` made it: the averaged attention) showing instead one decoder
    layer's cross-attention, the mean of its heads (`head` None) or one head (0-based):
    a copy with that matrix, its argmax alignment and, where the view had an AER against
    `gold`, the AER of that alignment; a view in the gold's words (a subword run) gets
    the layer's pieces summed to words, and its forced pair read at that layer
    (attention_aer.at_layer), so that every reading and the whole-set row follow it.
    `layer` None gives `view` itself."""
    if layer is None or view.skipped:
        return view
    if view.layers is None:
        raise ValueError(f"{view.label}: no per-layer attention (forced decoding of a "
                         "Transformer-family model has it)")
    if view.in_words:  # the layer's pieces summed to the gold's words, as `align --layer`
        chosen = at_layer(view.forced, layer, head)
        out = replace(view, matrix=np.asarray(chosen.word_rows("predict"), dtype=np.float32),
                      selection=(layer, head), forced=chosen)
        out.predicted = set(chosen.links("predict")[1].sure)
        if view.aer is not None and gold is not None:
            score_view(out, gold)
        return out
    per_layer = view.layers[layer]  # heads x (tgt + 1) x src
    matrix = per_layer.mean(axis=0) if head is None else per_layer[head]
    out = replace(view, matrix=np.ascontiguousarray(matrix, dtype=np.float32),
                  selection=(layer, head))
    out.predicted = set(argmax_alignment(out.matrix, drop_eos=True).sure)
    if view.aer is not None and gold is not None:
        score_view(out, gold)
    return out


NO_HEAD = "no alignment head: predicting step shown"


def has_head(view: PairView) -> bool:
    """Whether the view's run has an alignment head (reading 'head' can be shown)."""
    return view.alignment is not None or (
        view.forced is not None and getattr(view.forced.result, "alignment", None) is not None)


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
    if view.forced is not None and (view.selection == (None, None) or view.in_words):
        rows, links = view.forced.links(reading, no_sink)  # what score_gold counts
    else:  # one layer or head, or a pair not forced on the gold's words
        rows, links = read_links(read_attention(full, reading), view.src_tokens,  # tgt x src
                                 view.tgt_tokens, no_sink)
    if view.in_words:  # the gold's words: no EOS row, no positions
        out = replace(view, matrix=np.ascontiguousarray(rows, dtype=np.float32),
                      reading=reading, no_sink=no_sink)
    else:
        out = _read_view(view, full, rows, reading, no_sink)
    out.predicted = set(links.sure)
    if view.aer is not None and gold is not None:
        score_view(out, gold)
    return out


def _read_view(view: PairView, full: np.ndarray, rows: np.ndarray, reading: str,
               no_sink: bool) -> PairView:
    """A copy of a view on the model's tokens showing `rows` (tgt x src, read from
    `full`, (tgt + 1) x src, at `reading`): the EOS row kept where the reading keeps the
    predicting step, local-p's positions moved with the rows."""
    matrix = rows if reading not in ("predict", "head") else np.vstack([rows, full[-1:]])
    positions = view.positions
    if positions is not None and reading == "shift":
        positions = positions[1:]
    elif positions is not None and reading == "sum":
        positions = (positions[:-1] + positions[1:]) / 2
    elif positions is not None and reading == "previous":
        positions = np.concatenate([positions[:1], positions[:-2]])
    return replace(view, matrix=np.ascontiguousarray(matrix, dtype=np.float32),
                   positions=positions, reading=reading, no_sink=no_sink)


NO_SYMMETRISATION = "symmetrisation needs gold pairs under forced decoding"


def symmetrized_view(view: PairView, reverse: PairView, gold: Alignment | None,
                     heuristic: str) -> PairView:
    """`view` (read as shown) with its links replaced by their symmetrisation with the
    links of `reverse` (the reverse-direction run's view of the same pair, read as shown)
    by `heuristic`: core.evaluate.attention_aer.symmetrize_with_reverse, what `align
    --reverse-run` uses; the AER against `gold` (in `view`'s orientation) follows. Both
    must be on the gold's words (an AER each), else `view` with a note."""
    if view.skipped:
        return view
    if view.aer is None or reverse.aer is None:
        return replace(view, note=joined(view.note, NO_SYMMETRISATION))
    links = symmetrize_with_reverse([view.predicted], [reverse.predicted], heuristic)[0]
    out = replace(view, predicted=set(links.sure),
                  note=joined(view.note, f"links: {heuristic} with {reverse.label}"))
    if gold is not None:
        score_view(out, gold)
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

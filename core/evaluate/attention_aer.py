"""AER of a model's attention on a gold set: force-decode every gold (source, target)
pair with a TranslationSession, read word alignments off the attention, score them.

    forced = force_gold(session, gold.src_tokens, gold.tgt_tokens)   # batched, lazily
    scores = score_gold(forced, gold.alignments, [("predict", False)],
                        reverse=(force_gold(rev_session, gold.tgt_tokens, gold.src_tokens),
                                 ("predict", False)))   # + the symmetrised row
    gold = gold_for_run(gold, ("fr", "en"))   # an fr->en run reads an en->fr gold reversed
    print(aer_table({"attention": scores.readings[("predict", False)].links}, gold).to_markdown())

`score_gold` is the one whole-set computation of both fronts: `align` gives it the
forced pairs as force_gold yields them, the Attention screen (core.services.attention_set)
the ones its pair views hold; every pair's links are GoldForcing.links, the one per-pair
reading, which the screen's pair views read too.

Gold sentences are already tokenised, so they are NOT tokenised again: for a word
vocabulary each gold token is one model token (only the preprocessor's normalisation,
e.g. lowercasing, is applied to it); for a subword vocabulary each gold token is split
into pieces on its own and the piece-level attention is summed back to words
(core.evaluate.extract.aggregate_subwords). The EOS row is dropped: it is no word.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from core.data.vocab import SubwordVocab
from core.errors import ConfigError
from core.evaluate.aer import PERCENT_FORMAT, AERCounts, corpus_aer
from core.evaluate.alignment import Alignment
from core.evaluate.alignment import AlignmentCorpus as GoldSet
from core.evaluate.extract import aggregate_subwords, argmax_alignment, threshold_alignment
from core.evaluate.goldsets import NO_MATCH, REVERSED, gold_orientation, orientation_note
from core.evaluate.readings import drop_sink, read_attention, reading_source
from core.evaluate.report import Table
from core.evaluate.symmetrize import symmetrize_corpus
from core.infer.scoring import ForcedItem, ForcedScorer
from core.jobs import JobContext

if TYPE_CHECKING:  # annotations only: importing the session would load torch
    from core.infer.session import TranslationSession

METHODS = ("argmax", "threshold")
Variant = tuple[str, bool]  # (reading, no_sink): core.evaluate.readings


def model_tokens(words: Sequence[str], pre: Any, vocab: Any) -> tuple[list[str], list[int]]:
    """Gold words -> the model's tokens and, per token, the index of its word."""
    tokens: list[str] = []
    word_ids: list[int] = []
    for w, word in enumerate(words):
        norm = pre.normalize(word) or word
        if isinstance(vocab, SubwordVocab):
            pieces = vocab.tokenize(norm) or [norm]
        else:
            pieces = [norm]
        tokens += pieces
        word_ids += [w] * len(pieces)
    return tokens, word_ids


@dataclass
class GoldForcing:
    """One gold pair force-decoded on the gold's own words (force_gold): the forced result
    (core.infer.forced.ForcedResult: attention (T + 1) x S on the model's tokens, EOS row
    last, with the alignment head's rows, positions, gates and per-layer attention where
    the run has them), the model's tokens and, per token, the index of its gold word,
    and the gold words themselves."""

    result: Any
    src_tokens: list[str]
    tgt_tokens: list[str]
    src_word_ids: list[int]
    tgt_word_ids: list[int]
    subword: bool  # a subword vocabulary: several tokens may make one word
    src_words: list[str] = field(default_factory=list)  # the gold's words
    tgt_words: list[str] = field(default_factory=list)
    _rows: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def word_rows(self, reading: str) -> np.ndarray:
        """tgt_words x src_words: the attention read at `reading` (core.evaluate.readings)
        on the model's tokens, summed back to the gold's words for a subword run
        (computed once per reading)."""
        if reading not in self._rows:
            self._rows[reading] = self._read(reading)
        return self._rows[reading]

    def _read(self, reading: str) -> np.ndarray:
        if not self.src_tokens or not self.tgt_tokens:
            return np.zeros((len(set(self.tgt_word_ids)), len(set(self.src_word_ids))))
        attn = read_attention(reading_source(self.result, reading), reading)  # tgt x src
        if not self.subword:
            return attn
        return aggregate_subwords(attn, self.src_word_ids, self.tgt_word_ids, mode="sum")

    def links(self, reading: str = "predict", no_sink: bool = False, method: str = "argmax",
              threshold: float = 0.3) -> tuple[np.ndarray, Alignment]:
        """The one per-pair reading of both fronts (score_gold, the Attention screen's pair
        views): (the tgt_words x src_words rows the links are read from, read at
        `reading`, without the final-punctuation sink when `no_sink`; the links)."""
        return read_links(self.word_rows(reading), self.src_words, self.tgt_words, no_sink,
                          method, threshold)


def at_layer(pair: GoldForcing, layer: int, head: int | None = None) -> GoldForcing:
    """`pair` read from one decoder layer's cross-attention instead of the averaged last
    layer (a Transformer-family run: the forced result's layer_attention, layers x heads
    x (T + 1) x S): the mean of layer `layer`'s heads, or head `head` alone (both
    0-based). Which layer and head align best is a property of the trained run (Garg et
    al. 2019 read a penultimate layer; experiments/RESULTS.md, section H). ValueError
    for a result without layers, or a layer or head it does not have."""
    layers = getattr(pair.result, "layer_attention", None)
    if layers is None:
        raise ValueError("this run has one attention, no decoder layers to choose among")
    n_layers, n_heads = layers.shape[:2]
    if not 0 <= layer < n_layers or (head is not None and not 0 <= head < n_heads):
        raise ValueError(f"layer {layer + 1}" + ("" if head is None else f", head {head + 1}")
                         + f": the run has {n_layers} decoder layers of {n_heads} heads")
    matrix = layers[layer].mean(axis=0) if head is None else layers[layer, head]
    return replace(pair, result=replace(pair.result, attention=matrix), _rows={})


def force_gold(session: TranslationSession,
               src_words: Sequence[list[str]], tgt_words: Sequence[list[str]],
               batch_size: int = 32, ctx: JobContext | None = None) -> Iterator[GoldForcing]:
    """Each (source, target) pair of gold words force-decoded by the session, in order,
    `batch_size` pairs at a time: the one forced pass over gold pairs that `align`
    (score_gold) and the Attention screen (core.services.attention_set.attention_views)
    both read. The words are not tokenised again (model_tokens); a pair has no document:
    a context model sees the edge markers; an empty source is scored on one <unk>."""
    first = session.first
    src_vocab, tgt_vocab = first.src_vocab, first.tgt_vocab
    scorer = ForcedScorer.for_session(session)
    subword = isinstance(src_vocab, SubwordVocab) or isinstance(tgt_vocab, SubwordVocab)
    n = len(src_words)
    for start in range(0, n, batch_size):
        if ctx is not None:
            ctx.wait_if_paused()
            ctx.check_cancelled()
        stop = min(n, start + batch_size)
        src_side = [model_tokens(s, first.src_pre, src_vocab) for s in src_words[start:stop]]
        tgt_side = [model_tokens(t, first.tgt_pre, tgt_vocab) for t in tgt_words[start:stop]]
        items = [ForcedItem(list(src_vocab.encode(s_toks)), list(tgt_vocab.encode(t_toks)),
                            scorer.context_from_ids())
                 for (s_toks, _), (t_toks, _) in zip(src_side, tgt_side, strict=True)]
        results = scorer.score(items, batch_size=batch_size)
        for k, ((s_toks, s_wid), (t_toks, t_wid), res) in enumerate(
                zip(src_side, tgt_side, results, strict=True), start):
            yield GoldForcing(res, s_toks, t_toks, s_wid, t_wid, subword, list(src_words[k]),
                              list(tgt_words[k]))
        if ctx is not None:
            ctx.progress(stop, n, f"force-decoded {stop}/{n} gold pairs")


def alignments_from_attention(matrices: Sequence[np.ndarray], method: str = "argmax",
                              threshold: float = 0.3) -> list[Alignment]:
    """Word alignments from tgt x src attention matrices."""
    if method == "argmax":
        return [argmax_alignment(m) for m in matrices]
    if method == "threshold":
        return [threshold_alignment(m, threshold) for m in matrices]
    raise ValueError(f"unknown alignment method {method!r}: use one of {METHODS}")


def read_links(rows: np.ndarray, src_words: Sequence[str], tgt_words: Sequence[str],
               no_sink: bool = False, method: str = "argmax", threshold: float = 0.3
               ) -> tuple[np.ndarray, Alignment]:
    """The one step from a reading's rows to links (GoldForcing.links; the Attention
    screen's views of one layer or head, core.services.attention_view.select_reading):
    rows (tgt x src, one per target word, core.evaluate.readings.read_attention) -> (the
    rows the links are read from: without the final-punctuation sink when `no_sink`,
    the links)."""
    if no_sink:
        rows = drop_sink(rows, src_words, tgt_words)
    return rows, alignments_from_attention([rows], method, threshold)[0]


def attention_alignments(session: TranslationSession, gold: GoldSet, method: str = "argmax",
                         threshold: float = 0.3, ctx: JobContext | None = None,
                         reading: str = "predict", no_sink: bool = False) -> list[Alignment]:
    """(src, tgt) alignments of the gold sentences read off the session's forced
    attention: 'argmax' links every target word to the source word it attends to most;
    'threshold' keeps every cell >= `threshold`. `reading` and `no_sink`: see
    core.evaluate.readings."""
    return reading_alignments(session, gold, [(reading, no_sink)], method, threshold,
                              ctx)[(reading, no_sink)]


def reading_alignments(session: TranslationSession, gold: GoldSet, variants: Sequence[Variant],
                       method: str = "argmax", threshold: float = 0.3,
                       ctx: JobContext | None = None) -> dict[Variant, list[Alignment]]:
    """Alignments of the gold set for each (reading, no_sink) variant, from one forced
    decoding pass (score_gold)."""
    forced = force_gold(session, gold.src_tokens, gold.tgt_tokens, ctx=ctx)
    scores = score_gold(forced, None, variants, method, threshold)  # links only
    return {v: row.links for v, row in scores.readings.items()}


@dataclass
class GoldRow:
    """One system's links of the gold pairs scored and their AER counts against the
    gold (core.evaluate.aer.corpus_aer; None when no gold links were given)."""

    links: list[Alignment]
    counts: AERCounts | None


@dataclass
class GoldScores:
    """score_gold's rows: the run's per variant, the reverse run's (its links turned to
    the run's (src, tgt)) and the symmetrised one, where a reverse run was given."""

    readings: dict[Variant, GoldRow]
    reverse: GoldRow | None = None
    symmetrized: GoldRow | None = None


def score_gold(forced: Iterable[GoldForcing], golds: Sequence[Alignment] | None,
               variants: Sequence[Variant], method: str = "argmax", threshold: float = 0.3,
               reverse: tuple[Iterable[GoldForcing], Variant] | None = None,
               heuristic: str = "grow-diag-final-and") -> GoldScores:
    """A run's whole-set attention links and AER on gold pairs, for `align` and the
    Attention screen's whole-set table alike: `forced` (force_gold's pairs, in the run's
    orientation, one per gold alignment of `golds`, in that orientation too) read as each
    (reading, no_sink) of `variants` (GoldForcing.links); with `reverse` = (the reverse-
    direction run's forced pairs, in ITS orientation; its variant), also that run's links
    and their symmetrisation by `heuristic` with the first variant's
    (symmetrize_with_reverse). `golds` None: the links alone, no counts."""
    rows: dict[Variant, list[Alignment]] = {tuple(v): [] for v in variants}
    for pair in forced:  # a generator: each pair is read, then dropped
        for reading, no_sink in rows:
            rows[(reading, no_sink)].append(pair.links(reading, no_sink, method, threshold)[1])
    scores = GoldScores({v: _row(links, golds) for v, links in rows.items()})
    if reverse is not None:
        back, (reading, no_sink) = reverse
        rev = [pair.links(reading, no_sink, method, threshold)[1] for pair in back]
        scores.reverse = _row([a.swapped() for a in rev], golds)
        first = rows[tuple(variants[0])]
        scores.symmetrized = _row(symmetrize_with_reverse(first, rev, heuristic), golds)
    return scores


def _row(links: list[Alignment], golds: Sequence[Alignment] | None) -> GoldRow:
    return GoldRow(links, None if golds is None else corpus_aer(links, list(golds)))


def reverse_gold(gold: GoldSet) -> GoldSet:
    """The gold set seen from the other side (target -> source)."""
    return GoldSet(gold.name, gold.tgt_tokens, gold.src_tokens,
                   [a.swapped() for a in gold.alignments], gold.tgt_lang, gold.src_lang)


def gold_for_run(gold: GoldSet, run_langs: Sequence[str]) -> GoldSet:
    """`gold` as a run translating run_langs = (source, target) reads it: as it is, or
    from the other side (reverse_gold) for a run of the reversed pair; a ConfigError
    (orientation_note) for a run of another pair."""
    langs = (gold.src_lang, gold.tgt_lang)
    found = gold_orientation(run_langs, langs)
    if found == NO_MATCH:
        raise ConfigError(f"{orientation_note(run_langs, gold.name, langs)}: give a gold set of "
                          f"{run_langs[0]} -> {run_langs[1]} (or the reverse)")
    return reverse_gold(gold) if found == REVERSED else gold


def symmetrize_with_reverse(fwd: Sequence[Alignment | set], rev: Sequence[Alignment | set],
                            heuristic: str = "grow-diag-final-and") -> list[Alignment]:
    """Symmetrise a run's (src, tgt) alignments with those of the reverse-direction run on
    the same pairs, given in ITS orientation (the run's (tgt, src)): what `align
    --reverse-run` and the Attention screen's "symmetrise with" both use."""
    back = [Alignment.of((s, t) for t, s in (r.links if isinstance(r, Alignment) else r))
            for r in rev]
    return symmetrize_corpus(fwd, back, heuristic)


def aer_table(systems: Mapping[str, Sequence[Alignment]], gold: GoldSet,
              title: str = "") -> Table:
    """AER, precision and recall (in %) of each system's alignments against `gold`."""
    rows = []
    for name, preds in systems.items():
        c = corpus_aer(list(preds), gold.alignments)
        rows.append([name, round(100 * c.aer, 2), round(100 * c.precision, 2),
                     round(100 * c.recall, 2), c.n_pred])
    title = title or f"Alignment error rate on gold set {gold.name!r} ({len(gold)} sentences)"
    notes = [f"Gold: {gold.n_sure} sure links, {gold.n_possible} possible (sure included). "
             "AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|); lower is better."]
    return Table(["system", "AER %", "precision %", "recall %", "links"], rows, title, notes,
                 formats=dict.fromkeys(("AER %", "precision %", "recall %"), PERCENT_FORMAT))


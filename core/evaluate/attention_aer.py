"""AER of a model's attention on a gold set: force-decode every gold (source, target)
pair with a TranslationSession, read word alignments off the attention, score them.

    preds = attention_alignments(session, gold)                  # argmax, one link per word
    both = symmetrized_attention(session, reverse_session, gold) # src->tgt + tgt->src
    gold = gold_for_run(gold, ("fr", "en"))   # an fr->en run reads an en->fr gold reversed
    print(aer_table({"attention": preds, "sym": both}, gold).to_markdown())

Gold sentences are already tokenised, so they are NOT tokenised again: for a word
vocabulary each gold token is one model token (only the preprocessor's normalisation,
e.g. lowercasing, is applied to it); for a subword vocabulary each gold token is split
into pieces on its own and the piece-level attention is summed back to words
(core.evaluate.extract.aggregate_subwords). The EOS row is dropped: it is no word.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.data.vocab import SubwordVocab
from core.errors import ConfigError
from core.evaluate.aer import PERCENT_FORMAT, corpus_aer
from core.evaluate.alignment import Alignment
from core.evaluate.alignment import AlignmentCorpus as GoldSet
from core.evaluate.extract import aggregate_subwords, argmax_alignment, threshold_alignment
from core.evaluate.readings import drop_sink, read_attention, reading_source
from core.evaluate.report import Table
from core.evaluate.symmetrize import symmetrize_corpus
from core.infer.scoring import ForcedItem, ForcedScorer
from core.jobs import JobContext

METHODS = ("argmax", "threshold")


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
    the run has them), the model's tokens and, per token, the index of its gold word."""

    result: Any
    src_tokens: list[str]
    tgt_tokens: list[str]
    src_word_ids: list[int]
    tgt_word_ids: list[int]
    subword: bool  # a subword vocabulary: several tokens may make one word

    def word_rows(self, reading: str) -> np.ndarray:
        """tgt_words x src_words: the attention read at `reading` (core.evaluate.readings)
        on the model's tokens, summed back to the gold's words for a subword run."""
        if not self.src_tokens or not self.tgt_tokens:
            return np.zeros((len(set(self.tgt_word_ids)), len(set(self.src_word_ids))))
        attn = read_attention(reading_source(self.result, reading), reading)  # tgt x src
        if not self.subword:
            return attn
        return aggregate_subwords(attn, self.src_word_ids, self.tgt_word_ids, mode="sum")


def force_gold(session, src_words: Sequence[list[str]], tgt_words: Sequence[list[str]],
               batch_size: int = 32, ctx: JobContext | None = None) -> Iterator[GoldForcing]:
    """Each (source, target) pair of gold words force-decoded by the session, in order,
    `batch_size` pairs at a time: the one forced pass over gold pairs that `align`
    (word_attention) and the Attention screen (core.services.attention_view.pair_view)
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
        for (s_toks, s_wid), (t_toks, t_wid), res in zip(src_side, tgt_side, results,
                                                          strict=True):
            yield GoldForcing(res, s_toks, t_toks, s_wid, t_wid, subword)
        if ctx is not None:
            ctx.progress(stop, n, f"force-decoded {stop}/{n} gold pairs")


def word_attention(session, src_words: list[list[str]], tgt_words: list[list[str]],
                   batch_size: int = 32, ctx: JobContext | None = None,
                   readings: Sequence[str] = ("predict",)) -> dict[str, list[np.ndarray]]:
    """Forced-decoding attention of each (source, target) pair of words (force_gold), read
    as each of `readings` (core.evaluate.readings: at the predicting step, one step
    later, both, one step earlier, the alignment head) on the model's tokens and mapped
    back to words: {reading: one tgt_words x src_words matrix per pair}."""
    out: dict[str, list[np.ndarray]] = {r: [] for r in readings}
    for forced in force_gold(session, src_words, tgt_words, batch_size, ctx):
        for reading in readings:
            out[reading].append(forced.word_rows(reading))
    return out


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
    """The one step from a reading's rows to links, for `align` (reading_alignments) and
    the Attention screen (core.services.attention_view.select_reading): rows (tgt x src,
    one per target word, core.evaluate.readings.read_attention) -> (the rows the links
    are read from: without the final-punctuation sink when `no_sink`, the links)."""
    if no_sink:
        rows = drop_sink(rows, src_words, tgt_words)
    return rows, alignments_from_attention([rows], method, threshold)[0]


def attention_alignments(session, gold: GoldSet, method: str = "argmax",
                         threshold: float = 0.3, ctx: JobContext | None = None,
                         reading: str = "predict", no_sink: bool = False) -> list[Alignment]:
    """(src, tgt) alignments of the gold sentences read off the session's forced
    attention: 'argmax' links every target word to the source word it attends to most;
    'threshold' keeps every cell >= `threshold`. `reading` and `no_sink`: see
    core.evaluate.readings."""
    return reading_alignments(session, gold, [(reading, no_sink)], method, threshold,
                              ctx)[(reading, no_sink)]


def reading_alignments(session, gold: GoldSet, variants: Sequence[tuple[str, bool]],
                       method: str = "argmax", threshold: float = 0.3,
                       ctx: JobContext | None = None
                       ) -> dict[tuple[str, bool], list[Alignment]]:
    """Alignments of the gold set for each (reading, no_sink) variant, from one forced
    decoding pass."""
    readings = list(dict.fromkeys(r for r, _ in variants))
    matrices = word_attention(session, gold.src_tokens, gold.tgt_tokens, ctx=ctx,
                              readings=readings)
    return {(reading, no_sink): [read_links(m, s, t, no_sink, method, threshold)[1]
                                 for m, s, t in zip(matrices[reading], gold.src_tokens,
                                                    gold.tgt_tokens, strict=True)]
            for reading, no_sink in variants}


def reverse_gold(gold: GoldSet) -> GoldSet:
    """The gold set seen from the other side (target -> source)."""
    return GoldSet(gold.name, gold.tgt_tokens, gold.src_tokens,
                   [a.swapped() for a in gold.alignments], gold.tgt_lang, gold.src_lang)


SAME, REVERSED, NO_MATCH = "same", "reversed", "no match"


def _pair(langs: Sequence[str]) -> tuple[str, str]:
    return langs[0].strip().lower(), langs[1].strip().lower()


def gold_orientation(run_langs: Sequence[str], gold_langs: Sequence[str]) -> str:
    """How a run translating run_langs = (source, target) reads a gold set of gold_langs:
    SAME (its pairs as they are; also when a language is not known), REVERSED (the
    gold's target is the run's source: reverse_gold) or NO_MATCH (another language pair:
    its attention on these pairs means nothing)."""
    run, gold = _pair(run_langs), _pair(gold_langs)
    if not all(run + gold) or run == gold:
        return SAME
    return REVERSED if run == gold[::-1] else NO_MATCH


def orientation_note(run_langs: Sequence[str], gold_name: str, gold_langs: Sequence[str]
                     ) -> str:
    """'es -> en run; gold set wpt03-trial is en -> fr': why a run is not scored on a gold
    set."""
    return (f"{run_langs[0]} -> {run_langs[1]} run; gold set {gold_name} is "
            f"{gold_langs[0]} -> {gold_langs[1]}")


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


def symmetrized_attention(session, reverse_session, gold: GoldSet,
                          heuristic: str = "grow-diag-final-and", method: str = "argmax",
                          threshold: float = 0.3, ctx: JobContext | None = None,
                          readings: tuple[str, str] = ("predict", "predict"),
                          no_sink: bool = False
                          ) -> tuple[list[Alignment], list[Alignment], list[Alignment]]:
    """Attention alignments of a src->tgt session and of a tgt->src session (on the
    reversed gold pairs, turned back to (src, tgt)), each read at its own reading
    (`readings` = (forward, reverse)), and their symmetrisation.
    Returns (forward, reverse, symmetrized)."""
    fwd = attention_alignments(session, gold, method, threshold, ctx, readings[0], no_sink)
    rev = attention_alignments(reverse_session, reverse_gold(gold), method, threshold, ctx,
                               readings[1], no_sink)
    return fwd, [a.swapped() for a in rev], symmetrize_with_reverse(fwd, rev, heuristic)


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


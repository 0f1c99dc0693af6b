"""Translation metrics with sacrebleu, perplexity, and BLEU by sentence length.

- `corpus_bleu`, `chrf`, `ter`: sacrebleu on DETOKENISED text (its own tokeniser,
  '13a' by default); the score comes with sacrebleu's signature string, which must be
  reported with the number.
- `tokenized_bleu`: BLEU on text that is already Moses-tokenised, with sacrebleu's
  tokenize='none' (it only splits on spaces). This is the "tokenized BLEU" of Luong et
  al. 2015 and Bahdanau et al. 2015 (multi-bleu.perl on tokenised text); it is not
  comparable with detokenised sacreBLEU.
- `bleu_by_length`: corpus BLEU per source-length bucket and per system (Bahdanau Fig. 2,
  Luong Fig. 6).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sacrebleu.metrics import BLEU, CHRF, TER

from core.evaluate.report import Table

Refs = Sequence[str] | Sequence[Sequence[str]]


@dataclass(frozen=True)
class Score:
    """A metric value with the sacrebleu signature that makes it reproducible."""

    name: str
    score: float
    signature: str
    detail: str = ""  # sacrebleu's formatted line (n-gram precisions, BP, ...)


def _streams(refs: Refs, n_hyps: int) -> list[list[str]]:
    """One reference per sentence (list of str) or several reference streams."""
    if len(refs) > 0 and isinstance(refs[0], str):
        streams = [list(refs)]  # type: ignore[arg-type]
    else:
        streams = [list(r) for r in refs]  # type: ignore[union-attr]
    for s in streams:
        if len(s) != n_hyps:
            raise ValueError(f"{n_hyps} hypotheses but a reference stream of {len(s)} lines")
    return streams


def _join(texts: Sequence[str] | Sequence[Sequence[str]]) -> list[str]:
    return [t if isinstance(t, str) else " ".join(t) for t in texts]


def corpus_bleu(hyps: Sequence[str], refs: Refs, *, tokenize: str = "13a",
                lowercase: bool = False) -> Score:
    """sacreBLEU on detokenised text."""
    metric = BLEU(tokenize=tokenize, lowercase=lowercase)
    res = metric.corpus_score(list(hyps), _streams(refs, len(hyps)))
    return Score("BLEU", res.score, str(metric.get_signature()), str(res))


def tokenized_bleu(hyps: Sequence[str] | Sequence[Sequence[str]],
                   refs: Sequence[str] | Sequence[Sequence[str]],
                   lowercase: bool = False) -> Score:
    """BLEU on pre-tokenised text (strings of space-separated tokens or token lists),
    sacrebleu with tokenize='none'. One reference per sentence."""
    return corpus_bleu(_join(hyps), _join(refs), tokenize="none", lowercase=lowercase)


def sentence_bleu(hyp: str, ref: str | Sequence[str], *, tokenize: str = "13a") -> float:
    """Smoothed sentence BLEU (sacrebleu's exp smoothing, effective order)."""
    metric = BLEU(tokenize=tokenize, effective_order=True)
    return metric.sentence_score(hyp, [ref] if isinstance(ref, str) else list(ref)).score


def chrf(hyps: Sequence[str], refs: Refs) -> Score:
    """Corpus chrF (sacrebleu defaults, 0-100) of `hyps` against `refs`."""
    metric = CHRF()
    res = metric.corpus_score(list(hyps), _streams(refs, len(hyps)))
    return Score("chrF", res.score, str(metric.get_signature()), str(res))


def ter(hyps: Sequence[str], refs: Refs) -> Score:
    """Corpus TER (sacrebleu defaults, in %, lower is better) of `hyps` against `refs`."""
    metric = TER()
    res = metric.corpus_score(list(hyps), _streams(refs, len(hyps)))
    return Score("TER", res.score, str(metric.get_signature()), str(res))


def perplexity(total_nll: float, n_tokens: int) -> float:
    """exp(summed negative log-likelihood in nats / number of predicted tokens)."""
    if n_tokens <= 0:
        raise ValueError("perplexity needs at least one token")
    return math.exp(total_nll / n_tokens)


DEFAULT_BUCKETS: list[tuple[int, int | None]] = [
    (0, 10), (10, 20), (20, 30), (30, 40), (40, 50), (50, 60), (60, None)]


@dataclass
class LengthTable:
    """BLEU per source-length bucket: buckets are half-open [lo, hi) in source tokens
    (hi None = no upper bound). scores[system][k] is None for an empty bucket."""

    buckets: list[tuple[int, int | None]]
    counts: list[int]
    scores: dict[str, list[float | None]] = field(default_factory=dict)
    tokenize: str = "13a"

    def to_table(self) -> Table:
        """BLEU per source-length bucket: one row per bucket ('lo-hi' or 'lo+') with its
        sentence count, each system's BLEU (None for an empty bucket) and a note on a
        bucket too small to mean much (length_table)."""
        labels = [f"{lo}-{hi - 1}" if hi is not None else f"{lo}+" for lo, hi in self.buckets]
        systems = [(name, dict(zip(labels, (None if v is None else round(v, 2) for v in s),
                                   strict=True)), dict(zip(labels, self.counts, strict=True)))
                   for name, s in self.scores.items()]
        return length_table(systems, f"BLEU by source length (tokenize={self.tokenize})",
                            buckets=labels)


#: a length bucket with fewer sentences than this is marked: its BLEU means little
MIN_BUCKET_SENTENCES = 10
FEW_SENTENCES = f"fewer than {MIN_BUCKET_SENTENCES} sentences: BLEU means little"


def bucket_start(label: str) -> int:
    """The shortest length of a bucket label ('10-19' -> 10, '60+' -> 60), to sort by."""
    return int(label.split("-")[0].rstrip("+"))


def bucket_count(sizes: Sequence[int | None]) -> str | int | None:
    """A bucket's sentence count over systems: the count when they agree (one test
    set), else the counts joined ('12 / 40'); None when no system knows it."""
    known = [n for n in sizes if n is not None]
    if not known:
        return None
    return known[0] if len(set(known)) == 1 else " / ".join(str(n) for n in sizes)


def length_table(systems: Sequence[tuple[str, Mapping[str, float | None], Mapping[str, int]]],
                 title: str = "BLEU by source length",
                 buckets: Sequence[str] | None = None) -> Table:
    """BLEU by length from (system, {bucket: BLEU}, {bucket: sentences}) as stored with
    an evaluation: a row per bucket with its sentences, each system's BLEU, and the note
    FEW_SENTENCES where some system scored fewer than MIN_BUCKET_SENTENCES there."""
    if buckets is None:
        buckets = sorted({b for _, values, _ in systems for b in values}, key=bucket_start)
    rows = []
    for bucket in buckets:
        sizes = [sizes.get(bucket) for _, _, sizes in systems]
        small = any(n is not None and 0 < n < MIN_BUCKET_SENTENCES for n in sizes)
        rows.append([bucket, bucket_count(sizes), *(values.get(bucket) for _, values, _ in systems),
                     FEW_SENTENCES if small else ""])
    return Table(["bucket", "sentences", *(name for name, _, _ in systems), "note"], rows,
                 title=title)


def bleu_by_length(sources_tokens: Sequence[Sequence[str]], systems: Mapping[str, Sequence[str]],
                   refs: Sequence[str],
                   buckets: Sequence[tuple[int, int | None]] = DEFAULT_BUCKETS,
                   tokenize: str = "13a") -> LengthTable:
    """Corpus BLEU of each system on the sentences whose source length falls in each
    bucket. A sentence in no bucket is an error (make the buckets cover all lengths)."""
    n = len(refs)
    for name, hyps in systems.items():
        if len(hyps) != n:
            raise ValueError(f"system {name!r} has {len(hyps)} hypotheses for {n} references")
    if len(sources_tokens) != n:
        raise ValueError(f"{len(sources_tokens)} sources for {n} references")
    members: list[list[int]] = [[] for _ in buckets]
    for i, toks in enumerate(sources_tokens):
        length = len(toks)
        for k, (lo, hi) in enumerate(buckets):
            if length >= lo and (hi is None or length < hi):
                members[k].append(i)
                break
        else:
            raise ValueError(f"sentence {i + 1} has {length} source tokens: no bucket holds it")
    table = LengthTable(list(buckets), [len(m) for m in members], {}, tokenize)
    for name, hyps in systems.items():
        row: list[float | None] = []
        for m in members:
            if not m:
                row.append(None)
                continue
            row.append(corpus_bleu([hyps[i] for i in m], [refs[i] for i in m],
                                   tokenize=tokenize).score)
        table.scores[name] = row
    return table

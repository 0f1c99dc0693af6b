"""Corpus filters. Each returns the kept corpus and a FilterReport saying how many
pairs each reason removed, with example line numbers, so nothing vanishes silently.

Lengths are counted in tokens of a `tokenize` function (whitespace split by default,
or a Preprocessor's tokenize)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from core.data.corpus import Corpus

Tokenize = Callable[[str], list[str]]

MAX_EXAMPLES = 10  # example line numbers kept per reason


@dataclass
class FilterReport:
    """`removed[reason]` = pairs removed; `examples[reason]` = up to MAX_EXAMPLES of
    their origin line numbers (SentencePair.line)."""

    total: int = 0
    kept: int = 0
    removed: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[int]] = field(default_factory=dict)

    def add(self, reason: str, line: int) -> None:
        """Count one pair removed for `reason`, keeping its line number among the first
        MAX_EXAMPLES examples."""
        self.removed[reason] = self.removed.get(reason, 0) + 1
        lines = self.examples.setdefault(reason, [])
        if len(lines) < MAX_EXAMPLES:
            lines.append(line)

    def merge(self, other: FilterReport) -> FilterReport:
        """This report followed by `other` (applied to what this one kept)."""
        out = FilterReport(self.total, other.kept, dict(self.removed), {k: list(v) for k, v in self.examples.items()})
        for reason, n in other.removed.items():
            out.removed[reason] = out.removed.get(reason, 0) + n
            lines = out.examples.setdefault(reason, [])
            lines.extend(other.examples.get(reason, [])[: MAX_EXAMPLES - len(lines)])
        return out

    def summary(self) -> str:
        """One line: 'kept all N pairs', or how many were kept and, per reason, how many were
        removed with example line numbers."""
        if not self.removed:
            return f"kept all {self.total} pairs"
        parts = [
            f"{n} {reason} (e.g. line {', '.join(map(str, self.examples.get(reason, [])[:3]))})"
            for reason, n in sorted(self.removed.items())
        ]
        return f"kept {self.kept} of {self.total} pairs; removed " + "; ".join(parts)


def _split(text: str) -> list[str]:
    return text.split()


def filter_pairs(
    corpus: Corpus, reason_of: Callable[[int], str | None], name: str | None = None
) -> tuple[Corpus, FilterReport]:
    """Keep pair i unless `reason_of(i)` names a reason to remove it."""
    report = FilterReport(total=len(corpus))
    keep: list[int] = []
    for i, pair in enumerate(corpus.pairs):
        reason = reason_of(i)
        if reason is None:
            keep.append(i)
        else:
            report.add(reason, pair.line)
    report.kept = len(keep)
    return corpus.subset(keep, name), report


def filter_empty(corpus: Corpus) -> tuple[Corpus, FilterReport]:
    """Drop pairs with an empty (or whitespace-only) side."""
    pairs = corpus.pairs
    return filter_pairs(
        corpus, lambda i: "empty" if not pairs[i].src.strip() or not pairs[i].tgt.strip() else None
    )


def filter_length(
    corpus: Corpus, max_len: int, src_tokenize: Tokenize = _split, tgt_tokenize: Tokenize = _split
) -> tuple[Corpus, FilterReport]:
    """Drop pairs where either side has more than `max_len` tokens."""
    pairs = corpus.pairs

    def reason(i: int) -> str | None:
        too_long = len(src_tokenize(pairs[i].src)) > max_len or len(tgt_tokenize(pairs[i].tgt)) > max_len
        return "too long" if too_long else None

    return filter_pairs(corpus, reason)


def filter_ratio(
    corpus: Corpus, max_ratio: float, src_tokenize: Tokenize = _split, tgt_tokenize: Tokenize = _split
) -> tuple[Corpus, FilterReport]:
    """Drop pairs whose longer side has more than `max_ratio` times the tokens of the
    shorter one (likely misalignments). Empty sides count as one token here."""
    pairs = corpus.pairs

    def reason(i: int) -> str | None:
        a = max(1, len(src_tokenize(pairs[i].src)))
        b = max(1, len(tgt_tokenize(pairs[i].tgt)))
        return "length ratio" if max(a, b) / min(a, b) > max_ratio else None

    return filter_pairs(corpus, reason)


def filter_duplicates(corpus: Corpus) -> tuple[Corpus, FilterReport]:
    """Drop exact repeats of an earlier (src, tgt) pair; the first occurrence stays."""
    seen: set[tuple[str, str]] = set()
    pairs = corpus.pairs

    def reason(i: int) -> str | None:
        key = (pairs[i].src, pairs[i].tgt)
        if key in seen:
            return "duplicate"
        seen.add(key)
        return None

    return filter_pairs(corpus, reason)


def apply_filters(
    corpus: Corpus, drop_empty: bool = True, max_len: int = 0, max_ratio: float = 0.0,
    dedupe: bool = False, src_tokenize: Tokenize = _split, tgt_tokenize: Tokenize = _split,
) -> tuple[Corpus, FilterReport]:
    """Empty, length (when max_len > 0), ratio (when max_ratio > 0) and duplicate
    filters in that order, with one merged report."""
    report = FilterReport(total=len(corpus), kept=len(corpus))
    if drop_empty:
        corpus, r = filter_empty(corpus)
        report = report.merge(r)
    if max_len > 0:
        corpus, r = filter_length(corpus, max_len, src_tokenize, tgt_tokenize)
        report = report.merge(r)
    if max_ratio > 0:
        corpus, r = filter_ratio(corpus, max_ratio, src_tokenize, tgt_tokenize)
        report = report.merge(r)
    if dedupe:
        corpus, r = filter_duplicates(corpus)
        report = report.merge(r)
    return corpus, report

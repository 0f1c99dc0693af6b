"""Alignment error rate (Och & Ney 2003), precision and recall against sure/possible gold.

    AER       = 1 - (|A n S| + |A n P|) / (|A| + |S|)
    precision = |A n P| / |A|
    recall    = |A n S| / |S|

A is the predicted link set (all links of the prediction), S the sure and P the
possible gold links (S is a subset of P). Corpus scores sum the counts over sentences
and apply the formulas once: they are NOT the mean of the sentence ratios.

Empty cases (each follows from "nothing proposed cannot be wrong, nothing required
cannot be missed"):
- |A| = 0: precision = 1.0;  |S| = 0: recall = 1.0;
- |A| = |S| = 0: AER = 0.0 (the only 0/0 case of the AER formula);
- |A| = 0, |S| > 0: AER = 1.0 (the formula gives it);  |A| > 0, |S| = 0: AER = 1 - precision.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.evaluate.alignment import Alignment, Link

#: How AER, precision and recall are shown everywhere (GUI, CLI, reports): in %, one
#: decimal. Stored values stay unrounded fractions (the store) or % (result tables).
PERCENT_FORMAT = ".1f"


def percent_text(fraction: float | None) -> str:
    """0.70312 -> '70.3' (the % sign goes in the column header or after the number)."""
    return "\u2013" if fraction is None else format(100 * fraction, PERCENT_FORMAT)


@dataclass(frozen=True)
class AERCounts:
    """The counts behind AER; add them to pool sentences into a corpus score."""

    n_pred: int = 0      # |A|
    n_sure: int = 0      # |S|
    n_possible: int = 0  # |P| (includes S)
    a_and_s: int = 0     # |A n S|
    a_and_p: int = 0     # |A n P|

    def __add__(self, other: AERCounts) -> AERCounts:
        return AERCounts(self.n_pred + other.n_pred, self.n_sure + other.n_sure,
                         self.n_possible + other.n_possible, self.a_and_s + other.a_and_s,
                         self.a_and_p + other.a_and_p)

    @property
    def aer(self) -> float:
        """AER = 1 - (|A n S| + |A n P|) / (|A| + |S|), a fraction; 0.0 when A and S are
        both empty."""
        den = self.n_pred + self.n_sure
        return 0.0 if den == 0 else 1.0 - (self.a_and_s + self.a_and_p) / den

    @property
    def precision(self) -> float:
        """|A n P| / |A|, a fraction; 1.0 when nothing is predicted."""
        return 1.0 if self.n_pred == 0 else self.a_and_p / self.n_pred

    @property
    def recall(self) -> float:
        """|A n S| / |S|, a fraction; 1.0 when there are no sure links."""
        return 1.0 if self.n_sure == 0 else self.a_and_s / self.n_sure

    def as_dict(self) -> dict[str, float]:
        """aer, precision and recall (fractions) and the five counts, by name."""
        return {"aer": self.aer, "precision": self.precision, "recall": self.recall,
                "n_pred": self.n_pred, "n_sure": self.n_sure, "n_possible": self.n_possible,
                "a_and_s": self.a_and_s, "a_and_p": self.a_and_p}


def _links(pred: Alignment | Iterable[Link]) -> set[Link]:
    return set(pred.links) if isinstance(pred, Alignment) else set(pred)


def sentence_counts(pred: Alignment | Iterable[Link], gold: Alignment) -> AERCounts:
    """Counts of one sentence; `pred` is an Alignment (all its links count) or links."""
    a = _links(pred)
    return AERCounts(len(a), len(gold.sure), len(gold.possible),
                     len(a & gold.sure), len(a & gold.possible))


def sentence_aer(pred: Alignment | Iterable[Link], gold: Alignment) -> AERCounts:
    """Scores of one sentence (read .aer, .precision, .recall)."""
    return sentence_counts(pred, gold)


def corpus_aer(preds: Sequence[Alignment | Iterable[Link]],
               golds: Sequence[Alignment]) -> AERCounts:
    """Corpus scores from the counts summed over sentences."""
    if len(preds) != len(golds):
        raise ValueError(f"{len(preds)} predicted alignments for {len(golds)} gold sentences")
    total = AERCounts()
    for p, g in zip(preds, golds, strict=True):
        total = total + sentence_counts(p, g)
    return total

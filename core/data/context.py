"""Document context for context-aware models: which earlier sentences of the same
document precede each pair.

A document start has no previous sentence; models then see the single explicit
CONTEXT_START token (every vocabulary reserves it, see core/data/vocab.py) instead of
an empty context, so attention over the context never runs over zero positions.
"""
from __future__ import annotations

from core.data.corpus import Corpus

CONTEXT_START = "<doc>"


def previous_sentences(corpus: Corpus, k: int = 1) -> list[list[int]]:
    """For each pair, the indices of up to `k` previous pairs in its document, oldest
    first; [] at a document start and for pairs without a document id. Document
    boundaries reset the context; order within a document is corpus order."""
    if k < 0:
        raise ValueError(f"k must be >= 0, not {k}")
    prev: list[list[int]] = [[] for _ in corpus.pairs]
    if k == 0:
        return prev
    for indices in corpus.documents().values():
        for pos, i in enumerate(indices):
            prev[i] = indices[max(0, pos - k): pos]
    return prev


def context_ids(
    ids: list[list[int]], previous: list[list[int]], start_id: int
) -> list[list[int]]:
    """Concatenate the token ids of each pair's previous sentences (from `ids`, one
    side of a split); a pair with no previous sentence gets [start_id]."""
    out: list[list[int]] = []
    for prev in previous:
        joined = [t for j in prev for t in ids[j]]
        out.append(joined if joined else [start_id])
    return out

"""Document context for context-aware models: which sentences of the same document
surround each pair, and the ids a model sees as its context.

The context of a sentence is its K previous sentences of the same document (oldest
first), then, when the model uses following sentences too, its F following ones (in
order). Joined sentences are separated by CONTEXT_BREAK_ID, the '</s>' (EOS) id of every
vocabulary: the same break concat_context (core/models/transformer.py) puts between a
context and its sentence. With K = 2, F = 1:

    prev_1 </s> prev_2 </s> next_1

A document edge has no sentence on that side; the side is then the single explicit
CONTEXT_START token '<doc>' (id 4, reserved by every vocabulary, see core/data/vocab.py)
instead of nothing, at a document start and, with F > 0, at a document end as well
(``<doc> </s> next_1`` at the start, ``prev_1 </s> <doc>`` at the end, ``<doc> </s>
<doc>`` for a one-sentence document). So attention over the context never runs over
zero positions. A side with fewer than K (F) sentences near the edge just holds the
ones there are.
"""
from __future__ import annotations

from collections.abc import Sequence

from core.data.corpus import Corpus

CONTEXT_START = "<doc>"
#: the id between joined context sentences: '</s>' (EOS) in every vocabulary
CONTEXT_BREAK_ID = 3


def _document_neighbours(corpus: Corpus, before: int, after: int) -> list[list[int]]:
    """For each pair, the indices of up to `before` pairs before it and `after` pairs
    after it in its document (corpus order); pairs without a document id get []."""
    out: list[list[int]] = [[] for _ in corpus.pairs]
    if before == after == 0:
        return out
    for indices in corpus.documents().values():
        for pos, i in enumerate(indices):
            out[i] = indices[max(0, pos - before): pos] + indices[pos + 1: pos + 1 + after]
    return out


def previous_sentences(corpus: Corpus, k: int = 1) -> list[list[int]]:
    """For each pair, the indices of up to `k` previous pairs in its document, oldest
    first; [] at a document start and for pairs without a document id. Document
    boundaries reset the context; order within a document is corpus order."""
    if k < 0:
        raise ValueError(f"k must be >= 0, not {k}")
    return _document_neighbours(corpus, k, 0)


def following_sentences(corpus: Corpus, f: int = 0) -> list[list[int]]:
    """For each pair, the indices of up to `f` following pairs in its document, in
    order; [] at a document end and for pairs without a document id (as
    previous_sentences, the other way)."""
    if f < 0:
        raise ValueError(f"f must be >= 0, not {f}")
    return _document_neighbours(corpus, 0, f)


def _join(sentences: Sequence[Sequence[int]], start_id: int, break_id: int) -> list[int]:
    """Sentences' ids with `break_id` between them; [start_id] for none. Sentences
    without ids add nothing (no doubled break)."""
    out: list[int] = []
    for sent in sentences:
        if sent:
            if out:
                out.append(break_id)
            out.extend(sent)
    return out or [start_id]


def sentence_context(
    before: Sequence[Sequence[int]], after: Sequence[Sequence[int]], k: int, f: int,
    start_id: int, break_id: int = CONTEXT_BREAK_ID,
) -> list[int]:
    """The context ids of one sentence (the rule of this module's docstring).

    before: the ids of the sentences before it in its document, oldest first (all or
    only the last ones: the last `k` are used); after: the ids of the sentences after
    it, in order (the first `f` are used). k = 0 leaves the previous side out, f = 0
    the following side; with neither, the context is [start_id]."""
    parts: list[list[int]] = []
    if k > 0:
        parts.append(_join(before[-k:], start_id, break_id))
    if f > 0:
        parts.append(_join(after[:f], start_id, break_id))
    return _join(parts, start_id, break_id)


def context_ids(
    ids: list[list[int]], previous: list[list[int]] | None, start_id: int,
    following: list[list[int]] | None = None, break_id: int = CONTEXT_BREAK_ID,
) -> list[list[int]]:
    """The context ids of every pair of one side of a split (sentence_context's rule).

    ids: token ids per pair; previous: per pair, the indices (into `ids`) of its
    previous sentences (previous_sentences), or None to leave the previous side out;
    following: likewise its following sentences (following_sentences), or None (the
    default) for a model without following context. An empty side is [start_id]."""
    if previous is None and following is None:
        raise ValueError("context_ids needs previous or following sentences")
    n = len(previous) if previous is not None else len(following or [])
    out: list[list[int]] = []
    for i in range(n):
        parts = [_join([ids[j] for j in side[i]], start_id, break_id)
                 for side in (previous, following) if side is not None]
        out.append(_join(parts, start_id, break_id))
    return out

"""Word alignments from attention matrices (tgt x src), e.g. from forced decoding of
(source, reference).

- `argmax_alignment`: each target word is linked to the source word it attends to most
  (one link per target word, as Luong et al. 2015 evaluate attention with AER).
- `threshold_alignment`: every cell with weight >= threshold (many-to-many).
- `aggregate_subwords`: sentencepiece/BPE pieces -> words, so that links are scored
  against word-level gold.

Rows/columns that are not words are removed first by `trim`: padding (everything past
the true lengths) and the end-of-sentence row (target EOS) / column (source EOS).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from core.evaluate.alignment import Alignment

WORD_START = "\u2581"  # sentencepiece's '▁'


def trim(attn: np.ndarray, src_len: int | None = None, tgt_len: int | None = None,
         drop_eos: bool = False, drop_src_eos: bool = False) -> np.ndarray:
    """Keep the word part of an attention matrix.

    attn: tgt x src (padded). src_len/tgt_len: the true sequence lengths; rows/columns
    from there on (padding) are removed. Then `drop_eos` removes the last row (the
    target EOS the decoder emitted) and `drop_src_eos` the last column (a source EOS
    the encoder read). Returns a (tgt_words x src_words) float64 array.
    """
    a = np.asarray(attn, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"attention must be a tgt x src matrix, got shape {a.shape}")
    if tgt_len is not None:
        a = a[:tgt_len]
    if src_len is not None:
        a = a[:, :src_len]
    if drop_eos:
        a = a[:-1]
    if drop_src_eos:
        a = a[:, :-1]
    return a


def argmax_alignment(attn: np.ndarray, **trim_args) -> Alignment:
    """One link per target word: (argmax_src attn[t], t); none for an all-zero row.
    attn: tgt x src."""
    a = trim(attn, **trim_args)
    if a.size == 0:
        return Alignment()
    best = a.argmax(axis=1)  # tgt
    # an all-zero row (an alignment head's NULL word) links nothing
    return Alignment.of((int(s), t) for t, s in enumerate(best) if a[t, s] > 0)


def threshold_alignment(attn: np.ndarray, threshold: float, **trim_args) -> Alignment:
    """Every (s, t) with attn[t, s] >= threshold (many-to-many). attn: tgt x src."""
    a = trim(attn, **trim_args)
    tgt_idx, src_idx = np.nonzero(a >= threshold)
    return Alignment.of(zip(src_idx.tolist(), tgt_idx.tolist(), strict=True))


def word_ids_sentencepiece(pieces: Sequence[str], marker: str = WORD_START) -> list[int]:
    """Piece -> word index for sentencepiece pieces, where `marker` starts a word.

    A first piece without the marker still opens word 0; a lone marker piece ('▁')
    opens a word that the following pieces continue."""
    ids: list[int] = []
    word = -1
    for i, p in enumerate(pieces):
        if i == 0 or p.startswith(marker):
            word += 1
        ids.append(word)
    return ids


def word_ids_bpe(pieces: Sequence[str], suffix: str = "@@") -> list[int]:
    """Piece -> word index for subword-nmt BPE, where `suffix` means "word continues"."""
    ids: list[int] = []
    word = 0
    for p in pieces:
        ids.append(word)
        if not p.endswith(suffix):
            word += 1
    return ids


def aggregate_subwords(attn: np.ndarray, src_word_ids: Sequence[int],
                       tgt_word_ids: Sequence[int],
                       mode: Literal["mean", "max", "sum"] = "mean") -> np.ndarray:
    """Piece-level attention (tgt_pieces x src_pieces, already trimmed) -> word level.

    Cell (w_t, w_s) gathers the block of pieces of target word w_t x source word w_s:
    - "mean": mean of the block;
    - "max": max of the block;
    - "sum": sum over the source pieces, mean over the target pieces (keeps each target
      row a distribution over source words).
    Returns tgt_words x src_words.
    """
    a = np.asarray(attn, dtype=np.float64)
    if a.shape != (len(tgt_word_ids), len(src_word_ids)):
        raise ValueError(f"attention shape {a.shape} does not match {len(tgt_word_ids)} target "
                         f"and {len(src_word_ids)} source pieces")
    if mode not in ("mean", "max", "sum"):
        raise ValueError(f"unknown aggregation {mode!r}: use 'mean', 'max' or 'sum'")
    src_ids, tgt_ids = np.asarray(src_word_ids), np.asarray(tgt_word_ids)
    n_src, n_tgt = int(src_ids.max(initial=-1)) + 1, int(tgt_ids.max(initial=-1)) + 1
    out = np.zeros((n_tgt, n_src))
    for wt in range(n_tgt):
        rows = a[tgt_ids == wt]  # pieces_of_wt x src_pieces
        for ws in range(n_src):
            block = rows[:, src_ids == ws]  # pieces_of_wt x pieces_of_ws
            if block.size == 0:
                continue
            if mode == "mean":
                out[wt, ws] = block.mean()
            elif mode == "max":
                out[wt, ws] = block.max()
            else:
                out[wt, ws] = block.sum(axis=1).mean()
    return out

"""Where a target word's alignment is read off the decoder's attention.

Forced decoding gives (T + 1) x S attention: row t is computed while the decoder predicts
target token t (row T predicts EOS), after reading token t - 1 as its input.

- "predict": row t for target token t, as Luong et al. (2015) read it.
- "shift": row t + 1, computed when token t is the decoder's *input* (Shift-Att, Chen et
  al. 2020, "Accurate Word Alignment Induction from Neural Machine Translation"): a
  decoder that attends to the source word of what it just read, not of what it predicts,
  aligns better this way. The last word's row is the EOS step.
- "sum": the mean of the two (one word's attention over both steps).
- "head": not the attention but a target-conditioned alignment head's row t, which sees
  token t itself (model.alignment_head, core/models/alignment_head.py; only runs that
  have one). Its matrix is ForcedResult.alignment (`reading_source`); a word whose NULL
  weight beats every source word gets an all-zero row, and no link.
- "previous": row t - 1, computed while the decoder predicts token t - 1 (the first word
  keeps its own row). A decoder whose attention anticipates (Luong's input feeding hands
  the attention context of step t - 1 to step t, and the trained attention comes to look
  at the source word of the *next* prediction) aligns this way; measured in
  experiments/RESULTS.md, section D.

`drop_sink` leaves out a sink: a final source punctuation mark that attention collects
on (the full stop) is no candidate for target words that are not punctuation themselves
(their row is renormalised over the other source words).
"""
from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np

from core.families import family_traits

READINGS = ("predict", "shift", "sum", "previous", "head")
#: the readings of the translation attention itself (every run has them)
ATTENTION_READINGS = ("predict", "shift", "sum", "previous")


def reading_source(result, reading: str) -> np.ndarray:
    """The (T + 1) x S matrix a forced-decoding result (core.infer.forced.ForcedResult)
    is read from for `reading`: the alignment head's for 'head', else the attention.
    ValueError when 'head' is asked of a run without an alignment head."""
    if reading != "head":
        return result.attention
    if result.alignment is None:
        raise ValueError("the 'head' reading needs a run trained with an alignment head "
                         "(model.alignment_head = true); read this run at another reading")
    return result.alignment


def read_attention(attention: np.ndarray, reading: str = "predict") -> np.ndarray:
    """(T + 1) x S forced-decoding attention (EOS row last) -> T x S, one row per target
    token, read as `reading` (see the module doc)."""
    a = np.asarray(attention, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] < 1:
        raise ValueError(f"attention must be a (tgt + 1) x src matrix, got shape {a.shape}")
    if reading == "predict":
        return a[:-1]
    if reading == "head":  # a[] is the head's matrix (reading_source)
        return null_rows_zeroed(a[:-1])
    if reading == "shift":
        return a[1:]
    if reading == "sum":
        return (a[:-1] + a[1:]) / 2
    if reading == "previous":
        return np.vstack([a[:1], a[:-2]])
    raise ValueError(f"unknown attention reading {reading!r}: use one of {READINGS}")


def null_rows_zeroed(rows: np.ndarray) -> np.ndarray:
    """An alignment head's T x S rows (each summing to 1 - its NULL weight) with the rows
    whose NULL weight beats every source word set to zero: those words align to nothing
    (core.evaluate.extract.argmax_alignment links no word of an all-zero row)."""
    rows = np.array(rows, dtype=np.float64)
    if rows.size:
        null = 1.0 - rows.sum(axis=1)
        rows[null > rows.max(axis=1)] = 0.0
    return rows


def is_punctuation(token: str) -> bool:
    """Every character is punctuation (Unicode P*); sentencepiece's '▁' is ignored."""
    chars = token.replace("\u2581", "")
    return bool(chars) and all(unicodedata.category(c).startswith("P") for c in chars)


def drop_sink(matrix: np.ndarray, src_words: Sequence[str], tgt_words: Sequence[str]
              ) -> np.ndarray:
    """T x S word attention without the final-punctuation sink (see the module doc): for
    each non-punctuation target word the last source column, when it is punctuation, is
    zeroed and the row renormalised (a row with nothing left stays as it was)."""
    a = np.array(matrix, dtype=np.float64)
    if a.shape != (len(tgt_words), len(src_words)):
        raise ValueError(f"matrix {a.shape} does not match {len(tgt_words)} target and "
                         f"{len(src_words)} source words")
    if len(src_words) < 2 or not is_punctuation(src_words[-1]):
        return a
    for t, word in enumerate(tgt_words):
        if is_punctuation(word):
            continue
        rest = a[t, :-1].sum()
        if rest > 0:
            a[t, :-1] /= rest
            a[t, -1] = 0.0
    return a


def default_reading(config) -> str:
    """The reading a run's attention aligns best with: the one measured best for this run
    on a gold set (`align --remember`, config.alignment_reading), else the predicting step
    for a run trained with guided alignment (that is the step the guide supervises; the
    alignment head's reading for a run that has one), else
    its family's registry trait (measured in experiments/RESULTS.md, section D)."""
    if config.alignment_reading:
        return config.alignment_reading
    if config.model.alignment_head:
        return "head"
    if config.train.guided_alignment > 0:
        return "predict"
    return family_traits(config.model.family).reading

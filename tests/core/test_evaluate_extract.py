"""Alignment extraction from attention matrices (tgt x src), hand-worked."""
from __future__ import annotations

import numpy as np
import pytest

from core.evaluate.extract import (
    aggregate_subwords,
    argmax_alignment,
    threshold_alignment,
    trim,
    word_ids_bpe,
    word_ids_sentencepiece,
)

# 3 target words + EOS row, 3 source words + EOS column:   src0  src1  src2  EOS
ATTN = np.array([[0.70, 0.20, 0.05, 0.05],   # t0 -> argmax s0
                 [0.10, 0.30, 0.55, 0.05],   # t1 -> argmax s2
                 [0.05, 0.40, 0.35, 0.20],   # t2 -> argmax s1
                 [0.05, 0.05, 0.10, 0.80]])  # EOS row -> argmax EOS column


def test_argmax_drops_eos_row_and_column():
    assert argmax_alignment(ATTN, drop_eos=True, drop_src_eos=True).links == {
        (0, 0), (2, 1), (1, 2)}
    # kept, the EOS row links EOS to EOS: (3, 3)
    assert (3, 3) in argmax_alignment(ATTN).links


def test_threshold_many_to_many():
    # >= 0.3: t0: s0 (0.70); t1: s1 (0.30), s2 (0.55); t2: s1 (0.40), s2 (0.35)
    got = threshold_alignment(ATTN, 0.3, drop_eos=True, drop_src_eos=True).links
    assert got == {(0, 0), (1, 1), (2, 1), (1, 2), (2, 2)}
    # the EOS cell 0.80 would pass the threshold if kept
    assert (3, 3) in threshold_alignment(ATTN, 0.3).links


def test_padding_excluded_by_true_lengths():
    padded = np.zeros((6, 7))
    padded[:4, :4] = ATTN
    padded[4:, :] = 1.0  # padding rows with large weights must not produce links
    padded[:, 4:] = 0.9  # padding columns beat every real weight but t0's
    # lengths include EOS here (as fed to the model), drop_eos removes it afterwards
    a = trim(padded, src_len=4, tgt_len=4, drop_eos=True, drop_src_eos=True)
    assert a.shape == (3, 3)
    assert argmax_alignment(padded, src_len=4, tgt_len=4, drop_eos=True,
                            drop_src_eos=True).links == {(0, 0), (2, 1), (1, 2)}
    # lengths that already exclude EOS give the same result without drop flags
    assert argmax_alignment(padded, src_len=3, tgt_len=3).links == {(0, 0), (2, 1), (1, 2)}


def test_word_ids():
    assert word_ids_sentencepiece(["▁un", "believ", "able", "▁cat", "▁", "x"]) == [
        0, 0, 0, 1, 2, 2]
    assert word_ids_sentencepiece(["un", "▁cat"]) == [0, 1]
    assert word_ids_bpe(["un@@", "believ@@", "able", "cat"]) == [0, 0, 0, 1]


# source pieces ▁un believ able ▁cat -> words [0 0 0 1]; target ▁in croyable ▁chat -> [0 0 1]
SRC_W, TGT_W = [0, 0, 0, 1], [0, 0, 1]
PIECES = np.array([[0.35, 0.05, 0.05, 0.55],   # ▁in
                   [0.10, 0.20, 0.60, 0.10],   # croyable
                   [0.10, 0.00, 0.00, 0.90]])  # ▁chat


def test_subword_mean_vs_max():
    # mean: (w0,w0) = (0.35+0.05+0.05+0.10+0.20+0.60)/6 = 1.35/6 = 0.225
    #       (w0,w1) = (0.55+0.10)/2 = 0.325; (w1,w0) = 0.1/3; (w1,w1) = 0.9
    mean = aggregate_subwords(PIECES, SRC_W, TGT_W, "mean")
    np.testing.assert_allclose(mean, [[0.225, 0.325], [0.1 / 3, 0.9]])
    # max: (w0,w0) = 0.60, (w0,w1) = 0.55, (w1,w0) = 0.10, (w1,w1) = 0.90
    mx = aggregate_subwords(PIECES, SRC_W, TGT_W, "max")
    np.testing.assert_allclose(mx, [[0.60, 0.55], [0.10, 0.90]])
    # sum over source pieces, mean over target pieces: rows stay distributions
    # (w0,w0) = mean(0.45, 0.90) = 0.675, (w0,w1) = mean(0.55, 0.10) = 0.325
    sm = aggregate_subwords(PIECES, SRC_W, TGT_W, "sum")
    np.testing.assert_allclose(sm, [[0.675, 0.325], [0.1, 0.9]])
    np.testing.assert_allclose(sm.sum(axis=1), [1.0, 1.0])
    # the choice matters: "incroyable" goes to "cat" by mean, to "unbelievable" by max
    assert argmax_alignment(mean).links == {(1, 0), (1, 1)}
    assert argmax_alignment(mx).links == {(0, 0), (1, 1)}


def test_subword_shape_mismatch():
    with pytest.raises(ValueError, match="does not match"):
        aggregate_subwords(PIECES, SRC_W[:3], TGT_W)

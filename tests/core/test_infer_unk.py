"""Unknown-word replacement on hand-made attention."""
from __future__ import annotations

import numpy as np
import pytest

from core.infer.unk_replace import replace_unknowns

SRC = ["Der", "Bürgermeister", "Xaver", "besucht", "Rüdesheim"]
# output: "the <unk> <unk> visits <unk>" + EOS row
IDS = [7, 1, 1, 9, 1]
TOKENS = ["the", "<unk>", "<unk>", "visits", "<unk>"]
ATTN = np.array(
    [
        [0.7, 0.1, 0.1, 0.05, 0.05],
        [0.1, 0.6, 0.2, 0.05, 0.05],  # -> Bürgermeister (dictionary: mayor)
        [0.0, 0.2, 0.7, 0.1, 0.0],  # -> Xaver (copied)
        [0.0, 0.0, 0.1, 0.9, 0.0],
        [0.0, 0.1, 0.0, 0.3, 0.6],  # -> Rüdesheim (lower-cased dictionary entry)
        [0.2, 0.2, 0.2, 0.2, 0.2],  # EOS
    ]
)


def test_copy_and_dictionary():
    out, report = replace_unknowns(IDS, TOKENS, SRC, ATTN,
                                   {"Bürgermeister": "mayor", "rüdesheim": "Ruedesheim"})
    assert out == ["the", "mayor", "Xaver", "visits", "Ruedesheim"]
    assert (report.n_unk, report.n_replaced, report.n_copied, report.n_dictionary) == (3, 3, 1, 2)
    assert [(r.tgt_pos, r.src_pos, r.src_word, r.replacement, r.by) for r in report.replacements] == [
        (1, 1, "Bürgermeister", "mayor", "dictionary"),
        (2, 2, "Xaver", "Xaver", "copy"),
        (4, 4, "Rüdesheim", "Ruedesheim", "dictionary"),
    ]


def test_without_dictionary_everything_is_copied_and_known_words_stay():
    out, report = replace_unknowns(IDS, TOKENS, SRC, ATTN)
    assert out == ["the", "Bürgermeister", "Xaver", "visits", "Rüdesheim"]
    assert report.n_copied == 3 and report.n_dictionary == 0
    # 'the' is not UNK although it attends to 'Der'
    assert out[0] == "the"


def test_no_attention_leaves_unk_and_reports_it():
    out, report = replace_unknowns(IDS, TOKENS, SRC, np.zeros((6, 5)))
    assert out == TOKENS
    assert report.n_unk == 3 and report.n_replaced == 0
    assert report.unresolved == [1, 2, 4]


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError):
        replace_unknowns(IDS, TOKENS, SRC[:4], ATTN)

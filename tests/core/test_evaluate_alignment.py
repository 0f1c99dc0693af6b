"""Alignment readers and writers, on the real WPT-03 and INESC gold files."""
from __future__ import annotations

import pytest

from core.errors import AlignmentError
from core.evaluate.alignment import (
    Alignment,
    parse_pharaoh,
    read_pharaoh,
    read_talp,
    read_wpt,
    write_pharaoh,
)

WPT = "gold-en-fr-wpt03-trial"


def _tokens(path):
    return [line.split() for line in path.read_text(encoding="utf-8").splitlines()]


def test_trial_talp_counts(shared):
    gold = read_talp(shared(WPT, "trial.talp"))
    assert len(gold) == 37
    assert gold.warnings == []
    # The README's "338 S + 1,446 P" counts the `ipj` links apart from the `i-j` ones:
    # P (which includes S) holds 338 + 1,446 = 1,784 links.
    assert gold.n_sure == 338
    assert gold.n_possible == 338 + 1446
    assert sum(len(a.possible - a.sure) for a in gold) == 1446
    # first line starts "1-1 2p2": 0-based (0,0) sure, (1,1) possible only
    assert (0, 0) in gold[0].sure and (1, 1) in gold[0].possible - gold[0].sure


def test_talp_and_0idx_agree(shared):
    en, fr = _tokens(shared(WPT, "trial.en")), _tokens(shared(WPT, "trial.fr"))
    talp = read_talp(shared(WPT, "trial.talp"), src_tokens=en, tgt_tokens=fr)
    zero = read_pharaoh(shared(WPT, "trial.sp.0idx"), src_tokens=en, tgt_tokens=fr)
    assert len(talp) == len(zero) == 37
    for a, b in zip(talp, zero, strict=True):
        assert a.sure == b.sure and a.possible == b.possible


def test_swap_for_reverse_direction(shared):
    en, fr = _tokens(shared(WPT, "trial.en")), _tokens(shared(WPT, "trial.fr"))
    en_fr = read_pharaoh(shared(WPT, "trial.sp.0idx"))
    fr_en = read_pharaoh(shared(WPT, "trial.sp.0idx"), swap=True, src_tokens=fr, tgt_tokens=en)
    for a, b in zip(en_fr, fr_en, strict=True):
        assert b.sure == {(t, s) for s, t in a.sure}
        assert b.possible == {(t, s) for s, t in a.possible}
    # without the swap, the French tokens as source are too short for sentence 1
    with pytest.raises(AlignmentError):
        read_pharaoh(shared(WPT, "trial.sp.0idx"), src_tokens=fr, tgt_tokens=en)


def test_inesc_counts(shared):
    path = shared("gold-en-es-inesc", "align.0idx.pharaoh")
    en = _tokens(shared("gold-en-es-inesc", "src.en"))
    es = _tokens(shared("gold-en-es-inesc", "tgt.es"))
    gold = read_pharaoh(path, src_tokens=en, tgt_tokens=es)
    assert len(gold) == 100
    assert gold.n_sure == 835
    assert gold.n_possible == 835  # sure-only gold
    assert gold.warnings == []


def test_one_based_read_as_zero_based_warns(shared):
    gold = read_pharaoh(shared(WPT, "trial.talp"))  # wrong: the file is 1-based
    assert len(gold.warnings) == 1
    assert "one_based=True" in gold.warnings[0]
    # with the sentences, sentence 1's last link 28-29 is past the 28 English words
    en, fr = _tokens(shared(WPT, "trial.en")), _tokens(shared(WPT, "trial.fr"))
    with pytest.raises(AlignmentError) as e:
        read_pharaoh(shared(WPT, "trial.talp"), src_tokens=en, tgt_tokens=fr)
    assert e.value.line == 1
    assert "sentence 1" in str(e.value) and "'28-29'" in str(e.value)
    assert "one_based=True" in str(e.value)


def test_out_of_range_link_names_sentence_and_link(tmp_path):
    p = tmp_path / "a.pharaoh"
    p.write_text("0-0 1-1\n0-0 2?1 4-1\n", encoding="utf-8")
    src = [["a", "b"], ["a", "b", "c"]]
    tgt = [["x", "y"], ["x", "y"]]
    with pytest.raises(AlignmentError) as e:
        read_pharaoh(p, src_tokens=src, tgt_tokens=tgt)
    assert e.value.line == 2 and e.value.path == str(p)
    assert "sentence 2" in e.value.reason and "'4-1'" in e.value.reason
    assert "source index 4" in e.value.reason and "3 tokens" in e.value.reason


def test_malformed_link_and_zero_in_one_based():
    with pytest.raises(AlignmentError, match="sentence 2: link '1:2'"):
        parse_pharaoh(["0-0", "1:2"])
    with pytest.raises(AlignmentError, match="one_based=False"):
        parse_pharaoh(["1-1 0-2"], one_based=True)


def test_sentence_count_mismatch():
    with pytest.raises(AlignmentError, match="line-parallel"):
        parse_pharaoh(["0-0"], src_tokens=[["a"], ["b"]])


def test_wpt_format_matches_talp(shared, tmp_path):
    # Rewrite trial.talp as WPT lines "id pos1 pos2 S|P" (1-based) and read it back.
    ids = shared(WPT, "trial.ids").read_text().split()
    talp = read_talp(shared(WPT, "trial.talp"))
    lines = []
    for sid, al in zip(ids, talp, strict=True):
        for s, t in sorted(al.possible):
            lines.append(f"{sid} {s + 1} {t + 1} {'S' if (s, t) in al.sure else 'P'}")
    lines.insert(3, f"{ids[0]} 30 31")  # no S/P means S, and sent_id groups out of order
    p = tmp_path / "trial.wa"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    wpt = read_wpt(p, sent_ids=ids)
    assert wpt.ids == ids and len(wpt) == 37
    assert wpt[0].sure == talp[0].sure | {(29, 30)}
    for a, b in zip(wpt[1:], talp[1:], strict=True):
        assert a.sure == b.sure and a.possible == b.possible
    bad = tmp_path / "bad.wa"
    bad.write_text("1001 1 1 S\n1001 2 X\n", encoding="utf-8")
    with pytest.raises(AlignmentError) as e:
        read_wpt(bad)
    assert e.value.line == 2


def test_pharaoh_round_trip(tmp_path):
    als = [Alignment(sure={(0, 0), (2, 1)}, possible={(1, 1)}), Alignment(), Alignment.of({(3, 0)})]
    p = write_pharaoh(tmp_path / "out.pharaoh", als)
    assert p.read_text().splitlines() == ["0-0 1?1 2-1", "", "3-0"]
    back = read_pharaoh(p)
    assert [(a.sure, a.possible) for a in back] == [(a.sure, a.possible) for a in als]
    one = write_pharaoh(tmp_path / "one.talp", als, one_based=True, swap=True)
    # swapped: (0,0)->(0,0), (1,1)->(1,1) possible, (2,1)->(1,2); 1-based, sorted
    assert one.read_text().splitlines()[0] == "1-1 2?2 2-3"

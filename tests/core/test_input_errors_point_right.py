"""Errors point at the right file and line."""
from __future__ import annotations

import argparse

import pytest

from core.cli.translate_cmd import read_input
from core.data.readers import read_parallel
from core.errors import AlignmentError, CorpusError
from core.evaluate.alignment import parse_pharaoh, read_wpt
from core.evaluate.goldsets import import_gold_set


def test_gold_sentences_with_u2028_or_a_form_feed_stay_one_line(workspace, tmp_path):
    src, tgt, links = (tmp_path / n for n in ("g.src", "g.tgt", "g.links"))
    src.write_text("a\u2028b c\nd\x0ce\n", encoding="utf-8")
    tgt.write_text("x y\nz\n", encoding="utf-8")
    links.write_text("0-0 2-1\n0-0\n", encoding="utf-8")
    gold = import_gold_set(workspace, "g", src, tgt, links)
    assert len(gold) == 2 and gold.src_tokens[1] == ["d", "e"]


def test_links_in_non_ascii_digits_are_refused(tmp_path):
    with pytest.raises(AlignmentError, match="line 1"):
        parse_pharaoh(["\u0661-\u0662"])  # Arabic-Indic one-two
    with pytest.raises(AlignmentError, match="line 1"):
        parse_pharaoh(["１-２"])  # fullwidth
    wpt = tmp_path / "a.wa"
    wpt.write_text("1 \u0661 1 S\n", encoding="utf-8")
    with pytest.raises(AlignmentError, match="line 1"):
        read_wpt(wpt)


@pytest.mark.parametrize(("docids", "line", "says"), [
    ("a\t0\nb\t0\na\t1\n", 3, "starts again"),
    ("a\t0\na\t1\na\t1\n", 3, "index 1 after index 1"),
    ("a\t0\na\t2\na\t1\n", 3, "index 1 after index 2"),
    ("a\t0\na\t\u0661\na\t2\n", 2, "second column"),
])
def test_doc_id_files_out_of_order_or_with_duplicates_are_refused(tmp_path, docids, line, says):
    (tmp_path / "s").write_text("1\n2\n3\n", encoding="utf-8")
    (tmp_path / "t").write_text("1\n2\n3\n", encoding="utf-8")
    (tmp_path / "d").write_text(docids, encoding="utf-8")
    with pytest.raises(CorpusError, match=says) as err:
        read_parallel(tmp_path / "s", tmp_path / "t", "es", "en", docids_path=tmp_path / "d")
    assert err.value.line == line and err.value.path.endswith("d")


def test_gaps_in_document_indices_are_still_accepted(tmp_path):
    (tmp_path / "s").write_text("1\n2\n3\n", encoding="utf-8")
    (tmp_path / "t").write_text("1\n2\n3\n", encoding="utf-8")
    (tmp_path / "d").write_text("a\t0\na\t2\nb\t5\n", encoding="utf-8")
    corpus = read_parallel(tmp_path / "s", tmp_path / "t", "es", "en", docids_path=tmp_path / "d")
    assert [p.doc_id for p in corpus.pairs] == ["a", "a", "b"]


@pytest.mark.parametrize(("data", "line", "says"), [
    (b"fine\nbad \xff byte\n", 2, "invalid UTF-8"), (b"one\ntwo\nnul\x00here\n", 3, "NUL byte")])
def test_translate_input_errors_name_the_line_and_refuse_nul(tmp_path, data, line, says):
    path = tmp_path / "in.txt"
    path.write_bytes(data)
    args = argparse.Namespace(document=False, input=str(path))
    with pytest.raises(CorpusError, match=says) as err:
        read_input(args, "es")
    assert err.value.line == line


def test_translate_input_splits_on_newlines_only(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes("uno\u2028dos\r\ntres\n".encode())
    assert read_input(argparse.Namespace(document=False, input=str(path)), "es").sentences == [
        "uno\u2028dos", "tres"]

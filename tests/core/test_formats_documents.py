"""Documents split into sentences (txt and docx)."""
from __future__ import annotations

import docx
import pytest

from core.errors import CorpusError
from core.formats.documents import read_document, read_paragraphs, split_paragraphs, split_sentences

TEXT = ("Dr. Smith went home. He was tired!\n\n"
        "Was it late? Yes, at 10.30 p.m. it was.\n")


def test_txt_sentences_and_paragraphs(tmp_path):
    p = tmp_path / "doc.txt"
    p.write_text(TEXT, encoding="utf-8")
    # "Dr." and "10.30" do not end sentences; the blank line separates paragraphs
    assert read_paragraphs(p) == [["Dr. Smith went home.", "He was tired!"],
                                  ["Was it late?", "Yes, at 10.30 p.m. it was."]]
    assert len(read_document(p)) == 4


def test_typed_text_is_split_like_a_document(tmp_path):
    p = tmp_path / "doc.txt"
    p.write_text(TEXT, encoding="utf-8")
    assert split_sentences(TEXT) == read_document(p)
    assert split_sentences("  \n\n") == []


def test_docx(tmp_path):
    d = docx.Document()
    d.add_paragraph("Le chat dort. Le chien aboie.")
    d.add_paragraph("")
    d.add_paragraph("M. Dupont arrive.")
    d.save(tmp_path / "doc.docx")
    assert read_document(tmp_path / "doc.docx", lang="fr") == [
        "Le chat dort.", "Le chien aboie.", "M. Dupont arrive."]


def test_unreadable(tmp_path):
    (tmp_path / "x.pdf").write_bytes(b"%PDF-1.4")
    with pytest.raises(CorpusError, match="cannot read .pdf"):
        read_document(tmp_path / "x.pdf")
    with pytest.raises(CorpusError, match="not found"):
        read_document(tmp_path / "missing.txt")
    bad = tmp_path / "bad.docx"
    bad.write_bytes(b"not a zip")
    with pytest.raises(CorpusError, match="Word document"):
        read_document(bad)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("café".encode("latin-1"))
    with pytest.raises(CorpusError, match="UTF-8"):
        read_document(latin)


def test_a_title_before_a_name_does_not_end_a_sentence():
    """pysbd ends a Spanish sentence at 'Sr.'; the split joins it with the name after it,
    and a sentence that really ends stays apart."""
    assert split_paragraphs(["El Sr. García llegó ayer. La Sra. López también. Se fueron."],
                            "es") == [["El Sr. García llegó ayer.", "La Sra. López también.",
                                       "Se fueron."]]
    assert split_paragraphs(["Llamé al Dr. Ruiz. No contestó."], "es") == [
        ["Llamé al Dr. Ruiz.", "No contestó."]]
    assert split_paragraphs(["I met Mr. Smith. He left."], "en") == [
        ["I met Mr. Smith.", "He left."]]

"""Parsers and output paths give clear errors, not tracebacks."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from core.atomic import write_text_atomic
from core.errors import CorpusError, OutputError, WorkbenchError
from core.formats.documents import read_document
from core.formats.xliff import read_xliff
from core.limits import XML_DEPTH

XLIFF_HEAD = ('<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file '
              'original="d"><body><trans-unit id="1"><source>')
XLIFF_TAIL = "</source></trans-unit></body></file></xliff>"


def test_deeply_nested_inline_markup_is_no_recursion_error(tmp_path):
    depth = 20_000
    xml = (XLIFF_HEAD + "a " + "<g>" * depth + "<mrk>b</mrk>" + "</g>" * depth
           + " <ph>{1}</ph>c" + XLIFF_TAIL)
    path = tmp_path / "deep.xlf"
    path.write_text(xml, encoding="utf-8")
    assert [r.source for r in read_xliff(path)] == ["a b c"]


def test_markup_nested_past_the_depth_limit_is_refused(tmp_path):
    depth = XML_DEPTH + 10
    path = tmp_path / "deeper.xlf"
    path.write_text(XLIFF_HEAD + "<g>" * depth + "</g>" * depth + XLIFF_TAIL, encoding="utf-8")
    with pytest.raises(CorpusError, match=f"nested more than {XML_DEPTH:,} deep") as err:
        read_xliff(path)
    assert err.value.path == str(path) and err.value.line == 1


BOMB = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<!DOCTYPE w:document [
 <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
 <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
 <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
 <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
 <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
 <!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">
 <!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">
]>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:body><w:p><w:r><w:t>&g;</w:t></w:r></w:p></w:body></w:document>"""


def test_a_docx_with_entity_amplification_is_a_corpus_error(tmp_path):
    import docx

    buffer = io.BytesIO()
    docx.Document().save(buffer)
    path = tmp_path / "bomb.docx"
    with zipfile.ZipFile(buffer) as src, zipfile.ZipFile(path, "w") as dst:
        for item in src.infolist():
            data = BOMB.encode() if item.filename == "word/document.xml" else src.read(item)
            dst.writestr(item, data)
    with pytest.raises(CorpusError, match="bomb.docx"):
        read_document(path)


def test_outputs_that_cannot_be_written_are_output_errors(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file.txt").write_text("x")
    cases = {tmp_path / "folder": "is a folder", tmp_path / "file.txt" / "out.txt": "is a file",
             Path("/proc/version"): "cannot be written"}  # no temp file in /proc, even as root
    for path, says in cases.items():
        with pytest.raises(OutputError, match=says) as err:
            write_text_atomic(path, "hello\n")
        assert isinstance(err.value, WorkbenchError) and isinstance(err.value, OSError)
    assert (tmp_path / "file.txt").read_text() == "x"


def test_a_250_character_file_name_is_written(tmp_path):
    path = tmp_path / ("n" * 246 + ".txt")
    assert len(path.name) == 250
    write_text_atomic(path, "ok\n")
    assert path.read_text() == "ok\n" and not list(tmp_path.glob("*.tmp"))
    write_text_atomic(tmp_path / ("é" * 125 + ".txt"), "ok\n")  # 254 bytes of UTF-8

"""Input limits: giant and crafted inputs end in a one-line error naming
the file, the limit and how to raise it, with bounded memory. The bombs are real files
(tests/core/bombs.py); their reading runs in a subprocess that reports its own peak
resident memory."""
from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import docx
import pytest

from core import limits
from core.data.readers import read_parallel, read_tsv
from core.data.textio import read_stream
from core.data.tmx import read_tmx_units
from core.errors import ConfigError, CorpusError
from core.formats.documents import read_document, read_paragraphs
from core.formats.docx_text import read_docx_paragraphs
from core.formats.xliff import read_xliff
from tests.core import bombs

ROOT = Path(__file__).resolve().parents[2]
MEMORY_MB = 500  # the bound for reading any one input


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("NMT_WB_")}


def read_in_child(code: str, *args: str) -> dict:
    """Run `code` (which sets `result`) in a fresh interpreter; -> its result and its
    peak resident memory in MB. The peak is VmHWM, which starts afresh at exec:
    ru_maxrss would carry over the pytest process's own peak from before the fork."""
    script = ("import json, sys\nfrom core.errors import CorpusError\n"
              "try:\n" + "".join(f"    {line}\n" for line in code.splitlines())
              + "except CorpusError as exc:\n    result = 'error: ' + str(exc)\n"
              "peak = [int(line.split()[1]) for line in open('/proc/self/status')\n"
              "        if line.startswith('VmHWM:')][0] / 1024\n"
              "print(json.dumps({'result': result, 'peak_mb': peak}))\n")
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT, env=clean_env(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --- the limits themselves -----------------------------------------------------------------
def test_limits_come_from_the_environment(monkeypatch):
    monkeypatch.delenv("NMT_WB_MAX_LINE_CHARS", raising=False)
    assert limits.LINE_CHARS.value() == 20_000
    monkeypatch.setenv("NMT_WB_MAX_LINE_CHARS", "123")
    assert limits.LINE_CHARS.value() == 123
    for bad in ("0", "-5", "12k", "1e6", "²"):
        monkeypatch.setenv("NMT_WB_MAX_LINE_CHARS", bad)
        with pytest.raises(ConfigError, match="NMT_WB_MAX_LINE_CHARS=.*positive whole number"):
            limits.LINE_CHARS.value()
    assert len({lim.env for lim in limits.ALL}) == len(limits.ALL) == 6


def test_first_long_line_agrees_with_splitting():
    def naive(text, limit):
        for number, line in enumerate(text.split("\n"), start=1):
            line = line[:-1] if line.endswith("\r") else line
            if len(line) > limit:
                return number, len(line)
        return None

    rng = random.Random(13)
    for _ in range(3000):
        limit = rng.randint(1, 6)
        text = "".join(rng.choice(["a", "\n", "\r", "\r\n", "bb"])
                       for _ in range(rng.randint(0, 30)))
        assert limits.first_long_line(text, limit) == naive(text, limit), (text, limit)


# --- text ----------------------------------------------------------------------------------
def test_a_line_over_the_limit_names_file_line_limit_and_variable(tmp_path, monkeypatch):
    src, tgt = tmp_path / "a.es", tmp_path / "a.en"
    src.write_text("uno\ndos\n" + "x" * 20_001 + "\n", encoding="utf-8")
    tgt.write_text("one\ntwo\nthree\n", encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        read_parallel(src, tgt, "es", "en")
    assert (err.value.path, err.value.line) == (str(src), 3)
    assert "20,001 characters" in str(err.value) and "limit of 20,000" in str(err.value)
    assert "NMT_WB_MAX_LINE_CHARS=N" in str(err.value) and "\n" not in str(err.value)
    monkeypatch.setenv("NMT_WB_MAX_LINE_CHARS", "20001")
    assert len(read_parallel(src, tgt, "es", "en")) == 3


def test_too_many_lines_and_too_many_bytes(tmp_path, monkeypatch):
    path = tmp_path / "t.tsv"
    path.write_text("".join(f"a{i}\tb{i}\n" for i in range(5)), encoding="utf-8")
    monkeypatch.setenv("NMT_WB_MAX_LINES", "5")
    assert len(read_tsv(path, "es", "en")) == 5  # the final newline ends line 5
    path.write_text(path.read_text() + "c\td", encoding="utf-8")
    with pytest.raises(CorpusError, match="NMT_WB_MAX_LINES=N") as err:
        read_tsv(path, "es", "en")
    assert err.value.line == 6
    monkeypatch.setenv("NMT_WB_MAX_INPUT_MB", "1")
    path.write_bytes(b"a\tb\n" * 300_000)  # 1.2 MB
    with pytest.raises(CorpusError, match=r"holds 1\.1 MB, more than the limit of 1 MB") as err:
        read_tsv(path, "es", "en")
    assert "NMT_WB_MAX_INPUT_MB=N" in str(err.value)
    with pytest.raises(CorpusError, match="<stdin>: the input holds"):
        read_stream(io.BytesIO(b"x" * (limits.MB + 1)), "<stdin>")
    assert read_stream(io.BytesIO(b"x" * limits.MB), "<stdin>") == b"x" * limits.MB


def test_a_text_document_with_too_many_paragraphs(tmp_path, monkeypatch):
    path = tmp_path / "d.txt"
    path.write_text("One.\n\nTwo.\n\nThree.\n", encoding="utf-8")
    monkeypatch.setenv("NMT_WB_MAX_PARAGRAPHS", "2")
    with pytest.raises(CorpusError, match="NMT_WB_MAX_PARAGRAPHS=N") as err:
        read_document(path)
    assert err.value.line == 5
    monkeypatch.setenv("NMT_WB_MAX_PARAGRAPHS", "3")
    assert read_paragraphs(path) == [["One."], ["Two."], ["Three."]]


# --- TMX and XLIFF ---------------------------------------------------------------------------
TMX = ('<tmx version="1.4"><header srclang="en"/><body>\n' + "{units}" + "</body></tmx>\n")
TU = '<tu><tuv xml:lang="en"><seg>{}</seg></tuv><tuv xml:lang="es"><seg>b</seg></tuv></tu>\n'
XLIFF = ('<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file '
         'original="d"><body>\n{units}</body></file></xliff>\n')
UNIT = '<trans-unit id="u"><source>{}</source><target>b</target></trans-unit>\n'


@pytest.mark.parametrize("kind", ["tmx", "xliff"])
def test_xml_units_and_segments_over_the_limits(tmp_path, monkeypatch, kind):
    frame, unit = (TMX, TU) if kind == "tmx" else (XLIFF, UNIT)
    read = (lambda p: read_tmx_units(p)[0]) if kind == "tmx" else read_xliff
    path = tmp_path / f"f.{kind}"
    path.write_text(frame.format(units="".join(unit.format(f"s{i}") for i in range(4))),
                    encoding="utf-8")
    assert len(read(path)) == 4
    monkeypatch.setenv("NMT_WB_MAX_LINES", "3")
    with pytest.raises(CorpusError, match="NMT_WB_MAX_LINES=N") as err:
        read(path)
    assert err.value.line == 5  # the fourth unit's line
    monkeypatch.delenv("NMT_WB_MAX_LINES")
    monkeypatch.setenv("NMT_WB_MAX_LINE_CHARS", "10")
    path.write_text(frame.format(units=unit.format("short") + unit.format("x" * 11)),
                    encoding="utf-8")
    with pytest.raises(CorpusError, match="11 characters.*NMT_WB_MAX_LINE_CHARS=N") as err:
        read(path)
    assert err.value.line == 3


# --- .docx -------------------------------------------------------------------------------------
def test_docx_text_follows_word_runs(tmp_path):
    w = bombs.W
    body = (
        '<w:p><w:r><w:t xml:space="preserve">Tab</w:t><w:tab/><w:t>and</w:t><w:br/>'
        '<w:t>break</w:t><w:noBreakHyphen/><w:t>x</w:t><w:br w:type="page"/></w:r></w:p>'
        '<w:p><w:hyperlink><w:r><w:t>linked</w:t></w:r></w:hyperlink><w:ins><w:r><w:t> new'
        '</w:t></w:r></w:ins><w:del><w:r><w:delText>old</w:delText></w:r></w:del></w:p>'
        '<w:tbl><w:tr><w:tc><w:p><w:r><w:t>in a cell</w:t></w:r></w:p></w:tc></w:tr></w:tbl>'
        '<w:p><w:r><w:t>before box</w:t><w:drawing><w:txbxContent><w:p><w:r><w:t>boxed'
        '</w:t></w:r></w:p></w:txbxContent></w:drawing></w:r></w:p><w:p/>'
    )
    xml = (f'<w:document xmlns:w="{w}"><w:body>{body}<w:sectPr/></w:body></w:document>')
    path = bombs.docx(tmp_path / "runs.docx", bombs.deflate(xml.encode()))
    assert read_docx_paragraphs(path) == ["Tab\tand\nbreak-x", "linked new", "in a cell",
                                          "before box", ""]


def test_docx_written_by_word_library_reads_the_same(tmp_path):
    d = docx.Document()
    d.add_paragraph("Le chat dort. ").add_run("Le chien aboie.")
    d.add_paragraph("")
    table = d.add_table(rows=1, cols=2)
    table.cell(0, 1).text = "Cellule."
    d.save(tmp_path / "w.docx")
    assert read_docx_paragraphs(tmp_path / "w.docx") == [
        "Le chat dort. Le chien aboie.", "", "", "Cellule."]


def test_docx_limits(tmp_path, monkeypatch):
    path = bombs.paragraphs_docx(tmp_path / "p.docx", 20_000, "ab")
    assert len(read_docx_paragraphs(path)) == 20_000
    monkeypatch.setenv("NMT_WB_MAX_PARAGRAPHS", "19999")
    with pytest.raises(CorpusError, match="20,000 paragraphs.*NMT_WB_MAX_PARAGRAPHS=N"):
        read_docx_paragraphs(path)
    monkeypatch.delenv("NMT_WB_MAX_PARAGRAPHS")
    monkeypatch.setenv("NMT_WB_MAX_INPUT_MB", "1")
    with pytest.raises(CorpusError, match="word/document.xml .*NMT_WB_MAX_INPUT_MB=N"):
        read_docx_paragraphs(bombs.big_part_docx(tmp_path / "big.docx", 2))
    monkeypatch.setenv("NMT_WB_MAX_ZIP_ENTRIES", "2")
    with pytest.raises(CorpusError, match="3 files.*NMT_WB_MAX_ZIP_ENTRIES=N"):
        read_docx_paragraphs(path)


def test_damaged_docx_parts_are_corpus_errors(tmp_path):
    rels_missing = bombs.write_zip(tmp_path / "a.docx", [bombs.deflate(b"x")])
    with pytest.raises(CorpusError, match="not a readable Word document.*_rels"):
        read_docx_paragraphs(rels_missing)
    broken = bombs.docx(tmp_path / "b.docx", bombs.deflate(b"<w:document><w:body>"))
    with pytest.raises(CorpusError, match="malformed XML") as err:
        read_docx_paragraphs(broken)
    assert err.value.path == str(broken)


# --- the bombs of the issue, with their memory ----------------------------------------------
READ_DOCUMENT = ("from core.formats.documents import read_document\n"
                 "result = len(read_document(sys.argv[1]))")


def test_three_million_tiny_paragraphs(tmp_path):
    path = bombs.paragraphs_docx(tmp_path / "tiny.docx", 3_000_000)
    assert path.stat().st_size < 400_000
    out = read_in_child(READ_DOCUMENT, str(path))
    assert out["result"].startswith(f"error: {path}: it holds 100,001 paragraphs or more")
    assert "NMT_WB_MAX_PARAGRAPHS=N" in out["result"]
    assert out["peak_mb"] < MEMORY_MB


def test_a_docx_unpacking_to_2_gib(tmp_path):
    path = bombs.big_part_docx(tmp_path / "2gib.docx", 2048)
    assert path.stat().st_size < 10 * limits.MB
    out = read_in_child(READ_DOCUMENT, str(path))
    assert "its word/document.xml (unpacked, as its zip header says) holds 2,047.3 MB" \
        in out["result"] and "NMT_WB_MAX_INPUT_MB=N" in out["result"]
    assert out["peak_mb"] < MEMORY_MB


def test_a_zip_header_that_lies_about_the_size(tmp_path):
    # the header says 1 MB; the stream holds 2 GiB: what comes out stops at 1 MB
    path = bombs.big_part_docx(tmp_path / "liar.docx", 2048, declared=limits.MB)
    out = read_in_child(READ_DOCUMENT, str(path))
    assert out["result"].startswith(f"error: {path}: not a readable Word document")
    assert out["peak_mb"] < MEMORY_MB


def test_a_50_mb_one_line_input(tmp_path):
    path = tmp_path / "one-line.txt"
    path.write_bytes(b"word " * (10 * limits.MB))
    code = ("from core.data.textio import decode_text, read_bytes\n"
            "result = len(decode_text(read_bytes(sys.argv[1]), sys.argv[1])[0])")
    out = read_in_child(code, str(path))
    assert out["result"] == (f"error: {path}, line 1: this line has 52,428,800 characters, "
                             "more than the limit of 20,000 characters in one line, paragraph "
                             "or segment; break it into shorter lines, or raise the limit "
                             "with the environment variable NMT_WB_MAX_LINE_CHARS=N")
    assert out["peak_mb"] < MEMORY_MB


def test_a_million_translation_units_fit_the_memory_bound(tmp_path):
    path = tmp_path / "many.tmx"
    with open(path, "w", encoding="utf-8") as f:
        f.write(TMX.split("{units}")[0])
        for _ in range(11):
            f.write(TU.format("a") * 100_000)
        f.write(TMX.split("{units}")[1])
    out = read_in_child("from core.data.tmx import read_tmx_units\n"
                        "result = len(read_tmx_units(sys.argv[1])[0])", str(path))
    assert out["result"].startswith(f"error: {path}, line 1000002: it holds 1,000,001 "
                                    "translation units or more")
    assert out["peak_mb"] < MEMORY_MB

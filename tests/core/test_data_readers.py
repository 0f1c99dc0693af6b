"""Readers on the real corpora and on hand-made broken files."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from core.data.readers import (
    read_blank_line_documents,
    read_corpus,
    read_parallel,
    read_tmx,
    read_tsv,
)
from core.errors import ConfigError, CorpusError

FIXTURES = Path(__file__).parent / "data_fixtures"


def write(path: Path, data: bytes | str) -> Path:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


# --- real corpora -----------------------------------------------------------------


def test_tatoeba_spa_eng_full(shared):
    path = shared("tatoeba-spa-eng", "spa.txt")
    corpus = read_tsv(path, "es", "en")  # default columns: Spanish -> English
    assert len(corpus) == 118_964
    first_line = path.read_bytes().split(b"\n", 1)[0].decode("utf-8")
    english, spanish = first_line.split("\t")
    assert (corpus.pairs[0].src, corpus.pairs[0].tgt) == (spanish, english) == ("Ve.", "Go.")
    assert corpus.pairs[0].line == 1 and corpus.pairs[-1].line == 118_964
    assert corpus.warnings == []
    # the other direction through the dispatcher
    flipped = read_corpus("tsv", [path], "en", "es", src_col=0, tgt_col=1)
    assert flipped.pairs[-1].src == corpus.pairs[-1].tgt


def test_hansards_full_with_documents(shared):
    d = shared("hansards-en-fr-300k")
    corpus = read_parallel(d / "train.en", d / "train.fr", "en", "fr", d / "train.docids")
    assert len(corpus) == 302_008
    docs = corpus.documents()
    assert len(docs) == 100
    assert sum(len(ix) for ix in docs.values()) == 302_008
    first = next(iter(docs))
    assert first == "hansard.36.1.house.debates.001"
    assert corpus.pairs[0].src == "edited HANSARD * NUMBER 1"
    assert corpus.pairs[0].tgt == "hansard RÉVISÉ * NUMÉRO 1"
    # documents are contiguous runs in this release
    assert all(ix == list(range(ix[0], ix[-1] + 1)) for ix in docs.values())


def test_hansards_head_via_dispatcher(shared, tmp_path):
    d = shared("hansards-en-fr-300k")
    heads = {}
    for name in ("train.en", "train.fr", "train.docids"):
        with open(d / name, "rb") as f:
            heads[name] = write(tmp_path / name, b"".join(itertools.islice(f, 5000)))
    corpus = read_corpus("parallel", [heads["train.en"], heads["train.fr"], heads["train.docids"]], "en", "fr")
    assert len(corpus) == 5000
    ids = heads["train.docids"].read_text(encoding="utf-8").splitlines()
    assert [p.doc_id for p in corpus.pairs] == [ln.split("\t")[0] for ln in ids]


# --- parallel files ----------------------------------------------------------------


def test_parallel_crlf_bom_and_lines(tmp_path):
    src = write(tmp_path / "a.en", "\ufeffone\r\ntwo\u2028half\r\n")
    tgt = write(tmp_path / "a.fr", "un\ndeux\n")
    c = read_parallel(src, tgt, "en", "fr")
    assert [(p.src, p.tgt, p.line) for p in c.pairs] == [("one", "un", 1), ("two\u2028half", "deux", 2)]


def test_parallel_length_mismatch_names_divergence(tmp_path):
    src = write(tmp_path / "s.txt", "a\nb\n\nd\ne\n")
    tgt = write(tmp_path / "t.txt", "A\nB\nC\nD\n")
    with pytest.raises(CorpusError) as err:
        read_parallel(src, tgt, "en", "fr")
    assert err.value.path == str(tgt) and err.value.line == 3
    assert "5 lines" in err.value.reason and "4" in err.value.reason
    # no blank-line divergence: the line after the shorter file
    write(src, "a\nb\nc\nd\ne\nf\n")
    with pytest.raises(CorpusError) as err:
        read_parallel(src, tgt, "en", "fr")
    assert err.value.line == 5 and err.value.path == str(tgt)


def test_parallel_empty_side_strict_and_lenient(tmp_path):
    src = write(tmp_path / "s.txt", "a\n  \nc\n")
    tgt = write(tmp_path / "t.txt", "A\nB\nC\n")
    with pytest.raises(CorpusError) as err:
        read_parallel(src, tgt, "en", "fr")
    assert (err.value.path, err.value.line) == (str(src), 2)
    c = read_parallel(src, tgt, "en", "fr", lenient=True)
    assert len(c) == 3 and c.pairs[1].tgt == "B"
    assert any("1 pair(s) with an empty side" in w for w in c.warnings)


def test_invalid_utf8_strict_names_line_and_byte(tmp_path):
    src = write(tmp_path / "s.txt", b"ok\nbad \xff byte\nok\n")
    tgt = write(tmp_path / "t.txt", "A\nB\nC\n")
    with pytest.raises(CorpusError) as err:
        read_parallel(src, tgt, "en", "fr")
    assert (err.value.path, err.value.line) == (str(src), 2)
    assert "byte offset 7" in err.value.reason  # 'ok\n' = 3 bytes, 'bad ' = 4
    assert "byte 4 of the line" in err.value.reason and "lenient" in err.value.reason


def test_invalid_utf8_with_bom_offset_counts_bom(tmp_path):
    path = write(tmp_path / "x.tsv", b"\xef\xbb\xbfa\tb\nc\t\xc3(\n")
    with pytest.raises(CorpusError) as err:
        read_tsv(path, "en", "es")
    assert err.value.line == 2 and "byte offset 9" in err.value.reason


def test_lenient_counts_replacements_not_genuine_fffd(tmp_path):
    src = write(tmp_path / "s.txt", b"\xff\xfe x\nreal \xef\xbf\xbd y \xc0\n")
    tgt = write(tmp_path / "t.txt", "A\nB\n")
    c = read_parallel(src, tgt, "en", "fr", lenient=True)
    assert c.pairs[0].src == "\ufffd\ufffd x"
    assert c.pairs[1].src == "real \ufffd y \ufffd"
    assert any("replaced 3 invalid UTF-8" in w and "line 1" in w for w in c.warnings)


def test_binary_file_refused(tmp_path):
    src = write(tmp_path / "s.bin", b"fine\nalso fine\n\x00\x01\x02")
    tgt = write(tmp_path / "t.txt", "A\nB\nC\n")
    for lenient in (False, True):
        with pytest.raises(CorpusError) as err:
            read_parallel(src, tgt, "en", "fr", lenient=lenient)
        assert err.value.line == 3 and "binary" in err.value.reason


def test_utf16_file_is_refused_as_binary(tmp_path):
    src = write(tmp_path / "s.txt", "hello\nworld\n".encode("utf-16"))
    tgt = write(tmp_path / "t.txt", "A\nB\n")
    with pytest.raises(CorpusError, match="UTF-16"):
        read_parallel(src, tgt, "en", "fr")


def test_missing_file(tmp_path):
    with pytest.raises(CorpusError) as err:
        read_parallel(tmp_path / "nope", tmp_path / "nope2", "en", "fr")
    assert err.value.path == str(tmp_path / "nope") and err.value.line is None


def test_docids_errors(tmp_path):
    src = write(tmp_path / "s", "a\nb\nc\n")
    tgt = write(tmp_path / "t", "A\nB\nC\n")
    ids = write(tmp_path / "ids", "d1\t0\nd1\t1\nd2\n")
    with pytest.raises(CorpusError) as err:
        read_parallel(src, tgt, "en", "fr", ids)
    assert (err.value.path, err.value.line) == (str(ids), 3) and "found 1 column" in err.value.reason
    write(ids, "d1\t0\nd1\tx\nd2\t0\n")
    with pytest.raises(CorpusError) as err:
        read_parallel(src, tgt, "en", "fr", ids)
    assert err.value.line == 2
    write(ids, "d1\t0\nd1\t1\n")
    with pytest.raises(CorpusError) as err:
        read_parallel(src, tgt, "en", "fr", ids)
    assert (err.value.path, err.value.line) == (str(ids), 3) and "has 2 lines" in err.value.reason
    # a document's sentences are contiguous: d1 resuming after d2 is refused (#13 item 16)
    write(ids, "d1\t0\nd2\t0\nd1\t1\n")
    with pytest.raises(CorpusError, match="starts again") as err:
        read_parallel(src, tgt, "en", "fr", ids)
    assert err.value.line == 3
    write(ids, "d1\t0\nd1\t1\nd2\t0\n")
    c = read_parallel(src, tgt, "en", "fr", ids)
    assert c.documents() == {"d1": [0, 1], "d2": [2]}


# --- tsv ------------------------------------------------------------------------------


def test_tsv_columns(tmp_path):
    path = write(tmp_path / "x.tsv", "Hi.\tHola.\tCC-BY x\nBye.\tAdiós.\n")
    c = read_tsv(path, "es", "en")
    assert [(p.src, p.tgt) for p in c.pairs] == [("Hola.", "Hi."), ("Adiós.", "Bye.")]
    write(path, "Hi.\tHola.\nBye.\tAdiós.\nOne\ttwo\tthree\tfour\n")
    with pytest.raises(CorpusError) as err:
        read_tsv(path, "es", "en")
    assert err.value.line == 3 and "found 4" in err.value.reason
    write(path, "Hi.\tHola.\nNo tab here\n")
    with pytest.raises(CorpusError) as err:
        read_tsv(path, "es", "en")
    assert err.value.line == 2 and "found 1" in err.value.reason
    # column 2 asked for but this line has only two columns
    write(path, "a\tb\tc\nd\te\n")
    with pytest.raises(CorpusError) as err:
        read_tsv(path, "x", "y", src_col=2, tgt_col=0)
    assert err.value.line == 2


def test_tsv_blank_and_empty_lines(tmp_path):
    path = write(tmp_path / "x.tsv", "a\tb\n\nc\t\n")
    with pytest.raises(CorpusError) as err:
        read_tsv(path, "x", "y")
    assert err.value.line == 2
    c = read_tsv(path, "x", "y", lenient=True)
    assert [(p.src, p.tgt, p.line) for p in c.pairs] == [("b", "a", 1), ("", "c", 3)]
    assert len(c.warnings) == 2
    write(path, "a\tb\nc\t \n")
    with pytest.raises(CorpusError) as err:
        read_tsv(path, "x", "y", src_col=0, tgt_col=1)
    assert err.value.line == 2 and "column 1 is empty" in err.value.reason


# --- blank-line documents -------------------------------------------------------------


def test_blank_line_documents(tmp_path):
    src = write(tmp_path / "s", "a1\na2\n\n\nb1\n\nc1\nc2\nc3\n")
    tgt = write(tmp_path / "t", "A1\nA2\n\nB1\n\nC1\nC2\nC3\n\n")
    c = read_blank_line_documents(src, tgt, "en", "fr")
    assert c.documents() == {"doc1": [0, 1], "doc2": [2], "doc3": [3, 4, 5]}
    assert [p.line for p in c.pairs] == [1, 2, 5, 7, 8, 9]
    assert c.pairs[4].tgt == "C2"


def test_blank_line_documents_mismatch(tmp_path):
    src = write(tmp_path / "s", "a1\na2\n\nb1\nb2\n\nc1\n")
    tgt = write(tmp_path / "t", "A1\nA2\n\nB1\n\nB2\nC1\n")
    with pytest.raises(CorpusError) as err:
        read_blank_line_documents(src, tgt, "en", "fr")
    assert (err.value.path, err.value.line) == (str(src), 4)
    assert "document 2" in err.value.reason
    write(tgt, "A1\nA2\n\nB1\nB2\n")
    with pytest.raises(CorpusError) as err:
        read_blank_line_documents(src, tgt, "en", "fr")
    assert (err.value.path, err.value.line) == (str(src), 7)


# --- tmx ------------------------------------------------------------------------------


def test_tmx_languages_inline_and_lines():
    c = read_tmx(FIXTURES / "good.tmx", "en", "es")
    assert [(p.src, p.tgt, p.line) for p in c.pairs] == [
        ("Click here now.", "Haga clic aquí ahora.", 6),
        ("Good morning.", "Buenos días.", 14),
    ]
    assert any("skipped 1 of 3" in w for w in c.warnings)
    back = read_corpus("tmx", [FIXTURES / "good.tmx"], "ES-es", "en-US")
    assert back.pairs[0].src == "Haga clic aquí ahora."


def test_tmx_wrong_language_says_what_exists():
    with pytest.raises(CorpusError, match="languages found: EN-us, ES, de, en, es-ES"):
        read_tmx(FIXTURES / "good.tmx", "fr", "es")


@pytest.mark.parametrize(
    ("name", "line", "words"),
    [("bomb.tmx", 3, "billion laughs"), ("external.tmx", 3, "external entity"),
     ("malformed.tmx", 7, "mismatched tag")],
)
def test_tmx_attacks_and_malformed(name, line, words):
    with pytest.raises(CorpusError) as err:
        read_tmx(FIXTURES / name, "en", "es")
    assert err.value.path == str(FIXTURES / name) and err.value.line == line
    assert words in err.value.reason


def test_tmx_external_dtd_is_never_loaded(tmp_path):
    dtd = write(tmp_path / "evil.dtd", '<!ENTITY pwn "LOADED">\n')
    body = '<tmx version="1.4"><header/><body>\n<tu><tuv xml:lang="en"><seg>a{}</seg></tuv><tuv xml:lang="es"><seg>b</seg></tuv></tu>\n</body></tmx>\n'
    head = f'<?xml version="1.0"?>\n<!DOCTYPE tmx SYSTEM "{dtd.as_uri()}">\n'
    ok = read_tmx(write(tmp_path / "ok.tmx", head + body.format("")), "en", "es")
    assert [(p.src, p.tgt) for p in ok.pairs] == [("a", "b")]
    with pytest.raises(CorpusError) as err:
        read_tmx(write(tmp_path / "use.tmx", head + body.format(" &pwn;")), "en", "es")
    assert err.value.line == 4 and "never loaded" in err.value.reason


# --- dispatcher -----------------------------------------------------------------------


def test_read_corpus_rejects_bad_requests(tmp_path):
    with pytest.raises(ConfigError, match="unknown corpus format"):
        read_corpus("csv", [tmp_path / "x"], "en", "fr")
    with pytest.raises(ConfigError, match="needs 2 or 3 file"):
        read_corpus("parallel", [tmp_path / "x"], "en", "fr")

"""Every reader, fed arbitrary bytes, returns a Corpus or raises CorpusError; nothing
else escapes (no UnicodeDecodeError, IndexError, expat error...)."""
from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.data.corpus import Corpus
from core.data.readers import read_blank_line_documents, read_parallel, read_tmx, read_tsv
from core.errors import CorpusError

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# bytes biased towards the characters the readers split and decode on
_pieces = st.sampled_from(
    [b"\n", b"\r\n", b"\t", b" ", b"\x00", b"\xff", b"\xc3", b"\xc3\xa9", b"\xef\xbb\xbf",
     b"a", b"hola", b"<", b">", b"&", b"\xe2\x80\xa8"]
)
text_bytes = st.one_of(st.binary(max_size=200), st.lists(_pieces, max_size=60).map(b"".join))

_tmx_bits = st.sampled_from(
    ['<?xml version="1.0"?>', "<tmx>", "</tmx>", "<body>", "</body>", "<tu>", "</tu>",
     '<tuv xml:lang="en">', '<tuv lang="ES-es">', "</tuv>", "<seg>", "</seg>", "hi",
     "<bpt i='1'>", "</bpt>", "&amp;", "&x;", '<!DOCTYPE tmx [<!ENTITY x "y">]>',
     '<!DOCTYPE tmx SYSTEM "t.dtd">', "\n", "\xe9", "<hi>", "</hi>"]
)
tmx_bytes = st.one_of(
    st.binary(max_size=200),
    st.lists(_tmx_bits, max_size=40).map(lambda xs: "".join(xs).encode("utf-8")),
)


def _outcome(fn, *args, **kwargs) -> None:
    try:
        result = fn(*args, **kwargs)
    except CorpusError as exc:
        assert exc.path is not None and exc.reason
        if exc.line is not None:
            assert exc.line >= 1
        return
    assert isinstance(result, Corpus) and len(result) > 0
    for pair in result.pairs:
        assert isinstance(pair.src, str) and isinstance(pair.tgt, str) and pair.line >= 1


def _files(*contents: bytes) -> tuple[tempfile.TemporaryDirectory, list[Path]]:
    tmp = tempfile.TemporaryDirectory()
    paths = []
    for i, data in enumerate(contents):
        path = Path(tmp.name) / f"f{i}"
        path.write_bytes(data)
        paths.append(path)
    return tmp, paths


@FUZZ
@given(text_bytes, text_bytes, st.booleans())
def test_fuzz_parallel(src, tgt, lenient):
    tmp, (a, b) = _files(src, tgt)
    with tmp:
        _outcome(read_parallel, a, b, "en", "fr", lenient=lenient)


@FUZZ
@given(text_bytes, text_bytes, text_bytes)
def test_fuzz_parallel_docids(src, tgt, ids):
    tmp, (a, b, c) = _files(src, tgt, ids)
    with tmp:
        _outcome(read_parallel, a, b, "en", "fr", docids_path=c, lenient=True)


@FUZZ
@given(text_bytes, st.booleans())
def test_fuzz_tsv(data, lenient):
    tmp, (a,) = _files(data)
    with tmp:
        _outcome(read_tsv, a, "es", "en", lenient=lenient)


@FUZZ
@given(text_bytes, text_bytes, st.booleans())
def test_fuzz_blank_line_documents(src, tgt, lenient):
    tmp, (a, b) = _files(src, tgt)
    with tmp:
        _outcome(read_blank_line_documents, a, b, "en", "fr", lenient=lenient)


@FUZZ
@given(tmx_bytes)
def test_fuzz_tmx(data):
    tmp, (a,) = _files(data)
    with tmp:
        _outcome(read_tmx, a, "en", "es")

"""Translation exports: TMX, XLIFF, JSON lines, Moses, TSV, plain text."""
from __future__ import annotations

import json

import numpy as np
import pytest

from core.errors import CorpusError
from core.formats.export import read_translations, write_translations
from core.formats.jsonl import read_jsonl, write_jsonl
from core.formats.records import TranslationRecord
from core.formats.text import read_moses, read_plain, read_tsv, write_moses, write_plain, write_tsv
from core.formats.tmx_records import read_tmx, write_tmx
from core.formats.xliff import read_xliff, write_xliff

TEXTS = [
    ("Ça coûte 5 € <b> & \"quotes\" 'too'", "It costs €5 <b> & \"quotes\" 'too'"),
    ("日本語のテキスト 🙂", "Japanese text 🙂"),
    ("  leading and trailing spaces  ", "ß ẞ ı İ ﬁ"),
]
RECORDS = [TranslationRecord(s, t) for s, t in TEXTS]


def test_tmx_round_trip(tmp_path):
    p = write_tmx(tmp_path / "out.tmx", RECORDS, "fr", "en")
    raw = p.read_text(encoding="utf-8")
    assert '<tmx version="1.4">' in raw and 'xml:lang="fr"' in raw and "&lt;b&gt;" in raw
    back = read_tmx(p)
    assert [(r.source, r.translation) for r in back] == TEXTS
    assert [r.id for r in back] == ["1", "2", "3"]
    # the languages can be picked the other way round
    rev = read_tmx(p, src_lang="en", tgt_lang="fr")
    assert [(r.translation, r.source) for r in rev] == TEXTS


def test_tmx_region_codes_and_inline_markup(tmp_path):
    p = tmp_path / "in.tmx"
    p.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4"><header srclang="EN-GB" '
        'creationtool="x" creationtoolversion="1" segtype="sentence" o-tmf="x" adminlang="en" '
        'datatype="plaintext"/><body>\n<tu><tuv xml:lang="EN-GB"><seg>Press <ph>&lt;b&gt;'
        '</ph><hi>OK</hi> now</seg></tuv><tuv xml:lang="fr-FR"><seg>Appuyez sur OK</seg></tuv></tu>\n'
        '<tu><tuv xml:lang="en-GB"><seg>only English</seg></tuv></tu>\n</body></tmx>\n',
        encoding="utf-8")
    back = read_tmx(p)
    assert [(r.source, r.translation) for r in back] == [("Press OK now", "Appuyez sur OK")]


def test_xliff_round_trip(tmp_path):
    recs = [TranslationRecord(s, t, reference="ref ü" if k == 0 else None)
            for k, (s, t) in enumerate(TEXTS)]
    p = write_xliff(tmp_path / "out.xlf", recs, "fr", "en", original="doc.txt")
    raw = p.read_text(encoding="utf-8")
    assert 'xmlns="urn:oasis:names:tc:xliff:document:1.2"' in raw and 'version="1.2"' in raw
    back = read_xliff(p)
    assert [(r.source, r.translation) for r in back] == TEXTS
    assert {r.doc_id for r in back} == {"doc.txt"}
    # a target the translator edited is translated, the machine's still to review
    recs[1].meta["edited"] = True
    import defusedxml.ElementTree as SafeET

    root = SafeET.parse(write_xliff(tmp_path / "edited.xlf", recs, "fr", "en")).getroot()
    states = [t.get("state") for t in root.iter("{urn:oasis:names:tc:xliff:document:1.2}target")]
    assert states == ["needs-review-translation", "translated"] + \
        ["needs-review-translation"] * (len(TEXTS) - 2)


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<tmx version="1.4"><header srclang="en"/><body><tu><tuv xml:lang="en"><seg>&lol3;</seg></tuv>
<tuv xml:lang="fr"><seg>x</seg></tuv></tu></body></tmx>
"""
XXE = """<?xml version="1.0"?>
<!DOCTYPE x [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file original="a"
source-language="en" target-language="fr" datatype="plaintext"><body><trans-unit id="1">
<source>&secret;</source></trans-unit></body></file></xliff>
"""


@pytest.mark.parametrize("reader,text", [(read_tmx, BILLION_LAUGHS), (read_xliff, XXE)])
def test_hostile_xml_rejected(tmp_path, reader, text):
    p = tmp_path / "evil.xml"
    p.write_text(text, encoding="utf-8")
    # TMX goes through the corpus reader's SAX parser, which names the entity and line
    with pytest.raises(CorpusError, match="unsafe XML|entities are refused") as e:
        reader(p)
    assert e.value.path == str(p)


def test_malformed_xml_names_line(tmp_path):
    p = tmp_path / "broken.tmx"
    p.write_text('<tmx version="1.4">\n<body>\n<tu><tuv></tu>\n</body></tmx>\n', encoding="utf-8")
    with pytest.raises(CorpusError) as e:
        read_tmx(p)
    assert e.value.line == 3
    with pytest.raises(CorpusError, match="not <xliff>"):
        read_xliff(write_tmx(tmp_path / "a.tmx", RECORDS, "fr", "en"))


def test_jsonl_round_trip_with_attention(tmp_path):
    att = np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]], dtype=np.float32)
    rec = TranslationRecord("le chat", "the cat </s>", id="7", doc_id="d1",
                            source_tokens=["le", "chat"], target_tokens=["the", "cat", "</s>"],
                            score=-1.25, token_scores=[-0.5, -0.5, -0.25], attention=att)
    p = write_jsonl(tmp_path / "out.jsonl", [rec, TranslationRecord("a", "b")])
    lines = p.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[1]) == {"source": "a", "translation": "b"}
    back = read_jsonl(p)
    assert back[0].target_tokens == ["the", "cat", "</s>"] and back[0].score == -1.25
    np.testing.assert_allclose(back[0].attention, att, rtol=1e-6)
    assert back[1] == TranslationRecord("a", "b")


def test_jsonl_errors(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"source": "a", "translation": "b"}\n{"source": "a"}\n', encoding="utf-8")
    with pytest.raises(CorpusError) as e:
        read_jsonl(p)
    assert e.value.line == 2
    p.write_text('{"source": "a", "translation": "b", "target_tokens": ["b"], '
                 '"attention": [[0.5], [0.5]]}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match="target_tokens x source_tokens"):
        read_jsonl(p)


def test_moses_tsv_plain(tmp_path):
    src, tgt = write_moses(tmp_path / "test", RECORDS, "fr", "en")
    assert src.name == "test.fr" and tgt.name == "test.en"
    assert [(r.source, r.translation) for r in read_moses(src, tgt)] == TEXTS
    t = write_tsv(tmp_path / "out.tsv", RECORDS)
    assert [(r.source, r.translation) for r in read_tsv(t)] == TEXTS
    assert read_plain(write_plain(tmp_path / "p.txt", ["a", "ü"])) == ["a", "ü"]
    with pytest.raises(CorpusError, match="segment 2 contains a tab"):
        write_tsv(tmp_path / "x.tsv", [TranslationRecord("a", "b"), TranslationRecord("c\td", "e")])
    with pytest.raises(CorpusError, match="line break"):
        write_plain(tmp_path / "y.txt", ["one\ntwo"])
    assert not (tmp_path / "y.txt").exists()
    (tmp_path / "short.en").write_text("a\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="line-parallel"):
        read_moses(src, tmp_path / "short.en")


@pytest.mark.parametrize("name", ["t.tsv", "t.tmx", "t.xlf", "t.xliff", "t.jsonl"])
def test_export_dispatch_round_trip(tmp_path, name):
    sources, targets = [s for s, _ in TEXTS], [t for _, t in TEXTS]
    paths = write_translations(tmp_path / name, sources, targets, src_lang="fr", tgt_lang="en")
    assert paths == [tmp_path / name]
    back = read_translations(paths[0])
    assert [(r.source, r.translation) for r in back] == TEXTS


def test_export_text_and_moses(tmp_path):
    sources, targets = [s for s, _ in TEXTS], [t for _, t in TEXTS]
    [p] = write_translations(tmp_path / "t.txt", sources, targets)
    assert p.read_text(encoding="utf-8").splitlines() == targets
    paths = write_translations(tmp_path / "m", sources, targets, src_lang="fr", tgt_lang="en",
                               fmt="moses")
    assert [q.name for q in paths] == ["m.fr", "m.en"]
    with pytest.raises(CorpusError, match="cannot tell the format"):
        write_translations(tmp_path / "t.doc", sources, targets)
    with pytest.raises(ValueError):
        write_translations(tmp_path / "t.tsv", sources, targets[:1])

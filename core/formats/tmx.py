"""TMX 1.4 translation memories: one <tu> per segment, a <tuv xml:lang> per language."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from core.atomic import write_bytes_atomic
from core.errors import CorpusError
from core.formats.records import TranslationRecord
from core.formats.xmlsafe import XML_NS, element_text, parse_xml, to_bytes

TOOL = "NMT Attention Workbench"
TOOL_VERSION = "0.1"


def write_tmx(path: str | Path, records: Iterable[TranslationRecord],
              src_lang: str, tgt_lang: str) -> Path:
    """Write source/translation pairs as TMX 1.4, atomically."""
    root = ET.Element("tmx", version="1.4")
    ET.SubElement(root, "header", {
        "creationtool": TOOL, "creationtoolversion": TOOL_VERSION, "segtype": "sentence",
        "o-tmf": "nmt-workbench", "adminlang": "en", "srclang": src_lang,
        "datatype": "plaintext"})
    body = ET.SubElement(root, "body")
    for k, r in enumerate(records, start=1):
        tu = ET.SubElement(body, "tu", tuid=r.id or str(k))
        for lang, text in ((src_lang, r.source), (tgt_lang, r.translation)):
            tuv = ET.SubElement(tu, "tuv", {f"{XML_NS}lang": lang})
            ET.SubElement(tuv, "seg").text = text
    return write_bytes_atomic(path, to_bytes(root))


def read_tmx(path: str | Path, src_lang: str | None = None,
             tgt_lang: str | None = None) -> list[TranslationRecord]:
    """Read the (src_lang, tgt_lang) pairs of a TMX file. Languages compare
    case-insensitively on their primary subtag ('en' matches 'EN-GB'); by default the
    header's srclang and the other language of the first <tu>. A <tu> missing one of
    the two languages is skipped."""
    root = parse_xml(path)
    if root.tag != "tmx":
        raise CorpusError(path, None, f"root element is <{root.tag}>, not <tmx>: not a TMX file")
    header = root.find("header")
    src = (src_lang or (header.get("srclang") if header is not None else None) or "").lower()
    body = root.find("body")
    if body is None:
        raise CorpusError(path, None, "TMX file has no <body>")

    def langs(tu: ET.Element) -> dict[str, str]:
        out: dict[str, str] = {}
        for tuv in tu.findall("tuv"):
            lang = (tuv.get(f"{XML_NS}lang") or tuv.get("lang") or "").lower()
            seg = tuv.find("seg")
            if lang and seg is not None:
                out.setdefault(lang, element_text(seg))
        return out

    def pick(d: dict[str, str], lang: str) -> str | None:
        if lang in d:
            return d[lang]
        for k, v in d.items():
            if k.split("-")[0] == lang.split("-")[0]:
                return v
        return None

    tus = body.findall("tu")
    tgt = (tgt_lang or "").lower()
    if not tgt and tus:
        others = [k for k in langs(tus[0]) if k.split("-")[0] != src.split("-")[0]]
        tgt = others[0] if others else ""
    if not src or not tgt:
        raise CorpusError(path, None, "cannot tell the source and target languages: pass "
                          "src_lang and tgt_lang")
    records = []
    for k, tu in enumerate(tus, start=1):
        d = langs(tu)
        s, t = pick(d, src), pick(d, tgt)
        if s is not None and t is not None:
            records.append(TranslationRecord(s, t, id=tu.get("tuid") or str(k)))
    return records

"""TMX 1.4 translation memories: one <tu> per segment, a <tuv xml:lang> per language."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from core.atomic import write_bytes_atomic
from core.data.tmx import lang_matches, parse_tmx
from core.errors import CorpusError
from core.formats.decoding_meta import from_pairs, to_pairs, with_decoding
from core.formats.records import TranslationRecord
from core.formats.xmlsafe import XML_NS, to_bytes

TOOL = "NMT Attention Workbench"
TOOL_VERSION = "0.1"


def write_tmx(path: str | Path, records: Iterable[TranslationRecord],
              src_lang: str, tgt_lang: str, decoding: Mapping[str, Any] | None = None) -> Path:
    """Write source/translation pairs as TMX 1.4, atomically; `decoding`
    (core.infer.decoding) as the header's <prop type="x-decoding-KEY"> elements."""
    root = ET.Element("tmx", version="1.4")
    header = ET.SubElement(root, "header", {
        "creationtool": TOOL, "creationtoolversion": TOOL_VERSION, "segtype": "sentence",
        "o-tmf": "nmt-workbench", "adminlang": "en", "srclang": src_lang,
        "datatype": "plaintext"})
    for kind, text in to_pairs(decoding):
        ET.SubElement(header, "prop", type=kind).text = text
    body = ET.SubElement(root, "body")
    for k, r in enumerate(records, start=1):
        tu = ET.SubElement(body, "tu", tuid=r.id or str(k))
        for lang, text in ((src_lang, r.source), (tgt_lang, r.translation)):
            tuv = ET.SubElement(tu, "tuv", {f"{XML_NS}lang": lang})
            ET.SubElement(tuv, "seg").text = text
    return write_bytes_atomic(path, to_bytes(root))


def read_tmx(path: str | Path, src_lang: str | None = None,
             tgt_lang: str | None = None) -> list[TranslationRecord]:
    """Read the (src_lang, tgt_lang) pairs of a TMX file through the one TMX parser
    (core.data.tmx.read_tmx_units: SAX, line numbers in errors, code elements left out)
    and its language matching (exact tag first, else a region variant: 'es' finds
    'es-ES'). By default the header's srclang and the other language of the first <tu>.
    A <tu> missing one of the two languages is skipped. The header's decoding
    settings (write_tmx) go into each record's meta["decoding"]."""
    return _records(path, parse_tmx(path), src_lang, tgt_lang)[0]


def read_tmx_from(path: str | Path, lang: str) -> tuple[list[TranslationRecord], str]:
    """A TMX read as a document to translate from `lang`: `lang`'s side as the source
    where some <tu> has it (a memory holds both sides), else the header's srclang ->
    (records, the source language read). Every <tu> with that side is read, the ones
    with no other side too (their translation is ""); CorpusError when there is no side
    to read (naming the languages the memory holds)."""
    found = parse_tmx(path)
    has = any(lang_matches(lang, tuv_lang) for unit in found.units for tuv_lang, _ in unit.tuvs)
    src = lang if has else found.srclang
    if not src:
        raise CorpusError(path, None, f"no <tuv> is in {lang!r} and the <header> names no "
                          f"srclang: add srclang=\"LANG\" to the header")
    decoding = from_pairs(found.props)
    # every <tu> with a source side: one not translated yet is what there is to translate
    records = [TranslationRecord(text, "", id=unit.tuid or str(k),
                                 meta=with_decoding({}, decoding))
               for k, unit in enumerate(found.units, start=1)
               if (text := unit.pick(src)) is not None]
    if not records and found.units:  # srclang '*all*', or a language no <tuv> is in
        held = ", ".join(sorted(found.langs_seen))
        which = held if len(found.langs_seen) == 1 else f"one of {held}"
        raise CorpusError(path, None, f"no <tuv> is in {lang!r} or in the header's srclang "
                          f"{src!r}: it holds {held}; translate it with a run from {which}")
    return records, src


def _records(path, found, src_lang: str | None, tgt_lang: str | None
             ) -> tuple[list[TranslationRecord], str]:
    """parse_tmx's units -> (the (src, tgt) records, the source language)."""
    units, header_src = found.units, found.srclang
    decoding = from_pairs(found.props)
    src = src_lang or header_src
    tgt = tgt_lang
    if not tgt and units and src:
        others = [lang for lang, _ in units[0].tuvs if not lang_matches(src, lang)]
        tgt = others[0] if others else ""
    if not src or not tgt:
        raise CorpusError(path, None, "cannot tell the source and target languages: pass "
                          "src_lang and tgt_lang")
    records = []
    for k, unit in enumerate(units, start=1):
        s, t = unit.pick(src), unit.pick(tgt)
        if s is not None and t is not None:
            records.append(TranslationRecord(s, t, id=unit.tuid or str(k),
                                             meta=with_decoding({}, decoding)))
    return records, src

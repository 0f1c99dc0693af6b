"""XLIFF 1.2: one <file> with <trans-unit><source/><target/></trans-unit> per segment."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from core.atomic import write_bytes_atomic
from core.errors import CorpusError
from core.formats.records import TranslationRecord
from core.formats.xmlsafe import element_text, parse_xml, to_bytes

NS = "urn:oasis:names:tc:xliff:document:1.2"
_N = f"{{{NS}}}"


def write_xliff(path: str | Path, records: Iterable[TranslationRecord], src_lang: str,
                tgt_lang: str, original: str = "document", state: str = "needs-review-translation"
                ) -> Path:
    """Write an XLIFF 1.2 file, atomically; machine translations are marked with
    `state` (by default needs-review-translation) for a translator to review."""
    ET.register_namespace("", NS)
    root = ET.Element(f"{_N}xliff", version="1.2")
    f = ET.SubElement(root, f"{_N}file", {"original": original, "source-language": src_lang,
                                          "target-language": tgt_lang,
                                          "datatype": "plaintext"})
    body = ET.SubElement(f, f"{_N}body")
    for k, r in enumerate(records, start=1):
        tu = ET.SubElement(body, f"{_N}trans-unit", id=r.id or str(k))
        ET.SubElement(tu, f"{_N}source").text = r.source
        tgt = ET.SubElement(tu, f"{_N}target", state=state)
        tgt.text = r.translation
        if r.reference:
            note = ET.SubElement(tu, f"{_N}note", {"from": "reference"})
            note.text = r.reference
    return write_bytes_atomic(path, to_bytes(root))


def read_xliff(path: str | Path) -> list[TranslationRecord]:
    """Read every trans-unit of every <file> (a unit without <target> gets '')."""
    root = parse_xml(path)
    ns = _N if root.tag == f"{_N}xliff" else ""
    if root.tag != f"{ns}xliff":
        raise CorpusError(path, None, f"root element is <{root.tag}>, not <xliff>: "
                          "not an XLIFF 1.2 file")
    records = []
    for f in root.iter(f"{ns}file"):
        for tu in f.iter(f"{ns}trans-unit"):
            src = tu.find(f"{ns}source")
            if src is None:
                raise CorpusError(path, None, f"trans-unit {tu.get('id')!r} has no <source>")
            tgt = tu.find(f"{ns}target")
            records.append(TranslationRecord(element_text(src),
                                             "" if tgt is None else element_text(tgt),
                                             id=tu.get("id"), doc_id=f.get("original")))
    return records

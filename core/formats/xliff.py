"""XLIFF 1.2: a <file> per document, a <trans-unit><source/><target/></trans-unit> per
segment."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from core import limits
from core.atomic import write_bytes_atomic
from core.data import xmlstream
from core.data.textio import input_chunks
from core.errors import CorpusError
from core.formats.decoding_meta import from_pairs, to_pairs, with_decoding
from core.formats.records import TranslationRecord
from core.formats.xmlsafe import to_bytes

NS = "urn:oasis:names:tc:xliff:document:1.2"
_N = f"{{{NS}}}"
TOOL_ID = "nmt-workbench"  # the header's <tool tool-id>


def write_xliff(path: str | Path, records: Iterable[TranslationRecord], src_lang: str,
                tgt_lang: str, original: str = "document", state: str = "needs-review-translation",
                decoding: Mapping[str, Any] | None = None) -> Path:
    """Write an XLIFF 1.2 file, atomically: a <file> per source document (the records'
    doc_id, in order; `original` for records without one); machine translations are marked with
    `state` (by default needs-review-translation) for a translator to review, targets a
    translator edited (meta "edited") with state "translated". The
    <file>'s header names the workbench (<tool>) and, with `decoding`
    (core.infer.decoding), holds a <note from="x-decoding-KEY"> per setting."""
    # same layer; tmx_records reads nothing of xliff
    from core.formats.tmx_records import TOOL, TOOL_VERSION

    ET.register_namespace("", NS)
    root = ET.Element(f"{_N}xliff", version="1.2")
    body, current = None, object()
    for k, r in enumerate(records, start=1):
        if body is None or r.doc_id != current:  # a <file> per source document
            current = r.doc_id
            body = _file_body(root, r.doc_id or original, src_lang, tgt_lang, decoding,
                              (TOOL, TOOL_VERSION))
        tu = ET.SubElement(body, f"{_N}trans-unit", id=r.id or str(k))
        ET.SubElement(tu, f"{_N}source").text = r.source
        tgt = ET.SubElement(tu, f"{_N}target",
                            state="translated" if r.meta.get("edited") else state)
        tgt.text = r.translation
        if r.reference:
            note = ET.SubElement(tu, f"{_N}note", {"from": "reference"})
            note.text = r.reference
    if body is None:  # no records: one empty <file>
        _file_body(root, original, src_lang, tgt_lang, decoding, (TOOL, TOOL_VERSION))
    return write_bytes_atomic(path, to_bytes(root))


def _file_body(root: ET.Element, original: str, src_lang: str, tgt_lang: str,
               decoding: Mapping[str, Any] | None, tool: tuple[str, str]) -> ET.Element:
    """A new <file original=...> of `root` with its header (the tool, the decoding
    notes); -> its <body>."""
    f = ET.SubElement(root, f"{_N}file", {"original": original, "source-language": src_lang,
                                          "target-language": tgt_lang,
                                          "datatype": "plaintext"})
    header = ET.SubElement(f, f"{_N}header")
    ET.SubElement(header, f"{_N}tool", {"tool-id": TOOL_ID, "tool-name": tool[0],
                                        "tool-version": tool[1]})
    for name, text in to_pairs(decoding):
        ET.SubElement(header, f"{_N}note", {"from": name}).text = text
    return ET.SubElement(f, f"{_N}body")


# Inline elements whose content is markup of the original document, not words to
# translate (XLIFF 1.2 <bpt> <ept> <ph> <it> <x/> <bx/> <ex/>, and TMX's <ut>): their
# text is left out, the text after them kept.
_CODE_ELEMENTS = {"bpt", "ept", "ph", "it", "ut", "x", "bx", "ex"}


class _XliffHandler(xmlstream.Handler):
    """Collects the trans-units of every <file> as the parser streams by: the first
    direct <source> and <target> child of each, nested markup's text kept and code
    elements' content left out. Namespace-aware: elements of the root's namespace (XLIFF
    1.2's, or none) count."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.records: list[TranslationRecord] = []
        self.max_units = limits.LINES.value()
        self._ns: str | None = None
        self._rooted = False
        self.languages: set[str] = set()  # the <file>s' source-language ('' where none)
        self._files: list[str | None] = []  # the open <file>s' 'original'
        # per open <file>: its header's (from, text) notes, read as decoding settings
        self._notes: list[list[tuple[str, str]]] = []
        self._decoding: list[dict | None] = []
        self._note: tuple[str, int, list[str]] | None = None  # from, depth, text so far
        self._header_depth = 0
        self._unit: dict | None = None
        self._field: str | None = None  # 'source' or 'target' while collecting one
        self._field_depth = self._skip_depth = 0
        self._parts: list[str] = []

    def startElementNS(self, name, qname, attrs) -> None:  # noqa: N802 (SAX API name)
        self.enter()
        uri, local = name
        if not self._rooted:
            if local != "xliff" or uri not in (NS, None):
                raise CorpusError(self.path, None, f"root element is <{qname or local}>, not "
                                  "<xliff>: not an XLIFF 1.2 file")
            self._rooted, self._ns = True, uri
            return
        ours = uri == self._ns
        if self._field is not None:
            if not self._skip_depth and local in _CODE_ELEMENTS:
                self._skip_depth = self.depth
        elif self._note is not None:
            return
        elif ours and local == "file":
            self._files.append(attrs.get((None, "original")))
            self.languages.add(attrs.get((None, "source-language")) or "")
            self._notes.append([])
            self._decoding.append(None)
        elif ours and local == "header" and self._files and self._unit is None:
            self._header_depth = self.depth
        elif ours and local == "note" and self._header_depth and self._unit is None:
            self._note = (attrs.get((None, "from")) or "", self.depth, [])
        elif ours and local == "trans-unit" and self._files:
            if self._unit is not None:
                raise CorpusError(self.path, self.line(), "a <trans-unit> inside another "
                                  "<trans-unit>: fix the file or export it again")
            limits.check_count(limits.LINES, self.path, len(self.records) + 1, self.line(),
                               "trans-units")
            self._unit = {"id": attrs.get((None, "id")), "line": self.line(),
                          "depth": self.depth, "source": None, "target": None}
        elif (ours and local in ("source", "target") and self._unit is not None
              and self.depth == self._unit["depth"] + 1 and self._unit[local] is None):
            self._field, self._field_depth, self._parts = local, self.depth, []
            self._unit[local + "_line"] = self.line()

    def characters(self, content: str) -> None:
        if self._field is not None and not self._skip_depth:
            self._parts.append(content)
        elif self._note is not None:
            self._note[2].append(content)

    def endElementNS(self, name, qname) -> None:  # noqa: N802
        uri, local = name
        if self._field is not None:
            if self.depth == self._skip_depth:
                self._skip_depth = 0
            elif self.depth == self._field_depth:
                text = "".join(self._parts)
                limits.check_length(self.path, self._unit[self._field + "_line"], len(text),
                                    f"this <{self._field}>")
                self._unit[self._field], self._field, self._parts = text, None, []
        elif self._note is not None:
            if self.depth == self._note[1]:
                self._notes[-1].append((self._note[0], "".join(self._note[2])))
                self._note = None
        elif self._header_depth and self.depth == self._header_depth:
            self._header_depth = 0
            self._decoding[-1] = from_pairs(self._notes[-1])
        elif self._unit is not None and self.depth == self._unit["depth"]:
            unit, self._unit = self._unit, None
            if unit["source"] is None:
                raise CorpusError(self.path, unit["line"],
                                  f"trans-unit {unit['id']!r} has no <source>")
            self.records.append(TranslationRecord(
                unit["source"], unit["target"] or "", id=unit["id"], doc_id=self._files[-1],
                meta=with_decoding({}, self._decoding[-1])))
        elif uri == self._ns and local == "file" and self._files:
            self._files.pop()
            self._notes.pop()
            self._decoding.pop()
        self.leave()


def read_xliff(path: str | Path) -> list[TranslationRecord]:
    """Read every trans-unit of every <file> (a unit without <target> gets ''; its
    file's decoding settings, write_xliff's header notes, in meta["decoding"]), streamed:
    errors name the line; the input limits hold (core.limits: the file's size, the
    number of trans-units, a segment's length)."""
    return read_xliff_languages(path)[0]


def read_xliff_languages(path: str | Path) -> tuple[list[TranslationRecord], set[str]]:
    """read_xliff's records and the source-language of its <file>s ('' where a file
    names none)."""
    handler = _XliffHandler(Path(path))
    xmlstream.parse(input_chunks(path), handler, namespaces=True, forbid_dtd=True,
                    advice="fix the file or export the XLIFF again")
    return handler.records, handler.languages

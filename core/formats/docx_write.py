"""A translated Word document: the source .docx copied part by part, with each translated
paragraph's text replaced in its main document part (word/document.xml).

Everything but the text stays as it was: styles, numbering, headers, images, tables,
section settings, and each paragraph's properties (its style: heading, list, ...). In a
translated paragraph the whole translation goes into the paragraph's first text
(<w:t>), which keeps its run's properties (bold, italic, font ...); the other runs keep
their properties but lose their text, and the tabs and line breaks the reader turned
into text (core.formats.docx_text) are left out, since the translation replaced the
text they were part of. A paragraph given no translation (None) is copied untouched.

Paragraphs are counted exactly as core.formats.docx_text reads them (outermost <w:p>
of the body; text boxes and deleted text untouched). The main part streams through the
same safe SAX parser (core.data.xmlstream, under the input limits) into an XML writer
that keeps every element, attribute and namespace prefix; the other parts are copied
as they are, their declared sizes bounded first. The file is written atomically.
"""
from __future__ import annotations

import io
import shutil
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from xml.sax.saxutils import XMLGenerator
from xml.sax.xmlreader import AttributesNSImpl

from core import limits
from core.atomic import write_atomic
from core.data import xmlstream
from core.errors import CorpusError
from core.formats.docx_text import (
    _SKIPPED,
    _ZIP_ERRORS,
    W_NS,
    _br_type,
    _check_directory,
    _damaged,
    _decompressed,
    _main_part,
)

_XML_SPACE = ("http://www.w3.org/XML/1998/namespace", "space")
_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
#: how much bigger than the .docx its other parts may unpack to (beyond the input limit):
#: pictures and fonts barely compress; a part that claims a thousandfold is a zip bomb
_UNPACKED_RATIO = 50


class _Rewriter(xmlstream.Handler):
    """Writes the main part back as it streams by, each paragraph's text replaced by the
    next of `texts` (None: left as it is)."""

    def __init__(self, path: Path, out: io.TextIOBase, texts: Iterator[str | None]) -> None:
        super().__init__(path)
        self.out = XMLGenerator(out, "utf-8", short_empty_elements=True)
        self.texts = texts
        self.paragraphs = 0
        self._body = self._p = self._skip = self._drop = 0  # depths, 0 when not open
        self._names: list[str] = []  # local names of the open elements inside the <w:p>
        self._text: str | None = None  # the open paragraph's translation
        self._placed = False  # the translation written (into the first <w:t>)
        self._in_text = False

    # namespaces, instructions and whitespace: passed on as they come
    def startPrefixMapping(self, prefix, uri) -> None:  # noqa: N802 (SAX API name)
        self.out.startPrefixMapping(prefix, uri)

    def endPrefixMapping(self, prefix) -> None:  # noqa: N802
        self.out.endPrefixMapping(prefix)

    def processingInstruction(self, target, data) -> None:  # noqa: N802
        self.out.processingInstruction(target, data)

    def ignorableWhitespace(self, content) -> None:  # noqa: N802
        self.out.ignorableWhitespace(content)

    def startElementNS(self, name, qname, attrs) -> None:  # noqa: N802
        self.enter()
        uri, local = name
        ours = uri in W_NS
        if not self._p:
            if ours and local == "body" and not self._body:
                self._body = self.depth
            elif ours and local == "p" and self._body:
                self._p, self._names, self._placed = self.depth, [], False
                self._text = next(self.texts, None)
                self.paragraphs += 1
            self.out.startElementNS(name, qname, attrs)
            return
        parent = self._names[-1] if self._names else "p"
        self._names.append(local if ours else "")
        if self._drop:
            return
        if self._text is not None and not self._skip and ours:
            if local in _SKIPPED:
                self._skip = self.depth
            elif parent == "r" and local == "t":
                self._in_text = True
                if not self._placed:
                    self._write_text(name, attrs, self._text)
                    return
            elif parent == "r" and (local in ("tab", "ptab", "cr", "noBreakHyphen") or (
                    local == "br" and _br_type(attrs) == "textWrapping")):
                self._drop = self.depth
                return
        self.out.startElementNS(name, qname, attrs)

    def _write_text(self, name, attrs, text: str) -> None:
        """Open the <w:t> `name` with `attrs` (spaces kept) and write `text` into it."""
        values = dict(attrs.items())
        values[_XML_SPACE] = "preserve"
        self.out.startElementNS(name, None, AttributesNSImpl(values, {}))
        self.out.characters(text)
        self._placed = True

    def characters(self, content: str) -> None:
        if self._drop or (self._in_text and self._text is not None and not self._skip):
            return  # a translated paragraph's old text
        self.out.characters(content)

    def endElementNS(self, name, qname) -> None:  # noqa: N802
        if self._p == self.depth:
            if self._text is not None and not self._placed:  # no <w:t> to hold it
                self._add_run(name[0])
            self._p, self._text = 0, None
        elif self._p:
            local = self._names.pop()
            if self._drop:
                if self._drop == self.depth:
                    self._drop = 0
                self.leave()
                return
            if local == "t":
                self._in_text = False
            if self._skip == self.depth:
                self._skip = 0
        elif self._body == self.depth:
            self._body = 0
        self.out.endElementNS(name, qname)
        self.leave()

    def _add_run(self, uri: str) -> None:
        """A new run at the paragraph's end holding its translation."""
        self.out.startElementNS((uri, "r"), None, AttributesNSImpl({}, {}))
        self._write_text((uri, "t"), AttributesNSImpl({}, {}), self._text)
        self.out.endElementNS((uri, "t"), None)
        self.out.endElementNS((uri, "r"), None)


def _check_unpacked(zf: zipfile.ZipFile, main: zipfile.ZipInfo, source: Path) -> None:
    """Refuse a package whose other parts claim to unpack to more than the input limit
    or `_UNPACKED_RATIO` times the file's size, whichever is more (zipfile never reads
    past a part's declared size, so this bounds what the copy writes)."""
    declared = sum(i.file_size for i in zf.infolist() if i is not main)
    allowed = max(limits.max_input_bytes(), _UNPACKED_RATIO * source.stat().st_size)
    if declared > allowed:
        raise limits.INPUT_MB.error(source, None, f"its parts other than the text unpack to "
                                    f"{declared / limits.MB:,.1f} MB", "re-save it as .docx")


def _copy_part(zin: zipfile.ZipFile, info: zipfile.ZipInfo, zout: zipfile.ZipFile) -> None:
    """Copy one part of the package as it is (name, date, compression, attributes)."""
    out = zipfile.ZipInfo(info.filename, info.date_time)
    out.compress_type = info.compress_type if info.compress_type in (
        zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) else zipfile.ZIP_DEFLATED
    out.external_attr = info.external_attr
    if info.is_dir():
        zout.writestr(out, b"")
        return
    with zin.open(info) as src, zout.open(out, "w", force_zip64=info.file_size > 1 << 31) \
            as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


def write_docx(path: str | Path, source: str | Path, texts: Sequence[str | None]) -> Path:
    """Write `source` (a .docx) to `path` with the text of its k-th paragraph (counted as
    core.formats.docx_text.read_docx_paragraphs counts them, blank ones included)
    replaced by texts[k], or kept where texts[k] is None. A problem with the source is a
    CorpusError naming it (one also when `texts` has not one entry per paragraph).
    Atomic. Returns `path`."""
    source = Path(source)

    def write(f) -> None:
        with zipfile.ZipFile(source) as zin, \
                zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as zout:
            _check_directory(source, zin)
            main = _main_part(zin, source)
            _check_unpacked(zin, main, source)
            for info in zin.infolist():
                if info is main:
                    _rewrite_main(zin, main, zout, source, texts)
                else:
                    _copy_part(zin, info, zout)

    try:
        _check_directory(source)
        return write_atomic(path, write)
    except FileNotFoundError:
        raise CorpusError(source, None, "file not found: open the document again") from None
    except _ZIP_ERRORS as exc:
        raise _damaged(source, f"{type(exc).__name__}: {exc}") from None


def _rewrite_main(zin: zipfile.ZipFile, main: zipfile.ZipInfo, zout: zipfile.ZipFile,
                  source: Path, texts: Sequence[str | None]) -> None:
    """The main part, its paragraphs' text replaced (see _Rewriter), into `zout`."""
    out = zipfile.ZipInfo(main.filename, main.date_time)
    out.compress_type = zipfile.ZIP_DEFLATED
    with zout.open(out, "w", force_zip64=True) as dst:
        text = io.TextIOWrapper(dst, encoding="utf-8", errors="xmlcharrefreplace",
                                newline="\n", write_through=True)
        text.write(_DECLARATION)
        rewriter = _Rewriter(source, text, iter(texts))
        xmlstream.parse(_decompressed(zin, main, source), rewriter, namespaces=True,
                        advice="re-save it as .docx from Word or LibreOffice")
        text.flush()
        text.detach()  # closing the part is zout's job
    if rewriter.paragraphs != len(texts):
        raise CorpusError(source, None, f"has {rewriter.paragraphs:,} paragraphs, not "
                          f"{len(texts):,} as when it was read: open it again and translate")

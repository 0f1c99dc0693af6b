"""The paragraphs of a Word .docx, read as a stream under the input limits.

A .docx is a zip; its main document part (named by `_rels/.rels`, usually
word/document.xml) holds the text. Before anything is decompressed, the zip's directory
(its end record) and the part's declared size are checked against core.limits; the part
is then decompressed chunk by chunk into defusedxml's SAX parser (core.data.xmlstream),
counting the bytes as they come, so neither a header that lies about sizes nor a
2 GiB decompression bomb can hold more than NMT_WB_MAX_INPUT_MB, and a document of
millions of tiny paragraphs stops at NMT_WB_MAX_PARAGRAPHS. Nothing else in the zip is
read.

A paragraph is an outermost <w:p> of the body (also inside tables and content
controls, in document order). Its text is that of its runs' <w:t>, with <w:tab> and
<w:ptab> as a tab, a line break (<w:br> of type textWrapping, <w:cr>) as '\\n' and
<w:noBreakHyphen> as '-'; runs inside hyperlinks, fields, smart tags and tracked
insertions count, deleted text (<w:del>) and text boxes do not.
"""
from __future__ import annotations

import posixpath
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import defusedxml
import defusedxml.ElementTree as DET

from core import limits
from core.data import xmlstream
from core.errors import CorpusError

#: WordprocessingML's namespace: transitional (what Word writes) and strict
W_NS = {"http://schemas.openxmlformats.org/wordprocessingml/2006/main",
        "http://purl.oclc.org/ooxml/wordprocessingml/main"}
_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_SKIPPED = {"txbxContent", "del", "moveFrom"}  # text boxes, deleted and moved-away text
_CHUNK = 1 << 20
_EOCD, _EOCD64, _LOCATOR64 = b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07"
_DIRECTORY_BYTES_PER_ENTRY = 1024  # room a zip directory may take per allowed file

# What zipfile and zlib raise on a damaged or unusual zip.
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError,
               NotImplementedError, RuntimeError, ValueError, struct.error, KeyError)


def _damaged(path: Path, why: str) -> CorpusError:
    return CorpusError(path, None, f"not a readable Word document ({why}): re-save it as "
                       ".docx from Word or LibreOffice")


def _directory_size(path: Path) -> int | None:
    """The size in bytes of the zip's central directory, from its end record (zip64
    too), or None when there is no end record (zipfile then says what is wrong)."""
    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        tail_start = max(0, size - (65535 + 22))
        f.seek(tail_start)
        tail = f.read()
        at = tail.rfind(_EOCD)
        if at < 0 or len(tail) - at < 22:
            return None
        directory = struct.unpack("<I", tail[at + 12:at + 16])[0]
        locator = at - 20
        if directory == 0xFFFFFFFF and locator >= 0 and tail[locator:locator + 4] == _LOCATOR64:
            offset = struct.unpack("<Q", tail[locator + 8:locator + 16])[0]
            f.seek(offset)
            record = f.read(56)
            if len(record) == 56 and record[:4] == _EOCD64:
                directory = struct.unpack("<Q", record[40:48])[0]
        return directory


def _check_directory(path: Path, zf: zipfile.ZipFile | None = None) -> None:
    """Refuse a zip whose directory lists more files than NMT_WB_MAX_ZIP_ENTRIES: before
    opening it (the directory's size, which bounds what zipfile reads into memory) and
    after (the files it lists)."""
    most = limits.ZIP_ENTRIES.value()
    if zf is not None:
        if len(zf.infolist()) > most:
            raise limits.ZIP_ENTRIES.error(path, None, f"it holds {len(zf.infolist()):,} "
                                           "files", "re-save it as .docx")
        return
    directory = _directory_size(path)
    if directory is not None and directory > most * _DIRECTORY_BYTES_PER_ENTRY:
        raise limits.ZIP_ENTRIES.error(
            path, None, f"its zip directory takes {directory / limits.MB:,.1f} MB, room for "
            f"more than {directory // _DIRECTORY_BYTES_PER_ENTRY:,} files", "re-save it as .docx")


def _main_part(zf: zipfile.ZipFile, path: Path) -> zipfile.ZipInfo:
    """The main document part named by the package relationships (`_rels/.rels`)."""
    try:
        info = zf.getinfo("_rels/.rels")
    except KeyError:
        raise _damaged(path, "it has no _rels/.rels") from None
    if info.file_size > limits.MB:
        raise _damaged(path, f"its _rels/.rels unpacks to {info.file_size:,} bytes")
    try:
        root = DET.fromstring(zf.read(info), forbid_dtd=True)
    except (defusedxml.DefusedXmlException, DET.ParseError, LookupError) as exc:
        raise _damaged(path, f"its _rels/.rels is refused: {exc}") from None
    for rel in root.iter(_RELS):
        if (rel.get("Type") or "").endswith("/officeDocument") and rel.get("Target"):
            name = posixpath.normpath(rel.get("Target").lstrip("/"))
            try:
                return zf.getinfo(name)
            except KeyError:
                raise _damaged(path, f"its main part {name!r} is missing") from None
    raise _damaged(path, "its _rels/.rels names no main document part")


def _decompressed(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> Iterator[bytes]:
    """The part's bytes in chunks, refused once more than NMT_WB_MAX_INPUT_MB came out,
    whatever the header said."""
    what = f"its {info.filename}"
    limits.check_input_size(path, info.file_size, f"{what} (unpacked, as its zip header "
                            "says)")
    total, cap = 0, limits.max_input_bytes()
    with zf.open(info) as stream:
        while chunk := stream.read(_CHUNK):
            total += len(chunk)
            if total > cap:
                limits.check_input_size(path, total, f"{what} (unpacked)")
            yield chunk


class _BodyHandler(xmlstream.Handler):
    """Collects the text of the body's outermost paragraphs (see the module doc)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.paragraphs: list[str] = []
        self.max_paragraphs = limits.PARAGRAPHS.value()
        self._body = 0  # depth of the open <w:body>, 0 outside
        self._p = 0  # depth of the open outermost <w:p>, 0 outside
        self._skip = 0  # depth of an open text box / deletion inside it, 0 if none
        self._names: list[str] = []  # local names of the open elements inside the <w:p>
        self._in_text = False
        self._parts: list[str] = []

    def startElementNS(self, name, qname, attrs) -> None:  # noqa: N802 (SAX API name)
        self.enter()
        uri, local = name
        ours = uri in W_NS
        if not self._p:
            if ours and local == "body" and not self._body:
                self._body = self.depth
            elif ours and local == "p" and self._body:
                limits.check_count(limits.PARAGRAPHS, self.path, len(self.paragraphs) + 1,
                                   None, "paragraphs")
                self._p, self._names, self._parts = self.depth, [], []
            return
        parent = self._names[-1] if self._names else "p"
        self._names.append(local if ours else "")
        if self._skip or not ours:
            return
        if local in _SKIPPED:
            self._skip = self.depth
        elif parent == "r":
            if local == "t":
                self._in_text = True
            elif local in ("tab", "ptab"):
                self._parts.append("\t")
            elif local == "cr" or (local == "br" and _br_type(attrs) == "textWrapping"):
                self._parts.append("\n")
            elif local == "noBreakHyphen":
                self._parts.append("-")

    def characters(self, content: str) -> None:
        if self._in_text and not self._skip:
            self._parts.append(content)

    def endElementNS(self, name, qname) -> None:  # noqa: N802
        if self._p == self.depth:
            text = "".join(self._parts)
            limits.check_length(self.path, None, len(text),
                                f"paragraph {len(self.paragraphs) + 1}")
            self.paragraphs.append(text)
            self._p, self._parts = 0, []
        elif self._p:
            if self._names.pop() == "t":
                self._in_text = False
            if self._skip == self.depth:
                self._skip = 0
        elif self._body == self.depth:
            self._body = 0
        self.leave()


def _br_type(attrs) -> str:
    for (uri, local), value in attrs.items():
        if local == "type" and uri in W_NS:
            return value
    return "textWrapping"


def read_docx_paragraphs(path: str | Path) -> list[str]:
    """The text of every paragraph of the .docx at `path`, empty ones included, in
    document order. Any problem, a limit crossed included, is a CorpusError naming the
    file."""
    path = Path(path)
    try:
        _check_directory(path)
        with zipfile.ZipFile(path) as zf:
            _check_directory(path, zf)
            part = _main_part(zf, path)
            handler = _BodyHandler(path)
            xmlstream.parse(_decompressed(zf, part, path), handler, namespaces=True,
                            advice="re-save it as .docx from Word or LibreOffice")
            return handler.paragraphs
    except FileNotFoundError:
        raise CorpusError(path, None, "file not found: check the path") from None
    except IsADirectoryError:
        raise CorpusError(path, None, "is a folder, not a file; choose the document") from None
    except _ZIP_ERRORS as exc:
        raise _damaged(path, f"{type(exc).__name__}: {exc}") from None
    except OSError as exc:
        raise CorpusError(path, None, f"cannot be read ({exc.strerror or exc}); check "
                          "permissions") from None


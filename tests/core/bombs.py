"""Real decompression bombs for the input-limit tests, built in a fraction of a second.

A .docx whose word/document.xml unpacks to gigabytes cannot be written by compressing
gigabytes in a test. Deflate allows a shortcut: after a full flush the compressor
forgets what came before, so the compressed bytes of one chunk of repeated paragraphs
are the same every time; the part's stream is head + chunk x N + tail, with the CRC-32
of the whole (computed chunk by chunk, no gigabyte is ever held). The zip around it is
written by hand from the format's specification (APPNOTE.TXT: local headers, central
directory, end record), so a test can also make a header lie about a size.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
DOC_HEAD = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            f'<w:document xmlns:w="{W}"><w:body>').encode()
DOC_TAIL = b"</w:body></w:document>"
RELS = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships '
        b'xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship '
        b'Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
        b'officeDocument" Target="word/document.xml"/></Relationships>')
CONTENT_TYPES = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns='
                 b'"http://schemas.openxmlformats.org/package/2006/content-types"><Default '
                 b'Extension="rels" ContentType="application/vnd.openxmlformats-package.'
                 b'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
                 b'<Override PartName="/word/document.xml" ContentType="application/vnd.'
                 b'openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')


@dataclass
class Entry:
    name: str
    deflated: bytes  # raw deflate stream
    crc: int
    size: int  # the true uncompressed size
    declared: int | None = None  # the size the headers claim (default: the true one)


def deflate(data: bytes) -> Entry:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return Entry("", c.compress(data) + c.flush(), zlib.crc32(data), len(data))


def repeated(head: bytes, chunk: bytes, count: int, tail: bytes) -> Entry:
    """head + chunk * count + tail, deflated without ever building it."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(head) + c.flush(zlib.Z_FULL_FLUSH)
    body = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    assert body == again  # a full flush forgets the past: every chunk compresses alike
    last = c.compress(tail) + c.flush(zlib.Z_FINISH)
    crc = zlib.crc32(head)
    for _ in range(count):
        crc = zlib.crc32(chunk, crc)
    crc = zlib.crc32(tail, crc)
    return Entry("", first + body * count + last, crc,
                 len(head) + len(chunk) * count + len(tail))


def write_zip(path: Path, entries: list[Entry]) -> Path:
    """A zip of deflated entries (no zip64: every size under 4 GiB)."""
    out, directory = bytearray(), bytearray()
    for e in entries:
        name = e.name.encode()
        size = e.size if e.declared is None else e.declared
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, e.crc,
                           len(e.deflated), size, len(name), 0) + name + e.deflated
        directory += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21,
                                 e.crc, len(e.deflated), size, len(name), 0, 0, 0, 0, 0,
                                 offset) + name
    out += directory + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries),
                                   len(directory), len(out), 0)
    path.write_bytes(bytes(out))
    return path


def docx(path: Path, document: Entry) -> Path:
    """A .docx: content types, package relationships and `document` as word/document.xml."""
    parts = [deflate(CONTENT_TYPES), deflate(RELS), document]
    for part, name in zip(parts, ("[Content_Types].xml", "_rels/.rels", "word/document.xml"),
                          strict=True):
        part.name = name
    return write_zip(path, parts)


def paragraphs_docx(path: Path, paragraphs: int, text: str = "a") -> Path:
    """`paragraphs` one-run paragraphs of `text` (3 million of 'a' zip to ~200 KB)."""
    per_chunk = 10_000
    assert paragraphs % per_chunk == 0
    p = f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>".encode()
    return docx(path, repeated(DOC_HEAD, p * per_chunk, paragraphs // per_chunk, DOC_TAIL))


def big_part_docx(path: Path, mib: int, declared: int | None = None) -> Path:
    """A document part of about `mib` MiB of paragraphs of repeated words; `declared`
    makes the zip headers claim another uncompressed size."""
    words = b"<w:p><w:r><w:t>" + b"lorem ipsum dolor sit amet " * 36 + b"</w:t></w:r></w:p>"
    chunk = words * ((1 << 20) // len(words))
    entry = repeated(DOC_HEAD, chunk, mib * (1 << 20) // len(chunk), DOC_TAIL)
    entry.declared = declared
    return docx(path, entry)

"""XML for the translation exports: the xml:lang attribute's name and the bytes of a
tree to write. Reading untrusted XML (TMX, XLIFF, .docx) streams through
core.data.xmlstream (defusedxml's SAX parser, limits, errors with lines)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

XML_NS = "{http://www.w3.org/XML/1998/namespace}"


def to_bytes(root: ET.Element) -> bytes:
    """The element tree as indented UTF-8 XML with a declaration and a final newline
    (indents `root` in place)."""
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"

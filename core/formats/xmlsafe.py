"""Parsing untrusted XML (TMX, XLIFF) with defusedxml, errors as CorpusError."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import defusedxml.ElementTree as DET
from defusedxml import DefusedXmlException

from core.errors import CorpusError

XML_NS = "{http://www.w3.org/XML/1998/namespace}"


def parse_xml(path: str | Path) -> ET.Element:
    """The root element of `path`; entity declarations, external references and
    malformed XML raise CorpusError (with the line when the parser knows it)."""
    try:
        # forbid_dtd: TMX/XLIFF need no DTD, and a DTD is where entity bombs live.
        return DET.parse(str(path), forbid_dtd=True).getroot()
    except FileNotFoundError:
        raise CorpusError(path, None, "file not found: check the path") from None
    except DefusedXmlException as e:
        raise CorpusError(path, None, f"refused unsafe XML ({type(e).__name__}): the file "
                          "declares a DTD or entities; remove them") from None
    except ET.ParseError as e:
        line = e.position[0] if getattr(e, "position", None) else None
        raise CorpusError(path, line, f"not well-formed XML ({e}): fix or re-export the "
                          "file") from None


# Inline elements whose content is markup of the original document (e.g. '<b>'), not
# words to translate: TMX <bpt> <ept> <ph> <it> <ut>, XLIFF 1.2 <bpt> <ept> <ph> <it> <x/>.
_CODE_ELEMENTS = {"bpt", "ept", "ph", "it", "ut", "x", "bx", "ex"}


def element_text(el: ET.Element) -> str:
    """The words inside an element: text of nested markup such as <hi> or <g> kept,
    content of formatting-code elements (<ph>, <bpt>, ...) left out. Iterative, so
    markup nested thousands deep is no RecursionError."""
    parts: list[str] = []
    stack: list[ET.Element | str] = [el]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        parts.append(item.text or "")
        todo: list[ET.Element | str] = []
        for child in item:
            if child.tag.rsplit("}", 1)[-1] not in _CODE_ELEMENTS:
                todo.append(child)
            todo.append(child.tail or "")
        stack.extend(reversed(todo))
    return "".join(parts)


def to_bytes(root: ET.Element) -> bytes:
    """The element tree as indented UTF-8 XML with a declaration and a final newline
    (indents `root` in place)."""
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"

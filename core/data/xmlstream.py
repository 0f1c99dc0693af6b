"""Streaming XML for the readers of untrusted files (TMX, XLIFF, the text of a .docx).

defusedxml's SAX parser is fed the bytes in chunks, so memory holds what a reader's
handler keeps (the segments' text), never a tree of the whole file. Entity declarations
(billion-laughs bombs, external entities) are refused; so is a DTD where the format
needs none. Elements nested deeper than core.limits.XML_DEPTH are refused (the parser's
stack of open elements is memory too). Every problem becomes a CorpusError with the
parser's line.
"""
from __future__ import annotations

import xml.sax
from collections.abc import Iterable
from pathlib import Path
from xml.sax.expatreader import ExpatLocator

import defusedxml
from defusedxml.expatreader import DefusedExpatParser

from core import limits
from core.errors import CorpusError


class _SkippedEntity(Exception):
    pass


class Handler(xml.sax.ContentHandler):
    """Base of the readers' SAX handlers: knows the file, the current line and the
    nesting depth. Subclasses call `enter()` first in startElement(NS) and `leave()` last
    in endElement(NS)."""

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = Path(path)
        self.locator: xml.sax.xmlreader.Locator | None = None
        self.depth = 0

    def setDocumentLocator(self, locator) -> None:  # noqa: N802 (SAX API name)
        """Keep the parser's locator: errors name the line it is at."""
        self.locator = locator

    def line(self) -> int | None:
        """The 1-based line the parser is at, or None when it does not know."""
        line = self.locator.getLineNumber() if self.locator is not None else None
        return line if line and line > 0 else None

    def enter(self) -> None:
        """One element deeper; CorpusError past the nesting limit (limits.XML_DEPTH)."""
        self.depth += 1
        if self.depth > limits.XML_DEPTH:
            raise CorpusError(self.path, self.line(),
                              f"elements nested more than {limits.XML_DEPTH:,} deep; no "
                              "real document needs that: fix or export the file again")

    def leave(self) -> None:
        """One element shallower."""
        self.depth -= 1

    def skippedEntity(self, name: str) -> None:  # noqa: N802
        """An entity defined only in an external DTD (never loaded): refused."""
        raise _SkippedEntity(name)


def parse(chunks: Iterable[bytes], handler: Handler, *, namespaces: bool = False,
          forbid_dtd: bool = True, advice: str = "fix the file or export it again") -> None:
    """Feed `chunks` (the file's bytes in order) to `handler`. With `forbid_dtd` False a
    DOCTYPE naming an external DTD is accepted (TMX exports carry one), but the DTD is
    never fetched and an entity only it could define is an error. `advice` ends the
    message of malformed XML."""
    path = handler.path
    parser = DefusedExpatParser(namespaceHandling=int(namespaces), forbid_dtd=forbid_dtd,
                                forbid_entities=True, forbid_external=forbid_dtd)
    parser.setContentHandler(handler)
    handler.setDocumentLocator(ExpatLocator(parser))  # parse() would; feed() does not
    try:
        for chunk in chunks:
            parser.feed(chunk)
        parser.close()
    except xml.sax.SAXParseException as exc:
        line = exc.getLineNumber()
        raise CorpusError(path, line if line and line > 0 else None,
                          f"malformed XML ({exc.getMessage()}); {advice}") from None
    except defusedxml.DTDForbidden:
        raise CorpusError(path, handler.line(), "refused unsafe XML (DTDForbidden): the file "
                          "declares a DTD or entities; remove them") from None
    except defusedxml.EntitiesForbidden as exc:
        if exc.sysid or exc.pubid:
            reason = (f"declares the external entity {exc.name!r} ({exc.sysid or exc.pubid}), "
                      "which is refused for safety (it could read local files or the network)")
        else:
            reason = (f"declares the XML entity {exc.name!r}; entities are refused (they can "
                      "expand into a 'billion laughs' memory bomb)")
        raise CorpusError(path, handler.line(),
                          reason + "; remove the <!ENTITY> declarations") from None
    except _SkippedEntity as exc:
        raise CorpusError(path, handler.line(),
                          f"uses the entity &{exc};, defined only in an external DTD, which "
                          "is never loaded; replace it with the character it stands for",
                          ) from None
    except (xml.sax.SAXException, defusedxml.DefusedXmlException, LookupError,
            UnicodeError) as exc:
        raise CorpusError(path, handler.line(),
                          f"cannot be parsed as XML ({exc}); {advice}") from None

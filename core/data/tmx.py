"""TMX (1.4, and 1.1's `lang` attribute) reader over defusedxml's SAX parser.

Entity declarations (billion-laughs bombs, external entities) are refused by
defusedxml; a DOCTYPE naming an external DTD (common in TMX exports) is accepted but the
DTD is never fetched, and an entity only that DTD could define is an error; we turn that, and any malformed XML, into a CorpusError with the parser's
line. A <seg>'s text includes the text of <hi> (highlighted words) but not of the
formatting-code elements <bpt>, <ept>, <ph>, <it>, <ut>, whose content is markup of the
original document (e.g. '<b>'), not words to translate.
"""
from __future__ import annotations

import xml.sax
from dataclasses import dataclass, field
from pathlib import Path

import defusedxml
import defusedxml.sax

from core.data.corpus import Corpus, SentencePair
from core.data.textio import read_bytes
from core.errors import CorpusError

_CODE_ELEMENTS = {"bpt", "ept", "ph", "it", "ut"}


def _norm_lang(lang: str) -> str:
    return lang.strip().lower().replace("_", "-")


def lang_matches(wanted: str, found: str) -> int:
    """2 for the same language tag (case-insensitive), 1 when one is a region variant
    of the other ('es' vs 'es-ES'), 0 otherwise."""
    w, f = _norm_lang(wanted), _norm_lang(found)
    if w == f:
        return 2
    if f.startswith(w + "-") or w.startswith(f + "-"):
        return 1
    return 0


class _SkippedEntity(Exception):
    pass


@dataclass
class TmxUnit:
    """One <tu>: its line in the file, its tuid ('' if none) and its (language, text)
    variants in file order, the text exactly as in the <seg> (code elements left out)."""

    line: int
    tuid: str
    tuvs: list[tuple[str, str]] = field(default_factory=list)

    def pick(self, wanted: str) -> str | None:
        """The text of the best-matching language (lang_matches), or None."""
        best, best_score = None, 0
        for lang, text in self.tuvs:
            score = lang_matches(wanted, lang)
            if score > best_score:
                best, best_score = text, score
        return best


class _TmxHandler(xml.sax.ContentHandler):
    def __init__(self) -> None:
        super().__init__()
        self.locator: xml.sax.xmlreader.Locator | None = None
        self.units: list[TmxUnit] = []
        self.langs_seen: set[str] = set()
        self.header_srclang = ""
        self._unit: TmxUnit | None = None
        self._lang: str | None = None
        self._seg: list[str] | None = None
        self._code_depth = 0

    def setDocumentLocator(self, locator) -> None:  # noqa: N802 (SAX API name)
        self.locator = locator

    def line(self) -> int | None:
        return self.locator.getLineNumber() if self.locator is not None else None

    def startElement(self, name: str, attrs) -> None:  # noqa: N802
        tag = name.lower()
        if tag == "tu":
            self._unit = TmxUnit(self.line() or 0, attrs.get("tuid") or "")
        elif tag == "header":
            self.header_srclang = attrs.get("srclang") or ""
        elif tag == "tuv":
            self._lang = attrs.get("xml:lang") or attrs.get("lang")
        elif tag == "seg":
            self._seg, self._code_depth = [], 0
        elif self._seg is not None and tag in _CODE_ELEMENTS:
            self._code_depth += 1

    def skippedEntity(self, name: str) -> None:  # noqa: N802
        # an entity defined only in an external DTD, which is never loaded
        raise _SkippedEntity(name)

    def characters(self, content: str) -> None:
        if self._seg is not None and self._code_depth == 0:
            self._seg.append(content)

    def endElement(self, name: str) -> None:  # noqa: N802
        tag = name.lower()
        if tag == "seg" and self._seg is not None:
            if self._lang is not None and self._unit is not None:
                self._unit.tuvs.append((self._lang, "".join(self._seg)))
                self.langs_seen.add(self._lang)
            self._seg = None
        elif self._seg is not None and tag in _CODE_ELEMENTS:
            self._code_depth -= 1
        elif tag == "tuv":
            self._lang = None
        elif tag == "tu" and self._unit is not None:
            self.units.append(self._unit)
            self._unit = None


def read_tmx_units(path: str | Path) -> tuple[list[TmxUnit], str, set[str]]:
    """Every translation unit of a TMX file -> (units, the header's srclang, languages
    seen). The one TMX parser: corpus import (read_tmx) and translation records
    (core.formats.tmx) both read through it. Any problem is a CorpusError with the line."""
    path = Path(path)
    data = read_bytes(path)
    handler = _TmxHandler()
    try:
        defusedxml.sax.parseString(
            data, handler, forbid_dtd=False, forbid_entities=True, forbid_external=False
        )
    except xml.sax.SAXParseException as exc:
        raise CorpusError(
            path, exc.getLineNumber(),
            f"malformed XML ({exc.getMessage()}); fix the file or export the TMX again",
        ) from None
    except defusedxml.EntitiesForbidden as exc:
        if exc.sysid or exc.pubid:
            reason = (f"declares the external entity {exc.name!r} ({exc.sysid or exc.pubid}), "
                      "which is refused for safety (it could read local files or the network)")
        else:
            reason = (f"declares the XML entity {exc.name!r}; entities are refused (they can "
                      "expand into a 'billion laughs' memory bomb)")
        raise CorpusError(path, handler.line(), reason + "; remove the <!ENTITY> declarations") from None
    except _SkippedEntity as exc:
        raise CorpusError(
            path, handler.line(),
            f"uses the entity &{exc};, defined only in an external DTD, which is never "
            "loaded; replace it with the character it stands for",
        ) from None
    except (xml.sax.SAXException, defusedxml.DefusedXmlException, LookupError, UnicodeError) as exc:
        raise CorpusError(path, handler.line(), f"cannot be parsed as XML ({exc}); check the file") from None
    return handler.units, handler.header_srclang, handler.langs_seen


def read_tmx(path: str | Path, src_lang: str, tgt_lang: str, name: str | None = None) -> Corpus:
    """Translation units holding both languages become pairs (line = the <tu>'s line);
    units lacking one are skipped and counted in the corpus warnings."""
    path = Path(path)
    units, _, langs_seen = read_tmx_units(path)
    pairs: list[SentencePair] = []
    missing = empty = 0
    for unit in units:
        src, tgt = unit.pick(src_lang), unit.pick(tgt_lang)
        if src is None or tgt is None:
            missing += 1
            continue
        # newlines and indentation of pretty-printed XML are layout, not sentence content
        src, tgt = " ".join(src.split()), " ".join(tgt.split())
        if not src.strip() or not tgt.strip():
            empty += 1
        pairs.append(SentencePair(src, tgt, None, unit.line))
    warnings: list[str] = []
    if not pairs:
        seen = ", ".join(sorted(langs_seen)) or "none"
        raise CorpusError(
            path, None,
            f"no translation unit holds both {src_lang!r} and {tgt_lang!r} "
            f"({len(units)} units; languages found: {seen}); check the language codes",
        )
    if missing:
        warnings.append(
            f"{path}: skipped {missing} of {len(units)} translation units "
            f"lacking {src_lang!r} or {tgt_lang!r}"
        )
    if empty:
        warnings.append(f"{path}: kept {empty} pair(s) with an empty segment")
    return Corpus(pairs, src_lang, tgt_lang, name=name or path.stem, warnings=warnings)

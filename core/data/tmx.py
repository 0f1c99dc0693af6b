"""TMX (1.4, and 1.1's `lang` attribute) reader over defusedxml's SAX parser, streamed
(core.data.xmlstream).

Entity declarations (billion-laughs bombs, external entities) are refused by
defusedxml; a DOCTYPE naming an external DTD (common in TMX exports) is accepted but the
DTD is never fetched, and an entity only that DTD could define is an error; that, and
any malformed XML, is a CorpusError with the parser's line. A <seg>'s text includes the
text of <hi> (highlighted words) but not of the formatting-code elements <bpt>, <ept>,
<ph>, <it>, <ut>, whose content is markup of the original document (e.g. '<b>'), not
words to translate. The input limits hold (core.limits): the file's size, the number of
<tu> (NMT_WB_MAX_LINES) and the length of a segment (NMT_WB_MAX_LINE_CHARS).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core import limits
from core.data import xmlstream
from core.data.corpus import Corpus, SentencePair
from core.data.textio import input_chunks
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


@dataclass(slots=True)
class TmxUnit:
    """One <tu>: its line in the file, its tuid ('' if none) and its (language, text)
    variants in file order, the text exactly as in the <seg> (code elements left out).
    Small on purpose (slots, a tuple, language names shared): a TMX file may hold
    a million of them."""

    line: int
    tuid: str
    tuvs: tuple[tuple[str, str], ...] = ()

    def pick(self, wanted: str) -> str | None:
        """The text of the best-matching language (lang_matches), or None."""
        best, best_score = None, 0
        for lang, text in self.tuvs:
            score = lang_matches(wanted, lang)
            if score > best_score:
                best, best_score = text, score
        return best


class _TmxHandler(xmlstream.Handler):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.units: list[TmxUnit] = []
        self.langs_seen: set[str] = set()
        self.header_srclang = ""
        self.header_props: list[tuple[str, str]] = []  # the header's <prop>s: (type, text)
        self._in_header = False
        self._prop: tuple[str, list[str]] | None = None
        self.max_units = limits.LINES.value()
        self._unit: TmxUnit | None = None
        self._tuvs: list[tuple[str, str]] = []
        self._langs: dict[str, str] = {}  # one string object per language
        self._lang: str | None = None
        self._seg: list[str] | None = None
        self._seg_line: int | None = None
        self._code_depth = 0

    def startElement(self, name: str, attrs) -> None:  # noqa: N802 (SAX API name)
        self.enter()
        tag = name.lower()
        if tag == "tu":
            self._unit, self._tuvs = TmxUnit(self.line() or 0, attrs.get("tuid") or ""), []
        elif tag == "header":
            self.header_srclang = attrs.get("srclang") or ""
            self._in_header = True
        elif tag == "prop" and self._in_header:
            self._prop = (attrs.get("type") or "", [])
        elif tag == "tuv":
            lang = attrs.get("xml:lang") or attrs.get("lang")
            self._lang = None if lang is None else self._langs.setdefault(lang, lang)
        elif tag == "seg":
            self._seg, self._seg_line, self._code_depth = [], self.line(), 0
        elif self._seg is not None and tag in _CODE_ELEMENTS:
            self._code_depth += 1

    def characters(self, content: str) -> None:
        if self._seg is not None and self._code_depth == 0:
            self._seg.append(content)
        elif self._prop is not None:
            self._prop[1].append(content)

    def endElement(self, name: str) -> None:  # noqa: N802
        tag = name.lower()
        if tag == "seg" and self._seg is not None:
            text = "".join(self._seg)
            limits.check_length(self.path, self._seg_line, len(text), "this segment")
            if self._lang is not None and self._unit is not None:
                self._tuvs.append((self._lang, text))
                self.langs_seen.add(self._lang)
            self._seg = None
        elif self._seg is not None and tag in _CODE_ELEMENTS:
            self._code_depth -= 1
        elif tag == "tuv":
            self._lang = None
        elif tag == "prop" and self._prop is not None:
            self.header_props.append((self._prop[0], "".join(self._prop[1])))
            self._prop = None
        elif tag == "header":
            self._in_header = False
        elif tag == "tu" and self._unit is not None:
            limits.check_count(limits.LINES, self.path, len(self.units) + 1, self._unit.line,
                               "translation units")
            self._unit.tuvs = tuple(self._tuvs)
            self.units.append(self._unit)
            self._unit = None
        self.leave()


@dataclass
class TmxFile:
    """What a TMX file holds: its units, the header's srclang and (type, text) <prop>s,
    and the languages seen."""

    units: list[TmxUnit]
    srclang: str
    props: list[tuple[str, str]]
    langs_seen: set[str]


def parse_tmx(path: str | Path) -> TmxFile:
    """The one TMX parser: corpus import (read_tmx) and translation records
    (core.formats.tmx_records) both read through it. Any problem is a CorpusError with the line."""
    path = Path(path)
    handler = _TmxHandler(path)
    xmlstream.parse(input_chunks(path), handler, forbid_dtd=False,
                    advice="fix the file or export the TMX again")
    return TmxFile(handler.units, handler.header_srclang, handler.header_props,
                   handler.langs_seen)


def read_tmx_units(path: str | Path) -> tuple[list[TmxUnit], str, set[str]]:
    """Every translation unit of a TMX file -> (units, the header's srclang, languages
    seen): parse_tmx's."""
    found = parse_tmx(path)
    return found.units, found.srclang, found.langs_seen


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

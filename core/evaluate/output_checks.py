"""Warnings where a translation may invent or drop content, sentence by sentence: a
number of the source missing from the output (or one the output made up), a name
(a capitalised word inside the sentence) missing where the output's language keeps
names as they are, and an output much shorter or longer than the source.

Plain rules on the text as shown, no model: a warning asks a reader to look, it is no
verdict. The Translate screen marks the rows (a tinted target and a tooltip), and
`translate --warnings` prints them to stderr.

    checks = check_translations(sources, targets, "es", "en")   # per sentence, a list
    [w.text for w in checks[3]]  ->  ["the number 1990 of the source is not in the output"]
"""
from __future__ import annotations

import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

#: an output shorter than this share of the source's characters, or longer than
#: LONG times, after the language pair's typical ratio, is flagged
SHORT, LONG = 0.5, 2.0
#: an output within this many characters of its usual length is never flagged (a
#: 3-character "Sí." may well become "Yes, of course it is."); the usual length is
#: also measured on sources of at least this many characters
MIN_CHARS = 20
#: sentences needed to measure the typical ratio on the translations themselves
MEASURED_FROM = 10
#: characters of the language per character of English, roughly: languages written in
#: logographs or syllabaries take far fewer (others, 1.0, are within the margins)
CHARS_PER_ENGLISH = {"zh": 0.3, "ja": 0.4, "ko": 0.45, "yue": 0.3}
#: languages written in the Latin script, whose outputs keep a Latin name as it is
LATIN = frozenset(
    "af ca cs cy da de en eo es et eu fi fr ga gl hr hu id is it la lt lv ms mt nl no nb nn "
    "pl pt ro sk sl sq sv sw tl tr vi".split())
#: source languages that capitalise nouns, not only names: no name check
NOUNS_CAPITALISED = frozenset({"de", "lb"})

_NUMBER = re.compile(r"\d+(?:[.,\u00a0\u202f' ]\d+)*")
_WORD = re.compile(r"\w[\w'’-]*")
_SENTENCE_END = re.compile(r"[.!?…:;]\W*$")


@dataclass(frozen=True)
class OutputWarning:
    """One warning about one translation: `kind` ('number', 'invented number',
    'name', 'short', 'long', 'empty') and `text`, one line saying why."""

    kind: str
    text: str


def numbers(text: str) -> Counter[str]:
    """The numbers of `text` as their digits ('1,000' and '1 000' both '1000'), counted."""
    return Counter(re.sub(r"\D", "", m.group()) for m in _NUMBER.finditer(text))


def _base(language: str) -> str:
    return language.lower().replace("_", "-").split("-")[0]


def _fold(text: str) -> str:
    """Case and accents left out: 'Málaga' and 'malaga' are the same word here."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold())
                   if not unicodedata.combining(c))


def names(text: str, language: str) -> list[str]:
    """The words of `text` that look like names: capitalised, two letters or more, not
    the sentence's first word nor the first after a sentence end; none for a language
    that capitalises its nouns (German) or a single capital ('I')."""
    if _base(language) in NOUNS_CAPITALISED:
        return []
    found = []
    for match in _WORD.finditer(text):
        word = match.group()
        before = text[:match.start()]
        starts = not re.search(r"\w", before) or _SENTENCE_END.search(before) is not None
        if not starts and word[0].isupper() and len(word) > 1 and not word.isdigit():
            found.append(word)
    return found


def keeps_names(src_lang: str, tgt_lang: str) -> bool:
    """Whether an output in `tgt_lang` would normally keep a name of the `src_lang`
    source as it is: both languages written in the Latin script, or the same language."""
    src, tgt = _base(src_lang), _base(tgt_lang)
    return src == tgt or (src in LATIN and tgt in LATIN)


def _kept(name: str, target: str) -> bool:
    """Whether `name` (or a form of it: its last three letters may change, but never its
    first four: 'Londres' -> 'London', 'Warszawa' -> 'Warszawy') is in `target`."""
    stem = _fold(name)
    stem = stem[:max(4, len(stem) - 3)]
    return any(_fold(word).startswith(stem) for word in _WORD.findall(target))


def typical_ratio(sources: Sequence[str], targets: Sequence[str], src_lang: str = "",
                  tgt_lang: str = "") -> float:
    """The output's characters per source character one expects: measured (the median
    over the sentences of MIN_CHARS or more) when there are MEASURED_FROM such
    sentences, else the languages' CHARS_PER_ENGLISH ratio."""
    ratios = [len(t) / len(s) for s, t in zip(sources, targets, strict=True)
              if len(s.strip()) >= MIN_CHARS and t.strip()]
    if len(ratios) >= MEASURED_FROM:
        return statistics.median(ratios)
    return (CHARS_PER_ENGLISH.get(_base(tgt_lang), 1.0)
            / CHARS_PER_ENGLISH.get(_base(src_lang), 1.0))


def check_translation(source: str, target: str, src_lang: str, tgt_lang: str,
                      ratio: float = 1.0) -> list[OutputWarning]:
    """The warnings about `target` as the translation of `source`; `ratio`: the
    output's typical characters per source character (typical_ratio)."""
    if not source.strip():
        return []
    if not target.strip():
        return [OutputWarning("empty", "the output is empty")]
    out = []
    have, given = numbers(target), numbers(source)
    for number in sorted((given - have).elements()):
        out.append(OutputWarning("number", f"the number {number} of the source is not in "
                                 "the output"))
    for number in sorted((have - given).elements()):
        out.append(OutputWarning("invented number", f"the number {number} of the output is "
                                 "not in the source"))
    if keeps_names(src_lang, tgt_lang):
        for name in dict.fromkeys(names(source, src_lang)):
            if not _kept(name, target):
                out.append(OutputWarning("name", f"the name {name!r} of the source is not "
                                         "in the output"))
    out += _length(source, target, ratio)
    return out


def _length(source: str, target: str, ratio: float) -> list[OutputWarning]:
    """A 'short' or 'long' warning when len(target) / len(source) / ratio is outside
    [SHORT, LONG] and the output is MIN_CHARS characters or more off its usual length."""
    s, t = len(source.strip()), len(target.strip())
    if abs(t - s * ratio) < MIN_CHARS:
        return []
    relative = t / s / ratio
    if relative < SHORT:
        return [OutputWarning("short", f"the output is short: {t} characters for the "
                              f"source's {s} ({relative:.2f} of the usual length); content "
                              "may be missing")]
    if relative > LONG:
        return [OutputWarning("long", f"the output is long: {t} characters for the source's "
                              f"{s} ({relative:.2f} times the usual length); it may repeat "
                              "or add content")]
    return []


def check_translations(sources: Sequence[str], targets: Sequence[str], src_lang: str,
                       tgt_lang: str) -> list[list[OutputWarning]]:
    """check_translation of every (source, target), with the typical ratio measured on
    these translations (typical_ratio)."""
    ratio = typical_ratio(sources, targets, src_lang, tgt_lang)
    return [check_translation(s, t, src_lang, tgt_lang, ratio)
            for s, t in zip(sources, targets, strict=True)]


def warning_lines(checks: Sequence[Sequence[OutputWarning]], name: str = "<input>",
                  unit: str = "line") -> list[str]:
    """One line per warning, naming `name` and the sentence's `unit` number (1-based):
    'in.txt, line 3: the number 1990 of the source is not in the output'."""
    return [f"{name}, {unit} {i}: {w.text}" for i, found in enumerate(checks, start=1)
            for w in found]

"""Which column of a tab-separated file holds which language: the guess both import
fronts (`corpus import --format tsv`, the Import dialog) make before reading.

The identifier is py3langid's naive Bayes model over byte n-grams (97 languages, its
model inside the package; loaded once, on first use, ~1-2 s). For each sampled line it
compares the two assignments: column 0 = source and column 1 = target, or swapped,
by the model's scores for the two chosen languages on each cell; each line votes for
the assignment that scores higher. The share of lines agreeing with the majority is
the confidence. Each column's sample is also identified as a whole, among all the
model's languages, to catch a file that holds neither language or one language twice.

The guess is *unsure* (the caller keeps its default and warns) when the languages are
the same or unknown to the model, too few lines carry text, the vote is close, or the
columns' own languages contradict the vote.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ColumnGuess", "guess_columns", "guess_tsv_columns", "language_name",
           "model_code", "sample_tsv_columns"]

SAMPLE_LINES = 200   # lines the guess reads (the first ones with two non-empty columns)
SCAN_LIMIT = 5000    # lines looked at to find them
SCAN_CHARS = 1_000_000  # characters read at most (a huge file or line costs no more)
CELL_CHARS = 1000    # characters of a cell that are scored
MIN_LINES = 10       # fewer voting lines than this: unsure
MIN_SHARE = 0.8      # a smaller share of lines agreeing with the majority: unsure

#: ISO 639-2/3 codes (Tatoeba's) and aliases -> the identifier's ISO 639-1 codes
THREE_LETTER = {
    "afr": "af", "ara": "ar", "bel": "be", "ben": "bn", "bul": "bg", "cat": "ca",
    "ces": "cs", "cze": "cs", "cym": "cy", "wel": "cy", "dan": "da", "deu": "de",
    "ger": "de", "ell": "el", "gre": "el", "eng": "en", "epo": "eo", "est": "et",
    "eus": "eu", "baq": "eu", "fas": "fa", "per": "fa", "fin": "fi", "fra": "fr",
    "fre": "fr", "gle": "ga", "glg": "gl", "heb": "he", "hin": "hi", "hrv": "hr",
    "hun": "hu", "hye": "hy", "arm": "hy", "ind": "id", "isl": "is", "ice": "is",
    "ita": "it", "jpn": "ja", "kat": "ka", "geo": "ka", "kor": "ko", "lat": "la",
    "lit": "lt", "lav": "lv", "mkd": "mk", "mac": "mk", "msa": "ms", "may": "ms",
    "nld": "nl", "dut": "nl", "nor": "no", "nob": "no", "nb": "no", "pol": "pl",
    "por": "pt", "ron": "ro", "rum": "ro", "rus": "ru", "slk": "sk", "slo": "sk",
    "slv": "sl", "spa": "es", "sqi": "sq", "alb": "sq", "srp": "sr", "swe": "sv",
    "swa": "sw", "tha": "th", "tur": "tr", "ukr": "uk", "urd": "ur", "vie": "vi",
    "zho": "zh", "chi": "zh", "cmn": "zh",
}

#: English names shown beside the codes (others are shown as their code)
NAMES = {
    "af": "Afrikaans", "ar": "Arabic", "bg": "Bulgarian", "ca": "Catalan", "cs": "Czech",
    "cy": "Welsh", "da": "Danish", "de": "German", "el": "Greek", "en": "English",
    "eo": "Esperanto", "es": "Spanish", "et": "Estonian", "eu": "Basque", "fa": "Persian",
    "fi": "Finnish", "fr": "French", "ga": "Irish", "gl": "Galician", "he": "Hebrew",
    "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian",
    "is": "Icelandic", "it": "Italian", "ja": "Japanese", "ko": "Korean", "la": "Latin",
    "lt": "Lithuanian", "lv": "Latvian", "nl": "Dutch", "no": "Norwegian", "pl": "Polish",
    "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak",
    "sl": "Slovenian", "sr": "Serbian", "sv": "Swedish", "sw": "Swahili", "th": "Thai",
    "tr": "Turkish", "uk": "Ukrainian", "vi": "Vietnamese", "zh": "Chinese",
    "zxx": "no language",
}


def model_code(code: str) -> str:
    """The identifier's code for a user's language code: lowercased, region or script
    dropped ('en-US', 'zh_Hans' -> 'en', 'zh'), three-letter codes mapped ('spa' -> 'es')."""
    base = code.strip().lower().replace("_", "-").split("-")[0]
    return THREE_LETTER.get(base, base)


def language_name(code: str) -> str:
    """'Spanish (es)' for a known language, else the code itself."""
    name = NAMES.get(model_code(code))
    return f"{name} ({code})" if name else code


@functools.lru_cache(maxsize=1)
def _identifier():
    """py3langid's identifier over all its languages, raw (log) scores; loaded once."""
    # lazy: a top-level import would load py3langid
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE)


def known_languages() -> frozenset[str]:
    """The codes the identifier can tell apart."""
    return frozenset(_identifier().labels)


@dataclass(frozen=True)
class ColumnGuess:
    """Which 0-based columns hold the source and target language.

    `src_col`, `tgt_col`: the guessed order (the caller's default when unsure);
    `sure`: whether the caller may use it without asking; `agree`: how many of the
    `lines` voting lines (those whose scores tell the languages apart) vote for it;
    `column_langs`: what each of columns 0 and 1 looks like as a whole ('' if unknown);
    `reason`: why unsure, '' when sure."""

    src_lang: str
    tgt_lang: str
    src_col: int
    tgt_col: int
    sure: bool
    agree: int
    lines: int
    column_langs: tuple[str, str] = ("", "")
    reason: str = ""

    @property
    def share(self) -> float:
        """The fraction of voting lines that agree (0 when none voted)."""
        return self.agree / self.lines if self.lines else 0.0

    def describe(self) -> str:
        """One line: what was guessed, from how many lines, how many agree."""
        return (f"column {self.src_col} is {language_name(self.src_lang)} (source), "
                f"column {self.tgt_col} is {language_name(self.tgt_lang)} (target): "
                f"{self.agree} of {self.lines} sampled lines agree")

    def unsure_warning(self, flags: str = "the columns") -> str:
        """The warning for an unsure guess: why, what is kept, what to do."""
        return (f"could not tell which column is {self.src_lang} and which "
                f"{self.tgt_lang} ({self.reason}); kept column {self.src_col} as "
                f"{self.src_lang} and column {self.tgt_col} as {self.tgt_lang}: check "
                f"the pairs, or set {flags}")

    def contradiction(self, src_col: int, tgt_col: int) -> str | None:
        """A warning when a sure guess says the given columns are the other way round,
        else None."""
        if not self.sure or (src_col, tgt_col) != (self.tgt_col, self.src_col):
            return None
        return (f"column {src_col} is read as {self.src_lang} (source) and column "
                f"{tgt_col} as {self.tgt_lang} (target), but the text says the opposite: "
                f"column {self.src_col} looks like {self.src_lang} ({self.agree} of "
                f"{self.lines} sampled lines agree); check the columns")


def sample_tsv_columns(path: str | Path, n: int = SAMPLE_LINES) -> list[tuple[str, str]]:
    """Columns 0 and 1 (each cut to CELL_CHARS) of the first `n` lines of `path` that
    have both non-empty; bad bytes replaced, at most SCAN_LIMIT whole lines within the
    first SCAN_CHARS characters read."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.read(SCAN_CHARS)
    lines = text.split("\n")
    if len(text) == SCAN_CHARS and len(lines) > 1:
        lines.pop()  # cut off mid-line (or the empty rest after the last newline)
    rows: list[tuple[str, str]] = []
    for line in lines[:SCAN_LIMIT]:
        cols = line.rstrip("\r").split("\t")
        if len(cols) >= 2 and cols[0].strip() and cols[1].strip():
            rows.append((cols[0][:CELL_CHARS], cols[1][:CELL_CHARS]))
            if len(rows) == n:
                break
    return rows


def _scores(text: str, langs: tuple[str, str]) -> tuple[float, float]:
    """The identifier's log scores of `text` for the two languages."""
    ranked = dict(_identifier().rank(text))
    return ranked[langs[0]], ranked[langs[1]]


def _identify(texts: list[str]) -> str:
    """The language of a column's sample as a whole, among all the model's languages."""
    return _identifier().classify("\n".join(texts))[0] if texts else ""


def guess_columns(rows: list[tuple[str, str]], src_lang: str, tgt_lang: str,
                  default: tuple[int, int] = (1, 0)) -> ColumnGuess:
    """The column order of `rows` ((column 0, column 1) pairs) for src_lang -> tgt_lang;
    `default` (src_col, tgt_col) is kept when unsure."""
    src, tgt = model_code(src_lang), model_code(tgt_lang)

    def unsure(reason: str, agree: int = 0, lines: int = 0,
               column_langs: tuple[str, str] = ("", "")) -> ColumnGuess:
        return ColumnGuess(src_lang, tgt_lang, *default, False, agree, lines,
                           column_langs, reason)

    if src == tgt:
        return unsure(f"both languages are {src}")
    unknown = [code for code, m in ((src_lang, src), (tgt_lang, tgt))
               if m not in known_languages()]
    if unknown:
        return unsure(f"the language identifier does not know {' or '.join(unknown)}")
    if not rows:
        return unsure("no line has text in both columns")
    straight = swapped = 0  # lines voting column 0 = source, column 0 = target
    for col0, col1 in rows:
        s0, t0 = _scores(col0, (src, tgt))
        s1, t1 = _scores(col1, (src, tgt))
        margin = (s0 - t0) - (s1 - t1)
        straight += margin > 0
        swapped += margin < 0
    lines, agree = straight + swapped, max(straight, swapped)
    order = (0, 1) if straight > swapped else (1, 0)
    langs = (_identify([r[0] for r in rows]), _identify([r[1] for r in rows]))
    if langs[0] == langs[1]:
        return unsure(f"both columns look like {language_name(langs[0])}", agree, lines, langs)
    if lines < MIN_LINES:
        return unsure(f"only {lines} of {len(rows)} sampled lines tell the two languages "
                      "apart", agree, lines, langs)
    if straight == swapped or agree < MIN_SHARE * lines:
        return unsure(f"only {agree} of {lines} sampled lines agree", agree, lines, langs)
    looks_src, looks_tgt = langs[order[0]], langs[order[1]]
    if looks_src == tgt or looks_tgt == src or (looks_src != src and looks_tgt != tgt):
        return unsure(f"column 0 looks like {language_name(langs[0])} and column 1 like "
                      f"{language_name(langs[1])}", agree, lines, langs)
    return ColumnGuess(src_lang, tgt_lang, *order, True, agree, lines, langs)


def guess_tsv_columns(path: str | Path, src_lang: str, tgt_lang: str,
                      default: tuple[int, int] = (1, 0)) -> ColumnGuess:
    """guess_columns over the first SAMPLE_LINES lines of a tab-separated file."""
    return guess_columns(sample_tsv_columns(path), src_lang, tgt_lang, default)

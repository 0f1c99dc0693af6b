"""Text conventions of corpora released tokenised: what a model trained on one expects
to read, and how its output becomes text a person writes.

The ISI release of the Canadian Hansards (and the WPT-03 gold drawn from it) is
tokenised by the EGYPT tools: the first word of a sentence is lowercased ("the House
resumed", "i would like"), apostrophes stand alone in English ("member ' s", "don ' t"),
and French elisions and contractions are written out ("jusque à le appel" for "jusqu'à
l'appel", "de les députés" for "des députés", "ce est" for "c'est"). A model trained on it
answers in that form too. The "hansards" convention turns a user's text into it
(`to_model`) and the model's tokens back into cased, contracted, detokenised text
(`from_model`); Preprocessor applies them when a run's preprocessing names the convention
(`preprocess.json`: "convention": "hansards"), so `translate`, the Translate screen and
the evaluation read and write ordinary text.

    to_model(text, lang, tokenizer) -> list[str]    tokens as the corpus writes them
    from_model(tokens, lang, detokenizer) -> str    a sentence as a person writes it
"""
from __future__ import annotations

import re

from sacremoses import MosesDetokenizer, MosesTokenizer

CONVENTIONS = ("hansards",)

#: French words written out in full before a vowel by the release, and their elided form
_ELIDED = {"le": "l'", "la": "l'", "de": "d'", "que": "qu'", "ne": "n'", "se": "s'",
           "je": "j'", "me": "m'", "te": "t'", "jusque": "jusqu'", "lorsque": "lorsqu'",
           "puisque": "puisqu'", "quoique": "quoiqu'", "si": "s'"}
#: "ce" elides only before these ("ce est" -> "c'est"; "ce avion" is "cet avion")
_CE_BEFORE = {"est", "était", "étaient", "eût", "en"}
#: "si" elides only before il / ils ("si il" -> "s'il")
_SI_BEFORE = {"il", "ils"}
#: words whose h is aspirated: no elision before them ("le héros", "la hausse")
_ASPIRATED = ("hache", "haine", "hall", "hameau", "hanche", "handicap", "hangar", "hardi",
              "hasard", "hausse", "haut", "héros", "hiérarchie", "hockey", "homard",
              "honte", "hors", "hublot", "huit", "hurl", "hongr", "hollande", "hollandais")
#: contractions the release writes out: (preposition, article) -> contracted form
_CONTRACTED = {("à", "le"): "au", ("à", "les"): "aux", ("de", "le"): "du",
               ("de", "les"): "des"}
_SPLIT_FR = {"l'": "le", "d'": "de", "qu'": "que", "n'": "ne", "s'": "se", "j'": "je",
             "m'": "me", "t'": "te", "c'": "ce", "jusqu'": "jusque", "lorsqu'": "lorsque",
             "puisqu'": "puisque", "quoiqu'": "quoique"}
_EXPANDED = {"du": ["de", "le"], "au": ["à", "le"], "aux": ["à", "les"],
             "des": ["de", "les"]}
_VOWEL = re.compile(r"^[aeiouyàâäéèêëîïôöùûüœæ]", re.IGNORECASE)
_WORD_APOSTROPHE = re.compile(r"(\w)[’']+(\w)")
#: a hyphen inside a word: the release writes it as a token of its own ("porte - parole",
#: "est - ce", "C - 4", "1998 - 1999"), on both sides
_WORD_HYPHEN = re.compile(r"(\w)-(?=\w)")
#: the French release writes "50 p. 100" (per cent) as "50p. 100"
_PERCENT_WRITTEN = re.compile(r"(\d) p\. (?=\d)")
_PERCENT_RELEASE = re.compile(r"(\d)p\. (?=\d)")
#: the French release glues a title to the word before it ("deM. Manning", "queM.",
#: "deSt. John's", "Lehon. Don Boudria", "trèshon."): a model trained on it writes so too
_GLUED_TITLE = re.compile(r"([^\W\d_A-Z]+)(M\.|MM\.|Mme|Mlle|St\.|Ste\.)|([Ll]e|[Tt]rès)(hon\.)")
#: a French amount's "$" follows it ("20 000 $ en 1998"); Moses joins it to the next word
_DOLLAR_BEFORE_WORD = re.compile(r"(^|\s)\$(?=[^\W\d_])")


def _starts_with_vowel_sound(word: str) -> bool:
    low = word.lower()
    if _VOWEL.match(low):
        return True
    return low.startswith("h") and not low.startswith(_ASPIRATED)


def _lower_first(tokens: list[str]) -> list[str]:
    """The release's first word is lowercased, unless it is a title such as 'Mr.' or
    'M.' or an acronym written in capitals."""
    if not tokens:
        return tokens
    first = tokens[0]
    if first.endswith(".") or (len(first) > 1 and first.isupper()):
        return tokens
    return [first[:1].lower() + first[1:]] + tokens[1:]


def to_model(text: str, lang: str, tokenizer: MosesTokenizer) -> list[str]:
    """`text` as a person writes it -> tokens as the Hansards release writes them:
    Moses-tokenised with every apostrophe a token of its own in English ("member ' s"),
    every hyphen inside a word one too ("porte - parole", "va - t - il"), and French
    elisions and contractions written out ("jusque à le appel")."""
    text = _WORD_HYPHEN.sub(r"\1 - ", text)
    if lang == "fr":
        text = _PERCENT_WRITTEN.sub(r"\1p. ", text)
    if lang == "en":
        text = _WORD_APOSTROPHE.sub(r"\1 ' \2", text)
    tokens = tokenizer.tokenize(text, escape=False)
    if lang == "fr":
        tokens = _join_percent(tokens)
        out: list[str] = []
        for t in tokens:
            low = t.lower()
            if low in _SPLIT_FR:
                out.append(_SPLIT_FR[low] if t.islower() or len(out) else
                           _SPLIT_FR[low].capitalize())
            elif low in _EXPANDED:
                first, second = _EXPANDED[low]
                out += [first.capitalize() if t[:1].isupper() else first, second]
            else:
                out.append(t)
        tokens = out
    return _lower_first(tokens)


def _join_percent(tokens: list[str]) -> list[str]:
    """["50p", ".", "100"] (Moses' split) -> ["50p.", "100"], as the release writes it."""
    out: list[str] = []
    for k, t in enumerate(tokens):
        if t == "." and out and re.fullmatch(r"[\d,]+p", out[-1]) \
                and k + 1 < len(tokens) and tokens[k + 1].isdigit():
            out[-1] += "."
        else:
            out.append(t)
    return out


def _split_glued_titles(tokens: list[str]) -> list[str]:
    """["deM.", "Smith"] -> ["de", "M.", "Smith"], ["Lehon."] -> ["Le", "hon."]: a word in
    lowercase (or capitalised) glued to a title, as the release writes it (_GLUED_TITLE)."""
    out: list[str] = []
    for t in tokens:
        m = _GLUED_TITLE.fullmatch(t)
        if m and (m.group(1) or "").islower():
            out += [m.group(1), m.group(2)]
        elif m and m.group(3):
            out += [m.group(3), m.group(4)]
        else:
            out.append(t)
    return out


def _contract_fr(tokens: list[str]) -> list[str]:
    """French tokens with contractions, then elisions, made: "de les députés" -> ["des",
    "députés"], "jusque à le bureau" -> ["jusqu'au", "bureau"], "jusque à le appel" ->
    ["jusqu'à", "l'appel"] (no contraction before a vowel: the article elides)."""
    contracted: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        pair = (t.lower(), tokens[i + 1].lower() if i + 1 < len(tokens) else "")
        after = tokens[i + 2] if i + 2 < len(tokens) else ""
        if pair in _CONTRACTED and not (pair[1] == "le" and _starts_with_vowel_sound(after)):
            word = _CONTRACTED[pair]
            contracted.append(word.capitalize() if t[:1].isupper() else word)
            i += 2
        else:
            contracted.append(t)
            i += 1
    out: list[str] = []
    for t in reversed(contracted):  # from the end, so that an elided word meets its
        low = t.lower()             # next word already joined ("jusqu'" + "au")
        nxt = out[-1] if out else ""
        if low == "ce" and nxt and nxt.lower() not in _CE_BEFORE \
                and _starts_with_vowel_sound(nxt):
            out.append("Cet" if t[:1].isupper() else "cet")  # "ce avion" -> "cet avion"
            continue
        if low == "ce":
            short = "c'" if nxt.lower() in _CE_BEFORE else ""
        elif low == "si":
            short = "s'" if nxt.lower() in _SI_BEFORE else ""
        else:
            short = _ELIDED.get(low, "") if nxt and _starts_with_vowel_sound(nxt) else ""
        if short:
            out[-1] = (short.capitalize() if t[:1].isupper() else short) + nxt
        else:
            out.append(t)
    return out[::-1]


def _join_english_apostrophes(tokens: list[str]) -> list[str]:
    """["member", "'", "s"] -> ["member's"]; a standalone lowercase "i" -> "I"."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t in ("'", "’") and out and i + 1 < len(tokens) and tokens[i + 1].isalpha() \
                and len(tokens[i + 1]) <= 2 and out[-1][-1:].isalpha():
            out[-1] = out[-1] + "'" + tokens[i + 1]
            i += 2
            continue
        out.append("I" if t == "i" else t)
        i += 1
    return out


def _join_hyphens(tokens: list[str]) -> list[str]:
    """["est", "-", "ce"] -> ["est-ce"], ["C", "-", "4"] -> ["C-4"]: a hyphen between
    two word tokens joins them (in the release such a hyphen is almost always inside a
    word; a dash between clauses is written "--")."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == "-" and out and i + 1 < len(tokens) and _WORDISH.search(out[-1][-1:]) \
                and _WORDISH.match(tokens[i + 1]):
            out[-1] = out[-1] + "-" + tokens[i + 1]
            i += 2
            continue
        out.append(t)
        i += 1
    return out


_WORDISH = re.compile(r"\w")


def _capitalise_first(text: str) -> str:
    """The sentence's first word with a capital, unless it starts with a digit ("1997 a
    été", "25 p. 100") or is already written in mixed case ("eBay", "iPod")."""
    m = re.search(r"\w+", text)
    if m is None or not m.group()[0].isalpha() or any(c.isupper() for c in m.group()[1:]):
        return text
    k = m.start()
    return text[:k] + text[k].upper() + text[k + 1:]


def from_model(tokens: list[str], lang: str, detokenizer: MosesDetokenizer) -> str:
    """The model's tokens in the release's form -> a sentence as a person writes it:
    titles glued to the word before split off and elisions and contractions made, "$"
    after the amount (French), apostrophes joined (English), hyphens
    joined ("est-ce", "porte-parole"), Moses detokenised, the first word capitalised
    (_capitalise_first)."""
    tokens = [t for t in tokens if t]
    if lang == "fr":
        tokens = _contract_fr(_split_glued_titles(tokens))
    elif lang == "en":
        tokens = _join_english_apostrophes(tokens)
    text = detokenizer.detokenize(_join_hyphens(tokens), unescape=False)
    if lang == "fr":
        text = _PERCENT_RELEASE.sub(r"\1 p. ", text)
        text = _DOLLAR_BEFORE_WORD.sub(r"\1$ ", text)
    return _capitalise_first(text)

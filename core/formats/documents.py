"""Documents to translate: plain text (.txt, .md) or Word (.docx), split into sentences.

A paragraph is a non-empty line of a text file or a paragraph of a Word document; each
paragraph is split into sentences with pysbd (rule-based, per language; English rules
for a language pysbd does not know). `read_paragraphs` keeps the paragraph structure so
that a translated document can be rebuilt. Word files are read by
core.formats.docx_text; the input limits of core.limits hold for every kind (the size,
NMT_WB_MAX_PARAGRAPHS paragraphs, NMT_WB_MAX_LINE_CHARS characters a paragraph).
`document_text` puts a translated text document back together: a translated line per
source paragraph, the blank lines where they were (a .docx is rebuilt by
core.formats.docx_write)."""
from __future__ import annotations

from pathlib import Path

from core import limits
from core.data.textio import CONVERT_TO_UTF8, decode_text, read_bytes, split_lines
from core.errors import CorpusError
from core.formats.docx_text import read_docx_paragraphs

SUFFIXES = (".txt", ".md", ".docx")


def _segmenter(lang: str):
    import pysbd  # lazy: a top-level import would load pysbd
    from pysbd.languages import LANGUAGE_CODES  # lazy: a top-level import would load pysbd

    code = lang.split("-")[0].lower()
    return pysbd.Segmenter(language=code if code in LANGUAGE_CODES else "en", clean=False)


def paragraph_texts(path: str | Path) -> list[str]:
    """The text of every paragraph of the file, blank ones included: a text file's lines,
    a Word document's paragraphs. CorpusError naming the file when it cannot be read."""
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.exists():
        raise CorpusError(path, None, "file not found: check the path")
    if suffix == ".docx":
        return read_docx_paragraphs(path)
    if suffix in (".txt", ".md"):
        # read as any text input (core.data.textio): lines end at '\n' only, invalid
        # UTF-8 and NUL bytes are errors naming the line, the input limits hold
        lines = split_lines(decode_text(read_bytes(path), path, advice=CONVERT_TO_UTF8)[0])
        paragraphs = 0
        for number, line in enumerate(lines, start=1):
            if line.strip():
                paragraphs += 1
                limits.check_count(limits.PARAGRAPHS, path, paragraphs, number, "paragraphs")
        return lines
    raise CorpusError(path, None, f"cannot read {suffix or 'files without a suffix'}: open a "
                      f"{', '.join(SUFFIXES)} file")


def split_sentences(text: str, lang: str = "en") -> list[str]:
    """The sentences of typed or pasted text: each non-empty line split with pysbd."""
    return [s for para in split_paragraphs(text.splitlines(), lang) for s in para]


#: titles before a name that pysbd 0.3 ends a sentence at ("El Sr. | García llegó"),
#: per language: a sentence ending in one is joined with the next
TITLES = {"es": {"Sr.", "Sres.", "Sra.", "Sras.", "Srta.", "Dr.", "Dra.", "Ud.", "Uds.", "Dña."},
          "en": {"Mr.", "Mrs.", "Ms.", "Dr.", "Prof."},
          "fr": {"M.", "MM.", "Mme.", "Mlle.", "Dr.", "Pr."}}


def split_paragraphs(texts: list[str], lang: str = "en") -> list[list[str]]:
    """Sentences of each non-blank text of `texts` (whitespace at sentence ends removed):
    one list per non-blank text, in order; blank texts give none."""
    seg = _segmenter(lang)
    titles = TITLES.get(lang.split("-")[0].lower(), set())
    out = []
    for text in texts:
        if not text.strip():
            continue
        sents = [s.strip() for s in seg.segment(text.strip())]
        out.append(_join_titles([s for s in sents if s], titles))
    return out


def _join_titles(sents: list[str], titles: set[str]) -> list[str]:
    """Join a sentence that ends in a title (TITLES) with the one after it."""
    out: list[str] = []
    for s in sents:
        if out and out[-1].rsplit(None, 1)[-1] in titles:
            out[-1] = f"{out[-1]} {s}"
        else:
            out.append(s)
    return out


def read_paragraphs(path: str | Path, lang: str = "en") -> list[list[str]]:
    """Sentences of each non-empty paragraph of the file (see split_paragraphs)."""
    return split_paragraphs(paragraph_texts(path), lang)


def document_text(layout: list[str], paragraphs: list[str]) -> str:
    """A translated text document: `layout` is the source's lines (paragraph_texts), and
    `paragraphs` one translated text per non-blank line, in order. Each non-blank line
    becomes its translation, a blank line stays (empty); every line ends in '\\n'."""
    blocks = sum(1 for line in layout if line.strip())
    if blocks != len(paragraphs):
        raise ValueError(f"{len(paragraphs)} translated paragraphs for {blocks} in the "
                         "document")
    translated = iter(paragraphs)
    lines = [next(translated) if line.strip() else "" for line in layout]
    return "".join(line + "\n" for line in lines)


def read_document(path: str | Path, lang: str = "en") -> list[str]:
    """All sentences of the document, in order."""
    return [s for para in read_paragraphs(path, lang) for s in para]

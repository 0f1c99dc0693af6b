"""Documents to translate: plain text (.txt, .md) or Word (.docx), split into sentences.

A paragraph is a non-empty line of a text file or a paragraph of a Word document; each
paragraph is split into sentences with pysbd (rule-based, per language; English rules
for a language pysbd does not know). `read_paragraphs` keeps the paragraph structure so
that a translated document can be rebuilt."""
from __future__ import annotations

from pathlib import Path

from core.errors import CorpusError

SUFFIXES = (".txt", ".md", ".docx")


def _segmenter(lang: str):
    import pysbd
    from pysbd.languages import LANGUAGE_CODES

    code = lang.split("-")[0].lower()
    return pysbd.Segmenter(language=code if code in LANGUAGE_CODES else "en", clean=False)


def _paragraph_texts(path: Path) -> list[str]:
    suffix = path.suffix.lower()
    if not path.exists():
        raise CorpusError(path, None, "file not found: check the path")
    if suffix == ".docx":
        import zipfile

        import docx
        from docx.opc.exceptions import PackageNotFoundError
        from lxml import etree

        try:
            document = docx.Document(str(path))
            return [p.text for p in document.paragraphs]
        except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile) as e:
            raise CorpusError(path, None, f"not a readable Word document ({e}): re-save it "
                              "as .docx") from None
        except etree.LxmlError as e:  # XMLSyntaxError: entity loops/amplification, bad XML
            raise CorpusError(path, None, f"its XML is refused ({type(e).__name__}: {e}); the "
                              "document may be damaged or crafted: re-save it as .docx from "
                              "Word or LibreOffice") from None
        except RecursionError:
            raise CorpusError(path, None, "its XML is nested too deeply to read; re-save it "
                              "as .docx from Word or LibreOffice") from None
    if suffix in (".txt", ".md"):
        try:
            return path.read_text(encoding="utf-8-sig").splitlines()
        except UnicodeDecodeError as e:
            raise CorpusError(path, None, f"not UTF-8 text ({e.reason}): convert it to "
                              "UTF-8") from None
    raise CorpusError(path, None, f"cannot read {suffix or 'files without a suffix'}: open a "
                      f"{', '.join(SUFFIXES)} file")


def split_sentences(text: str, lang: str = "en") -> list[str]:
    """The sentences of typed or pasted text: each non-empty line split with pysbd."""
    seg = _segmenter(lang)
    return [s.strip() for line in text.splitlines() if line.strip()
            for s in seg.segment(line.strip()) if s.strip()]


def read_paragraphs(path: str | Path, lang: str = "en") -> list[list[str]]:
    """Sentences of each non-empty paragraph (whitespace at sentence ends removed)."""
    seg = _segmenter(lang)
    out = []
    for text in _paragraph_texts(Path(path)):
        if not text.strip():
            continue
        sents = [s.strip() for s in seg.segment(text.strip())]
        out.append([s for s in sents if s])
    return out


def read_document(path: str | Path, lang: str = "en") -> list[str]:
    """All sentences of the document, in order."""
    return [s for para in read_paragraphs(path, lang) for s in para]

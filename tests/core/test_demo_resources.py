"""Checks on the bundled demo corpus and its hand-made gold alignments
(resources/demo/, formats described in resources/demo/README.md)."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from sacremoses import MosesTokenizer

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"
LINK_RE = re.compile(r"^(\d+)([-?])(\d+)$")
DOCID_RE = re.compile(r"^(d\d\d-[a-z][a-z-]*)\t(\d+)$")
WORD_RE = re.compile(r"\w")  # a token with a letter or digit is a word, else punctuation


def read_lines(name: str) -> list[str]:
    """Strict UTF-8 read (raises on invalid bytes); no trailing empty line."""
    text = (DEMO / name).read_bytes().decode("utf-8", errors="strict")
    assert text.endswith("\n"), f"{name} must end with a newline"
    assert "\r" not in text, f"{name} must use LF line endings"
    return text[:-1].split("\n")


def parse_links(line: str) -> dict[tuple[int, int], bool]:
    """Pharaoh line -> {(es_index, en_index): is_sure}; rejects duplicates."""
    links: dict[tuple[int, int], bool] = {}
    for item in line.split():
        m = LINK_RE.match(item)
        assert m, f"bad link {item!r}"
        key = (int(m[1]), int(m[3]))
        assert key not in links, f"link {key} listed twice"
        links[key] = m[2] == "-"
    return links


@pytest.fixture(scope="module")
def corpus() -> tuple[list[str], list[str], list[str]]:
    return read_lines("demo.es"), read_lines("demo.en"), read_lines("demo.docids")


@pytest.fixture(scope="module")
def gold() -> dict[str, list[str]]:
    return {k: read_lines(f"gold.{k}") for k in ("es", "en", "links", "lines")}


def test_corpus_is_line_parallel_and_big_enough(corpus):
    es, en, ids = corpus
    assert len(es) == len(en) == len(ids)
    assert len(es) >= 400
    for name, lines in (("demo.es", es), ("demo.en", en)):
        for n, line in enumerate(lines, 1):
            assert line.strip(), f"{name}:{n} is empty"
            assert line == line.strip(), f"{name}:{n} has surrounding whitespace"
            assert "\t" not in line, f"{name}:{n} contains a tab"


def test_spanish_side_has_its_letters(corpus):
    es, en, _ = corpus
    text = "\n".join(es)
    for ch in "áéíóúñ¿¡ü":
        assert ch in text, f"no {ch!r} in demo.es"
    # The sides are not swapped: Spanish marks are far rarer on the English side.
    assert sum(text.count(c) for c in "ñ¿¡") > 10 * sum(
        "\n".join(en).count(c) for c in "ñ¿¡"
    ) + 10


def test_documents_are_contiguous_with_0_based_indices(corpus):
    _, _, ids = corpus
    parsed = []
    for n, line in enumerate(ids, 1):
        m = DOCID_RE.match(line)
        assert m, f"demo.docids:{n}: {line!r} is not '<doc_id>\\t<index>'"
        parsed.append((m[1], int(m[2])))
    sizes = Counter(doc for doc, _ in parsed)
    assert len(sizes) >= 20
    assert all(10 <= s <= 25 for s in sizes.values()), sizes
    seen: set[str] = set()
    prev_doc, expected = None, 0
    for n, (doc, idx) in enumerate(parsed, 1):
        if doc != prev_doc:
            assert doc not in seen, f"demo.docids:{n}: document {doc} resumes after a gap"
            seen.add(doc)
            prev_doc, expected = doc, 0
        assert idx == expected, f"demo.docids:{n}: index {idx}, expected {expected}"
        expected += 1


def test_sentence_lengths_spread_over_buckets(corpus):
    _, en, _ = corpus
    lengths = [len(s.split()) for s in en]
    assert sum(n <= 5 for n in lengths) >= 50
    assert sum(6 <= n <= 15 for n in lengths) >= 200
    assert sum(n >= 20 for n in lengths) >= 10
    assert sum(n >= 30 for n in lengths) >= 3


def test_many_pronouns_need_context(corpus):
    """English third-person pronouns whose Spanish line has no pronoun to copy them from:
    they come from a dropped subject or a clitic whose referent is in an earlier line."""
    es, en, _ = corpus
    explicit = {"él", "ella", "ellos", "ellas"}
    starts = re.compile(r"^(He|She|It|They)\b")
    count = sum(
        1
        for s, t in zip(es, en, strict=True)
        if starts.match(t) and not explicit & set(re.findall(r"\w+", s.lower()))
    )
    assert count >= 60


def test_gold_files_are_parallel_and_point_into_the_corpus(corpus, gold):
    es, en, _ = corpus
    n = len(gold["es"])
    assert n >= 40
    assert len(gold["en"]) == len(gold["links"]) == len(gold["lines"]) == n
    numbers = [int(x) for x in gold["lines"]]
    assert len(set(numbers)) == n, "a corpus line is aligned twice"
    assert all(1 <= k <= len(es) for k in numbers)
    # Spread over the corpus, not bunched in one story.
    assert len({(k - 1) * 10 // len(es) for k in numbers}) == 10


def test_gold_text_is_the_sacremoses_tokenisation(corpus, gold):
    es, en, _ = corpus
    tok_es, tok_en = MosesTokenizer("es"), MosesTokenizer("en")
    for g_es, g_en, k in zip(gold["es"], gold["en"], gold["lines"], strict=True):
        line = int(k)
        assert g_es == " ".join(tok_es.tokenize(es[line - 1], escape=False)), f"line {line}"
        assert g_en == " ".join(tok_en.tokenize(en[line - 1], escape=False)), f"line {line}"


def test_gold_links_are_valid_and_cover_english_words(gold):
    covered = total = n_sure = n_possible = 0
    for g_es, g_en, line, k in zip(
        gold["es"], gold["en"], gold["links"], gold["lines"], strict=True
    ):
        src, tgt = g_es.split(), g_en.split()
        links = parse_links(line)
        for i, j in links:
            assert i < len(src) and j < len(tgt), f"line {k}: link {i}-{j} out of bounds"
        assert any(links.values()), f"line {k}: no sure link"
        n_sure += sum(links.values())
        n_possible += sum(not s for s in links.values())
        # Sentence-final punctuation that matches is a sure link.
        if src[-1] == tgt[-1] and not WORD_RE.search(src[-1]):
            assert links.get((len(src) - 1, len(tgt) - 1)) is True, f"line {k}: final mark"
        linked_en = {j for _, j in links}
        words = [j for j, t in enumerate(tgt) if WORD_RE.search(t)]
        total += len(words)
        covered += sum(j in linked_en for j in words)
    assert covered >= 0.9 * total
    # Both kinds are used, sure links dominate.
    assert 0.1 * (n_sure + n_possible) <= n_possible <= 0.5 * (n_sure + n_possible)


def test_parse_links_rejects_malformed_and_duplicate_links():
    assert parse_links("0-1 2?3") == {(0, 1): True, (2, 3): False}
    with pytest.raises(AssertionError):
        parse_links("0-1 0?1")
    with pytest.raises(AssertionError):
        parse_links("0:1")


def test_readme_counts_match_the_files(corpus, gold):
    readme = (DEMO / "README.md").read_text(encoding="utf-8")
    sure = sum(sum(parse_links(x).values()) for x in gold["links"])
    possible = sum(len(parse_links(x)) for x in gold["links"]) - sure
    docs = len({x.split("\t")[0] for x in corpus[2]})
    for label, value in (
        ("sentence pairs", len(corpus[0])),
        ("documents", docs),
        ("gold-aligned sentence pairs", len(gold["lines"])),
        ("sure links", sure),
        ("possible links", possible),
    ):
        assert re.search(rf"\| {label} \| {value}\b", readme), f"README: {label} != {value}"

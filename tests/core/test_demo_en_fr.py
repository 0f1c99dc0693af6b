"""Checks on the bundled English->French document corpus and its contrastive pronoun
set (resources/demo/en-fr/, described in its README.md), read through the product's
own readers: core.data.readers.read_corpus for the corpus (as the demo reads its
corpus) and core.services.contrastive_eval.contrastive_examples for the set (what
`evaluate --contrastive FILE` and the Evaluation screen use)."""
from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from core.data.readers import read_corpus
from core.evaluate.contrastive import _check_pair
from core.services.contrastive_eval import contrastive_examples

EN_FR = Path(__file__).resolve().parents[2] / "resources" / "demo" / "en-fr"
SET = EN_FR / "contrastive.json"
#: what the README states and the files hold
N_SENTENCES, N_DOCS = 90, 10
BY_PRONOUN = {"il": 11, "elle": 13, "ils": 9, "elles": 12}
CONTEXT = 2  # previous sentences of the document given with each item
SOURCE_PRONOUN = re.compile(r"\b(it|they|them)\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def corpus():
    return read_corpus("parallel", [EN_FR / "demo.en", EN_FR / "demo.fr", EN_FR / "demo.docids"],
                       "en", "fr", name="demo-en-fr")


@pytest.fixture(scope="module")
def examples():
    return contrastive_examples(SET)


def test_corpus_is_line_parallel_with_contiguous_0_based_documents(corpus):
    assert len(corpus) == N_SENTENCES
    docs = corpus.documents()
    assert len(docs) == N_DOCS
    for doc, idx in docs.items():
        assert idx == list(range(idx[0], idx[0] + len(idx))), f"{doc} is not contiguous"
        assert 6 <= len(idx) <= 10, (doc, len(idx))
    rows = [line.split("\t") for line in (EN_FR / "demo.docids").read_text("utf-8").splitlines()]
    assert [int(i) for _, i in rows] == [k for idx in docs.values() for k in range(len(idx))]
    for p in corpus.pairs:
        assert p.src == p.src.strip() and p.tgt == p.tgt.strip() and p.src and p.tgt
    assert not corpus.warnings
    french = "".join(p.tgt for p in corpus.pairs)
    assert all(ch in french for ch in "éèàâêôûç'"), "French text lost its accents or apostrophes"
    assert "’" not in french, "one apostrophe style: the straight one"


def test_contrastive_set_loads_with_its_counts(examples):
    assert len(examples) == sum(BY_PRONOUN.values()) == 45
    assert Counter(ex.phenomenon for ex in examples) == BY_PRONOUN
    for ex in examples:
        assert ex.contrastive != ex.correct
        assert ex.more_contrastive == ()


def test_each_pair_differs_only_in_the_pronoun_and_its_agreement(examples):
    for ex in examples:
        # the product's own pair check: exactly one il/elle/ils/elles swapped, at most
        # one other word changed; and it names the pronoun the item says it tests
        assert _check_pair(ex.correct, ex.contrastive, SET, ex.line,
                           max_agreement_edits=1) == ex.phenomenon, ex.correct
        others = [(a, b) for a, b in zip(ex.correct.split(), ex.contrastive.split(), strict=True)
                  if a != b and a.lower().strip(",") not in BY_PRONOUN]
        for a, b in others:  # a gender ending: construite/construit, toutes/tous
            assert len(os.path.commonprefix([a, b])) >= 3, (a, b)


def test_items_are_corpus_lines_with_their_documents_previous_sentences(corpus, examples):
    at = {(p.src, p.tgt): i for i, p in enumerate(corpus.pairs)}
    assert len(at) == len(corpus)
    seen = set()
    for ex in examples:
        i = at[(ex.source, ex.correct)]
        seen.add(i)
        doc = corpus.documents()[corpus.pairs[i].doc_id]
        prev = [corpus.pairs[k] for k in doc if i - CONTEXT <= k < i]
        assert ex.context_src == [p.src for p in prev], ex.source
        assert ex.context_tgt == [p.tgt for p in prev], ex.source
        assert ex.context_src, f"{ex.source!r}: the antecedent must be in an earlier sentence"
        assert SOURCE_PRONOUN.search(ex.source), ex.source
    assert len(seen) == len(examples)


def test_readme_states_the_counts():
    text = (EN_FR / "README.md").read_text("utf-8")
    for what, n in [("documents", N_DOCS), ("sentence pairs", N_SENTENCES),
                    ("contrastive items", 45), *BY_PRONOUN.items()]:
        assert re.search(rf"\|\s*{re.escape(what)}\b[^|\n]*\|\s*{n}\b[^|\n]*\|", text), (what, n)

"""Deterministic train/dev/test splits.

Without documents, pairs are shuffled with `random.Random(seed)` and cut. With
documents, whole documents are shuffled and dealt to dev, then test, until each
reaches its target size, so no document straddles two sets (context models must
never see a test sentence's neighbours in training). Inside every split the pairs keep
their corpus order, so documents stay in reading order.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from core.data.corpus import Corpus
from core.errors import ConfigError


@dataclass
class Splits:
    train: Corpus
    dev: Corpus
    test: Corpus
    # indices into the original corpus (sorted); empty for user-given dev/test
    train_indices: list[int]
    dev_indices: list[int]
    test_indices: list[int]

    @classmethod
    def given(cls, train: Corpus, dev: Corpus, test: Corpus | None = None) -> Splits:
        """Use the user's own dev (and test) corpora as they are."""
        test = test if test is not None else Corpus([], train.src_lang, train.tgt_lang, name="test")
        return cls(train, dev, test, list(range(len(train))), [], [])


def _targets(n: int, ratios: tuple[float, float, float] | None, dev_size: int | None,
             test_size: int | None) -> tuple[int, int]:
    if dev_size is not None or test_size is not None:
        dev_n, test_n = dev_size or 0, test_size or 0
        if dev_n < 0 or test_n < 0 or dev_n + test_n >= n:
            raise ConfigError(
                f"dev ({dev_n}) + test ({test_n}) sentences must be fewer than the corpus's {n}"
            )
        return dev_n, test_n
    ratios = ratios or (0.8, 0.1, 0.1)
    if len(ratios) != 3 or min(ratios) < 0 or abs(sum(ratios) - 1.0) > 1e-6 or ratios[0] <= 0:
        raise ConfigError(f"split ratios must be 3 non-negative numbers summing to 1 with train > 0, not {ratios}")
    return round(n * ratios[1]), round(n * ratios[2])


def split_corpus(
    corpus: Corpus, seed: int = 1234, ratios: tuple[float, float, float] | None = None,
    dev_size: int | None = None, test_size: int | None = None,
) -> Splits:
    """Split by `ratios` (train, dev, test; default 0.8/0.1/0.1) or by fixed
    `dev_size`/`test_size` sentence counts. With documents the sizes are reached at
    document granularity (a set may overshoot by less than one document)."""
    n = len(corpus)
    dev_n, test_n = _targets(n, ratios, dev_size, test_size)
    rng = random.Random(seed)
    if corpus.has_documents():
        # pairs without a document each form their own unit
        units = list(corpus.documents().values())
        units += [[i] for i, p in enumerate(corpus.pairs) if p.doc_id is None]
        units.sort(key=lambda u: u[0])  # a fixed order before shuffling
    else:
        units = [[i] for i in range(n)]
    rng.shuffle(units)
    dev: list[int] = []
    test: list[int] = []
    train: list[int] = []
    for unit in units:
        if len(dev) < dev_n:
            dev.extend(unit)
        elif len(test) < test_n:
            test.extend(unit)
        else:
            train.extend(unit)
    if not train:
        raise ConfigError(
            f"{corpus.name or 'corpus'}: nothing left for training after dev/test "
            f"({len(dev)}/{len(test)} sentences); use smaller dev/test sets or more documents"
        )
    train.sort()
    dev.sort()
    test.sort()
    base = corpus.name or "corpus"
    return Splits(
        corpus.subset(train, f"{base}/train"), corpus.subset(dev, f"{base}/dev"),
        corpus.subset(test, f"{base}/test"), train, dev, test,
    )

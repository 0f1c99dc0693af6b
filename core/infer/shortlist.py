"""Lexical shortlists: decode over a per-batch candidate set of target words instead of
the whole target vocabulary.

The output layer (hidden x V) is most of a decoding step on the CPU (docs/benchmarks.md:
about two thirds of a beam-5 step with a 15k vocabulary). A shortlist keeps, for each
batch, only the target words that can plausibly appear in its translations:

    candidates(batch) = specials (PAD, UNK, BOS, EOS)
                        U the `frequent` most frequent target words of the training split
                        U for every source word of the batch, its `per_word` most likely
                          translations p(t | s)

p(t | s) comes from word-alignment link counts (eflomal, grow-diag-final-and) over the
run's training split on the model's own tokens: c(s, t) / c(s), so ranking by c(s, t)
for a fixed s. The counts are stored with the run (`shortlist.npz`,
core.services.shortlist_store); `per_word` and `frequent` are chosen when the shortlist is
loaded. This is the lexical shortlist of production CPU decoders; it changes the search
space, so its effect on BLEU is measured (experiments/RESULTS.md, docs/benchmarks.md).

The candidate ids are sorted and start with the four specials, so a special's index in
the candidate set equals its id (search code relies on EOS staying at index EOS).
Candidates are the union over a batch (one output-layer slice per batch), so a
sentence's translation can depend on the sentences batched with it, as in other
decoders with lexical shortlists.
"""
from __future__ import annotations

import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from core.atomic import write_atomic
from core.errors import ConfigError

N_SPECIALS = 4  # PAD, UNK, BOS, EOS: ids 0..3 (core.models.base)
#: at most this many translations per source word are stored (the largest per_word a
#: loaded shortlist can use)
STORED_PER_WORD = 200


@dataclass
class LexicalCounts:
    """Alignment link counts, sparse, sorted by source id then count (descending):
    src, tgt, count (1-D, same length); target_freq: tgt_vocab (token counts)."""

    src: np.ndarray
    tgt: np.ndarray
    count: np.ndarray
    target_freq: np.ndarray
    src_vocab_size: int

    def fits(self, src_vocab_size: int, tgt_vocab_size: int) -> bool:
        """Whether these counts were made for vocabularies of these sizes."""
        return (self.src_vocab_size, len(self.target_freq)) == (src_vocab_size, tgt_vocab_size)

    def save(self, path: str | Path) -> Path:
        """Write as a compressed .npz, atomically."""
        def writer(f) -> None:
            np.savez_compressed(f, src=self.src, tgt=self.tgt, count=self.count,
                                target_freq=self.target_freq,
                                src_vocab_size=np.int64(self.src_vocab_size))
        return write_atomic(path, writer)

    @classmethod
    def load(cls, path: str | Path) -> LexicalCounts:
        """Read a file `save` wrote; ConfigError naming it when it is not one."""
        path = Path(path)
        try:
            with np.load(path) as z:
                return cls(z["src"], z["tgt"], z["count"], z["target_freq"],
                           int(z["src_vocab_size"]))
        except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise ConfigError(f"{path}: not a readable shortlist lexicon ({exc}); delete it "
                              "and it is rebuilt on the next use") from exc


def count_links(src_ids: Sequence[Sequence[int]], tgt_ids: Sequence[Sequence[int]],
                links: Sequence[Sequence[tuple[int, int]]], src_vocab_size: int,
                tgt_vocab_size: int, keep: int = STORED_PER_WORD) -> LexicalCounts:
    """Count aligned (source id, target id) pairs over sentence pairs; `links` are
    (source position, target position), 0-based, per pair. Keeps the `keep` most frequent
    translations of each source id."""
    if not len(src_ids) == len(tgt_ids) == len(links):
        raise ValueError(f"{len(src_ids)} sources, {len(tgt_ids)} targets, {len(links)} link lists")
    s_parts, t_parts = [], []
    for s, t, ls in zip(src_ids, tgt_ids, links, strict=True):
        if not ls:
            continue
        a = np.asarray(ls, dtype=np.int64)
        if a.min() < 0 or a[:, 0].max() >= len(s) or a[:, 1].max() >= len(t):
            raise ValueError(f"a link {ls} points past its sentence pair ({len(s)} source, "
                             f"{len(t)} target tokens)")
        s_parts.append(np.asarray(s, dtype=np.int64)[a[:, 0]])
        t_parts.append(np.asarray(t, dtype=np.int64)[a[:, 1]])
    target_freq = np.bincount(np.fromiter((i for t in tgt_ids for i in t), dtype=np.int64),
                              minlength=tgt_vocab_size)[:tgt_vocab_size]
    if not s_parts:
        empty = np.zeros(0, dtype=np.int32)
        return LexicalCounts(empty, empty, empty, target_freq, src_vocab_size)
    key = np.concatenate(s_parts) * tgt_vocab_size + np.concatenate(t_parts)
    pairs, count = np.unique(key, return_counts=True)
    src, tgt = pairs // tgt_vocab_size, pairs % tgt_vocab_size
    order = np.lexsort((-count, src))  # by source, most frequent translation first
    src, tgt, count = src[order], tgt[order], count[order]
    starts = np.searchsorted(src, src, side="left")
    rank = np.arange(len(src)) - starts
    kept = rank < keep
    return LexicalCounts(src[kept].astype(np.int32), tgt[kept].astype(np.int32),
                         count[kept].astype(np.int32), target_freq, src_vocab_size)


class Shortlist:
    """Per-batch candidate target ids from LexicalCounts: each source word's `per_word`
    best translations plus the `frequent` most frequent target words and the specials."""

    def __init__(self, counts: LexicalCounts, per_word: int = 50, frequent: int = 100) -> None:
        if not 1 <= per_word <= STORED_PER_WORD or frequent < 0:
            raise ConfigError(f"shortlist: need 1 <= words per source word <= {STORED_PER_WORD} "
                              f"and frequent words >= 0, got {per_word} and {frequent}")
        self.per_word, self.frequent = per_word, frequent
        self.tgt_vocab_size = len(counts.target_freq)
        starts = np.searchsorted(counts.src, counts.src, side="left")
        rank = np.arange(len(counts.src)) - starts
        kept = rank < per_word
        table = np.full((counts.src_vocab_size, per_word), -1, dtype=np.int64)
        table[counts.src[kept], rank[kept]] = counts.tgt[kept]
        table[:N_SPECIALS] = -1  # PAD/BOS/EOS add nothing; UNK's links are noise
        self.table = torch.from_numpy(table)  # src_vocab x per_word, -1 = none
        freq = counts.target_freq.copy()
        freq[:N_SPECIALS] = 0
        top = np.argsort(-freq, kind="stable")[:frequent]
        always = np.union1d(np.arange(N_SPECIALS), top[freq[top] > 0])
        self.always = torch.from_numpy(always.astype(np.int64))

    def candidates(self, src: Tensor) -> Tensor:
        """src: batch x S source ids (PAD-padded) -> K sorted target ids (long, on src's
        device), ids 0..3 first. Source ids outside the lexicon's vocabulary add nothing."""
        ids = src.reshape(-1).cpu().unique()
        ids = ids[(ids >= 0) & (ids < self.table.size(0))]
        words = self.table.index_select(0, ids).reshape(-1)
        words = words[words >= 0]
        return torch.cat([self.always, words]).unique().to(src.device)


def parse_spec(text: str) -> tuple[int, int]:
    """'50,100' -> (per_word 50, frequent 100); ConfigError naming the expected form or
    the range (Shortlist's), before any lexicon is built."""
    try:
        per_word, frequent = (int(x) for x in text.split(","))
    except ValueError:
        raise ConfigError(f"shortlist {text!r}: expected PER_WORD,FREQUENT, e.g. 50,100") from None
    if not 1 <= per_word <= STORED_PER_WORD or frequent < 0:
        raise ConfigError(f"shortlist {text!r}: need 1 <= PER_WORD <= {STORED_PER_WORD} and "
                          "FREQUENT >= 0, e.g. 50,100")
    return per_word, frequent

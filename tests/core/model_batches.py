"""Padded batches for the model tests.

- random_batch: random token ids below VOCAB (20) with given source lengths, PAD after
  each sentence's end, target rows starting with BOS.
- tatoeba_batch: real Spanish-English Tatoeba pairs as one batch, with their own
  word ids (for overfitting checks; the file lives in the shared data).
"""
from __future__ import annotations

import torch

from core.models.base import BOS, EOS, PAD, length_mask

VOCAB = 20


def random_batch(lens: list[int], tgt_len: int, seed: int = 0):
    """-> src (batch x max(lens), PAD after each length), src_lens (batch), tgt
    (batch x tgt_len, BOS first); ids drawn from 4..VOCAB-1 with generator seed `seed`."""
    g = torch.Generator().manual_seed(seed)
    src_lens = torch.tensor(lens)
    src = torch.randint(4, VOCAB, (len(lens), max(lens)), generator=g)
    src = src.masked_fill(~length_mask(src_lens), PAD)
    tgt = torch.randint(4, VOCAB, (len(lens), tgt_len), generator=g)
    tgt[:, 0] = BOS
    return src, src_lens, tgt


def tatoeba_batch(path, n: int = 16):
    """n mid-length pairs from line 20001 on, one per source sentence (a source with two
    translations cannot be memorised), whitespace tokens, ids by first occurrence."""
    firsts: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[20000:]:
        src_text, tgt_text = line.split("\t")[:2]
        firsts.setdefault(src_text, tgt_text)
        if len(firsts) == n:
            break
    pairs = list(firsts.items())
    src_v: dict[str, int] = {}
    tgt_v: dict[str, int] = {}

    def ids(text: str, vocab: dict[str, int]) -> list[int]:
        return [vocab.setdefault(w, len(vocab) + 4) for w in text.split()]

    src = [ids(s, src_v) for s, _ in pairs]
    tgt = [ids(t, tgt_v) for _, t in pairs]
    s_lens = torch.tensor([len(s) for s in src])
    S, T = max(s_lens), max(len(t) for t in tgt) + 1
    src_t = torch.zeros(n, S, dtype=torch.long)
    tgt_in = torch.zeros(n, T, dtype=torch.long)
    tgt_out = torch.zeros(n, T, dtype=torch.long)
    for i, (s, t) in enumerate(zip(src, tgt, strict=True)):
        src_t[i, : len(s)] = torch.tensor(s)
        tgt_in[i, : len(t) + 1] = torch.tensor([BOS, *t])
        tgt_out[i, : len(t) + 1] = torch.tensor([*t, EOS])
    return src_t, s_lens, tgt_in, tgt_out, len(src_v) + 4, len(tgt_v) + 4

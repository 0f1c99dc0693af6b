"""Guided alignment (Chen et al. 2016, "Guided Alignment Training for Topic-Aware Neural
Machine Translation"; Garg et al. 2019, "Jointly Learning to Align and Translate with
Transformer Models"): a loss that pulls the attention towards statistical word
alignments of the training pairs.

With `train.guided_alignment = w > 0` the step's loss becomes

    NLL per target token  +  w * (sum over guided rows of -sum_s G[t, s] log a[t, s]) / rows

where a (batch x tgt_len x src_len) is the attention the model computed while predicting
target token t (Seq2SeqOutput.attention; the Transformer families' last-layer mean over
heads) and G the guide row of t: uniform over the source tokens aligned to t. Target
tokens without a link, EOS and padding are not guided.

The alignments come from eflomal, symmetrised with grow-diag-final-and, run on exactly the
token sequences the model is trained on (subword pieces or words, so no projection is
needed). core.services.training computes them once per tokenised training split and
stores them in the corpus's folder, `corpora/<id>/alignments/<sha256 of the token
lines>.pharaoh` (`link_file`, `read_links`): any run whose training tokens are the same
reuses them.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import Tensor

from core.errors import CorpusError, StoreError
from core.models.base import EOS, PAD
from core.safepath import inside

Links = list[tuple[int, int]]  # (source token, target token), 0-based
HEURISTIC = "grow-diag-final-and"
#: attention below this counts as this (log 0 would be -inf where a window masks it)
MIN_ATTENTION = 1e-9


def alignment_loss(attention: Tensor, guide: Tensor) -> tuple[Tensor, int]:
    """(summed cross-entropy of the guided rows, number of guided rows).

    attention: batch x tgt_len x src_len (rows sum to 1 over the real source tokens);
    guide: the same shape, each row uniform over its aligned source tokens or all zero.
    The loss is computed in fp32 whatever the attention's dtype."""
    if attention.shape != guide.shape:
        raise ValueError(f"attention {tuple(attention.shape)} but guide {tuple(guide.shape)}")
    guide = guide.to(attention.device, torch.float32)
    log_attention = attention.float().clamp_min(MIN_ATTENTION).log()
    loss = -(guide * log_attention).sum()
    rows = int((guide.sum(-1) > 0).sum())
    return loss, rows


def head_alignment_loss(alignment: Tensor, guide: Tensor, tgt_out: Tensor
                        ) -> tuple[Tensor, int]:
    """(summed cross-entropy, rows) of an alignment head (core/models/alignment_head.py):
    the guided rows as `alignment_loss`, and every real target word the guide links to
    nothing (not EOS, not padding) pulled towards NULL, whose weight is 1 - the row's sum.

    alignment, guide: batch x tgt_len x src_len; tgt_out: batch x tgt_len token ids."""
    loss, rows = alignment_loss(alignment, guide)
    unlinked = (guide.to(alignment.device).sum(-1) == 0) & (tgt_out != PAD) & (tgt_out != EOS)
    null = (1.0 - alignment.float().sum(-1)).clamp_min(MIN_ATTENTION)  # batch x tgt_len
    return loss - null.log()[unlinked].sum(), rows + int(unlinked.sum())


def token_lines(ids: Sequence[Sequence[int]], vocab) -> list[list[str]]:
    """The token strings the model sees, one list per sentence (eflomal's input)."""
    return [vocab.decode(list(s)) for s in ids]


def split_key(src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]]) -> str:
    """sha256 of the exact tokenised training split (both sides, in order)."""
    h = hashlib.sha256()
    for s, t in zip(src, tgt, strict=True):
        h.update(" ".join(s).encode("utf-8"))
        h.update(b"\t")
        h.update(" ".join(t).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def link_file(corpus_dir: Path, src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]]
              ) -> Path:
    """Where the links of this exact tokenised training split are stored; StoreError when
    a link there leads out of the corpus folder (core.safepath.inside)."""
    return inside(corpus_dir, f"alignments/{split_key(src, tgt)}.pharaoh",
                  "the stored alignment links", StoreError)


def links_text(links: Sequence[Sequence[tuple[int, int]]]) -> str:
    """Pharaoh lines 'i-j ...', one per pair (read_links reads them back)."""
    return "".join(" ".join(f"{i}-{j}" for i, j in sorted(pairs)) + "\n" for pairs in links)


def read_links(path: Path, n: int) -> list[Links]:
    """A stored alignment file: n Pharaoh lines, 'i-j' (source-target, 0-based)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) != n:
        raise CorpusError(path, None, f"holds {len(lines)} alignments for {n} training pairs; "
                          "delete the file and train again to recompute it")
    out: list[Links] = []
    for number, line in enumerate(lines, 1):
        pairs: Links = []
        for link in line.split():
            i, sep, j = link.partition("-")
            if not sep or not i.isascii() or not j.isascii() or not i.isdigit() or not j.isdigit():
                raise CorpusError(path, number, f"bad link {link!r}: expected i-j; delete the "
                                  "file and train again to recompute it")
            pairs.append((int(i), int(j)))
        out.append(pairs)
    return out


"""Target-vocabulary sampling for training (Jean et al. 2015, "On Using Very Large
Target Vocabulary for Neural Machine Translation").

With `train.sampled_softmax = K` (> 0), each training batch normalises the softmax over
a candidate set V' instead of the whole target vocabulary V: every word that occurs in
the batch's targets, plus words drawn uniformly at random from the rest of V until V'
holds K words (a batch with more than K distinct target words keeps them all). With a
proposal distribution uniform over V' the importance-sampling correction of Jean et al.
cancels, and the gradient is that of the softmax restricted to V'. The output layer,
the largest matrix product of a small RNN model, then costs K / V of the full one.

Only training uses it: dev perplexity, validation BLEU and every search normalise over
the whole vocabulary. Sampling draws from torch's global generator, which checkpoints
save and restore, so resumed runs stay exact.
"""
from __future__ import annotations

import torch
from torch import Tensor

from core.models.base import PAD


def candidate_vocab(tgt_out: Tensor, vocab_size: int, size: int) -> tuple[Tensor, Tensor]:
    """The candidate words V' of one batch and its targets renumbered into V'.

    tgt_out: batch x tgt_len target ids (PAD-padded) on any device.
    Returns (out_vocab, targets): out_vocab is 1-D long, sorted, holding PAD (so that
    PAD keeps id 0 and stays masked), every target id, and uniform random fill-up to
    `size` words; targets is batch x tgt_len, each id replaced by its index in out_vocab.
    """
    present = torch.zeros(vocab_size, dtype=torch.bool, device=tgt_out.device)
    present[tgt_out.reshape(-1)] = True
    present[PAD] = True
    missing = size - int(present.sum())
    if missing > 0:
        absent = (~present).nonzero().squeeze(1)
        pick = torch.randperm(absent.numel(), device="cpu")[:missing].to(absent.device)
        present[absent[pick]] = True
    out_vocab = present.nonzero().squeeze(1)  # K, sorted
    position = torch.cumsum(present, 0) - 1  # V -> index in out_vocab
    return out_vocab, position[tgt_out]

"""Forced decoding: score given target sentences with the teacher-forced forward pass.

Used to compare a reference with the model's own output, to draw the attention of a
reference translation, and (in tests) to check that search reports true scores.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from core.models.base import BOS, EOS, PAD, Seq2Seq


@dataclass
class ForcedResult:
    log_prob: float  # sum of token_log_probs
    token_log_probs: list[float]  # one per target token, EOS included
    attention: np.ndarray  # (len(tgt) + 1) x src_len
    positions: np.ndarray | None = None  # len(tgt) + 1 (local-p), else None
    gates: np.ndarray | None = None  # src_len: context models' lambda per token, else None
    #: Transformer families: layers x heads x (len(tgt) + 1) x src_len, every decoder
    #: layer's and head's cross-attention, padding cut like `attention` (which is the
    #: mean over heads of the last layer); None for RNN models and ensembles
    layer_attention: np.ndarray | None = None
    #: (len(tgt) + 1) x src_len: the alignment head's rows (model.alignment_head; the EOS
    #: row last, like `attention`), else None
    alignment: np.ndarray | None = None


def teacher_forcing_tensors(
    tgt_ids_list: list[list[int]], device: torch.device
) -> tuple[Tensor, Tensor]:
    """-> tgt_in (batch x T: BOS y1..yn PAD..), tgt_out (batch x T: y1..yn EOS PAD..)."""
    width = max(len(t) for t in tgt_ids_list) + 1
    tgt_in = torch.full((len(tgt_ids_list), width), PAD, dtype=torch.long)
    tgt_out = torch.full((len(tgt_ids_list), width), PAD, dtype=torch.long)
    for b, ids in enumerate(tgt_ids_list):
        tgt_in[b, : len(ids) + 1] = torch.tensor([BOS, *ids], dtype=torch.long)
        tgt_out[b, : len(ids) + 1] = torch.tensor([*ids, EOS], dtype=torch.long)
    return tgt_in.to(device), tgt_out.to(device)


@torch.no_grad()  # not inference_mode: autocast caches weight casts only outside it
def score_targets(
    model: Seq2Seq, src: Tensor, src_lens: Tensor, tgt_ids_list: list[list[int]], **extra: Tensor
) -> list[ForcedResult]:
    """Log-probability of each target (ids without BOS/EOS) given its source.

    src: batch x src_len (natural order), src_lens: batch, len(tgt_ids_list) == batch.
    """
    if len(tgt_ids_list) != src.size(0):
        raise ValueError(f"{len(tgt_ids_list)} targets for {src.size(0)} sources")
    model.eval()
    param = next(model.parameters(), None)
    device = src.device if param is None else param.device
    src, src_lens = src.to(device), src_lens.to(device)
    tgt_in, tgt_out = teacher_forcing_tensors(tgt_ids_list, device)
    out = model(src, src_lens, tgt_in, **extra)
    gold = out.log_probs.float().gather(2, tgt_out[:, :, None]).squeeze(2)  # batch x T
    results = []
    for b, ids in enumerate(tgt_ids_list):
        n, s = len(ids) + 1, int(src_lens[b])
        token_lps = gold[b, :n].tolist()
        results.append(
            ForcedResult(
                log_prob=float(sum(token_lps)),
                token_log_probs=token_lps,
                attention=out.attention[b, :n, :s].float().cpu().numpy(),
                positions=None
                if out.positions is None
                else out.positions[b, :n].float().cpu().numpy(),
                gates=None if out.gates is None else out.gates[b, :s].float().cpu().numpy(),
                layer_attention=None
                if out.layer_attention is None
                else out.layer_attention[:, b, :, :n, :s].float().cpu().numpy(),
                alignment=None
                if out.alignment is None
                else out.alignment[b, :n, :s].float().cpu().numpy(),
            )
        )
    return results

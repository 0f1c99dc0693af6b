"""What the searches share: their hypotheses, length limit, scores and host copies.

Greedy search (core.infer.greedy) and beam search (core.infer.beam) run over any
model that honours the Seq2Seq step contract; both decode a whole batch of sentences at
once. Every returned hypothesis carries its own attention matrix (one row per output
token including EOS, one column per real source token), for local-p models its own
predicted positions, and for context models the gate values lambda per source token
(see `encoder_gates`).

Length limit: a sentence of `n` source tokens gets at most
`min(max_len_abs, ceil(max_len_ratio * n))` output tokens before EOS; at the step
after that EOS is forced, so every hypothesis ends with a scored EOS and its
`log_prob` always equals the forced-decoding score of its tokens (over the whole
vocabulary; with a shortlist, `out_vocab`, each step is normalised over the K candidate
words instead, so scores are higher than the forced score). `min_len` forbids EOS
before that many output tokens (with min_len = max_len_abs every output has exactly
that length: the decoding benchmark's fixed length).

Non-finite scores (NaN or infinite log-probabilities: NaN weights, an overflow) end a
search with NonFiniteScores. The test costs no extra read from the device: greedy checks
the log-probs its hypotheses bring to the host anyway, beam search the best alive score
per sentence it reads at every step (NaN wins torch's max and top-k, so a NaN candidate
reaches it) and, at the end, that every sentence finished (a NaN EOS never does).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from core.errors import WorkbenchError
from core.models.base import EOS, Seq2Seq

NEG_INF = float("-inf")


class NonFiniteScores(WorkbenchError):
    """A search met log-probabilities that are NaN or infinite: the model's weights are
    broken (or a reduced-precision step overflowed). `step` is the 1-based output step.
    TranslationSession turns it into a CheckpointError naming the checkpoints."""

    def __init__(self, step: int, value: float | None = None):
        self.step, self.value = step, value
        found = "" if value is None else f" ({value})"
        super().__init__(f"the model's scores are not finite{found} at output step "
                         f"{step}: its weights are NaN or infinite, or the step overflowed")


def check_finite(value: float, step: int) -> None:
    """NonFiniteScores unless `value` (a log-probability or a sum of them, already on
    the host) is finite."""
    if not math.isfinite(value):
        raise NonFiniteScores(step, value)


@dataclass
class Hypothesis:
    """One output of a search: its words, scores and attention (host arrays)."""

    tokens: list[int]  # output ids, without BOS/EOS
    token_log_probs: list[float]  # one per output token, EOS included
    score: float  # the ranking score (log_prob, possibly length-penalised)
    log_prob: float  # sum of token_log_probs
    attention: np.ndarray  # (len(tokens) + 1) x src_len
    positions: np.ndarray | None = None  # len(tokens) + 1 (local-p), else None
    gates: np.ndarray | None = None  # src_len: context models' lambda per token, else None


def encoder_gates(enc: dict[str, Tensor]) -> Tensor | None:
    """The gate values lambda of an encoded batch (batch x src_width, 0 on padding), or
    None for models without a gated context merge.

    Context models put them in their encoder state as ``enc["gates"]``: the context
    Transformer's lambda is d_model wide per token and is reported as its mean over the
    d_model dimensions (1 = the token's representation came from the sentence itself,
    0 = from the context); an Ensemble reports the mean over its members that have gates.
    The gates depend on the source and context only, so one row serves every hypothesis.
    """
    gates = enc.get("gates")
    return None if gates is None else gates.float()


def max_output_lengths(src_lens: Tensor, max_len_ratio: float, max_len_abs: int) -> list[int]:
    """Most output tokens (EOS excluded) allowed per sentence.

    src_lens: batch (1-D) -> min(max_len_abs, ceil(max_len_ratio * n)) per sentence,
    at least 1."""
    return [
        max(1, min(max_len_abs, math.ceil(max_len_ratio * int(n)))) for n in src_lens.tolist()
    ]


def lp_divisor(length: int, alpha: float = 0.0, normalise: bool = False) -> float:
    """Divisor of a hypothesis' log-prob: GNMT's ((5 + |Y|) / 6) ** alpha, or |Y| when
    `normalise` (plain length normalisation); 1 when alpha == 0 and not normalising.
    `length` counts the scored tokens, EOS included."""
    if normalise:
        return float(length)
    if alpha == 0.0:
        return 1.0
    return ((5.0 + length) / 6.0) ** alpha


def new_hypothesis(
    tokens: list[int], token_lps: list[float], attn: np.ndarray, pos: np.ndarray | None,
    src_len: int, divisor: float = 1.0, gates: np.ndarray | None = None,
) -> Hypothesis:
    """attn: out_len x src_width, pos: out_len, gates: src_width, host arrays as to_host
    gives them; the hypothesis keeps its own copies (attn and gates cropped to the
    sentence's real source length), not views that would keep a step's whole batch
    alive. The score is recomputed from the token log-probs (in float64), so equal
    outputs get exactly equal scores whichever search found them."""
    log_prob = float(sum(token_lps))
    return Hypothesis(
        tokens=tokens,
        token_log_probs=token_lps,
        score=log_prob / divisor,
        log_prob=log_prob,
        attention=attn[:, :src_len].copy(),
        positions=None if pos is None else pos.copy(),
        gates=None if gates is None else gates[:src_len].copy(),
    )


def to_host(rows: Tensor, *histories: Tensor | None) -> list[np.ndarray | None]:
    """The histories' `rows` (a 1-D index), each as one fp32 (ids: int64) numpy array:
    one device-to-host copy per history for all hypotheses that end at a step, where a
    copy per hypothesis and history made a GPU search wait for the GPU some 1,800 times
    a batch of 64 sentences at beam 5; what each hypothesis then reads is numpy's, no
    tensor op. None stays None."""
    out = []
    for h in histories:
        if h is None:
            out.append(None)
            continue
        picked = h[rows]
        out.append((picked if picked.dtype == torch.long else picked.float()).cpu().numpy())
    return out


def host_read(values: Tensor) -> list:
    """A small tensor's values (any shape, e.g. n_act x (k + 1)) as nested Python lists:
    one device-to-host copy, on a GPU one wait for the GPU (beam search makes exactly one
    a step, core.infer.beam)."""
    return values.tolist()


def to_device(values: list, device: torch.device, dtype: torch.dtype = torch.long) -> Tensor:
    """A host list as a 1-D tensor on `device`. To a GPU it goes from pinned memory
    without waiting: torch copies pageable host memory to a GPU only after the GPU's queue
    has drained (a wait for the GPU per copy, as a read back would be)."""
    host = torch.tensor(values, dtype=dtype)
    if device.type != "cuda":
        return host.to(device)
    return host.pin_memory().to(device, non_blocking=True)


def shortlist_opts(out_vocab: Tensor | None, device: torch.device) -> dict[str, Tensor]:
    """model.step's keyword for a shortlist `out_vocab` (K target ids, 1-D), moved to
    `device`: {} without one. ValueError unless the ids are sorted, unique and start with the specials 0..EOS (so that EOS's index among the
    candidates is EOS)."""
    if out_vocab is None:
        return {}
    ids = out_vocab.to(device=device, dtype=torch.long)
    if ids.dim() != 1 or ids.numel() <= EOS or not torch.equal(
            ids[:EOS + 1], torch.arange(EOS + 1, device=device)) or bool((ids.diff() <= 0).any()):
        raise ValueError("out_vocab must be sorted unique target ids starting with 0..EOS")
    return {"out_vocab": ids}


def prepare_inputs(model: Seq2Seq, src: Tensor, src_lens: Tensor) -> tuple[Tensor, Tensor]:
    """Puts `model` in eval mode and moves src (batch x S) and src_lens (batch, 1-D) to
    the model's device (src's own for a model without parameters)."""
    model.eval()
    param = next(model.parameters(), None)
    device = src.device if param is None else param.device
    return src.to(device), src_lens.to(device)

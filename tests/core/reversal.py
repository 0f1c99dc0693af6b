"""The reversal task, a toy corpus whose gold alignment is the anti-diagonal (Joey NMT's
favourite sanity check): source = random tokens, target = the same tokens reversed.

Reusable by any test: `make_reversal_data`, `collate`, `train_reversal`,
`reversal_accuracy`, `evaluate_reversal`, `antidiagonal_rate`, `antidiagonal_links`;
`reversal_train_data`, `wide_reversal_train_data` and `guided_reversal_train_data` give
the task as core.train.loop.TrainData for `train_model`.
Token ids are >= 4 (0-3 are PAD UNK BOS EOS), so a vocabulary of `vocab` ids has
vocab - 4 symbols.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass

import torch
from torch import Tensor

from core.data.batching import BatchPlan
from core.models.base import BOS, EOS, PAD, Seq2Seq
from core.train.loop import TrainData

Pair = tuple[list[int], list[int]]


def make_reversal_data(n: int, vocab: int, min_len: int, max_len: int, seed: int) -> list[Pair]:
    """n pairs (src ids, reversed src ids), lengths uniform in [min_len, max_len]."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        src = [rng.randrange(4, vocab) for _ in range(rng.randint(min_len, max_len))]
        pairs.append((src, src[::-1]))
    return pairs


def reversal_train_data(n_train: int = 96, batch: int = 16) -> TrainData:
    """n_train training and 24 dev pairs over 10 symbols (vocabulary 14), 3-7 tokens,
    batches of `batch` sentences."""
    train = make_reversal_data(n_train, 14, 3, 7, seed=1)
    dev = make_reversal_data(24, 14, 3, 7, seed=2)

    def make_plan(src, tgt, ctx, shuffle):
        return BatchPlan(src, tgt, batch_size=batch, seed=7, shuffle=shuffle, ctx_ids=ctx)

    return TrainData([s for s, _ in train], [t for _, t in train], [s for s, _ in dev],
                     [t for _, t in dev], 14, 14, make_plan)


def wide_reversal_train_data() -> TrainData:
    """60 symbols, batches of 4 short sentences: ~20 distinct targets, so K = 30 samples."""
    train = make_reversal_data(48, 60, 3, 6, seed=1)
    dev = make_reversal_data(12, 60, 3, 6, seed=2)

    def make_plan(src, tgt, ctx, shuffle):
        return BatchPlan(src, tgt, batch_size=4, seed=7, shuffle=shuffle, ctx_ids=ctx)

    return TrainData([s for s, _ in train], [t for _, t in train], [s for s, _ in dev],
                     [t for _, t in dev], 60, 60, make_plan)


def guided_reversal_train_data(guided_links) -> tuple[TrainData, list[Pair]]:
    """wide_reversal_train_data's pairs with guided_links(n) (0-based (src, tgt) links of
    a sentence of n tokens) as each training pair's guided-alignment links; -> (the
    data, the dev pairs)."""
    train = make_reversal_data(48, 60, 3, 6, seed=1)
    dev = make_reversal_data(12, 60, 3, 6, seed=2)
    links = [guided_links(len(s)) for s, _ in train]

    def make_plan(src, tgt, ctx, shuffle, links=None):
        return BatchPlan(src, tgt, batch_size=4, seed=7, shuffle=shuffle, ctx_ids=ctx, links=links)

    return TrainData([s for s, _ in train], [t for _, t in train], [s for s, _ in dev],
                     [t for _, t in dev], 60, 60, make_plan, train_links=links), dev


@dataclass
class ReversalBatch:
    src: Tensor  # batch x S
    src_lens: Tensor  # batch
    tgt_in: Tensor  # batch x T  (BOS y1 .. yn)
    tgt_out: Tensor  # batch x T  (y1 .. yn EOS)
    tgt_lens: Tensor  # batch, n + 1 (EOS included)


def collate(pairs: list[Pair]) -> ReversalBatch:
    bsz = len(pairs)
    s_max = max(len(s) for s, _ in pairs)
    t_max = max(len(t) for _, t in pairs) + 1
    src = torch.full((bsz, s_max), PAD, dtype=torch.long)
    tgt_in = torch.full((bsz, t_max), PAD, dtype=torch.long)
    tgt_out = torch.full((bsz, t_max), PAD, dtype=torch.long)
    for i, (s, t) in enumerate(pairs):
        src[i, : len(s)] = torch.tensor(s)
        tgt_in[i, : len(t) + 1] = torch.tensor([BOS, *t])
        tgt_out[i, : len(t) + 1] = torch.tensor([*t, EOS])
    src_lens = torch.tensor([len(s) for s, _ in pairs])
    tgt_lens = torch.tensor([len(t) + 1 for _, t in pairs])
    return ReversalBatch(src, src_lens, tgt_in, tgt_out, tgt_lens)


def token_nll(model: Seq2Seq, batch: ReversalBatch) -> Tensor:
    """Mean negative log-likelihood per real target token (scalar)."""
    out = model(batch.src, batch.src_lens, batch.tgt_in)
    return torch.nn.functional.nll_loss(
        out.log_probs.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=PAD
    )


def train_reversal(
    model: Seq2Seq,
    data: list[Pair],
    steps: int,
    batch_size: int = 32,
    lr: float = 1e-2,
    seed: int = 0,
    clip_norm: float = 5.0,
    target_loss: float = 0.0,
) -> dict[str, float | list[float]]:
    """Adam on random batches of `data` for `steps` steps (or until the batch loss falls
    below `target_loss` for 5 steps in a row). Returns {'losses', 'steps', 'seconds'}."""
    rng = random.Random(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses: list[float] = []
    below = 0
    start = time.perf_counter()
    for _ in range(steps):
        batch = collate(rng.sample(data, min(batch_size, len(data))))
        loss = token_nll(model, batch)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        opt.step()
        losses.append(loss.item())
        below = below + 1 if loss.item() < target_loss else 0
        if below >= 5:
            break
    model.eval()
    return {"losses": losses, "steps": len(losses), "seconds": time.perf_counter() - start}


@torch.no_grad()
def evaluate_reversal(model: Seq2Seq, data: list[Pair]) -> dict[str, float | Tensor]:
    """Teacher-forced evaluation in eval mode: token accuracy (words and EOS), the
    anti-diagonal rate of the attention argmax, and the tensors behind them
    (attention batch x T x S, src_lens, tgt_lens) for AER-style checks."""
    model.eval()
    batch = collate(data)
    out = model(batch.src, batch.src_lens, batch.tgt_in)
    real = batch.tgt_out != PAD
    correct = (out.log_probs.argmax(-1) == batch.tgt_out) & real
    return {
        "accuracy": correct.sum().item() / real.sum().item(),
        "antidiagonal": antidiagonal_rate(out.attention, batch.src_lens, batch.tgt_lens),
        "attention": out.attention,
        "src_lens": batch.src_lens,
        "tgt_lens": batch.tgt_lens,
    }


def reversal_accuracy(model: Seq2Seq, data: list[Pair]) -> float:
    """Teacher-forced token accuracy (argmax == gold) over real target tokens."""
    return float(evaluate_reversal(model, data)["accuracy"])


def antidiagonal_rate(attention: Tensor, src_lens: Tensor, tgt_lens: Tensor) -> float:
    """Fraction of target words t whose attention argmax is source word S-1-t.

    attention: batch x T x S (natural source order); src_lens: batch; tgt_lens: batch
    (may count EOS: only t < min(tgt_len, src_len) are scored, EOS has no gold link).
    """
    argmax = attention.argmax(-1)  # batch x T
    t = torch.arange(attention.size(1))[None, :]
    gold = src_lens[:, None] - 1 - t
    scored = t < torch.minimum(tgt_lens, src_lens)[:, None]
    return ((argmax == gold) & scored).sum().item() / scored.sum().item()


def antidiagonal_links(src_len: int, tgt_len: int | None = None) -> set[tuple[int, int]]:
    """Gold alignment of one reversal pair as 0-based (src, tgt) links."""
    n = src_len if tgt_len is None else min(src_len, tgt_len)
    return {(src_len - 1 - t, t) for t in range(n)}

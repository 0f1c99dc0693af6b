"""Length-bucketed, deterministic batches.

`BatchPlan.epoch(e)` shuffles the pair indices with a generator seeded by (seed, e),
cuts them into pools of ~`pool_batches` batches, sorts each pool by length (so a batch
holds sentences of similar length and little padding) and cuts the pool into batches,
by sentence count or by a target-token budget; finally the batch order is shuffled.
The same (seed, epoch) always gives the same batches, so training resumes exactly at
(epoch, batch index). `collate(indices)` pads a batch into tensors.

Source reversal is not done here: models that reverse do it themselves, and the
source is always in natural order in a Batch.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from core.data.vocab import BOS, EOS, PAD


@dataclass
class Batch:
    src: Tensor  # batch x src_len (long, PAD-padded, natural order, no BOS/EOS)
    src_lens: Tensor  # batch
    tgt_in: Tensor  # batch x tgt_len: BOS y1 .. yn, PAD-padded
    tgt_out: Tensor  # batch x tgt_len: y1 .. yn EOS, PAD-padded
    tgt_lens: Tensor  # batch: n + 1 (the length of tgt_in / tgt_out rows)
    indices: list[int]  # positions of the pairs in the split
    ctx: Tensor | None = None  # batch x ctx_len: previous sentence(s), PAD-padded
    ctx_lens: Tensor | None = None  # batch
    # batch x tgt_len x src_len: guided-alignment targets, row t uniform over the source
    # tokens aligned to tgt_out[t] (all zero: no guidance for that row); see guide_tensor
    guide: Tensor | None = None

    def to(self, device: torch.device | str) -> Batch:
        """A copy with every tensor moved to `device` (non-blocking) and the same shapes
        (src batch x S, tgt_in/tgt_out batch x T, ...); `indices` shared.

        To a GPU the tensors go through pinned memory: a copy from pageable memory waits
        for every kernel queued before it, which would make each training step wait for
        the previous one to finish on the GPU. The moved src_lens keeps its host copy
        (host_lengths), so that packing a recurrent encoder's batch reads no length back."""
        def move(t: Tensor | None) -> Tensor | None:
            return None if t is None else to_device(t, device)

        moved = Batch(
            move(self.src), move(self.src_lens), move(self.tgt_in), move(self.tgt_out),
            move(self.tgt_lens), self.indices, move(self.ctx), move(self.ctx_lens),
            move(self.guide),
        )
        if moved.src_lens is not self.src_lens and self.src_lens.device.type == "cpu":
            moved.src_lens._host_lengths = self.src_lens
        return moved

    @property
    def n_tgt_tokens(self) -> int:
        """Real (non-PAD) target tokens, EOS included: what the loss is averaged over."""
        return int(self.tgt_lens.sum())

    def __len__(self) -> int:
        return len(self.indices)


def to_device(t: Tensor, device: torch.device | str) -> Tensor:
    """t (any shape: batch x len stays batch x len) on `device`, copied without waiting:
    to a GPU through pinned memory (a copy from pageable memory waits for every kernel
    queued before it)."""
    device = torch.device(device)
    if device.type == "cuda" and t.device.type == "cpu":
        t = t.pin_memory()
    return t.to(device, non_blocking=True)


def host_lengths(lens: Tensor) -> Tensor:
    """lens (1-D, any device) -> the same lengths (1-D) on the host: the copy Batch.to
    kept beside a moved src_lens, else read back (on a GPU that waits for its queued
    work)."""
    kept = getattr(lens, "_host_lengths", None)
    return kept if kept is not None else lens.detach().cpu()


def pad(seqs: Sequence[Sequence[int]], min_len: int = 1, extra: int = 0) -> tuple[Tensor, Tensor]:
    """Sequences -> (batch x width long tensor padded with PAD, lengths batch), width =
    max(min_len, longest + extra): `extra` PAD columns for a token to be added.

    One vectorised fill (numpy): a loop of a row tensor each took 60 ms for a batch of
    1,820 sentences (32k target tokens), a GPU step's worth of host time."""
    lens = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
    width = max(min_len, int(lens.max()) + extra if len(seqs) else 0)
    out = np.full((len(seqs), width), PAD, dtype=np.int64)
    filled = np.arange(width)[None, :] < lens[:, None]
    out[filled] = np.fromiter((t for s in seqs for t in s), dtype=np.int64,
                              count=int(lens.sum()))  # row-major: each row's tokens in order
    return torch.from_numpy(out), torch.from_numpy(lens)


def guide_tensor(links: Sequence[Sequence[tuple[int, int]]], src_width: int,
                 tgt_width: int) -> Tensor:
    """Guided-alignment targets: batch x tgt_width x src_width, float32.

    links[b] holds (source token, target token) pairs of example b (0-based, natural
    source order, target token j = tgt_out[b, j]). Row j is uniform over the source
    tokens linked to target token j; rows of unlinked tokens, EOS and PAD stay zero."""
    guide = torch.zeros(len(links), tgt_width, src_width)
    for b, pairs in enumerate(links):
        for i, j in pairs:
            if i < src_width and j < tgt_width:
                guide[b, j, i] = 1.0
    return guide / guide.sum(-1, keepdim=True).clamp_min(1.0)


class BatchPlan:
    """Plans batches over one split.

    src_ids/tgt_ids: token ids per pair (no BOS/EOS); ctx_ids: optional context ids per
    pair (see core/data/context.py). Exactly one of batch_size (sentences) and
    batch_tokens (> 0: padded target tokens per batch, `len(batch) * (max target
    length + 1)`) decides the cut; a single pair over the budget gets a batch alone.
    shuffle=False gives one fixed length-sorted order (dev/test), whatever the epoch.
    links: optional (source token, target token) alignment links per pair; collate then
    fills Batch.guide (guided alignment, core/train/guidance.py)."""

    def __init__(
        self, src_ids: Sequence[Sequence[int]], tgt_ids: Sequence[Sequence[int]],
        batch_size: int = 64, batch_tokens: int = 0, seed: int = 0, shuffle: bool = True,
        pool_batches: int = 100, ctx_ids: Sequence[Sequence[int]] | None = None,
        links: Sequence[Sequence[tuple[int, int]]] | None = None,
    ) -> None:
        if len(src_ids) != len(tgt_ids):
            raise ValueError(f"{len(src_ids)} sources but {len(tgt_ids)} targets")
        if ctx_ids is not None and len(ctx_ids) != len(src_ids):
            raise ValueError(f"{len(ctx_ids)} contexts for {len(src_ids)} pairs")
        if batch_tokens <= 0 and batch_size <= 0:
            raise ValueError("batch_size or batch_tokens must be positive")
        if links is not None and len(links) != len(src_ids):
            raise ValueError(f"{len(links)} alignments for {len(src_ids)} pairs")
        self.src_ids, self.tgt_ids, self.ctx_ids, self.links = src_ids, tgt_ids, ctx_ids, links
        self.batch_size, self.batch_tokens = batch_size, batch_tokens
        self.seed, self.shuffle, self.pool_batches = seed, shuffle, pool_batches
        self.src_lens = np.array([len(s) for s in src_ids], dtype=np.int64)
        self.tgt_lens = np.array([len(t) + 1 for t in tgt_ids], dtype=np.int64)  # + EOS

    def __len__(self) -> int:
        return len(self.src_ids)

    def _cut(self, order: np.ndarray) -> list[list[int]]:
        """Cut length-sorted indices into batches."""
        if self.batch_tokens <= 0:
            size = self.batch_size
            return [order[i: i + size].tolist() for i in range(0, len(order), size)]
        batches: list[list[int]] = []
        current: list[int] = []
        longest = 0
        for i in order.tolist():
            t = int(self.tgt_lens[i])
            if current and (len(current) + 1) * max(longest, t) > self.batch_tokens:
                batches.append(current)
                current, longest = [], 0
            current.append(i)
            longest = max(longest, t)
        if current:
            batches.append(current)
        return batches

    def _sorted(self, indices: np.ndarray) -> np.ndarray:
        # by target length, then source length, then index (a total, stable order)
        keys = (indices, self.src_lens[indices], self.tgt_lens[indices])
        return indices[np.lexsort(keys)]

    def _pool_size(self) -> int:
        if self.batch_tokens <= 0:
            per_batch = self.batch_size
        else:
            mean = float(self.tgt_lens.mean()) if len(self.tgt_lens) else 1.0
            per_batch = max(1, int(self.batch_tokens // max(mean, 1.0)))
        return max(1, per_batch * self.pool_batches)

    def epoch(self, epoch: int) -> list[list[int]]:
        """The batches (lists of pair indices) of epoch `epoch`."""
        n = len(self.src_ids)
        if not self.shuffle:
            return self._cut(self._sorted(np.arange(n)))
        rng = np.random.default_rng([self.seed, epoch])
        perm = rng.permutation(n)
        pool = self._pool_size()
        batches: list[list[int]] = []
        for start in range(0, n, pool):
            batches.extend(self._cut(self._sorted(perm[start: start + pool])))
        order = rng.permutation(len(batches))
        return [batches[i] for i in order]

    def collate(self, indices: Sequence[int]) -> Batch:
        """The pairs `indices` padded into a Batch: src batch x S, tgt_in (BOS y) and tgt_out
        (y EOS) batch x T, lengths batch; ctx batch x C and guide batch x T x S when planned."""
        indices = [int(i) for i in indices]
        src, src_lens = pad([self.src_ids[i] for i in indices])
        # y padded with one spare column: tgt_in is BOS y shifted right, tgt_out y EOS
        tgt, y_lens = pad([self.tgt_ids[i] for i in indices], extra=1)
        tgt_in = torch.cat([torch.full_like(tgt[:, :1], BOS), tgt[:, :-1]], dim=1)
        tgt_out = tgt.index_put_((torch.arange(len(indices)), y_lens), torch.tensor(EOS))
        tgt_lens = y_lens + 1
        ctx = ctx_lens = None
        if self.ctx_ids is not None:
            ctx, ctx_lens = pad([self.ctx_ids[i] for i in indices])
        guide = None
        if self.links is not None:
            guide = guide_tensor([self.links[i] for i in indices], src.size(1), tgt_out.size(1))
        return Batch(src, src_lens, tgt_in, tgt_out, tgt_lens, indices, ctx, ctx_lens, guide)

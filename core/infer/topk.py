"""The k best entries of each row of a search step's scores over the vocabulary.

torch.topk on the CPU selects within each whole row (a partial sort of 15k entries per
row): 0.9 ms of a 12 ms beam-5 step of the bench model (160 rows x 14,790, fp32;
docs/benchmarks.md). `row_topk` first takes the maximum of each block of
BLOCK entries (one vectorised pass), keeps the k blocks with the largest maxima, and
selects the k best among their entries and the row's last, partial block. That is exact:
an entry outside those k blocks is no greater than k other entries (each kept block's
maximum), so the k best values are all among the candidates. The values are
torch.topk's; among exactly equal values the indices may be other ones of them (a
search may then pick another of two equally scored words; torch.topk promises no order
among ties either).
"""
from __future__ import annotations

import torch
from torch import Tensor

#: entries per block. At 128 a top-10 of 160 x 14,790 took 557 against torch.topk's 926
#: us, a top-2 of 32 x 14,790 63 against 158 (2 threads; the same with AVX2 kernels). At
#: 64, in a slower window: 1,069 against 1,461 us at 128 for the top-10, 147 against 164
#: for the top-2, and 1.17-1.27 against 1.41-1.71 ms a beam-5 step in the search
#: (docs/benchmarks.md); fewer candidates to pick from outweigh more blocks to rank
BLOCK = 64
#: below this many scores torch.topk is as fast: the blocks cost about 30 us whatever the
#: size (8 x 6,000, top-2: 30 against 21 us; 8 x 14,790: 33 against 47)
MIN_SCORES = 100_000


def uses_blocks(scores: Tensor, k: int) -> bool:
    """scores: rows x V -> whether `row_topk` takes the blocks: on the CPU, at least
    MIN_SCORES scores, and more than 4k full blocks a row (not a shortlist's few
    candidates)."""
    rows, vocab = scores.shape
    return (scores.device.type == "cpu" and rows * vocab >= MIN_SCORES
            and vocab // BLOCK > 4 * k)


def row_topk(scores: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """scores: rows x V, 1 <= k <= V -> (values rows x k, best first; indices rows x k
    into V), as `scores.topk(k, dim=-1)`: by blocks where `uses_blocks`, else torch.topk
    itself."""
    if not uses_blocks(scores, k):
        return scores.topk(k, dim=-1)
    rows, vocab = scores.shape
    full = vocab // BLOCK
    scores = scores.contiguous()
    block_max = scores[:, : full * BLOCK].view(rows, full, BLOCK).amax(dim=-1)  # rows x full
    blocks = block_max.topk(k, dim=-1).indices  # rows x k
    offsets = torch.arange(BLOCK, device=scores.device)
    candidates = (blocks[:, :, None] * BLOCK + offsets).view(rows, k * BLOCK)
    if vocab > full * BLOCK:  # the last, partial block: always a candidate
        tail = torch.arange(full * BLOCK, vocab, device=scores.device)
        candidates = torch.cat([candidates, tail.expand(rows, -1)], dim=1)
    values, picked = scores.gather(1, candidates).topk(k, dim=-1)
    return values, candidates.gather(1, picked)

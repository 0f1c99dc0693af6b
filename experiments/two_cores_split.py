"""The bench model's batch cut in two halves, each half's forward and backward on its
own core (a Python thread with one intra-op thread each), against the whole batch with
two intra-op threads: `docs/benchmarks.md`, "each core its own half of the batch".

Three measurements, on the bench split of ../shared/bench (prepare_tatoeba.py's folder):
1. a 2,048^3 product with 2 intra-op threads, with 1, and twice at once on two Python
   threads of 1 intra-op thread each;
2. the forward and backward of one batch (ms): its halves one after the other and at
   once on the two threads, and the whole batch on one intra-op thread;
3. whole training steps (the gradients of both halves summed, the clip, Adam), split
   against plain, alternating blocks of --steps steps on two copies of the model.

    python experiments/two_cores_split.py --data ~/.cache/nmt-peers/tatoeba-es-en
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.allocator import keep_freed_memory  # noqa: E402

keep_freed_memory()  # as the entry point does

import torch  # noqa: E402

from core.data.batching import BatchPlan  # noqa: E402
from core.models.registry import build_model  # noqa: E402
from core.tooling.bench import (  # noqa: E402
    bench_variants,
    bench_vocabularies,
    load_bench_pairs,
    load_preset,
    variant_data,
    variant_preset,
)
from core.train.loop import forward_batch, sequence_nll  # noqa: E402
from core.train.optim import build_optimizer, clip_gradients, embedding_rows  # noqa: E402

VARIANT = "luong-global-general"
CPU = torch.device("cpu")


def product_rates(side: ThreadPoolExecutor) -> None:
    """Measurement 1: GFLOP/s of a 2,048^3 fp32 product, 20 calls."""
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)

    def rate(threads: int) -> float:
        torch.set_num_threads(threads)
        start = time.perf_counter()
        for _ in range(20):
            torch.mm(a, b)
        return 20 * 2 * 2048 ** 3 / (time.perf_counter() - start) / 1e9

    print(f"product, 2 intra-op threads: {rate(2):.1f} GFLOP/s")
    print(f"product, 1 intra-op thread: {rate(1):.1f} GFLOP/s")
    other = side.submit(rate, 1)
    mine = rate(1)
    print(f"product, twice at once, 1 intra-op thread each: {mine:.1f} + "
          f"{other.result():.1f} GFLOP/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="prepare_tatoeba.py's output folder")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--amp", action="store_true", help="bf16 autocast")
    args = ap.parse_args()

    src, tgt = load_bench_pairs(args.data, "onmt")
    _, _, batch_size, batch_tokens = variant_data(VARIANT)
    src_vocab, tgt_vocab = bench_vocabularies(VARIANT, src, tgt)
    plan = BatchPlan([src_vocab.encode(s) for s in src], [tgt_vocab.encode(t) for t in tgt],
                     batch_size=batch_size, batch_tokens=batch_tokens, seed=1)
    batches = plan.epoch(0)
    cfg = dict(bench_variants())[VARIANT]
    train_cfg = load_preset(variant_preset(VARIANT)).train
    side = ThreadPoolExecutor(1, initializer=lambda: torch.set_num_threads(1))

    def make():
        torch.manual_seed(1)
        model = build_model(cfg, len(src_vocab), len(tgt_vocab)).train()
        return model, build_optimizer(model.parameters(), train_cfg)

    def gradients(model, batch, n_total: int) -> tuple:
        """The gradients of batch's summed loss / n_total, one per parameter (or None)."""
        out, _, targets = forward_batch(model, batch, CPU, args.amp)
        loss_sum, _, _ = sequence_nll(out.scores, targets, n_tokens=batch.n_tgt_tokens,
                                      consume_scores=True)
        params = [p for p in model.parameters() if p.requires_grad]
        return torch.autograd.grad(loss_sum / n_total, params, allow_unused=True)

    def halves(indices):
        k = len(indices) // 2
        return plan.collate(indices[:k]), plan.collate(indices[k:])

    def step_plain(model, opt, indices) -> int:
        """As bench_step: whole batch, 2 intra-op threads (set by the caller)."""
        batch = plan.collate(indices)
        out, _, targets = forward_batch(model, batch, CPU, args.amp)
        loss_sum, _, n = sequence_nll(out.scores, targets, n_tokens=batch.n_tgt_tokens,
                                      consume_scores=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_sum / n
        rows = embedding_rows(loss)
        loss.backward()
        clip_gradients(model.parameters(), train_cfg.clip_norm, rows)
        opt.step()
        return n

    def step_split(model, opt, indices) -> int:
        """The halves at once, 1 intra-op thread each; gradients summed in a fixed order."""
        first, second = halves(indices)
        n = first.n_tgt_tokens + second.n_tgt_tokens
        pending = side.submit(gradients, model, second, n)
        mine = gradients(model, first, n)
        params = [p for p in model.parameters() if p.requires_grad]
        for p, a, b in zip(params, mine, pending.result(), strict=True):
            p.grad = a if b is None else (b if a is None else a.add_(b))
        clip_gradients(model.parameters(), train_cfg.clip_norm)
        opt.step()
        return n

    product_rates(side)

    torch.set_num_threads(1)
    model, _ = make()
    for i in range(3):
        for half in halves(batches[i]):
            gradients(model, half, 500)
    for r in range(3):
        one_after = at_once = whole = 0.0
        for i in range(10):
            indices = batches[100 + r * 10 + i]
            first, second = halves(indices)
            start = time.perf_counter()
            gradients(model, first, 500)
            gradients(model, second, 500)
            one_after += time.perf_counter() - start
            start = time.perf_counter()
            pending = side.submit(gradients, model, second, 500)
            gradients(model, first, 500)
            pending.result()
            at_once += time.perf_counter() - start
            start = time.perf_counter()
            gradients(model, plan.collate(indices), 500)
            whole += time.perf_counter() - start
        print(f"forward + backward, ms a batch: halves one after the other {one_after * 100:.1f}"
              f", at once {at_once * 100:.1f}, whole batch on 1 thread {whole * 100:.1f}")

    plain, split = make(), make()
    torch.set_num_threads(2)
    for i in range(5):
        step_plain(*plain, batches[i])
    torch.set_num_threads(1)
    for i in range(5):
        step_split(*split, batches[i])
    ratios = []
    for r in range(args.rounds):
        rates = {}
        for mode in (("plain", "split") if r % 2 == 0 else ("split", "plain")):
            torch.set_num_threads(2 if mode == "plain" else 1)
            step, pair = (step_plain, plain) if mode == "plain" else (step_split, split)
            tokens, start = 0, time.perf_counter()
            for i in range(args.steps):
                tokens += step(*pair, batches[5 + r * args.steps + i])
            rates[mode] = tokens / (time.perf_counter() - start)
        ratios.append(rates["split"] / rates["plain"])
        print(f"round {r + 1}: plain {rates['plain']:.0f} tok/s, split {rates['split']:.0f} "
              f"tok/s, split / plain {ratios[-1]:.3f}", flush=True)
    print(f"median split / plain: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()

"""The training loop: `train_model(config, data, run_dir, ctx)`.

Plain function, no Qt. It reports through `ctx` (core.jobs.JobContext):
    'start'       {device, params, steps_per_epoch, resumed_from}
    'step'        {step, epoch, loss, ppl, lr, tok_per_s, eta_s, tokens}
    'validation'  {step, dev_ppl, dev_loss, dev_bleu}
    'checkpoint'  {step, path, which: last|best, dev_ppl, dropped: best files deleted}
    'epoch'       {epoch, lr}
and answers `ctx.cancelled` (stops after the current step, saving a checkpoint) and
`ctx.wait_if_paused()`. It returns a TrainResult; failures (NaN loss, out of memory)
raise TrainingError after the last good checkpoint is on disk.

Exact resume: the checkpoint holds the model, optimiser, schedule, RNG states and the
data position (epoch, next batch); batches of an epoch are a pure function of
(seed, epoch), so a resumed run sees the same batches and the same dropout masks.

Budgets: train.epochs, train.max_steps and train.max_minutes (wall-clock time of the
loop, pauses excluded, summed over resumes through the checkpoint's position.seconds);
the first one reached ends the run as 'finished'.
"""
from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from core.config import RunConfig
from core.errors import ConfigError, TrainingError
from core.jobs import JobContext
from core.models.base import Seq2Seq
from core.train import checkpoint as ckpt
from core.train.device import (
    amp_message,
    autocast,
    device_memory_bytes,
    model_too_large,
    pick_device,
)
from core.train.footprint import parameter_count
from core.train.guidance import alignment_loss, head_alignment_loss
from core.train.loss import sequence_nll
from core.train.optim import EpochSchedule, build_optimizer, clip_gradients, embedding_rows
from core.train.sampled_softmax import candidate_vocab


@dataclass
class TrainData:
    """Token ids of the splits, ready for batching.

    `make_plan(src, tgt, ctx)` returns an object with `.epoch(e) -> list[list[int]]` and
    `.collate(indices) -> Batch` (core.data.batching.BatchPlan).
    """

    train_src: list[list[int]]
    train_tgt: list[list[int]]
    dev_src: list[list[int]]
    dev_tgt: list[list[int]]
    src_vocab_size: int
    tgt_vocab_size: int
    make_plan: Callable[..., Any]
    train_ctx: list[list[int]] | None = None
    dev_ctx: list[list[int]] | None = None
    dev_bleu: Callable[[Seq2Seq, torch.device], float] | None = None  # greedy BLEU on a sample
    # (source token, target token) links per training pair: guided alignment's targets
    train_links: list[list[tuple[int, int]]] | None = None


@dataclass
class TrainResult:
    status: str  # finished | cancelled
    step: int
    epoch: int
    last_checkpoint: Path | None
    best_checkpoint: Path | None
    best_dev_ppl: float | None  # a head trained alone: its best mean alignment loss
    history: list[dict[str, float]] = field(default_factory=list)  # one row per step


def _family(model) -> str:
    return getattr(getattr(model, "module", model), "family", type(model).__name__)


def forward_batch(model, batch, device, amp: bool, sampled_softmax: int = 0, vocab_size: int = 0):
    """Teacher-forced pass -> (out, batch, targets). With sampled_softmax = K > 0,
    out.scores cover the batch's K candidate words and `targets` index into them
    (core/train/sampled_softmax.py); otherwise targets is batch.tgt_out."""
    batch = batch.to(device)
    extra = {}
    if getattr(batch, "ctx", None) is not None:
        extra = {"ctx": batch.ctx, "ctx_lens": batch.ctx_lens}
    targets = batch.tgt_out
    if sampled_softmax:
        extra["out_vocab"], targets = candidate_vocab(batch.tgt_out, vocab_size, sampled_softmax)
    with autocast(device, amp):
        out = model(batch.src, batch.src_lens, batch.tgt_in, **extra)
    if sampled_softmax and out.scores.size(-1) != extra["out_vocab"].numel():
        raise ConfigError(f"train.sampled_softmax: this model family ({_family(model)}) "
                          "does not support the sampled softmax; set it to 0")
    return out, batch, targets


@torch.no_grad()
def evaluate_perplexity(model: Seq2Seq, plan, device: torch.device, amp: bool = False) -> tuple[float, float]:
    """Teacher-forced dev loss per token and perplexity over every batch of `plan`."""
    was_training = model.training
    model.eval()
    nll_total, tokens = 0.0, 0
    for indices in plan.epoch(0):
        out, batch, _ = forward_batch(model, plan.collate(indices), device, amp)
        _, nll_sum, n = sequence_nll(out.scores, batch.tgt_out)
        nll_total += float(nll_sum)
        tokens += n
    model.train(was_training)
    loss = nll_total / max(tokens, 1)
    return loss, math.exp(min(loss, 50.0))


def train_model(
    config: RunConfig,
    data: TrainData,
    run_dir: str | Path,
    ctx: JobContext,
    model: Seq2Seq | None = None,
    resume: bool = False,
    distributed: Any = None,
) -> TrainResult:
    """Train `model` (built from config.model when None) on `data`; see module doc.

    `distributed` is a core.train.distributed.DistContext or None: with it, each rank
    trains on its share of every batch list and only rank 0 writes files and events.
    """
    from core.models.registry import build_model

    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    tc, mc = config.train, config.model
    if tc.max_minutes and distributed is not None:  # ranks' clocks could stop them apart
        raise ConfigError("train.max_minutes is not available with --distributed (the ranks "
                          "must stop at the same step): set train.max_steps instead")
    device = pick_device(tc.device, tc.threads)
    torch.manual_seed(tc.seed)
    try:
        if model is None:
            model = build_model(mc, data.src_vocab_size, data.tgt_vocab_size)
        model.to(device)
    except RuntimeError as exc:  # torch.OutOfMemoryError, DefaultCPUAllocator's refusal
        if not (isinstance(exc, torch.OutOfMemoryError) or "can't allocate memory" in str(exc)):
            raise
        asked = re.search(r"allocate (\d+) bytes", str(exc))
        params = parameter_count(mc, data.src_vocab_size, data.tgt_vocab_size)
        raise model_too_large(params, device, int(asked.group(1)) if asked else None,
                              device_memory_bytes(device)) from None
    optimizer = build_optimizer(model.parameters(), tc)
    schedule = EpochSchedule(optimizer, tc)
    keeper = ckpt.BestKeeper(run_dir, tc.keep_best, [])
    is_main = distributed is None or distributed.rank == 0

    guided = tc.guided_alignment > 0
    if guided and data.train_links is None:
        raise ConfigError("train.guided_alignment needs alignments of the training pairs; "
                          "train through a workspace run (they are computed there) or set it to 0")
    links = {"links": data.train_links} if guided else {}
    # a head trained alone on a frozen translation model (train.stage = 2): dev
    # perplexity cannot change, so checkpoints are ranked by the head's alignment loss
    # over the training batches since the last validation
    head_only = tc.stage == 2 and mc.alignment_head
    window_align: list[float] = []
    train_plan = data.make_plan(data.train_src, data.train_tgt, data.train_ctx, shuffle=True, **links)
    dev_plan = data.make_plan(data.dev_src, data.dev_tgt, data.dev_ctx, shuffle=False)
    epoch, batch_pos, step = 0, 0, 0
    resumed_from = None
    best_ppl: float | None = None
    bad_validations = 0
    seconds_before = 0.0  # training time of earlier sessions of this run (max_minutes)
    session_start, paused_s = time.perf_counter(), 0.0  # set again when the loop starts

    def trained_seconds() -> float:
        return seconds_before + time.perf_counter() - session_start - paused_s

    if resume and (run_dir / ckpt.LAST).exists():
        last = run_dir / ckpt.LAST
        state = ckpt.check_checkpoint(
            ckpt.load_checkpoint(last, map_location=device), last, ckpt.NEEDED_TO_RESUME,
            config.to_dict(), (data.src_vocab_size, data.tgt_vocab_size))
        try:
            ckpt.check_finite_weights(state["model"], last)
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            schedule.load_state_dict(state["schedule"])
            ckpt.set_rng_state(state["rng"])
        except (RuntimeError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            raise ckpt.CheckpointError(
                f"{last}: does not fit the run's model or optimiser ({type(exc).__name__}: "
                f"{str(exc)[:300]}); put back the run's own checkpoint or train it again") from None
        epoch, batch_pos, step = (state["position"][k] for k in ("epoch", "batch", "step"))
        seconds_before = float(state["position"].get("seconds", 0.0))  # older checkpoints: 0
        keeper.entries = ckpt.best_entries(state.get("best"), run_dir, run_dir / ckpt.LAST)
        best_ppl = keeper.entries[0][0] if keeper.entries else None
        bad_validations = int(state.get("bad_validations", 0))
        resumed_from = step
    ddp_model = distributed.wrap(model) if distributed is not None else model

    def payload() -> dict[str, Any]:
        return {
            "model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "schedule": schedule.state_dict(), "rng": ckpt.rng_state(),
            "position": {"epoch": epoch, "batch": batch_pos, "step": step,
                         "seconds": trained_seconds()},
            "config": config.to_dict(), "best": [list(e) for e in keeper.entries],
            "bad_validations": bad_validations,
            "vocab_sizes": [data.src_vocab_size, data.tgt_vocab_size],
        }

    def save_last() -> Path | None:
        if not is_main:
            return None
        path = ckpt.save_checkpoint(run_dir / ckpt.LAST, payload())
        ctx.emit("checkpoint", step=step, path=str(path), which="last")
        return path

    def validate() -> bool:
        """Dev perplexity (+ greedy BLEU), best-k and last checkpoints; True = stop early."""
        nonlocal best_ppl, bad_validations
        dev_loss, dev_ppl = evaluate_perplexity(model, dev_plan, device, tc.amp)
        bleu = data.dev_bleu(model, device) if data.dev_bleu is not None and is_main else None
        model.train()
        rank = dev_ppl
        if head_only and window_align:
            rank = sum(window_align) / len(window_align)
            window_align.clear()
            ctx.emit("log", message=f"alignment head: mean alignment loss {rank:.4f} since "
                     "the last validation (ranks the checkpoints: the translation is frozen)")
        improved = best_ppl is None or rank < best_ppl
        if improved:
            best_ppl, bad_validations = rank, 0
        else:
            bad_validations += 1
        if is_main:
            ctx.emit("validation", step=step, dev_loss=dev_loss, dev_ppl=dev_ppl, dev_bleu=bleu)
            best = keeper.offer(rank, step, payload())
            if best is not None:
                ctx.emit("checkpoint", step=step, path=str(best), which="best", dev_ppl=dev_ppl,
                         dropped=[str(p) for p in keeper.dropped])
        save_last()
        return bool(tc.early_stop_patience) and bad_validations >= tc.early_stop_patience

    steps_per_epoch = len(train_plan.epoch(epoch))
    total_steps = tc.max_steps or steps_per_epoch * tc.epochs
    if is_main:
        ctx.emit("start", device=str(device), params=sum(p.numel() for p in model.parameters()),
                 steps_per_epoch=steps_per_epoch, total_steps=total_steps,
                 resumed_from=resumed_from)
        if tc.amp:
            ctx.emit("log", message=amp_message(device))
    history: list[dict[str, float]] = []
    model.train()
    window_tokens, window_start = 0, time.perf_counter()
    status = "finished"
    last_path: Path | None = None
    budget_s = tc.max_minutes * 60
    session_start = time.perf_counter()

    def done() -> bool:
        if budget_s and trained_seconds() >= budget_s:
            return True
        return bool(tc.max_steps and step >= tc.max_steps) or epoch >= tc.epochs

    try:
        while not done():
            batches = train_plan.epoch(epoch)
            if distributed is not None:
                batches = distributed.shard(batches)
            while batch_pos < len(batches) and not done():
                paused_from = time.perf_counter()
                ctx.wait_if_paused()
                paused_s += time.perf_counter() - paused_from  # a pause spends no budget
                if ctx.cancelled:
                    status = "cancelled"
                    break
                host_batch = train_plan.collate(batches[batch_pos])
                n_tok = host_batch.n_tgt_tokens  # counted before the batch goes to a GPU
                out, batch, targets = forward_batch(ddp_model, host_batch, device, tc.amp,
                                                    tc.sampled_softmax, data.tgt_vocab_size)
                loss_sum, nll_sum, _ = sequence_nll(out.scores, targets, tc.label_smoothing,
                                                    n_tok, consume_scores=True)
                loss = loss_sum / max(n_tok, 1)
                align_loss = None
                if guided:
                    if out.alignment is not None:  # the head: its links, or NULL
                        align_sum, rows = head_alignment_loss(out.alignment, batch.guide,
                                                              batch.tgt_out.to(device))
                    else:  # the attention pulled towards the links
                        align_sum, rows = alignment_loss(out.attention, batch.guide)
                    align_loss = align_sum / max(rows, 1)
                    loss = loss + tc.guided_alignment * align_loss
                # the step's one read of its losses from the device, before the backward is
                # queued: a read after the update would wait on a GPU for the whole step
                loss_value = float(loss.detach())
                nll_value = float(nll_sum.detach())
                align_value = None if align_loss is None else float(align_loss.detach())
                if not math.isfinite(loss_value):
                    raise TrainingError(
                        f"loss became {loss_value} at step {step + 1}: lower the learning rate "
                        "or the gradient clipping norm; the last good checkpoint is kept in "
                        f"{run_dir}"
                    )
                optimizer.zero_grad(set_to_none=True)
                # the embeddings' gradients are 0 outside the looked-up rows: the norm reads
                # only those (CPU; data-parallel gradients hold other ranks' rows too)
                rows = (embedding_rows(loss) if tc.clip_norm > 0 and device.type == "cpu"
                        and distributed is None else None)
                loss.backward()
                if tc.clip_norm > 0:
                    clip_gradients(model.parameters(), tc.clip_norm, rows)
                optimizer.step()
                step += 1
                batch_pos += 1
                window_tokens += n_tok
                elapsed = time.perf_counter() - window_start
                tok_per_s = window_tokens / elapsed if elapsed > 0 else 0.0
                token_loss = nll_value / max(n_tok, 1)
                row = {"step": step, "epoch": epoch, "loss": loss_value, "ppl": math.exp(min(token_loss, 50)),
                       "lr": schedule.lr, "tok_per_s": tok_per_s, "tokens": n_tok}
                if align_value is not None:
                    row["align_loss"] = align_value
                    window_align.append(align_value)
                history.append(row)
                if is_main:
                    left = max(total_steps - step, 0)
                    eta = left * elapsed / max(len(history), 1)
                    if budget_s:
                        eta = min(eta, max(budget_s - trained_seconds(), 0.0))
                    ctx.emit("step", **row, eta_s=eta)
                if tc.valid_every and step % tc.valid_every == 0:
                    stop = validate()
                    if stop:
                        status = "early_stopped"
                        break
            if status != "finished":
                break
            if batch_pos >= len(batches):
                epoch += 1
                batch_pos = 0
                lr = schedule.end_epoch()
                if is_main:
                    ctx.emit("epoch", epoch=epoch, lr=lr)
        if status == "early_stopped":
            status = "finished"
        if status == "finished" and (not tc.valid_every or step % tc.valid_every):
            validate()
        last_path = save_last()
    except torch.cuda.OutOfMemoryError:
        raise TrainingError(
            f"out of GPU memory at step {step + 1}: lower data.batch_size or the model size; "
            f"the last checkpoint is kept in {run_dir}"
        ) from None

    if distributed is not None:
        distributed.barrier()
    return TrainResult(status, step, epoch, last_path, keeper.best_path, best_ppl, history)

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
from core.models import registry
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
    run = _Training(config, data, Path(run_dir), ctx, model, distributed)
    if resume and (run.run_dir / ckpt.LAST).exists():
        run.resume(run.run_dir / ckpt.LAST)
    return run.run()


def _place_model(model: Seq2Seq | None, config: RunConfig, data: TrainData,
                 device: torch.device) -> Seq2Seq:
    """`model` (built from config.model when None) on `device`; a refused allocation is a
    TrainingError that says how much the model needs (core.train.device.model_too_large)."""
    mc = config.model
    try:
        if model is None:
            model = registry.build_model(mc, data.src_vocab_size, data.tgt_vocab_size)
        model.to(device)
    except RuntimeError as exc:  # torch.OutOfMemoryError, DefaultCPUAllocator's refusal
        if not (isinstance(exc, torch.OutOfMemoryError) or "can't allocate memory" in str(exc)):
            raise
        asked = re.search(r"allocate (\d+) bytes", str(exc))
        params = parameter_count(mc, data.src_vocab_size, data.tgt_vocab_size)
        raise model_too_large(params, device, int(asked.group(1)) if asked else None,
                              device_memory_bytes(device)) from None
    return model


class _Training:
    """One call of train_model: the model, optimiser, schedule, batch plans and the
    position (epoch, batch, step), with the named steps of the loop as methods: a
    training step, validation, checkpoints, an epoch, the whole run."""

    def __init__(self, config: RunConfig, data: TrainData, run_dir: Path, ctx: JobContext,
                 model: Seq2Seq | None, distributed: Any) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        tc = config.train
        if tc.max_minutes and distributed is not None:  # ranks' clocks could stop them apart
            raise ConfigError("train.max_minutes is not available with --distributed (the "
                              "ranks must stop at the same step): set train.max_steps instead")
        self.config, self.tc, self.data, self.run_dir, self.ctx = config, tc, data, run_dir, ctx
        self.distributed = distributed
        self.device = pick_device(tc.device, tc.threads)
        torch.manual_seed(tc.seed)
        self.model = _place_model(model, config, data, self.device)
        self.optimizer = build_optimizer(self.model.parameters(), tc)
        self.schedule = EpochSchedule(self.optimizer, tc)
        self.keeper = ckpt.BestKeeper(run_dir, tc.keep_best, [])
        self.is_main = distributed is None or distributed.rank == 0
        self.guided = tc.guided_alignment > 0
        if self.guided and data.train_links is None:
            raise ConfigError("train.guided_alignment needs alignments of the training pairs; "
                              "train through a workspace run (they are computed there) or set "
                              "it to 0")
        links = {"links": data.train_links} if self.guided else {}
        # a head trained alone on a frozen translation model (train.stage = 2): dev
        # perplexity cannot change, so checkpoints are ranked by the head's alignment loss
        # over the training batches since the last validation
        self.head_only = tc.stage == 2 and config.model.alignment_head
        self.window_align: list[float] = []
        self.train_plan = data.make_plan(data.train_src, data.train_tgt, data.train_ctx,
                                         shuffle=True, **links)
        self.dev_plan = data.make_plan(data.dev_src, data.dev_tgt, data.dev_ctx, shuffle=False)
        self.epoch, self.batch_pos, self.step = 0, 0, 0
        self.resumed_from: int | None = None
        self.best_ppl: float | None = None
        self.bad_validations = 0
        self.seconds_before = 0.0  # training time of earlier sessions of this run (max_minutes)
        self.session_start, self.paused_s = time.perf_counter(), 0.0  # set again in run()
        self.budget_s = tc.max_minutes * 60
        self.history: list[dict[str, float]] = []

    def trained_seconds(self) -> float:
        return self.seconds_before + time.perf_counter() - self.session_start - self.paused_s

    def resume(self, last: Path) -> None:
        """Model, optimiser, schedule, RNG states, position and best-k list from the run's
        last checkpoint; CheckpointError when it does not fit this run."""
        state = ckpt.check_checkpoint(
            ckpt.load_checkpoint(last, map_location=self.device), last, ckpt.NEEDED_TO_RESUME,
            self.config.to_dict(), (self.data.src_vocab_size, self.data.tgt_vocab_size))
        try:
            ckpt.check_finite_weights(state["model"], last)
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
            self.schedule.load_state_dict(state["schedule"])
            ckpt.set_rng_state(state["rng"])
        except (RuntimeError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            raise ckpt.CheckpointError(
                f"{last}: does not fit the run's model or optimiser ({type(exc).__name__}: "
                f"{str(exc)[:300]}); put back the run's own checkpoint or train it again") from None
        self.epoch, self.batch_pos, self.step = (state["position"][k]
                                                 for k in ("epoch", "batch", "step"))
        self.seconds_before = float(state["position"].get("seconds", 0.0))  # older: 0
        self.keeper.entries = ckpt.best_entries(state.get("best"), self.run_dir,
                                                self.run_dir / ckpt.LAST)
        self.best_ppl = self.keeper.entries[0][0] if self.keeper.entries else None
        self.bad_validations = int(state.get("bad_validations", 0))
        self.resumed_from = self.step

    def payload(self) -> dict[str, Any]:
        """What a checkpoint holds: enough to resume exactly (module doc)."""
        return {
            "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
            "schedule": self.schedule.state_dict(), "rng": ckpt.rng_state(),
            "position": {"epoch": self.epoch, "batch": self.batch_pos, "step": self.step,
                         "seconds": self.trained_seconds()},
            "config": self.config.to_dict(), "best": [list(e) for e in self.keeper.entries],
            "bad_validations": self.bad_validations,
            "vocab_sizes": [self.data.src_vocab_size, self.data.tgt_vocab_size],
        }

    def save_last(self) -> Path | None:
        """The last checkpoint (rank 0 only)."""
        if not self.is_main:
            return None
        path = ckpt.save_checkpoint(self.run_dir / ckpt.LAST, self.payload())
        self.ctx.emit("checkpoint", step=self.step, path=str(path), which="last")
        return path

    def validate(self) -> bool:
        """Dev perplexity (+ greedy BLEU), best-k and last checkpoints; True = stop early."""
        tc, model = self.tc, self.model
        dev_loss, dev_ppl = evaluate_perplexity(model, self.dev_plan, self.device, tc.amp)
        bleu = (self.data.dev_bleu(model, self.device)
                if self.data.dev_bleu is not None and self.is_main else None)
        model.train()
        rank = dev_ppl
        if self.head_only and self.window_align:
            rank = sum(self.window_align) / len(self.window_align)
            self.window_align.clear()
            self.ctx.emit("log", message=f"alignment head: mean alignment loss {rank:.4f} "
                          "since the last validation (ranks the checkpoints: the translation "
                          "is frozen)")
        if self.best_ppl is None or rank < self.best_ppl:
            self.best_ppl, self.bad_validations = rank, 0
        else:
            self.bad_validations += 1
        if self.is_main:
            self.ctx.emit("validation", step=self.step, dev_loss=dev_loss, dev_ppl=dev_ppl,
                          dev_bleu=bleu)
            best = self.keeper.offer(rank, self.step, self.payload())
            if best is not None:
                self.ctx.emit("checkpoint", step=self.step, path=str(best), which="best",
                              dev_ppl=dev_ppl, dropped=[str(p) for p in self.keeper.dropped])
        self.save_last()
        if self.is_main and tc.keep_every and self.step % tc.keep_every == 0:
            kept = ckpt.keep_copy(self.run_dir / ckpt.LAST, self.step)
            self.ctx.emit("log", message=f"kept {kept.name} (train.keep_every)")
        return bool(tc.early_stop_patience) and self.bad_validations >= tc.early_stop_patience

    def done(self) -> bool:
        """A budget is spent: time, steps or epochs."""
        if self.budget_s and self.trained_seconds() >= self.budget_s:
            return True
        return bool(self.tc.max_steps and self.step >= self.tc.max_steps) or \
            self.epoch >= self.tc.epochs

    def losses(self, host_batch, n_tok: int):
        """The batch's forward pass -> (loss to minimise, its value, the NLL's value, the
        guided-alignment loss's value or None). The step's one read of its losses from the
        device happens here, before the backward is queued: a read after the update would
        wait on a GPU for the whole step."""
        tc, device = self.tc, self.device
        out, batch, targets = forward_batch(self.ddp_model, host_batch, device, tc.amp,
                                            tc.sampled_softmax, self.data.tgt_vocab_size)
        loss_sum, nll_sum, _ = sequence_nll(out.scores, targets, tc.label_smoothing, n_tok,
                                            consume_scores=True)
        loss = loss_sum / max(n_tok, 1)
        align_loss = None
        if self.guided:
            if out.alignment is not None:  # the head: its links, or NULL
                align_sum, rows = head_alignment_loss(out.alignment, batch.guide,
                                                      batch.tgt_out.to(device))
            else:  # the attention pulled towards the links
                align_sum, rows = alignment_loss(out.attention, batch.guide)
            align_loss = align_sum / max(rows, 1)
            loss = loss + tc.guided_alignment * align_loss
        loss_value, nll_value = float(loss.detach()), float(nll_sum.detach())
        align_value = None if align_loss is None else float(align_loss.detach())
        return loss, loss_value, nll_value, align_value

    def train_step(self, host_batch) -> dict[str, float]:
        """One update on `host_batch` -> the history row of the step. TrainingError when
        the loss is not finite (the last good checkpoint stays)."""
        tc = self.tc
        n_tok = host_batch.n_tgt_tokens  # counted before the batch goes to a GPU
        loss, loss_value, nll_value, align_value = self.losses(host_batch, n_tok)
        if not math.isfinite(loss_value):
            raise TrainingError(
                f"loss became {loss_value} at step {self.step + 1}: lower the learning rate "
                "or the gradient clipping norm; the last good checkpoint is kept in "
                f"{self.run_dir}"
            )
        self.optimizer.zero_grad(set_to_none=True)
        # the embeddings' gradients are 0 outside the looked-up rows: the norm reads
        # only those (CPU; data-parallel gradients hold other ranks' rows too)
        rows = (embedding_rows(loss) if tc.clip_norm > 0 and self.device.type == "cpu"
                and self.distributed is None else None)
        loss.backward()
        if tc.clip_norm > 0:
            clip_gradients(self.model.parameters(), tc.clip_norm, rows)
        self.optimizer.step()
        self.step += 1
        self.batch_pos += 1
        self.window_tokens += n_tok
        elapsed = time.perf_counter() - self.window_start
        tok_per_s = self.window_tokens / elapsed if elapsed > 0 else 0.0
        token_loss = nll_value / max(n_tok, 1)
        row = {"step": self.step, "epoch": self.epoch, "loss": loss_value,
               "ppl": math.exp(min(token_loss, 50)), "lr": self.schedule.lr,
               "tok_per_s": tok_per_s, "tokens": n_tok}
        if align_value is not None:
            row["align_loss"] = align_value
            self.window_align.append(align_value)
        self.history.append(row)
        if self.is_main:
            left = max(self.total_steps - self.step, 0)
            eta = left * elapsed / max(len(self.history), 1)
            if self.budget_s:
                eta = min(eta, max(self.budget_s - self.trained_seconds(), 0.0))
            self.ctx.emit("step", **row, eta_s=eta)
        return row

    def run_epoch(self) -> str:
        """The current epoch's batches from the current position, until the epoch ends or
        a budget is spent -> 'finished', 'cancelled' or 'early_stopped'."""
        batches = self.train_plan.epoch(self.epoch)
        if self.distributed is not None:
            batches = self.distributed.shard(batches)
        while self.batch_pos < len(batches) and not self.done():
            paused_from = time.perf_counter()
            self.ctx.wait_if_paused()
            self.paused_s += time.perf_counter() - paused_from  # a pause spends no budget
            if self.ctx.cancelled:
                return "cancelled"
            self.train_step(self.train_plan.collate(batches[self.batch_pos]))
            if self.tc.valid_every and self.step % self.tc.valid_every == 0 and self.validate():
                return "early_stopped"
        if self.batch_pos >= len(batches):
            self.epoch += 1
            self.batch_pos = 0
            lr = self.schedule.end_epoch()
            if self.is_main:
                self.ctx.emit("epoch", epoch=self.epoch, lr=lr)
        return "finished"

    def start(self) -> None:
        """The 'start' event, the model in training mode, the clocks started."""
        tc, model = self.tc, self.model
        self.ddp_model = (self.distributed.wrap(model) if self.distributed is not None
                          else model)
        steps_per_epoch = len(self.train_plan.epoch(self.epoch))
        self.total_steps = tc.max_steps or steps_per_epoch * tc.epochs
        if self.is_main:
            self.ctx.emit("start", device=str(self.device),
                          params=sum(p.numel() for p in model.parameters()),
                          steps_per_epoch=steps_per_epoch, total_steps=self.total_steps,
                          resumed_from=self.resumed_from)
            if tc.amp:
                self.ctx.emit("log", message=amp_message(self.device))
        model.train()
        self.window_tokens, self.window_start = 0, time.perf_counter()
        self.session_start = time.perf_counter()

    def run(self) -> TrainResult:
        """Epochs until a budget is spent, the run is cancelled or stops early; a final
        validation when the last step was not validated; the last checkpoint."""
        self.start()
        status = "finished"
        last_path: Path | None = None
        try:
            while status == "finished" and not self.done():
                status = self.run_epoch()
            if status == "early_stopped":
                status = "finished"
            elif status == "finished" and (not self.tc.valid_every
                                           or self.step % self.tc.valid_every):
                self.validate()
            last_path = self.save_last()
        except torch.cuda.OutOfMemoryError:
            raise TrainingError(
                f"out of GPU memory at step {self.step + 1}: lower data.batch_size or the "
                f"model size; the last checkpoint is kept in {self.run_dir}"
            ) from None
        if self.distributed is not None:
            self.distributed.barrier()
        return TrainResult(status, self.step, self.epoch, last_path, self.keeper.best_path,
                           self.best_ppl, self.history)

"""`train`: train a model on a workspace corpus, with a progress bar; `--resume RUN`."""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING

from core.cli.progress import ProgressPrinter
from core.config import RunConfig, load_config, load_preset
from core.errors import ConfigError
from core.jobs import JobCancelled, JobContext
from core.runlock import RunLock
from core.textsafe import printable
from core.workspace.store import Workspace

if TYPE_CHECKING:
    from core.workspace.store import Workspace


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `train` command (new run from a config or preset, or --resume) to `sub`."""
    p = sub.add_parser("train", help="train a model (a preset or a TOML config) on a corpus")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--config", metavar="FILE", help="TOML run configuration")
    src.add_argument("--preset", metavar="NAME", help="a preset from resources/presets")
    src.add_argument("--resume", metavar="RUN", help="continue a run from its last checkpoint")
    src.add_argument("--alignment-head", metavar="RUN",
                     help="train a word-alignment head over trained run RUN, which stays as it "
                     "is (guided by eflomal's links of its corpus, or for an imported run "
                     "of --corpus; new run RUN-head, 3000 updates unless --max-steps; read "
                     "with `align --reading head`)")
    p.add_argument("--corpus", metavar="NAME|ID", help="workspace corpus to train on")
    p.add_argument("--name", help="run name (default: the config's name)")
    p.add_argument("--device", help="auto | cpu | cuda | cuda:N")
    p.add_argument("--threads", type=int, help="CPU threads")
    p.add_argument("--max-steps", type=int, help="stop after this many updates")
    p.add_argument("--max-minutes", type=float,
                   help="stop after this many minutes of training (summed over resumes)")
    p.add_argument("--epochs", type=int)
    p.add_argument("--valid-every", type=int)
    p.add_argument("--keep-every", type=int, metavar="N",
                   help="also keep each validation's checkpoint at a multiple of N updates as "
                   "step-<N>.pt (train.keep_every), to choose among or average (`runs average`)")
    p.add_argument("--init-from", metavar="RUN",
                   help="two-stage training: the stage-1 run (only with train.stage = 2, as "
                   "the context-ts-cpu and context-tgt-ts-cpu presets set)")
    p.add_argument("--guide-runs", metavar="RUN[,REVERSE]",
                   help="guided alignment from these trained runs' own attention (a run and "
                   "optionally its reverse-direction run, symmetrised) instead of eflomal")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override any config value, e.g. --set model.attention=local-p")
    p.add_argument("--distributed", action="store_true",
                   help="run under torchrun with DistributedDataParallel (NCCL or gloo)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _coerce(text: str):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def build_config(args: argparse.Namespace) -> RunConfig:
    """The RunConfig of --config (else --preset, else 'luong-cpu') with --set overrides and
    the train options given on the command line applied; ConfigError on a bad --set."""
    cfg = load_config(args.config) if args.config else load_preset(args.preset or "luong-cpu")
    raw = cfg.to_dict()
    for item in args.set:
        key, sep, value = item.partition("=")
        section, dot, field = key.partition(".")
        if not sep or not dot or section not in ("model", "data", "train"):
            raise ConfigError(f"--set {item!r}: write SECTION.KEY=VALUE, e.g. model.dropout=0.3")
        raw[section][field] = _coerce(value)
    for field, value in (("device", args.device), ("threads", args.threads),
                         ("max_steps", args.max_steps), ("max_minutes", args.max_minutes),
                         ("epochs", args.epochs),
                         ("valid_every", args.valid_every), ("keep_every", args.keep_every),
                         ("init_from", args.init_from),
                         ("guide_runs", args.guide_runs)):
        if value is not None:
            raw["train"][field] = value
    if args.name:
        raw["name"] = args.name
    return RunConfig.from_dict(raw, source=args.config or f"preset {args.preset or 'luong-cpu'}")


RESUME_OVERRIDES = ("max_steps", "max_minutes", "epochs", "valid_every", "keep_every", "device",
                    "threads")


def resume_config(ws: Workspace, run_id: int, args: argparse.Namespace) -> RunConfig | None:
    """The run's stored config with the budget/device options given on the command line
    (`--resume RUN --max-steps 2000` trains an existing run further), saved back to the run
    so the GUI and later resumes see the new budget; None when nothing is overridden.
    Model, data and optimiser settings cannot change on resume."""
    if args.set or args.config or args.preset or args.init_from or args.corpus or args.guide_runs:
        raise ConfigError("--resume continues a run with its own configuration: only "
                          "--max-steps, --max-minutes, --epochs, --valid-every, --keep-every, "
                          "--device and --threads may be given with it")
    given = {f: getattr(args, f) for f in RESUME_OVERRIDES if getattr(args, f) is not None}
    if not given:
        return None
    info = ws.get_run(run_id)
    raw = dict(info.config)
    raw["train"] = {**raw.get("train", {}), **given}
    config = RunConfig.from_dict(raw, source=f"run {info.name}")
    from core.train.device import check_threads  # lazy: a top-level import would load torch

    check_threads(config.train.threads)  # before the new settings are saved
    ws.update_run(run_id, config=config.to_dict())
    return config


def _alignment_head_run(ws: Workspace, args: argparse.Namespace) -> int:
    """Create the run of `train --alignment-head RUN` (services.training.alignment_head_config)
    with the budget / device options of the command line; -> its id."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.services.training import alignment_head_config, create_run

    if args.set or args.config or args.preset or args.init_from or args.distributed:
        raise ConfigError("--alignment-head RUN trains over RUN's own corpus and settings: only "
                          "--name, --guide-runs, --max-steps, --max-minutes, --valid-every, "
                          "--keep-every, --device and --threads may be given with it (and "
                          "--corpus for an imported run)")
    corpus_id, config = alignment_head_config(ws, args.alignment_head, args.name or "",
                                              args.max_steps or 3000, corpus=args.corpus)
    for field in ("max_minutes", "valid_every", "keep_every", "device", "threads", "guide_runs"):
        if getattr(args, field) is not None:
            setattr(config.train, field, getattr(args, field))
    config.validate()
    return create_run(ws, corpus_id, config, config.name)


class StopOnSignal:
    """SIGINT and SIGTERM during training: the first one asks the loop to stop after the
    current step (it saves a checkpoint and the run is marked 'cancelled'); a second
    one stops at once (KeyboardInterrupt: the run is marked 'interrupted')."""

    def __init__(self, ctx: JobContext):
        self.ctx, self.signum, self._old = ctx, None, {}

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum
        print(f"\n{signal.Signals(signum).name}: stopping after the current step and saving a "
              "checkpoint (send it again to stop at once)", file=sys.stderr, flush=True)
        self.ctx.cancel()

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


def run(args: argparse.Namespace) -> int:
    """`train`: create (or --resume) a run and train it, printing progress; returns 0, or
    128 + the signal number when stopped by a signal."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.services.training import check_resumable, create_run, train_run

    dist = None
    if args.distributed:
        from core.train.distributed import DistContext  # lazy: a top-level import would load torch

        dist = DistContext.from_env()
    ws = Workspace.open(args.workspace)
    ctx = JobContext()
    if dist is None or dist.rank == 0:
        ctx.add_listener(ProgressPrinter(quiet=args.quiet))
    stopper = StopOnSignal(ctx)
    lock = None
    try:
        if args.resume:
            run_id = ws.run_id(args.resume)
            check_resumable(ws, run_id)  # before the lock makes a deleted folder again
            if dist is None or dist.rank == 0:
                # taken before the new budget is saved: a second trainer changes nothing
                lock = RunLock.acquire(ws.run_dir(run_id), ws.get_run(run_id).name)
            budget = (args.max_minutes if args.max_minutes is not None else
                      ws.get_run(run_id).config.get("train", {}).get("max_minutes", 0))
            if dist is not None and budget:  # before the new budget is saved
                raise ConfigError("train.max_minutes is not available with --distributed (the "
                                  "ranks must stop at the same step): resume with "
                                  "--max-minutes 0 --max-steps N")
            override = resume_config(ws, run_id, args)
            with stopper if dist is None else contextlib.nullcontext():
                result = train_run(ws, run_id, ctx, resume=True, distributed=dist,
                                   config_override=override, lock=lock)
        elif args.alignment_head:
            run_id = _alignment_head_run(ws, args)
            with stopper:
                result = train_run(ws, run_id, ctx)
        else:
            if not args.corpus:
                raise ConfigError("train needs --corpus NAME (see `corpus list`) or --resume RUN")
            config = build_config(args)
            if dist is not None and config.train.max_minutes:  # refused before a run exists
                raise ConfigError("train.max_minutes is not available with --distributed (the "
                                  "ranks must stop at the same step): set train.max_steps")
            if dist is not None:
                # every rank must agree on the run: rank 0 creates it, the others find it by name
                run_id = _shared_run(ws, dist, args.corpus, config)
            else:
                run_id = create_run(ws, args.corpus, config, args.name)
            with stopper if dist is None else contextlib.nullcontext():
                result = train_run(ws, run_id, ctx, distributed=dist)
    except JobCancelled:  # stopped by a signal while the data was being prepared
        print(f"stopped by {signal.Signals(stopper.signum or signal.SIGINT).name} before "
              "training began; the run is marked 'cancelled'", file=sys.stderr)
        return 128 + int(stopper.signum or signal.SIGINT)
    except KeyboardInterrupt:
        ctx.cancel()
        raise
    finally:
        if lock is not None:
            lock.release()
        if dist is not None:
            dist.close()
    if dist is None or dist.rank == 0:
        info = ws.get_run(run_id)
        model, train = info.config["model"], info.config["train"]
        # a head trained alone over a frozen model ranks by its alignment loss
        best = "best alignment loss" if model.get("alignment_head") and train["stage"] == 2 \
            else "best dev perplexity"
        value = result.best_dev_ppl
        best = (f"{best} {value:.2f}" if value is not None and math.isfinite(value)
                else f"no validation yet, so no {best}")
        print(f"\nrun {printable(info.name)} (id {run_id}): {result.status} after {result.step} steps; "
              f"{best}; folder {ws.run_dir(run_id)}")
        if stopper.signum is not None:
            print(f"stopped by {signal.Signals(stopper.signum).name}; continue with "
                  f"`train --resume {printable(info.name)}`", file=sys.stderr)
            return 128 + int(stopper.signum)
    return 0


def _shared_run(ws: Workspace, dist, corpus: str, config: RunConfig) -> int:
    """Rank 0 creates the run; every rank learns its id (a collective on the rank's own
    device, so it works under NCCL as under gloo)."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.services.training import create_run

    run_id = dist.broadcast_int(create_run(ws, corpus, config) if dist.rank == 0 else 0)
    os.environ.setdefault("NMT_RUN_ID", str(run_id))
    return run_id

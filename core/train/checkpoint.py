"""Checkpoints: everything needed to resume a run exactly, written atomically.

A checkpoint is one `torch.save`d dict of plain types and tensors, so it loads with
`torch.load(..., weights_only=True)`:
    model, optimizer, schedule      state dicts
    rng                             torch CPU (+ CUDA) generator states, python and numpy
    position                        {"epoch": e, "batch": b, "step": s} - the next batch
    config                          RunConfig.to_dict()
    best                            [(dev_ppl, step, file name)] kept best-k
Vocabularies live beside the checkpoints in the run folder (src.vocab / tgt.vocab).
"""
from __future__ import annotations

import io
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from core import limits
from core.atomic import write_bytes_atomic
from core.errors import CheckpointError
from core.safepath import inside

LAST = "last.pt"


def rng_state() -> dict[str, Any]:
    """The torch CPU (and CUDA), Python and numpy generator states as tensors and plain
    types, for a weights_only checkpoint (restore with set_rng_state)."""
    np_state = np.random.get_state()
    state = {
        "torch": torch.get_rng_state(),
        "python": list(random.getstate()[1]) + [random.getstate()[2] or -1],
        "python_version": random.getstate()[0],
        "numpy_keys": torch.from_numpy(np_state[1].astype(np.int64)),
        "numpy_pos": int(np_state[2]),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore the generators saved by rng_state(). The states are byte tensors that
    torch wants on the CPU, wherever the checkpoint was mapped (a resume with --device
    cuda loads it onto the GPU); CUDA generators are restored on as many GPUs as both
    the saving and this machine have, and ignored on a machine without CUDA."""
    torch.set_rng_state(state["torch"].cpu())
    py = state["python"]
    gauss = None if py[-1] == -1 else py[-1]
    random.setstate((state["python_version"], tuple(py[:-1]), gauss))
    keys = state["numpy_keys"].cpu().numpy().astype(np.uint32)
    np.random.set_state(("MT19937", keys, state["numpy_pos"], 0, 0.0))
    if "cuda" in state and torch.cuda.is_available():
        for device, cuda_state in enumerate(state["cuda"][:torch.cuda.device_count()]):
            torch.cuda.set_rng_state(cuda_state.cpu(), device)


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> Path:
    """torch.save `payload` to `path` atomically; returns the path."""
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    return write_bytes_atomic(path, buffer.getvalue())


def keep_copy(last: Path, step: int) -> Path:
    """A copy of checkpoint `last` kept as step-<step>.pt beside it (train.keep_every),
    written atomically; training never deletes it."""
    return write_bytes_atomic(last.with_name(f"step-{step:08d}.pt"), last.read_bytes())


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu",
                    mapped: bool = False) -> dict[str, Any]:
    """The checkpoint dict, loaded weights_only onto `map_location`; CheckpointError when
    the file is missing, a link leading out of its folder, or cannot be read. `mapped`
    (onto the CPU): the tensors read from the file's pages as they are used (torch.load's
    mmap) rather than all copied into memory first: a trained run's checkpoint also
    holds the optimiser's state, twice the model with Adam, which translating never
    reads (a 670 MB file of a 56M-parameter model peaked at 1.18 GB). The caller copies
    what it keeps: the file stays mapped while a tensor of it lives."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: no such checkpoint")
    # a link out of its folder (runs/1/last.pt -> /elsewhere/x.pt) is not loaded
    inside(path.parent, path.name, "checkpoint", CheckpointError, bare=True)
    if mapped and torch.device(map_location).type == "cpu":
        try:
            return torch.load(path, map_location=map_location, weights_only=True, mmap=True)
        except Exception:  # noqa: BLE001 - e.g. the legacy format: read it whole below
            pass
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # damaged or foreign file
        raise CheckpointError(
            f"{path}: cannot be read as a workbench checkpoint ({type(exc).__name__}: {exc}); "
            "pick another checkpoint of the run"
        ) from None


def best_entries(raw: Any, folder: str | Path, source: str | Path) -> list[tuple[float, int, str]]:
    """A checkpoint's `best` list, checked: each entry (dev_ppl, step, file name) names a
    plain file inside the run folder, else CheckpointError (a crafted entry could make a
    resume delete, or translate load, a file outside the run)."""
    out: list[tuple[float, int, str]] = []
    for entry in raw or []:
        try:
            ppl, step, name = entry
            ppl, step, name = float(ppl), int(step), str(name)
        except (TypeError, ValueError):
            raise CheckpointError(f"{source}: its best-checkpoint list holds {entry!r}, not "
                                  "(dev perplexity, step, file name); pick another checkpoint") from None
        inside(folder, name, f"{source}: best checkpoint", CheckpointError, bare=True)
        out.append((ppl, step, name))
    return out


#: what a checkpoint must hold to translate with / to resume training from
NEEDED_TO_LOAD = ("model", "config", "position")
NEEDED_TO_RESUME = ("model", "optimizer", "schedule", "rng", "position", "config")
#: config keys a checkpoint must share with its run: the model's shape and the text side
MATCHED_KEYS = ("data.vocab", "data.src_vocab_size", "data.tgt_vocab_size", "data.joint_vocab",
                "data.lowercase", "data.fold_accents", "data.pretokenized")


def check_checkpoint(state: Any, path: str | Path, needed: tuple[str, ...] = NEEDED_TO_LOAD,
                     run_config: dict[str, Any] | None = None,
                     vocab_sizes: tuple[int, int] | None = None) -> dict[str, Any]:
    """`state` checked against its run: the keys it needs, its config against the run's
    (every model field and the MATCHED_KEYS of data; keys one side lacks are skipped, so
    checkpoints of older versions still load) and its vocabulary sizes against the run's
    vocabularies. CheckpointError naming what does not match. Returns `state`."""
    if not isinstance(state, dict):
        raise CheckpointError(f"{path}: holds a {type(state).__name__}, not a workbench "
                              "checkpoint; pick another checkpoint of the run")
    missing = [k for k in needed if k not in state]
    position = state.get("position")
    if "position" in needed and isinstance(position, dict):
        missing += [f"position.{k}" for k in ("epoch", "batch", "step") if k not in position]
    elif "position" in needed and "position" not in missing:
        missing.append("position")
    if missing:
        raise CheckpointError(f"{path}: an incomplete checkpoint, missing {', '.join(missing)}; "
                              "pick another checkpoint of the run (e.g. 'last' or 'best')")
    check_contents(state, path)
    saved = state.get("config")
    if run_config is not None and isinstance(saved, dict):
        keys = [f"model.{k}" for k in run_config.get("model", {})] + list(MATCHED_KEYS)
        diffs = []
        for key in keys:
            section, _, name = key.partition(".")
            have, want = saved.get(section, {}), run_config.get(section, {})
            if name in have and name in want and have[name] != want[name]:
                diffs.append(f"{key} = {have[name]!r} in the checkpoint, {want[name]!r} in "
                             "the run")
        if diffs:
            raise CheckpointError(
                f"{path}: belongs to another configuration than its run ("
                + "; ".join(diffs[:6]) + (f"; {len(diffs) - 6} more" if len(diffs) > 6 else "")
                + "); put back the run's own checkpoint or train the run again")
    if vocab_sizes is not None and "vocab_sizes" in state:
        saved_sizes = list(state["vocab_sizes"])
        if saved_sizes != [int(v) for v in vocab_sizes]:
            raise CheckpointError(
                f"{path}: was trained with vocabularies of {saved_sizes[0]} source and "
                f"{saved_sizes[1]} target words, the run's have {vocab_sizes[0]} and "
                f"{vocab_sizes[1]}; the checkpoint or the vocabularies come from another run")
    return state


def _whole(value: Any, most: int) -> bool:
    """Whether `value` is a whole number (not a bool) from 0 to `most`."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= most


def check_contents(state: dict[str, Any], path: str | Path) -> None:
    """The types and ranges of what a checkpoint holds, before anything reads them: the
    weights a table of named tensors, the config a table, the position's epoch, batch
    and step whole numbers from 0 to core.limits.MAX_STEPS (10**15 steps made a run
    "finish after 1000000000000000 steps"), the vocabulary sizes two whole numbers up
    to MAX_VOCAB. CheckpointError naming the key otherwise."""
    problems = []
    model = state.get("model")
    if "model" in state and not (isinstance(model, dict) and all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in model.items())):
        problems.append(f"'model' is a {type(model).__name__}, not a table of named weights")
    if "config" in state and not isinstance(state["config"], dict):
        problems.append(f"'config' is a {type(state['config']).__name__}, not a table")
    position = state.get("position")
    if isinstance(position, dict):
        for key in ("epoch", "batch", "step"):
            if key in position and not _whole(position[key], limits.MAX_STEPS):
                problems.append(f"position.{key} is {position[key]!r:.40}, not a whole number "
                                f"from 0 to {limits.MAX_STEPS:,} (the limit)")
        seconds = position.get("seconds", 0.0)
        if not (isinstance(seconds, int | float) and not isinstance(seconds, bool)
                and 0 <= seconds < 1e12):
            problems.append(f"position.seconds is {seconds!r:.40}, not a time in seconds")
    if "bad_validations" in state and not _whole(state["bad_validations"], limits.MAX_STEPS):
        problems.append(f"bad_validations is {state['bad_validations']!r:.40}, not a whole "
                        "number")
    sizes = state.get("vocab_sizes")
    if "vocab_sizes" in state and not (isinstance(sizes, list | tuple) and len(sizes) == 2
                                       and all(_whole(v, limits.MAX_VOCAB) for v in sizes)):
        problems.append(f"vocab_sizes is {sizes!r:.60}, not two whole numbers up to "
                        f"{limits.MAX_VOCAB:,} (the limit)")
    if problems:
        raise CheckpointError(f"{path}: not a valid workbench checkpoint: {'; '.join(problems)}; "
                              "pick another checkpoint of the run (e.g. 'last' or 'best')")


def check_finite_weights(weights: dict[str, Any], path: str | Path) -> None:
    """CheckpointError when a floating-point tensor of `weights` (a model's state dict)
    holds NaN or an infinity: a search over such weights never ends well (NaN scores),
    and training from them only spreads the NaN."""
    for name, tensor in weights.items():
        if isinstance(tensor, torch.Tensor) and tensor.is_floating_point() \
                and not bool(torch.isfinite(tensor).all()):
            bad = int((~torch.isfinite(tensor)).sum())
            raise CheckpointError(
                f"{path}: the weights {name!r} hold {bad:,} NaN or infinite values (of "
                f"{tensor.numel():,}); the checkpoint is damaged or its run diverged: pick "
                "another checkpoint of the run (e.g. 'best') or train it again")


@dataclass
class BestKeeper:
    """Keeps the k checkpoints with the lowest dev perplexity (files best-<step>.pt)."""

    folder: Path
    k: int
    entries: list[tuple[float, int, str]]
    dropped: list[Path] = field(default_factory=list)

    def offer(self, dev_ppl: float, step: int, payload: dict[str, Any]) -> Path | None:
        """Save payload as a best checkpoint if it ranks among the k best, then delete the
        one it pushes out (in that order: a kill in between leaves k + 1 files, never
        k - 1). The deleted paths are in `dropped` until the next offer."""
        self.dropped = []
        if self.k <= 0:
            return None
        ranked = sorted(self.entries + [(dev_ppl, step, "")])
        if (dev_ppl, step, "") not in ranked[: self.k]:
            return None
        name = f"best-{step:08d}.pt"
        entries = sorted([e for e in self.entries if e[2] != name] + [(dev_ppl, step, name)])
        kept, pushed_out = entries[: self.k], entries[self.k:]
        path = save_checkpoint(self.folder / name, dict(payload, best=[list(e) for e in kept]))
        self.entries = kept
        for _, _, dropped in pushed_out:
            old = inside(self.folder, dropped, "best checkpoint", CheckpointError, bare=True)
            old.unlink(missing_ok=True)
            self.dropped.append(old)
        return path

    @property
    def best_path(self) -> Path | None:
        """The path of the best kept checkpoint (lowest dev perplexity), None before the first;
        CheckpointError when its recorded name leaves the folder."""
        if not self.entries:
            return None
        return inside(self.folder, self.entries[0][2], "best checkpoint", CheckpointError, bare=True)

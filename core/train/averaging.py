"""Checkpoint averaging: one checkpoint whose weights are the mean of several checkpoints
of the same run (Vaswani et al. 2017 translate with the average of a run's last
checkpoints), often steadier than any one of them.

    path = average_checkpoints(run_dir, ["best-00017500.pt", "last.pt"], "averaged.pt")

Every checkpoint must hold the same weights (names, shapes, dtypes) under the same
model and text-side config; floating-point weights are averaged (in float64, stored in
their own dtype), any other tensor must be equal in all. The result is a checkpoint to
translate, align and evaluate with (`--checkpoint averaged.pt`), not to resume from: it
holds no optimiser state. Its position is the newest checkpoint's, and `averaged_from`
lists the (file name, step) it was made of.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import torch

from core.errors import CheckpointError, ConfigError
from core.safepath import inside
from core.train import checkpoint as ckpt
from core.train.compact import SCALES_KEY

#: names training writes and rewrites (core.train.checkpoint), and 'best', which
#: `--checkpoint best` reads as the best-k ranking: an average never takes them
RESERVED = re.compile(r"^(last|best|best-\d+|step-\d+)\.pt$")


def average_checkpoints(run_dir: str | Path, names: Sequence[str], out_name: str,
                        replace: bool = False) -> Path:
    """Write the average of checkpoints `names` (file names in `run_dir`) as `out_name`
    there, atomically; ConfigError for fewer than two, a reserved or taken output name;
    CheckpointError naming the checkpoint that does not fit the first."""
    run_dir = Path(run_dir)
    twice = sorted({n for n in names if list(names).count(n) > 1})
    if twice:
        raise ConfigError(f"{', '.join(twice)}: given twice ('best' and 'last' name files "
                          "too); give each checkpoint once")
    if len(names) < 2:
        raise ConfigError("give at least two different checkpoints of the run to average")
    out_name = out_name if out_name.endswith(".pt") else f"{out_name}.pt"
    if Path(out_name).name != out_name:
        raise ConfigError(f"{out_name}: give a file name (it is written in the run's folder)")
    out = inside(run_dir, out_name, "averaged checkpoint", ConfigError, bare=True)
    if RESERVED.match(out.name):
        raise ConfigError(f"{out.name}: training writes checkpoints of that name; choose "
                          "another name for the average (e.g. averaged.pt)")
    if out.exists() and not replace:
        raise ConfigError(f"{out}: exists already; choose another name or replace it")
    sums: dict[str, torch.Tensor] = {}
    first: dict | None = None
    sources = []
    for name in names:
        path = inside(run_dir, name, "checkpoint", CheckpointError, bare=True)
        state = ckpt.check_checkpoint(ckpt.load_checkpoint(path), path, ckpt.NEEDED_TO_LOAD,
                                      None if first is None else first["config"])
        if SCALES_KEY in state:
            raise CheckpointError(f"{path}: holds shipped int8 weights, which are not "
                                  "averaged; average the run's own float checkpoints")
        if first is None:
            first = state
        _add(sums, state["model"], first["model"], path)
        sources.append((path.name, int(state["position"]["step"])))
    assert first is not None
    averaged = {k: (v / len(names)).to(first["model"][k].dtype) if v.is_floating_point() else v
                for k, v in sums.items()}
    newest = max(sources, key=lambda s: s[1])[0]
    newest_state = ckpt.load_checkpoint(run_dir / newest)
    payload = {"model": averaged, "config": newest_state["config"],
               "position": newest_state["position"], "best": [],
               "averaged_from": [list(s) for s in sources]}
    if "vocab_sizes" in first:
        payload["vocab_sizes"] = first["vocab_sizes"]
    ckpt.check_finite_weights(averaged, out)
    return ckpt.save_checkpoint(out, payload)


def _add(sums: dict[str, torch.Tensor], weights: dict[str, torch.Tensor],
         reference: dict[str, torch.Tensor], path: Path) -> None:
    """Add one checkpoint's weights into `sums` (float64); the same names, shapes and
    dtypes as `reference` (the first checkpoint's), equal non-float tensors."""
    if set(weights) != set(reference):
        odd = sorted(set(weights) ^ set(reference))
        raise CheckpointError(f"{path}: holds other weights than the first checkpoint "
                              f"({', '.join(odd[:4])}{' ...' if len(odd) > 4 else ''})")
    for name, tensor in weights.items():
        ref = reference[name]
        if tensor.shape != ref.shape or tensor.dtype != ref.dtype:
            raise CheckpointError(f"{path}: {name} is {tuple(tensor.shape)} {tensor.dtype}, "
                                  f"the first checkpoint's {tuple(ref.shape)} {ref.dtype}")
        if tensor.is_floating_point():
            sums[name] = sums.get(name, 0) + tensor.to(torch.float64)
        elif name not in sums:
            sums[name] = tensor.clone()
        elif not torch.equal(sums[name], tensor):
            raise CheckpointError(f"{path}: {name} (not a float weight) differs from the "
                                  "first checkpoint's, so the two cannot be averaged")

"""Weights that two shipped bundles hold alike, stored once.

A two-stage context run (train.stage = 2, `--init-from` a sentence-level run) trains only
its context encoder and gate: every other tensor is its stage-1 run's, and once both are
bundled in int8 they are byte-identical (2.9 of the context Transformer's 3.3 MB). The
bundle of such a run keeps only its own tensors; its meta.json names where the rest are:

    meta["base_weights"] = {"bundle": "<the stage-1 run's bundle folder>",
                            "checkpoint": "<that bundle's checkpoint file>",
                            "sha256": "<of that file when the weights were shared>",
                            "order": [every tensor name of the run, in its order]}

    share_base_weights(bundle, meta, base_bundle, base_meta) -> int
        Drop from `bundle`'s checkpoint the tensors (and their int8 scales) equal to
        `base_bundle`'s and record where they are; returns the bytes saved.
    bundle_checkpoint_state(bundle, meta) -> dict
        The bundle's whole checkpoint (model, scales, config, position, best), its shared
        tensors read from the base bundle; CheckpointError when the base is missing or
        changed since the weights were shared.

The demo workspace installs a bundle with bundle_checkpoint_state (core.services.demo), so
an installed run's checkpoint is whole, as if it had never been shared.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch

from core.atomic import write_text_atomic
from core.errors import CheckpointError
from core.train.checkpoint import load_checkpoint, save_checkpoint
from core.train.compact import SCALES_KEY

BASE_KEY = "base_weights"
META_NAME = "meta.json"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _same(name: str, state: dict[str, Any], base: dict[str, Any]) -> bool:
    """True when tensor `name` and its int8 scale (if any) are equal in both states."""
    mine, theirs = state["model"][name], base["model"].get(name)
    if theirs is None or mine.dtype != theirs.dtype or mine.shape != theirs.shape:
        return False
    if not torch.equal(mine, theirs):
        return False
    scale, base_scale = state.get(SCALES_KEY, {}).get(name), base.get(SCALES_KEY, {}).get(name)
    if (scale is None) != (base_scale is None):
        return False
    return scale is None or (scale.dtype == base_scale.dtype and torch.equal(scale, base_scale))


def share_base_weights(bundle: Path, meta: dict[str, Any], base_bundle: Path,
                       base_meta: dict[str, Any]) -> int:
    """Store in `bundle` only the tensors that differ from `base_bundle`'s checkpoint and
    name the base in its meta.json (meta is updated in place). A bundle already sharing is
    left alone, and so is one whose base itself shares (no chains: a bundle reads at most
    one other). Returns the bytes its checkpoint lost."""
    if meta.get(BASE_KEY) or base_meta.get(BASE_KEY):
        return 0
    path, base_path = bundle / meta["checkpoint"], base_bundle / base_meta["checkpoint"]
    state, base = load_checkpoint(path), load_checkpoint(base_path)
    order = list(state["model"])
    shared = [name for name in order if _same(name, state, base)]
    if not shared:
        return 0
    size = path.stat().st_size
    # the meta first: until the checkpoint is rewritten, its own copies are read
    meta[BASE_KEY] = {"bundle": base_bundle.name, "checkpoint": base_meta["checkpoint"],
                      "sha256": _sha256(base_path), "order": order}
    write_text_atomic(bundle / META_NAME, json.dumps(meta, indent=2))
    for name in shared:
        del state["model"][name]
        state.get(SCALES_KEY, {}).pop(name, None)
    save_checkpoint(path, state)
    return size - path.stat().st_size


def bundle_checkpoint_state(bundle: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """The bundle's checkpoint as it was trained: its own tensors, and those it shares
    read from the base bundle named in its meta (in the run's tensor order)."""
    state = load_checkpoint(bundle / meta["checkpoint"])
    base_info = meta.get(BASE_KEY)
    if not base_info:
        return state
    base_path = bundle.parent / base_info["bundle"] / base_info["checkpoint"]
    missing = [n for n in base_info["order"] if n not in state["model"]]
    if not base_path.exists():
        raise CheckpointError(
            f"{bundle / meta['checkpoint']}: {len(missing)} of its tensors are stored in "
            f"{base_path}, which is missing: restore that bundle or rebuild both "
            "(experiments/bundle_demo.py)")
    if _sha256(base_path) != base_info["sha256"]:
        raise CheckpointError(
            f"{bundle / meta['checkpoint']}: {len(missing)} of its tensors are stored in "
            f"{base_path}, which changed since they were shared (sha256 differs): rebuild "
            "both bundles (experiments/bundle_demo.py)")
    base = load_checkpoint(base_path)
    absent = [n for n in missing if n not in base["model"]]
    if absent:
        raise CheckpointError(
            f"{bundle / meta['checkpoint']}: tensor {absent[0]} is neither in it nor in "
            f"{base_path} ({len(absent)} such): rebuild both bundles (experiments/bundle_demo.py)")
    own_scales, base_scales = state.get(SCALES_KEY, {}), base.get(SCALES_KEY, {})
    model, scales = {}, {}
    for name in base_info["order"]:
        shared = name not in state["model"]
        model[name] = base["model"][name] if shared else state["model"][name]
        scale = (base_scales if shared else own_scales).get(name)
        if scale is not None:
            scales[name] = scale
    state["model"] = model
    if scales:
        state[SCALES_KEY] = scales
    return state

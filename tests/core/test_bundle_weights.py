"""Bundles that share weights with their stage-1 run's bundle (core.services.bundle_weights):
stored once, installed whole, refused when the base they read from changed."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from core.errors import CheckpointError
from core.services.bundle_weights import BASE_KEY, bundle_checkpoint_state, share_base_weights
from core.services.demo import BUNDLE_META, ensure_demo_workspace
from core.services.demo_bundle import share_stage1_weights, strip_checkpoint
from core.train.checkpoint import load_checkpoint, save_checkpoint
from core.train.compact import SCALES_KEY
from core.workspace.store import Workspace

TOY = Path(__file__).resolve().parents[1] / "fixtures" / "toy-models" / "demo-luong-global"
SENTENCES = ["La casa es verde.", "Mi hermana vive en Madrid.", "Compré una mesa nueva."]


def _bundle(models: Path, name: str, source_run: str, init_from: str | None) -> Path:
    """A copy of the toy Luong bundle as `name`, in int8 (with per-row scales)."""
    folder = models / name
    shutil.copytree(TOY, folder)
    meta = json.loads((folder / BUNDLE_META).read_text())
    strip_checkpoint(TOY / meta["checkpoint"], folder / meta["checkpoint"], weights="int8")
    meta.update(name=name, source_run=source_run)
    meta["config"] = dict(meta["config"], name=name)
    meta["config"]["train"] = dict(meta["config"]["train"], init_from=init_from, stage=2 if init_from else 1)
    (folder / BUNDLE_META).write_text(json.dumps(meta, indent=2))
    return folder


@pytest.fixture()
def shared_pair(tmp_path):
    """A base bundle and a 'stage-2' bundle over it whose output layer was trained on
    (its int8 rows negated): (models dir, base, child, the child's state before sharing)."""
    models = tmp_path / "models"
    base = _bundle(models, "toy-base", "base-run", None)
    child = _bundle(models, "toy-child", "child-run", "base-run")
    meta = json.loads((child / BUNDLE_META).read_text())
    state = load_checkpoint(child / meta["checkpoint"])
    state["model"]["w_s.weight"] = -state["model"]["w_s.weight"]
    save_checkpoint(child / meta["checkpoint"], state)
    return models, base, child, state


def _assert_same_state(a: dict, b: dict) -> None:
    assert list(a["model"]) == list(b["model"])
    for name, tensor in b["model"].items():
        assert a["model"][name].dtype == tensor.dtype and torch.equal(a["model"][name], tensor)
    assert list(a[SCALES_KEY]) == list(b[SCALES_KEY])
    assert all(torch.equal(a[SCALES_KEY][n], s) for n, s in b[SCALES_KEY].items())
    assert (a["config"], a["position"], a["best"]) == (b["config"], b["position"], b["best"])


def test_a_stage2_bundle_keeps_only_its_own_tensors_and_installs_whole(shared_pair, tmp_path):
    models, base, child, before = shared_pair
    child_meta = json.loads((child / BUNDLE_META).read_text())
    size = (child / child_meta["checkpoint"]).stat().st_size

    saved = share_stage1_weights(models)
    child_meta = json.loads((child / BUNDLE_META).read_text())
    own = load_checkpoint(child / child_meta["checkpoint"])
    assert list(own["model"]) == ["w_s.weight"]  # the one tensor that differs
    assert list(own[SCALES_KEY]) == ["w_s.weight"]
    assert saved == size - (child / child_meta["checkpoint"]).stat().st_size > size // 2
    assert child_meta[BASE_KEY]["bundle"] == "toy-base"
    assert BASE_KEY not in json.loads((base / BUNDLE_META).read_text())
    assert share_stage1_weights(models) == 0  # idempotent
    # no chains: a bundle over one that itself shares keeps all its tensors
    grandchild = _bundle(tmp_path / "other", "toy-grandchild", "grand-run", "child-run")
    grand_meta = json.loads((grandchild / BUNDLE_META).read_text())
    assert share_base_weights(grandchild, grand_meta, child, child_meta) == 0

    _assert_same_state(bundle_checkpoint_state(child, child_meta), before)
    root = ensure_demo_workspace(tmp_path / "demo", models_dir=models)
    from core.infer.session import TranslationSession

    with Workspace.open(root) as ws:
        runs = {r.name: r for r in ws.list_runs()}
        installed = load_checkpoint(ws.run_dir(runs["toy-child"].id) / child_meta["checkpoint"])
        _assert_same_state(installed, before)
        # the child's own output layer is the one used: it translates unlike its base
        hyps = {name: [t.text for t in TranslationSession.open(ws, [runs[name].id])
                       .translate(SENTENCES, beam=1)] for name in ("toy-base", "toy-child")}
    assert hyps["toy-base"] != hyps["toy-child"]


def test_a_changed_or_missing_base_is_refused_with_what_to_do(shared_pair, tmp_path):
    models, base, child, _ = shared_pair
    share_stage1_weights(models)
    child_meta = json.loads((child / BUNDLE_META).read_text())
    base_ckpt = base / json.loads((base / BUNDLE_META).read_text())["checkpoint"]
    state = load_checkpoint(base_ckpt)
    name = next(iter(state["model"]))
    state["model"][name] = state["model"][name] + 1
    save_checkpoint(base_ckpt, state)
    with pytest.raises(CheckpointError, match=r"toy-base.*changed since.*rebuild both"):
        bundle_checkpoint_state(child, child_meta)
    with pytest.raises(CheckpointError, match="changed since"):
        ensure_demo_workspace(tmp_path / "demo", models_dir=models)
    base_ckpt.unlink()
    with pytest.raises(CheckpointError, match=r"toy-base.*missing"):
        bundle_checkpoint_state(child, child_meta)

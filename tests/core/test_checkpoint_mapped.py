"""Checkpoints read through a file mapping (core.train.checkpoint.load_checkpoint's
`mapped`, as load_model reads them): tensors come from the file's pages as they are
used, so a trained run's optimiser state is never copied into memory; a legacy-format
file is still read; and a loaded model keeps no tensor of the file (nothing left
mapped once load_model returns)."""
from __future__ import annotations

import gc
import sys

import pytest
import torch

from core.services.demo import ensure_demo_workspace
from core.train import checkpoint as ckpt
from core.train.artifacts import load_model, pick_checkpoint
from core.workspace.store import Workspace

linux = pytest.mark.skipif(not sys.platform.startswith("linux"),
                           reason="reads /proc/self/maps")


def mapped_files() -> str:
    with open("/proc/self/maps", encoding="utf-8") as f:
        return f.read()


@linux
def test_a_mapped_checkpoint_reads_the_file_in_place(tmp_path):
    path = tmp_path / "a.pt"
    torch.save({"model": {"w": torch.arange(6.0)}, "optimizer": {"m": torch.ones(1000)}}, path)
    state = ckpt.load_checkpoint(path, mapped=True)
    assert str(path) in mapped_files()
    assert torch.equal(state["model"]["w"], torch.arange(6.0))
    del state
    gc.collect()
    assert str(path) not in mapped_files()
    state = ckpt.load_checkpoint(path)  # the default: read whole
    assert str(path) not in mapped_files() and state["optimizer"]["m"].sum() == 1000


def test_a_legacy_format_checkpoint_is_read_whole(tmp_path):
    path = tmp_path / "old.pt"
    torch.save({"model": {"w": torch.arange(3.0)}}, path, _use_new_zipfile_serialization=False)
    assert torch.equal(ckpt.load_checkpoint(path, mapped=True)["model"]["w"], torch.arange(3.0))


@linux
def test_a_loaded_model_keeps_nothing_of_its_file(tmp_path):
    root = ensure_demo_workspace(tmp_path / "demo")
    with Workspace.open(root, create=False) as ws:
        run_dir = ws.run_dir(ws.get_run("tatoeba-luong").id)
    loaded = load_model(run_dir)
    assert loaded.compact  # a shipped int8 run: its own rows and scales, copied
    gc.collect()
    assert str(pick_checkpoint(run_dir)) not in mapped_files()
    q, scales = loaded.compact["w_s.weight"]
    expected = ckpt.load_checkpoint(loaded.checkpoint)["model"]["w_s.weight"]
    assert torch.equal(q, expected)

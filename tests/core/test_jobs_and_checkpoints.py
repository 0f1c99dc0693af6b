"""JobContext signalling and checkpoint mechanics (atomic writes, RNG, best-k)."""
from __future__ import annotations

import random
import threading
import time

import numpy as np
import pytest
import torch

from core.errors import CheckpointError
from core.jobs import JobCancelled, RecordingContext
from core.train import checkpoint as ckpt


def test_context_records_events_and_cancels():
    ctx = RecordingContext()
    ctx.emit("step", step=1, loss=2.5)
    ctx.progress(3, 10, "reading")
    assert [e.kind for e in ctx.events] == ["step", "progress"]
    assert ctx.of_kind("progress")[0].data == {"done": 3, "total": 10, "message": "reading"}
    assert not ctx.cancelled
    ctx.cancel()
    with pytest.raises(JobCancelled):
        ctx.check_cancelled()


def test_pause_blocks_until_resume():
    ctx = RecordingContext()
    ctx.pause()
    woke = []

    def job():
        ctx.wait_if_paused(poll_s=0.01)
        woke.append(time.perf_counter())

    thread = threading.Thread(target=job)
    thread.start()
    time.sleep(0.15)
    assert not woke  # still paused
    resumed_at = time.perf_counter()
    ctx.resume()
    thread.join(2)
    assert woke and woke[0] >= resumed_at


def test_cancel_wakes_a_paused_job():
    ctx = RecordingContext()
    ctx.pause()
    thread = threading.Thread(target=ctx.wait_if_paused, kwargs={"poll_s": 0.01})
    thread.start()
    ctx.cancel()
    thread.join(2)
    assert not thread.is_alive() and ctx.cancelled


def test_rng_state_round_trip(tmp_path):
    torch.manual_seed(3)
    random.seed(4)
    np.random.seed(5)
    torch.rand(3), random.random(), np.random.rand()
    path = ckpt.save_checkpoint(tmp_path / "a.pt", {"rng": ckpt.rng_state()})
    expected = (torch.rand(4), random.random(), np.random.rand(2))
    torch.manual_seed(99)
    random.seed(99)
    np.random.seed(99)
    ckpt.set_rng_state(ckpt.load_checkpoint(path)["rng"])
    assert torch.equal(torch.rand(4), expected[0])
    assert random.random() == expected[1]
    assert np.array_equal(np.random.rand(2), expected[2])


def test_rng_state_saved_on_a_gpu_machine_restores_on_this_one(tmp_path):
    """A checkpoint from a CUDA machine carries CUDA generator states: on a machine
    without CUDA (or with fewer GPUs) the CPU generators still come back exactly."""
    torch.manual_seed(11)
    state = ckpt.rng_state()
    state["cuda"] = [torch.zeros(16, dtype=torch.uint8)] * 2  # two GPUs' states
    path = ckpt.save_checkpoint(tmp_path / "gpu.pt", {"rng": state})
    expected = torch.rand(3)
    torch.manual_seed(0)
    ckpt.set_rng_state(ckpt.load_checkpoint(path)["rng"])
    if not torch.cuda.is_available():
        assert torch.equal(torch.rand(3), expected)


def test_rng_states_mapped_onto_a_gpu_restore():
    """A resume with --device cuda maps the checkpoint's tensors onto the GPU. Stand-ins
    that, like a CUDA tensor, refuse .numpy() until moved to the CPU: on an H100 numpy's
    state failed there ("can't convert cuda:0 device type tensor to numpy")."""
    class OnTheGpu:
        def __init__(self, tensor):
            self.tensor = tensor

        def cpu(self):
            return self.tensor

        def numpy(self):
            raise TypeError("can't convert cuda:0 device type tensor to numpy")

    np.random.seed(21)
    torch.manual_seed(21)
    state = ckpt.rng_state()
    state.pop("cuda", None)
    expected = torch.rand(2), np.random.rand(2)
    mapped = dict(state, torch=OnTheGpu(state["torch"]), numpy_keys=OnTheGpu(state["numpy_keys"]))
    np.random.seed(0)
    torch.manual_seed(0)
    ckpt.set_rng_state(mapped)
    assert torch.equal(torch.rand(2), expected[0])
    assert np.array_equal(np.random.rand(2), expected[1])


@pytest.mark.skipif(not torch.cuda.is_available(),
                    reason="needs a CUDA GPU (CI has none)")
def test_resume_on_cuda_restores_the_generators(tmp_path):
    """train --resume RUN --device cuda: the checkpoint is mapped onto the GPU, its RNG
    states too; restoring them failed with 'RNG state must be a torch.ByteTensor'."""
    torch.manual_seed(5)
    state = ckpt.rng_state()
    expected = torch.rand(3), torch.rand(3, device="cuda")
    path = ckpt.save_checkpoint(tmp_path / "a.pt", {"rng": state})
    torch.manual_seed(0)
    ckpt.set_rng_state(ckpt.load_checkpoint(path, map_location="cuda")["rng"])
    assert torch.equal(torch.rand(3), expected[0])
    assert torch.equal(torch.rand(3, device="cuda"), expected[1])


def test_damaged_and_missing_checkpoints_give_clear_errors(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="bad.pt: cannot be read"):
        ckpt.load_checkpoint(bad)
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        ckpt.load_checkpoint(tmp_path / "missing.pt")


def test_best_keeper_keeps_the_k_lowest(tmp_path):
    keeper = ckpt.BestKeeper(tmp_path, 2, [])
    for step, ppl in [(100, 9.0), (200, 7.0), (300, 8.0), (400, 10.0), (500, 6.5)]:
        keeper.offer(ppl, step, {"step": step})
    assert [e[1] for e in keeper.entries] == [500, 200]
    assert sorted(p.name for p in tmp_path.glob("best-*.pt")) == ["best-00000200.pt", "best-00000500.pt"]
    assert keeper.best_path.name == "best-00000500.pt"
    assert ckpt.load_checkpoint(keeper.best_path)["step"] == 500
    assert not list(tmp_path.glob("*.tmp"))  # atomic writes leave no temp files


def test_atomic_write_replaces_whole_file_with_normal_permissions(tmp_path):
    import os
    import stat

    from core.atomic import write_atomic, write_text_atomic

    target = write_text_atomic(tmp_path / "out.txt", "first")
    write_text_atomic(target, "second")
    assert target.read_text() == "second"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask

    def failing(f):
        f.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_atomic(target, failing)
    assert target.read_text() == "second"  # the old file survives a failed write
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]

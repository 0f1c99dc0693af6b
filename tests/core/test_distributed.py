"""DistributedDataParallel on gloo: two CPU processes train one model in lock step."""
from __future__ import annotations

import socket

import pytest
import torch
import torch.multiprocessing as mp

from tests.core.ddp_worker import run_rank


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_gloo_ranks_end_with_identical_weights(tmp_path):
    mp.spawn(run_rank, args=(2, free_port(), str(tmp_path)), nprocs=2, join=True)
    r0 = torch.load(tmp_path / "rank0.pt", weights_only=True)
    r1 = torch.load(tmp_path / "rank1.pt", weights_only=True)
    assert r0["steps"] == r1["steps"] == 6
    assert r0["shared"] == r1["shared"] == 41  # broadcast_int: rank 0's value everywhere
    assert any(not torch.equal(r0["initial"][k], r1["initial"][k]) for k in r0["initial"])
    for key in r0["final"]:
        assert torch.equal(r0["final"][key], r1["final"][key]), key
    assert any(not torch.equal(r0["final"][k], r0["initial"][k]) for k in r0["final"])  # it trained
    # only rank 0 writes checkpoints and reports
    assert (tmp_path / "run0" / "last.pt").exists() and not (tmp_path / "run1" / "last.pt").exists()
    assert r0["events"] > 0 and r1["events"] == 0


needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA GPU (CI has none)")


@needs_cuda
def test_torchrun_with_nccl_creates_one_run_and_trains(tmp_path):
    """torchrun, one rank, NCCL: the run id is broadcast on the GPU (a CPU tensor under
    NCCL failed with 'No backend type associated with device type cpu')."""
    import subprocess
    import sys
    from pathlib import Path

    from core.services.demo import import_demo_corpus
    from core.workspace.store import Workspace

    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        import_demo_corpus(ws)
    main = Path(__file__).resolve().parents[2] / "main.py"
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "1",
         "--master_port", str(free_port()), str(main), "--workspace", str(root), "train",
         "--distributed", "--device", "cuda", "--preset", "demo", "--corpus", "demo",
         "--name", "nccl", "--max-steps", "4", "--valid-every", "4", "--quiet"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with Workspace.open(root) as ws:
        runs = ws.list_runs()
        assert [(r.name, r.status, r.steps) for r in runs] == [("nccl", "finished", 4)]

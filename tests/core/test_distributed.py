"""DistributedDataParallel on gloo: two CPU processes train one model in lock step."""
from __future__ import annotations

import socket

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
    assert any(not torch.equal(r0["initial"][k], r1["initial"][k]) for k in r0["initial"])
    for key in r0["final"]:
        assert torch.equal(r0["final"][key], r1["final"][key]), key
    assert any(not torch.equal(r0["final"][k], r0["initial"][k]) for k in r0["final"])  # it trained
    # only rank 0 writes checkpoints and reports
    assert (tmp_path / "run0" / "last.pt").exists() and not (tmp_path / "run1" / "last.pt").exists()
    assert r0["events"] > 0 and r1["events"] == 0

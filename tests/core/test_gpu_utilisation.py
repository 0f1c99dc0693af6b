"""GPU utilisation as bench train reports it: nvidia-smi's samples for the work's GPU,
averaged; nothing off CUDA or without nvidia-smi."""
from __future__ import annotations

import os
import stat
import time

import pytest
import torch

from core.tooling.gpu_utilisation import GpuUtilisation, mean_utilisation, smi_index


def test_mean_of_the_samples_of_one_gpu():
    samples = "0, 40\n1, 99\n0, 80\n0, [N/A]\n1, 0\n0, 6"
    assert mean_utilisation(samples, 0) == pytest.approx(42.0)
    assert mean_utilisation(samples, 1) == pytest.approx(49.5)
    assert mean_utilisation(samples, 2) is None
    assert mean_utilisation("0, 5\n0, 1", 0) == pytest.approx(3.0)  # a cut-off last line
    assert mean_utilisation("", 0) is None


def test_torch_index_maps_through_visible_devices(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    assert smi_index(torch.device("cuda", 0)) == 3
    assert smi_index(torch.device("cuda", 1)) == 1
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-5f2c,GPU-aa01")  # UUIDs: no mapping
    assert smi_index(torch.device("cuda", 1)) == 1


def test_samples_taken_while_the_block_runs(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"  # prints its samples and its arguments, then ends
    fake.write_text("#!/bin/sh\nprintf '0, 30\\n1, 100\\n0, 90\\n0, 60\\n'\n"
                    f"echo \"$@\" > {tmp_path / 'args.tmp'} && mv {tmp_path / 'args.tmp'} "
                    f"{tmp_path / 'args'}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    with GpuUtilisation(torch.device("cuda", 0)) as util:
        deadline = time.monotonic() + 20  # the work: until the sampler has sampled
        while not (tmp_path / "args").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    assert util.percent == pytest.approx(60.0)
    assert (tmp_path / "args").read_text().split() == [
        "--query-gpu=index,utilization.gpu", "--format=csv,noheader,nounits", "-i", "0",
        "-lms", "100"]
    with GpuUtilisation(torch.device("cpu")) as util:
        pass
    assert util.percent is None

"""GPU utilisation over a stretch of work, as `nvidia-smi` samples it.

`nvidia-smi --query-gpu=index,utilization.gpu -i N -lms 100` runs in its own process while the
work runs (a Python thread polling NVML would compete with a launch-bound training loop
for the interpreter lock); the mean of its samples for the work's GPU is the share of
time in which at least one kernel ran on it. Where there is no nvidia-smi (a CPU
machine, another vendor) the reading is None.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from typing import IO

import torch

SAMPLE_MS = 100


def smi_index(device: torch.device) -> int:
    """The nvidia-smi index of CUDA `device`: its torch index mapped through
    CUDA_VISIBLE_DEVICES when that lists plain indices."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
    if all(v.strip().isdigit() for v in visible) and index < len(visible):
        return int(visible[index])
    return index


def mean_utilisation(samples: str, index: int) -> float | None:
    """Mean of the 'INDEX, PERCENT' lines of GPU `index` in nvidia-smi's CSV output
    (noheader, nounits); None without any such line. Lines it cannot read ('[N/A]', a
    line cut off when the sampler was stopped) are skipped."""
    values = []
    for line in samples.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 2 and fields[0] == str(index) and fields[1].isdigit():
            values.append(int(fields[1]))
    return sum(values) / len(values) if values else None


class GpuUtilisation:
    """`with GpuUtilisation(device) as u: work()` and then `u.percent`: the mean
    utilisation of `device` while the block ran (None off CUDA or without nvidia-smi).
    nvidia-smi numbers GPUs by PCI bus: with several GPUs and CUDA_VISIBLE_DEVICES, set
    CUDA_DEVICE_ORDER=PCI_BUS_ID so that torch numbers them alike."""

    def __init__(self, device: torch.device):
        self.device = device
        self.percent: float | None = None
        self._proc: subprocess.Popen | None = None
        self._samples: IO[str] | None = None

    def __enter__(self) -> GpuUtilisation:
        smi = shutil.which("nvidia-smi")
        if self.device.type == "cuda" and smi:
            # samples go to a file, not a pipe nobody reads until the end (a full pipe
            # would stop the sampling)
            self._samples = tempfile.TemporaryFile("w+", encoding="utf-8")
            self._proc = subprocess.Popen(
                [smi, "--query-gpu=index,utilization.gpu", "--format=csv,noheader,nounits",
                 "-i", str(smi_index(self.device)), "-lms", str(SAMPLE_MS)],
                stdout=self._samples, stderr=subprocess.DEVNULL, text=True)
        return self

    def __exit__(self, *exc) -> None:
        if self._proc is None or self._samples is None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._samples.seek(0)
        self.percent = mean_utilisation(self._samples.read(), smi_index(self.device))
        self._samples.close()

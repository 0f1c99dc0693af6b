"""`bench train --profile N`: where the time of N training steps goes, from torch.profiler.

On the CPU, the operators by their own CPU time. On a GPU also the device's view: the
kernels' time a step against the step's wall time (how busy the host keeps the GPU),
the kernel launches a step, and the kernels by their own device time; a launch-bound
step shows many launches and a small busy share.
"""
from __future__ import annotations

import time
from collections.abc import Callable

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

#: the runtime calls that launch a kernel, as the profiler names them
LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx")
ROWS = 20


def profile_steps(step: Callable[[int], object], indices: range, device: torch.device) -> str:
    """Run step(i) for each i of `indices` under torch.profiler -> a text report: wall ms
    a step (profiler on), on CUDA the kernels' ms a step, their share of the step and
    the launches a step, then the top ROWS operators (by self device time on CUDA, by
    self CPU time elsewhere)."""
    cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    if cuda:
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    with profile(activities=activities) as prof:
        for i in indices:
            step(i)
        if cuda:
            torch.cuda.synchronize(device)
    step_ms = (time.perf_counter() - start) * 1e3 / max(1, len(indices))
    events = prof.key_averages()
    lines = [f"# profile of {len(indices)} steps: {step_ms:.1f} ms a step (profiler on)"]
    sort = "self_cpu_time_total"
    if cuda:
        # the kernels' own entries only: the operator that launched a kernel carries its
        # time too, so a sum over every entry would count it twice
        kernel_ms = sum(e.self_device_time_total for e in events
                        if e.device_type == DeviceType.CUDA and not e.is_user_annotation
                        ) / 1e3 / max(1, len(indices))
        launches = sum(e.count for e in events if e.key in LAUNCHES) / max(1, len(indices))
        lines.append(f"# GPU: {kernel_ms:.1f} ms of kernels a step ({kernel_ms / step_ms:.0%} "
                     f"of the step), {launches:.0f} kernel launches a step")
        sort = "self_device_time_total"
    lines.append(events.table(sort_by=sort, row_limit=ROWS))
    return "\n".join(lines)

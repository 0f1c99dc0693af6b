"""`bench train --profile N`: where the time of N training steps goes, from torch.profiler.

On the CPU, the operators by their own CPU time, then by operator and input shapes, each
product (and oneDNN's LSTM layer) with the GFLOP/s it ran at: the table that shows which
products run below the machine's peak. On a GPU also the device's view: the kernels'
time a step against the step's wall time (how busy the host keeps the GPU), the kernel
launches a step, and the kernels by their own device time; a launch-bound step shows
many launches and a small busy share.
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

#: the runtime calls that launch a kernel, as the profiler names them
LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx")
ROWS = 20
#: rows of the table by input shapes
SHAPE_ROWS = 30


def product_flop(name: str, shapes: list) -> int:
    """An operator's name and input shapes, as torch.profiler records them (a list per
    argument, [] for a scalar or None) -> the FLOP of its matrix products (2 x the
    multiply-adds), 0 for an operator that is not one:

    - mkldnn::_linear_pointwise (X, W, B, attr, scalars, algorithm): X ... x K, W N x K;
      its binary overload (X, other, W, B, attr) has five arguments, W the third;
    - aten::mm (A M x K, B K x N), aten::addmm (C, A, B, beta, alpha);
    - aten::bmm (A b x M x K, B b x K x N), aten::baddbmm (C, A, B, ...);
    - aten::mkldnn_rnn_layer (input T x B x I, W_ih 4H x I, W_hh 4H x H, ...): each step
      multiplies [x; h] by the gates' weights; its backward twice that (the input's and
      the weights' gradients)."""
    try:
        if name == "mkldnn::_linear_pointwise":
            x, w = (shapes[0], shapes[2]) if len(shapes) == 5 else (shapes[0], shapes[1])
            return 2 * math.prod(x[:-1]) * x[-1] * w[0]
        if name in ("aten::mm", "aten::addmm"):
            a, b = shapes[1:3] if name == "aten::addmm" else shapes[:2]
            return 2 * a[0] * a[1] * b[1]
        if name in ("aten::bmm", "aten::baddbmm"):
            a, b = shapes[1:3] if name == "aten::baddbmm" else shapes[:2]
            return 2 * a[0] * a[1] * a[2] * b[2]
        if name in ("aten::mkldnn_rnn_layer", "aten::mkldnn_rnn_layer_backward"):
            (t, b, i), w_ih, w_hh = shapes[0], shapes[1], shapes[2]
            forward = 2 * t * b * w_ih[0] * (i + w_hh[1])
            return forward * (2 if name.endswith("_backward") else 1)
    except (IndexError, TypeError, ValueError):  # an overload with other arguments
        return 0
    return 0


@dataclass
class _Group:
    """The events of one (operator, input shapes): their count, own CPU time, FLOP."""

    calls: int = 0
    own_us: float = 0.0
    flop: int = 0


def by_shapes(events, steps: int, rows: int = SHAPE_ROWS) -> str:
    """The profiler's events over `steps` steps (`prof.events()` of a profile recorded
    with shapes; each with .name, .input_shapes, .self_cpu_time_total in us) -> the
    products' total (ms a step, share of all own time, GFLOP/s), then the top `rows`
    (operator, input shapes) by own CPU time: ms and calls a step, share, GFLOP/s of a
    product (product_flop), the operator and its shapes."""
    groups: dict[tuple[str, str], _Group] = defaultdict(_Group)
    total_us = 0.0
    for e in events:
        group = groups[(e.name, str(e.input_shapes))]
        group.calls += 1
        group.own_us += e.self_cpu_time_total
        group.flop += product_flop(e.name, e.input_shapes)
        total_us += e.self_cpu_time_total
    per_step = max(1, steps)
    product_us = sum(g.own_us for g in groups.values() if g.flop)
    flop = sum(g.flop for g in groups.values())
    lines = [f"# products: {product_us / 1e3 / per_step:.1f} ms a step "
             f"({product_us / max(total_us, 1e-9):.0%} of own time) at "
             f"{flop / max(product_us * 1e3, 1e-9):.1f} GFLOP/s",
             "# by input shapes: ms a step, calls a step, share of own time, GFLOP/s "
             "(products), operator, shapes"]
    for (name, shape_text), g in sorted(groups.items(), key=lambda kv: -kv[1].own_us)[:rows]:
        rate = f"{g.flop / (g.own_us * 1e3):7.1f}" if g.flop and g.own_us else " " * 7
        lines.append(f"{g.own_us / 1e3 / per_step:8.2f} {g.calls / per_step:7.1f} "
                     f"{g.own_us / max(total_us, 1e-9):6.1%} {rate}  {name} {shape_text[:100]}")
    return "\n".join(lines)


def profile_steps(step: Callable[[int], object], indices: range, device: torch.device) -> str:
    """Run step(i) for each i of `indices` under torch.profiler -> a text report: wall ms
    a step (profiler on), on CUDA the kernels' ms a step, their share of the step and
    the launches a step, then the top ROWS operators (by self device time on CUDA, by
    self CPU time elsewhere), and off CUDA the table by input shapes (by_shapes)."""
    cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    if cuda:
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    with profile(activities=activities, record_shapes=not cuda) as prof:
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
    if not cuda:
        lines.append(by_shapes(prof.events(), len(indices)))
    return "\n".join(lines)

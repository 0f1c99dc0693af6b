"""Device choice and mixed precision: CUDA when present, else the CPU."""
from __future__ import annotations

import contextlib
import functools

import torch

from core.errors import ConfigError


def pick_device(name: str = "auto", threads: int = 0) -> torch.device:
    """'auto' -> cuda when available else cpu; 'cuda' without a GPU is a clear error."""
    if threads > 0:
        torch.set_num_threads(threads)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {name!r} asked for, but no CUDA GPU is visible; use --device cpu")
    return device


def describe_device(device: torch.device | None = None) -> str:
    """Human-readable: 'NVIDIA H100 (cuda:0)' or 'CPU, 2 threads'."""
    device = device or pick_device("auto")
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)} ({device})"
    return f"CPU, {torch.get_num_threads()} threads"


@functools.cache
def cpu_supports_bf16() -> bool:
    """True when this CPU has native bf16 instructions (AVX512-BF16 or AMX): only then
    is bf16 autocast faster than fp32 here. (oneDNN runs bf16 on any AVX512 CPU, but
    emulated, several times slower than fp32.)"""
    try:
        return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    except (AttributeError, RuntimeError):
        return False


def amp_active(device: torch.device, enabled: bool) -> bool:
    """Whether `train.amp` really runs in bf16 on `device`: always on CUDA, on a CPU
    only with native bf16 support (see cpu_supports_bf16)."""
    return enabled and (device.type == "cuda" or cpu_supports_bf16())


def autocast(device: torch.device, enabled: bool):
    """bf16 autocast (CUDA, or a CPU with native bf16) when enabled and possible; a
    no-op context otherwise. The output softmax and the loss stay fp32 (the softmax
    layer's logits are cast, see core/train/loss.py); attention softmaxes run in bf16."""
    if amp_active(device, enabled):
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()

"""Device choice and mixed precision: CUDA when present, else the CPU."""
from __future__ import annotations

import contextlib

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


def autocast(device: torch.device, enabled: bool):
    """bf16 autocast on CUDA when enabled; a no-op context elsewhere."""
    if enabled and device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()

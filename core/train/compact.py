"""Compact model weights for shipped runs (the demo bundle): fp16, or int8 per row.

A model-only checkpoint's `model` table can be stored as

- "fp16": every floating tensor in float16 (half the size of fp32);
- "int8": every floating matrix with at least MIN_INT8 elements (embeddings, softmax
  layer, recurrent and attention weights) as int8 with one float16 scale per row,
  w[r] ~= q[r] * scale[r], scale[r] = max|w[r]| / 127 (symmetric, round to nearest: the
  error of each weight is at most scale[r] / 2); the rest (biases, small matrices) in
  float16. About a quarter of fp32.

`expand_state` turns either back into float32 tensors for load_state_dict.
"""
from __future__ import annotations

import torch
from torch import Tensor

FORMATS = ("fp32", "fp16", "int8")
MIN_INT8 = 4096  # smaller matrices stay fp16: their scales would cost more than they save
SCALES_KEY = "int8_scales"  # {tensor name: rows (float16)} beside the `model` table


def compact_state(state: dict[str, Tensor], fmt: str) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """(tensors, int8 scales) of a state dict in `fmt` (see the module doc): every tensor
    keeps its shape; an int8 matrix R x C gets 1-D float16 scales of length R.
    ValueError on an unknown fmt."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown weight format {fmt!r}: use one of {FORMATS}")
    tensors: dict[str, Tensor] = {}
    scales: dict[str, Tensor] = {}
    for name, w in state.items():
        if not w.is_floating_point() or fmt == "fp32":
            tensors[name] = w
        elif fmt == "int8" and w.dim() == 2 and w.numel() >= MIN_INT8:
            w32 = w.detach().float()
            # clamped after the cast: a floor below float16's range (an all-zero row such
            # as PAD's embedding) would round to a scale of 0 and quantise 0 / 0 = NaN
            scale = (w32.abs().amax(dim=1) / 127).half().clamp_min(torch.finfo(torch.float16).tiny)
            q = torch.round(w32 / scale.float()[:, None]).clamp_(-127, 127).to(torch.int8)
            tensors[name], scales[name] = q, scale
        else:
            tensors[name] = w.detach().half()
    return tensors, scales


def expand_state(tensors: dict[str, Tensor], scales: dict[str, Tensor] | None = None
                 ) -> dict[str, Tensor]:
    """float32 tensors for load_state_dict from a compact (or plain) state: an int8 R x C
    matrix times its 1-D scales (length R) per row; non-float tensors unchanged."""
    scales = scales or {}
    out: dict[str, Tensor] = {}
    for name, t in tensors.items():
        if name in scales:
            out[name] = t.float() * scales[name].float()[:, None]
        elif t.is_floating_point():
            out[name] = t.float()
        else:
            out[name] = t
    return out


def state_bytes(tensors: dict[str, Tensor], scales: dict[str, Tensor] | None = None) -> int:
    """Bytes of the tensors' data (what the file is made of, less a little framing), for
    tensors of any shape and the 1-D scales."""
    every = list(tensors.values()) + list((scales or {}).values())
    return sum(t.numel() * t.element_size() for t in every)

"""A test helper: the dtype of every output-layer matmul (bf16 decoding checks)."""
import torch

from core.models import matmul


def record_output_layer_dtypes(monkeypatch, min_rows: int = 30) -> list[torch.dtype]:
    """Patch core.models.matmul.linear (the output layer's product, core/models/base.py
    output_scores) to record the output dtype of each call whose weight has more than
    `min_rows` rows (the output layer: one row per target word)."""
    seen: list[torch.dtype] = []
    linear = matmul.linear

    def recording(x, weight, bias=None):
        out = linear(x, weight, bias)
        if weight.size(0) > min_rows:
            seen.append(out.dtype)
        return out

    monkeypatch.setattr(matmul, "linear", recording)
    return seen

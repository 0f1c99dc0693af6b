"""Helpers for tests that read pictures the workbench draws."""
from __future__ import annotations

import numpy as np


def ink_bands(image) -> list[tuple[int, int]]:
    """(first, last) row of each horizontal band of dark pixels (text lines)."""
    width, height = image.width(), image.height()
    ptr = image.constBits()
    rgb = np.frombuffer(ptr, np.uint8, count=height * image.bytesPerLine()).reshape(
        height, image.bytesPerLine())[:, :width * 4].reshape(height, width, 4)[..., :3]
    dark = (rgb.astype(int).sum(axis=2) < 300).any(axis=1)
    bands, start = [], None
    for row, ink in enumerate(dark):
        if ink and start is None:
            start = row
        elif not ink and start is not None:
            bands.append((start, row - 1))
            start = None
    return bands

"""Shared fixtures. SHARED_DATA is ../shared/data beside the checkout (absent on a
user's fresh clone: tests that need it skip with that reason)."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

# Test models are tiny: one thread avoids the synchronisation cost that makes two
# threads several times slower per step on them (measured: 40 steps, 1.9 s vs 10.2 s CPU).
torch.set_num_threads(1)


def shared_path(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: shared corpora live beside the checkout only in CI")
    return path


@pytest.fixture
def shared():
    return shared_path

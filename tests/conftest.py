"""Shared fixtures. SHARED_DATA is ../shared/data beside the checkout (absent on a
user's fresh clone: tests that need it skip with that reason)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))


def shared_path(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: shared corpora live beside the checkout only in CI")
    return path


@pytest.fixture
def shared():
    return shared_path

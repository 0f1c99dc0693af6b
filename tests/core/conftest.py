"""Fixtures shared by the core tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.data.readers import read_parallel
from core.store import Workspace

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


@pytest.fixture
def workspace(tmp_path):
    """A fresh workspace holding the bundled demo corpus as 'demo' (corpus id 1)."""
    ws = Workspace.open(tmp_path / "ws")
    corpus = read_parallel(DEMO / "demo.es", DEMO / "demo.en", "es", "en",
                           docids_path=DEMO / "demo.docids")
    ws.add_corpus(corpus, name="demo", format="parallel")
    yield ws
    ws.close()

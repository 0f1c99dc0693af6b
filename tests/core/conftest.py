"""Fixtures shared by the core tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.data.readers import read_parallel
from core.workspace.store import Workspace
from tests.core.toy_lexicon import LEXICON, TGT_VOCAB
from tests.core.toy_models import MonotoneModel

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


@pytest.fixture
def monotone():
    """tests/core/toy_models.MonotoneModel over tests/core/toy_lexicon: German -> English
    word by word."""
    return MonotoneModel(LEXICON, len(TGT_VOCAB))


def train_tiny_demo_run(root: Path, steps: int, dev_sample: int, name: str = "tiny",
                        guided_alignment: float = 0.0) -> Path:
    """Train a tiny demo-preset run `name` (embeddings 16, hidden 24) for `steps` steps on
    the bundled demo corpus of the workspace at `root` (created, corpus imported, if
    needed); returns `root`."""
    from core.jobs import JobContext
    from core.services.demo import demo_config, import_demo_corpus
    from core.services.training import create_run, train_run

    with Workspace.open(root) as ws:
        corpus_id = import_demo_corpus(ws)
        config = demo_config(name, dict(emb_size=16, hidden_size=24), max_steps=steps,
                             valid_every=steps, device="cpu")
        config.data.dev_sample = dev_sample
        config.train.guided_alignment = guided_alignment
        train_run(ws, create_run(ws, corpus_id, config, name), JobContext())
    return root

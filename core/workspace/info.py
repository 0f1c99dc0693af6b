"""Plain records the workspace API (core/workspace/store.py) returns: corpora, splits, runs,
metric points, checkpoints, evaluations, translations."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class CorpusInfo:
    id: int
    name: str
    format: str
    src_lang: str
    tgt_lang: str
    n_pairs: int
    n_documents: int
    created: float  # seconds since the epoch
    sources: list[str]
    options: dict[str, Any]
    warnings: list[str]
    path: Path  # corpora/<id>/


@dataclass
class SplitInfo:
    corpus_id: int
    seed: int
    ratios: list[float]
    assignment: dict[str, list[int]]  # split name -> pair indices
    created: float

    @property
    def sizes(self) -> dict[str, int]:
        """Pairs per split name."""
        return {name: len(idx) for name, idx in self.assignment.items()}


@dataclass
class RunInfo:
    id: int
    name: str
    family: str
    config: dict[str, Any]
    corpus_id: int | None
    status: str
    device: str
    error: str
    created: float
    started: float | None
    finished: float | None
    steps: int
    elapsed_s: float
    path: Path  # runs/<id>/


@dataclass
class MetricPoint:
    step: int
    kind: str
    name: str
    value: float  # NaN stays NaN
    time: float


@dataclass
class CheckpointInfo:
    id: int
    run_id: int
    step: int
    path: Path
    kind: str
    dev_ppl: float | None
    created: float


@dataclass
class EvaluationInfo:
    id: int
    run_ids: list[int]
    test_name: str
    metrics: dict[str, Any]
    created: float


@dataclass
class TranslationInfo:
    id: int
    run_id: int | None
    document: str
    path: Path
    created: float

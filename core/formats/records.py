"""The record every translation export reads and writes."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)  # slots: a file of a million segments holds a million of these
class TranslationRecord:
    """One translated segment.

    source/translation: plain text as shown to the user. Optional extras survive only in
    the formats that can hold them (JSON lines holds all of them):
    source_tokens/target_tokens: the tokens the model saw and produced;
    score: the hypothesis log-probability; token_scores: one log-probability per target
    token; attention: target_tokens x source_tokens weights (list of rows).
    """

    source: str
    translation: str
    reference: str | None = None
    id: str | None = None
    doc_id: str | None = None
    source_tokens: list[str] | None = None
    target_tokens: list[str] | None = None
    score: float | None = None
    token_scores: list[float] | None = None
    attention: list[list[float]] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

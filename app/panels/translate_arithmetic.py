"""The Translate screen's arithmetic boxes: bf16 (CPUs with native bf16) and int8 (torch's
quantized engine), one at a time; the job is told which one is checked per call. And the
status line's notes: which arithmetic ran, how many rows are flagged."""
from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox

from core.models.int8 import available as int8_available
from core.train.device import cpu_bf16_status


def arithmetic_boxes() -> tuple[QCheckBox, QCheckBox]:
    """(bf16, int8) boxes, each enabled where this machine can run it, with a tooltip
    saying what it does or why it is off; checking one unchecks the other."""
    bf16 = QCheckBox("bf16")
    native, why = cpu_bf16_status()
    bf16.setEnabled(native)
    bf16.setToolTip(
        "Decode in bf16 autocast: about twice as fast a beam search on this CPU, the "
        "same BLEU in our measurements (docs/benchmarks.md); a few outputs may differ"
        if native else f"bf16 decoding needs a CPU with native bf16; this one has {why}")
    int8 = QCheckBox("int8")
    int8.setEnabled(int8_available())
    int8.setToolTip(
        "Compute the weight products in int8 with per-row scales (a shipped int8 "
        "run's own weights): faster on the CPU; a few outputs may differ from fp32 "
        "(docs/benchmarks.md). The status line says which arithmetic ran"
        if int8_available() else "this PyTorch has no quantized engine for int8")
    # one arithmetic at a time: int8 and bf16 exclude each other
    int8.toggled.connect(lambda on: on and bf16.setChecked(False))
    bf16.toggled.connect(lambda on: on and int8.setChecked(False))
    return bf16, int8


def arithmetic_note(decoding: dict[str, Any] | None) -> str:
    """' in int8' / ' in bf16' / ' in fp32' for the status line: the arithmetic the
    translation's decoding settings record ('' without settings)."""
    precision = (decoding or {}).get("precision")
    return f" in {precision}" if precision else ""


def flag_note(flagged: int) -> str:
    """', 2 to check (⚠)' for the status line; '' when none is flagged."""
    return f", {flagged} to check (\u26a0)" if flagged else ""

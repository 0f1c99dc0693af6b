"""Translation sessions for both fronts: trained runs loaded once, on a device."""
from __future__ import annotations

from collections.abc import Sequence


def open_session(ws, runs: Sequence[int | str], which: str = "best", device: str = "cpu"):
    """A TranslationSession of `runs` (several = an ensemble) at checkpoint `which`
    ('best', 'last' or a file name) on `device` ('cpu', 'cuda', 'auto' ...)."""
    from core.infer.session import TranslationSession
    from core.train.device import pick_device

    return TranslationSession.open(ws, list(runs), which=which, device=pick_device(device))

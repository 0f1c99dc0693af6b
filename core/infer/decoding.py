"""The decoding settings of a translation, as one ordered record: which runs and
checkpoints (file and training step), beam, length penalty, precision, shortlist and
the options of the call. Both fronts pass it to what they write: the exports' metadata
(TMX header props, XLIFF header tool and note, a JSON-lines record's
meta["decoding"]: core.formats) and the evaluation reports' header
(core.evaluate.report.decoding_table), so a result says how it was made.
"""
from __future__ import annotations

from typing import Any

#: the settings' keys, in the order they are written
KEYS = ("runs", "checkpoints", "steps", "beam", "length_penalty", "precision", "device",
        "shortlist", "unk_replace", "target_context")


def decoding_settings(session: Any, *, beam: int, length_penalty: float | None = None,
                      amp: bool | None = None, shortlist: Any = None,
                      unk_replace: bool = False, target_context: bool = False,
                      int8: bool | None = None) -> dict[str, Any]:
    """The settings of `session.translate(..., beam=beam, amp=amp, shortlist=shortlist,
    ...)` as a dict in KEYS order, of JSON values only: runs (names), checkpoints (file
    names) and steps, one per member (an ensemble has several); precision 'int8'
    (int8 None: the session's), 'bf16' or 'fp32' as really decoded (amp None: the session's; bf16 only where the device has
    it); shortlist 'PER_WORD,FREQUENT' or None (None: the session's own); length_penalty
    None: the session's (its run's, core.infer.session), recorded as the search used it
    (searched_alpha)."""
    from core.train.device import amp_active  # lazy: a top-level import would load torch

    amp = session.amp if amp is None else amp
    shortlist = shortlist if shortlist is not None else getattr(session, "shortlist", None)
    device = session.device
    return {
        "runs": list(session.names),
        "checkpoints": [member.checkpoint.name for member in session.members],
        "steps": [int(member.step) for member in session.members],
        "beam": int(beam),
        "length_penalty": searched_alpha(session, beam, length_penalty),
        "precision": "int8" if (getattr(session, "int8", False) if int8 is None else int8)
        else "bf16" if amp_active(device, bool(amp)) else "fp32",
        "device": str(device),
        "shortlist": None if shortlist is None else f"{shortlist.per_word},{shortlist.frequent}",
        "unk_replace": bool(unk_replace),
        # a run trained on the previous target sentence always sees its own translations
        "target_context": bool(target_context)
        or getattr(session, "context_side", "source") == "target",
    }


def setting_text(value: Any) -> str:
    """A setting's value as a reader sees it in a report: lists joined by ' + ', None
    'none', booleans 'yes'/'no'."""
    if isinstance(value, list):
        return " + ".join(setting_text(v) for v in value)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def searched_alpha(session: Any, beam: int, length_penalty: float | None = None) -> float:
    """The GNMT alpha a search with `session` at `beam` really applies: `length_penalty`
    (None: the session's own); 0 for greedy search (beam 1, which ranks nothing) and for
    an OpenNMT-py import (its beam scores finished hypotheses per word, as onmt_translate's
    -length_penalty avg, whatever alpha: core.infer.beam)."""
    alpha = getattr(session, "length_penalty", 0.0) if length_penalty is None else length_penalty
    if beam < 2 or getattr(session, "onmt_style", False):
        return 0.0
    return float(alpha)

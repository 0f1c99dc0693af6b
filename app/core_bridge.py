"""Where the GUI finds core functions that may not exist yet.

Core is written alongside the GUI; a panel asks `find("core.train", "train")` and, when
it is missing, shows the control disabled with `pending(...)` as its tooltip. No
computation lives here: only look-ups.
"""
from __future__ import annotations

import importlib
from typing import Any

from PySide6.QtWidgets import QWidget


def find(module: str, attr: str) -> Any | None:
    """`module.attr`, or None when core does not provide it (yet)."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            return None
        raise
    return getattr(mod, attr, None)


def pending(module: str, attr: str) -> str:
    return f"Pending: needs {module}.{attr} from core (not available in this build)."


def require(widgets: list[QWidget], module: str, attr: str) -> Any | None:
    """Enable `widgets` when core provides module.attr; otherwise disable them with a
    tooltip naming what is missing. Returns the function or None."""
    fn = find(module, attr)
    for w in widgets:
        w.setEnabled(fn is not None)
        if fn is None:
            w.setToolTip(pending(module, attr))
    return fn

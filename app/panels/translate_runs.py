"""The Translate screen's runs: which it checks when none is (the ones the workspace last
translated with, remembered in QSettings, else its newest finished run), and what the
first checked run allows (a shortlist, its own translations as context)."""
from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QSettings

from core.families import family_traits
from core.workspace.store import Workspace

#: QSettings key: {workspace folder: the run ids it last translated with}
LAST_RUNS_KEY = "translate/last_runs"


def first_choice(workspace: Workspace, runs: list[Any]) -> list[int]:
    """The runs to check when none is: the ones `workspace` last translated with (while
    all are still among `runs`), else the newest finished run, else the newest."""
    usable = {r.id for r in runs}
    last = [int(r) for r in last_runs().get(str(workspace.root), [])]
    if last and all(r in usable for r in last):
        return last
    finished = [r.id for r in runs if r.status == "finished"]
    return [(finished or [runs[-1].id])[-1]]


def last_runs() -> dict[str, list[int]]:
    """{workspace folder: the run ids it last translated with}; {} when unreadable."""
    value = QSettings().value(LAST_RUNS_KEY)
    try:
        remembered = json.loads(value) if isinstance(value, str) else {}
    except ValueError:
        return {}
    return remembered if isinstance(remembered, dict) else {}


def remember_runs(workspace: Workspace | None, run_ids: list[int]) -> None:
    """Store `run_ids` as the runs `workspace` last translated with."""
    if workspace is None or not run_ids:
        return
    remembered = last_runs()
    remembered[str(workspace.root)] = list(run_ids)
    QSettings().setValue(LAST_RUNS_KEY, json.dumps(remembered))


def shortlist_unavailable(workspace: Workspace | None, run_ids: list[int]) -> str | None:
    """Why the first of `run_ids` can have no lexical shortlist, or None."""
    from core.services.shortlist_store import unavailable

    if workspace is None or not run_ids:
        return None
    return unavailable(workspace, run_ids[0])


def is_context_model(workspace: Workspace | None, run_ids: list[int]) -> bool:
    """Whether the first of `run_ids` is a context model."""
    if workspace is None or not run_ids:
        return False
    return family_traits(workspace.get_run(run_ids[0]).family).context


def reads_target_side(workspace: Workspace | None, run_ids: list[int]) -> bool:
    """Whether the first of `run_ids` reads the previous target sentence as its context
    (model.ctx_side): it always translates with its own translations."""
    if workspace is None or not run_ids:
        return False
    model = workspace.get_run(run_ids[0]).config.get("model", {})
    return model.get("ctx_side", "source") == "target"

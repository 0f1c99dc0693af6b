"""What deleting a corpus or a run removes, or why it cannot go: the text the GUI's
confirmation dialog shows and `corpus delete` / `runs delete` print, from one place.

The store does the deleting (Workspace.delete_corpus; a run through `delete_run` here,
which holds its training lock meanwhile); the verdicts only look, so a front shows the
verdict, asks, and then deletes.
"""
from __future__ import annotations

from core import runlock
from core.errors import StoreError
from core.workspace.store import Workspace


def corpus_deletion(ws: Workspace, corpus_id: int) -> tuple[bool, str]:
    """(allowed, message): what deleting the corpus removes, or why it cannot go (runs
    use it: they are named, and nothing is deleted)."""
    info = ws.get_corpus(corpus_id)
    users = ws.list_runs(corpus_id=info.id)
    if users:
        names = ", ".join(f"{r.id}: {r.name}" for r in users)
        return False, (f"The corpus \u201c{info.name}\u201d is used by "
                       f"{len(users)} run{'s' if len(users) > 1 else ''} ({names}). "
                       "Delete those runs first; nothing was deleted.")
    return True, (f"Delete the corpus \u201c{info.name}\u201d ({info.n_pairs:,} pairs, "
                  f"{info.src_lang} \u2192 {info.tgt_lang})?\n\nIts stored text and its split "
                  "are removed from the workspace. No run uses it; the files it was imported "
                  "from, the other corpora and the runs stay.")


def run_deletion(ws: Workspace, run_id: int, training: bool) -> tuple[bool, str]:
    """(allowed, message): what deleting the run removes, or why it cannot go. `training`:
    the caller itself trains it (a GUI job); a run whose lock (core.runlock) another
    process holds is refused too."""
    run = ws.get_run(run_id)
    locked = runlock.is_locked(run.path)
    if training or (run.status == "running" and not locked):
        return False, (f"The run \u201c{run.name}\u201d is training. Cancel it first (Cancel "
                       "under the form), then delete it; nothing was deleted.")
    if locked:
        pid = runlock.holder(run.path)
        who = f"process {pid}" if pid else "another process"
        return False, (f"The run \u201c{run.name}\u201d is training in {who}. Stop that "
                       "training first (Cancel in its workbench, Ctrl-C in its terminal), "
                       "then delete it; nothing was deleted.")
    evaluations = list(ws.evaluations(run.id))
    return True, (f"Delete the run {run.id}: \u201c{run.name}\u201d ({run.family}, {run.status}, "
                  f"{run.steps:,} steps)?\n\nIts checkpoints, curves, "
                  f"{len(evaluations)} evaluation{'' if len(evaluations) == 1 else 's'} and its "
                  f"folder {run.path.name}/ under runs/ are removed. Its corpus and the other "
                  "runs stay.")


def delete_run(ws: Workspace, run_id: int) -> None:
    """Delete the run while holding its training lock (core.runlock), so that no trainer
    starts on it between the verdict and the deletion: TrainingError if one has;
    StoreError when its folder cannot be locked (nothing is deleted then)."""
    run = ws.get_run(run_id)
    if run.path.is_symlink() or not run.path.is_dir():  # a link: no lock file through it
        ws.delete_run(run.id)
        return
    try:
        lock = runlock.RunLock.acquire(run.path, run.name)
    except OSError as exc:  # a folder we cannot write in
        raise StoreError(f"{run.path}: cannot lock the run folder ({exc.strerror or exc}); "
                         "nothing was deleted") from None
    with lock:
        ws.delete_run(run.id)

"""Paths the workbench reads, writes or deletes must stay inside the folder it owns.

Two checks, one rule (links are followed, then the result must lie inside):

* `within(root, path)`: a path under a folder the workbench owns (the workspace, a run
  folder) must resolve inside it. `runs/5` made a link to `/elsewhere`, or a `last.pt`
  link out of its run, is refused, so no command loads, writes or deletes a file
  outside through a link. Workspace.run_dir / corpus_dir go through it.
* `inside(base, name)`: a *name* read from a file or the database (a checkpoint's `best`
  list, a row of the `checkpoints` table, a gold-set or preset name) joined to its
  folder, refused when it leaves it (`../x`, an absolute path, a link out), so a
  crafted file can neither make the workbench delete nor load a file elsewhere.

Cleanup never follows a link at all: it removes the link itself (`remove_tree`).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from core.errors import WorkbenchError


def within(root: str | Path, path: str | Path, what: str,
           error: type[WorkbenchError] = WorkbenchError) -> Path:
    """`path` (relative paths are under `root`), resolved, links followed, when it lies
    inside `root` (or is `root`); else `error` naming the path, where it leads and what
    to do."""
    root = Path(root).resolve()
    given = root / path
    resolved = given.resolve()
    if resolved != root and root not in resolved.parents:
        raise error(f"{what} {given} leads outside {root} (to {resolved}, through a link); "
                    "the workbench reads and writes only inside it: remove the link, or "
                    "put the files themselves there")
    return resolved


def inside(base: str | Path, name: str | Path, what: str,
           error: type[WorkbenchError] = WorkbenchError, bare: bool = False) -> Path:
    """`base / name`, resolved, when it lies inside `base`; else `error` saying so.

    With `bare`, `name` must also be a plain file name (no folder part)."""
    base = Path(base).resolve()
    text = str(name)
    if not text or "\x00" in text or (bare and (Path(text).name != text or text in (".", ".."))):
        raise error(f"{what} {text!r} is not a plain file name inside {base}; the file that "
                    "names it is damaged or was crafted: remove that entry or the file")
    path = (base / text).resolve()
    if path != base and base not in path.parents:
        raise error(f"{what} {text!r} points outside {base}; the file or record that names it "
                    "is damaged or was crafted: remove that entry or the file")
    return path


def remove_tree(path: str | Path) -> None:
    """Delete the folder `path` with what it holds; a link (to a folder or not) is
    removed itself, never followed, and rmtree removes links inside the folder without
    following them. Errors are ignored: cleanup is best effort."""
    path = Path(path)
    try:
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            os.unlink(path)
        else:
            shutil.rmtree(path, ignore_errors=True)
    except OSError:
        pass

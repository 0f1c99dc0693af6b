"""Names that come from files or the database must stay inside their folder.

A checkpoint's `best` list, a row of the `checkpoints` table, a gold-set or preset name:
each is joined to a folder the workbench owns (a run, the workspace, gold/, presets/).
`inside` refuses one that would leave it (`../x`, an absolute path, a symlink out), so a
crafted file can neither make the workbench delete nor load a file elsewhere.
"""
from __future__ import annotations

from pathlib import Path

from core.errors import WorkbenchError


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

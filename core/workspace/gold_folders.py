"""A gold set's folder on disk, at the store's level: its file names and what an import
killed mid-way leaves behind (`.NAME.tmp-PID`, `.NAME.old-PID`), put right when the
workspace opens (core.workspace.store.Workspace.recover). Reading and writing gold sets
is core.evaluate.goldsets, which stands on core.evaluate.alignment; the workspace does
not need that."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

GOLD_DIR = "gold"
SRC_FILE, TGT_FILE, LINKS_FILE, META_FILE = "src.txt", "tgt.txt", "links.pharaoh", "meta.json"

_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?P<kind>tmp|old)-(?P<pid>[0-9]+)(-.*)?$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def recover_gold_folders(root: str | Path) -> None:
    """What a gold-set import killed mid-way left in `root` (gold/), put right: a set
    moved aside for replacing (`.NAME.old-PID`) goes back when NAME is missing; other
    leftovers of dead processes are removed. Folders of live processes are left alone."""
    root = Path(root)
    for entry in sorted(root.iterdir()) if root.is_dir() else ():
        m = _LEFTOVER.match(entry.name)
        if m is None or entry.is_symlink() or not entry.is_dir() or _alive(int(m["pid"])):
            continue  # a link is never followed: not a leftover of ours
        target = root / m["name"]
        if m["kind"] == "old" and not target.exists() and (entry / META_FILE).exists():
            os.replace(entry, target)
        else:
            shutil.rmtree(entry, ignore_errors=True)

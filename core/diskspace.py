"""A full disk, told apart from other failures and said plainly: which disk, how much
is free, how much is needed.

`is_full(exc)` knows the errors a full disk (or quota) raises: OSError ENOSPC/EDQUOT
and SQLite's SQLITE_FULL. `disk_full(path, needed)` is the one message for all of them,
a DiskFullError (an OutputError, so also an OSError and a WorkbenchError).
"""
from __future__ import annotations

import errno
import shutil
import sqlite3
from pathlib import Path

from core.errors import DiskFullError

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
NEARLY_FULL_BYTES = 1024 * 1024  # less than this free: an I/O error is taken for a full disk


def is_full(exc: BaseException) -> bool:
    """Whether `exc` says the disk (or quota) is full."""
    if isinstance(exc, DiskFullError):
        return True
    if isinstance(exc, OSError) and exc.errno in FULL_ERRNOS:
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.Error) and code is not None and code & 0xFF == sqlite3.SQLITE_FULL


def free_bytes(path: str | Path) -> int | None:
    """Free bytes on the file system holding `path` (its nearest existing folder), or
    None when that cannot be told."""
    p = Path(path).absolute()
    for folder in (p, *p.parents):
        try:
            if folder.exists():
                return shutil.disk_usage(folder).free
        except OSError:
            return None
    return None


def nearly_full(path: str | Path) -> bool:
    """Whether the file system holding `path` has less than NEARLY_FULL_BYTES free."""
    free = free_bytes(path)
    return free is not None and free < NEARLY_FULL_BYTES


def _size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n} bytes"


def disk_full(path: str | Path, needed: int | None = None, what: str = "",
              cleaned: bool = True) -> DiskFullError:
    """The error for `path` (`what` names it, e.g. 'the workspace database') on a full
    disk: free space there and, when known, about how much writing it needs. `cleaned`:
    the caller removed what it had half-written (said in the message)."""
    free = free_bytes(path)
    have = f"{_size(free)} free" if free is not None else "no free space"
    need = f", about {_size(needed)} needed" if needed else ""
    name = f"{path} ({what})" if what else f"{path}"
    done = " Nothing was left half-written." if cleaned else ""
    return DiskFullError(f"{name}: cannot be written, the disk is full ({have}{need}); "
                         "free some space on that disk, or choose a folder on another disk, "
                         f"and try again.{done}")

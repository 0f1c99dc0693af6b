"""Atomic file writes: temp file in the same folder, fsync, rename. On any failure the
temp file is removed, so nothing half-written is left; a full disk is a DiskFullError
saying how much is free and needed (core.diskspace).

A process killed mid-write (SIGKILL, power loss) cannot remove its temp file. Temp files
are named `.NAME.unfinished-XXXXXXXX.tmp` (so a user who sees one knows what it is) and
are flock(2)ed by their writer until renamed; the kernel drops the lock when the writer
dies, so the next write into that folder removes every such file nobody holds
(sweep_unfinished), and never a live writer's.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from core import diskspace
from core.errors import OutputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _cannot(path: Path, exc: OSError, what: str = "") -> OutputError:
    reason = what or exc.strerror or str(exc)
    return OutputError(f"{path}: cannot be written ({reason}); choose a file name in a folder "
                       "you can write to")


UNFINISHED = "unfinished-"
#: a temp file of write_atomic: `.NAME.unfinished-` + mkstemp's 8 random characters
_TEMP_NAME = re.compile(r"^\..+\." + UNFINISHED + r"[a-z0-9_]{8}\.tmp$", re.DOTALL)


def temp_prefix(name: str) -> str:
    """The temp file's name before mkstemp's random part: `.NAME.unfinished-`, NAME cut
    so that a 255-byte name (the usual file system limit) stays a valid temp name too."""
    cut = name.encode("utf-8")[:200].decode("utf-8", "ignore")
    return f".{cut}.{UNFINISHED}"


def sweep_unfinished(folder: str | Path) -> list[Path]:
    """Remove the temp files of write_atomic in `folder` whose writer has died (killed
    mid-write: nobody holds their lock). Links and other names are left alone; errors
    are ignored (best effort). Returns the files removed."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not _TEMP_NAME.match(entry.name) or not entry.is_file(follow_symlinks=False):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # fails while its writer lives
            if os.stat(entry.path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                os.unlink(entry.path)  # under our lock: a new writer of it sees it gone
                removed.append(Path(entry.path))
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def write_atomic(path: str | Path, writer: Callable[[BinaryIO], None],
                 size: int | None = None) -> Path:
    """Write `path` through `writer(fileobj)` so readers see the old or the new file,
    never a half-written one. Returns the path. A path that cannot be written (a folder,
    under a file, a read-only or pseudo file system) raises OutputError; a full disk
    DiskFullError, with `size` (the bytes to write, when known) as the space needed."""
    path = Path(path)
    fd, tmp = _temp_beside(path, size)
    try:
        # mkstemp creates 0600 files; give the file the mode a plain open() would
        os.chmod(tmp, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            writer(f)
            f.flush()
            os.fsync(f.fileno())
            os.replace(tmp, path)  # still open, so still locked: never swept
    except BaseException as exc:
        try:
            written = os.path.getsize(tmp)
        except OSError:
            written = 0
        try:
            os.unlink(tmp)
        except OSError:
            pass  # gone already, or left for Workspace.recover: the first error matters
        if diskspace.is_full(exc) and not isinstance(exc, OutputError):
            raise diskspace.disk_full(path, max(size or 0, written) or None) from None
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise _cannot(path, exc) from None
        raise
    return path


def _temp_beside(path: Path, size: int | None) -> tuple[int, str]:
    """A new temp file in `path`'s folder (made if missing), locked (flock) for as long
    as it is open: (fd, name). The unfinished temp files of killed writers there are
    swept first. OutputError (DiskFullError) when `path` cannot be written there."""
    if path.is_dir():
        raise OutputError(f"{path}: is a folder; give a file name (e.g. {path / 'out.txt'})")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        sweep_unfinished(path.parent)
        while True:
            fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path.name), suffix=".tmp",
                                       dir=path.parent)
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits while a sweeper looks at it
            if os.fstat(fd).st_nlink:
                return fd, tmp
            os.close(fd)  # swept between mkstemp and flock: take another
    except (FileExistsError, NotADirectoryError) as exc:
        raise _cannot(path, exc, "a part of its folder path is a file") from None
    except OSError as exc:
        if diskspace.is_full(exc):
            raise diskspace.disk_full(path, size) from None
        raise _cannot(path, exc) from None


def check_writable(path: str | Path) -> Path:
    """Raise write_atomic's OutputError now if `path` could not be written (a folder,
    under a file, a read-only or pseudo file system), so that a command says so before
    its work, not after; a temp file is made and removed, and so are the folders made for
    it: `path` and its folders are as they were."""
    path = Path(path)
    made = []  # the missing folders _temp_beside makes, deepest first
    folder = path.parent
    while folder != folder.parent and not folder.exists() and not folder.is_symlink():
        made.append(folder)
        folder = folder.parent
    try:
        fd, tmp = _temp_beside(path, None)
        os.unlink(tmp)
        os.close(fd)
    finally:
        for folder in made:
            with contextlib.suppress(OSError):
                folder.rmdir()
    return path


def write_text_atomic(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """`text` encoded with `encoding`, written atomically (see write_atomic); returns the
    path, OutputError when it cannot be written."""
    data = text.encode(encoding)
    return write_atomic(path, lambda f: f.write(data), len(data))


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """`data` written atomically (see write_atomic); returns the path, OutputError when
    it cannot be written."""
    return write_atomic(path, lambda f: f.write(data), len(data))

"""Atomic file writes: temp file in the same folder, fsync, rename. On any failure the
temp file is removed, so nothing half-written is left; a full disk is a DiskFullError
saying how much is free and needed (core.diskspace)."""
from __future__ import annotations

import contextlib
import os
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


def temp_prefix(name: str) -> str:
    """The temp file's name before mkstemp's random part: `.NAME.`, NAME cut so that a
    255-byte name (the usual file system limit) stays a valid temp name too."""
    cut = name.encode("utf-8")[:200].decode("utf-8", "ignore")
    return f".{cut}."


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
        os.replace(tmp, path)
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
    """A new temp file in `path`'s folder (made if missing): (fd, name); OutputError
    (DiskFullError) when `path` cannot be written there."""
    if path.is_dir():
        raise OutputError(f"{path}: is a folder; give a file name (e.g. {path / 'out.txt'})")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return tempfile.mkstemp(prefix=temp_prefix(path.name), suffix=".tmp", dir=path.parent)
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
        os.close(fd)
        os.unlink(tmp)
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

"""Atomic file writes: temp file in the same folder, fsync, rename."""
from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, writer: Callable[[BinaryIO], None]) -> Path:
    """Write `path` through `writer(fileobj)` so readers see the old or the new file,
    never a half-written one. Returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp creates 0600 files; give the file the mode a plain open() would
        os.chmod(tmp, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            writer(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def write_text_atomic(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    data = text.encode(encoding)
    return write_atomic(path, lambda f: f.write(data))


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    return write_atomic(path, lambda f: f.write(data))

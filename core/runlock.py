"""One trainer per run: a lock file in the run folder, held while a process trains it.

`runs/<id>/train.lock` holds the trainer's PID and is locked with flock(2) for as long
as that process trains the run. The kernel drops the lock when the process dies, even
by SIGKILL, so a run whose status is 'running' while nobody holds its lock was
interrupted (`Workspace.open` marks it so). flock locks belong to the open file, so a
second trainer in the same process (two GUI jobs) is refused too.
"""
from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from core.errors import TrainingError

LOCK_NAME = "train.lock"


def _read_holder(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


class RunLock:
    """The lock on one run folder; `RunLock.acquire(run_dir, name)` or TrainingError."""

    def __init__(self, path: Path, fd: int):
        self.path, self._fd = path, fd

    @classmethod
    def acquire(cls, run_dir: str | Path, run_name: str) -> RunLock:
        """Take the run folder's exclusive lock (flock) without waiting and write our pid and
        time in it; TrainingError naming the holder when another process has it."""
        path = Path(run_dir) / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = _read_holder(path)
            who = f"process {holder.split()[0]}" if holder else "another process"
            raise TrainingError(
                f"run {run_name!r} is being trained by {who} (lock {path}); wait for it to "
                "finish or stop it, then resume the run; two trainers of one run would "
                "overwrite each other's checkpoints and metrics") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {time.time():.0f}\n".encode(), 0)
        return cls(path, fd)

    def release(self) -> None:
        """Empty the lock file and release the lock; a second call does nothing."""
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def is_locked(run_dir: str | Path) -> bool:
    """True while some process (this one included) trains the run in `run_dir`."""
    path = Path(run_dir) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def holder(run_dir: str | Path) -> str:
    """'PID' of the last process that held the lock ('' when unknown)."""
    text = _read_holder(Path(run_dir) / LOCK_NAME)
    return text.split()[0] if text else ""

"""Exceptions a user can cause. Each message says where (file, line) and what to do.

Programming errors stay ordinary exceptions; these are the ones the GUI shows in a
message box and the CLI prints before exiting non-zero.
"""
from __future__ import annotations

from pathlib import Path


class WorkbenchError(Exception):
    """Base of every error the user can fix (bad file, bad config, ...)."""


class CorpusError(WorkbenchError):
    """A corpus file cannot be read as asked.

    Attributes:
        path: the file at fault (None for in-memory input).
        line: 1-based line number, or None when the problem is the whole file.
        reason: what is wrong and what to do about it.
    """

    def __init__(self, path: str | Path | None, line: int | None, reason: str):
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = reason
        where = self.path or "<input>"
        if line is not None:
            where = f"{where}, line {line}"
        super().__init__(f"{where}: {reason}")


class AlignmentError(CorpusError):
    """A gold or predicted word-alignment file is malformed or out of range."""


class ConfigError(WorkbenchError):
    """A configuration (TOML file, preset, CLI options) is invalid."""


class StoreError(WorkbenchError):
    """The workspace database cannot be opened or used as asked."""


class CheckpointError(WorkbenchError):
    """A checkpoint is missing, incompatible or damaged."""


class TrainingError(WorkbenchError):
    """Training stopped for a reason the user must act on (NaN loss, out of memory)."""


class OutputError(WorkbenchError, OSError):
    """A file cannot be written where asked (a folder, under a file, a read-only or
    pseudo file system). Also an OSError, for callers that catch those."""


class DiskFullError(OutputError):
    """The disk (or the user's quota) is full: the message says where, how much is free
    and, when known, how much is needed (core.diskspace). Nothing half-written is left."""

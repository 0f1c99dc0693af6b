"""Long work as plain functions that report through a JobContext.

A job is `fn(..., ctx: JobContext)`. It calls `ctx.emit(kind, **data)` for events
(progress, metrics, partial results), polls `ctx.cancelled` between units of work and
calls `ctx.wait_if_paused()` at safe points. The CLI prints the events, the GUI turns
them into Qt signals (app/workers.py), the store keeps them. Nothing here knows Qt.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class JobEvent:
    """One thing a job reports. `kind` is e.g. 'progress', 'step', 'validation',
    'checkpoint', 'log', 'finished', 'failed'; `data` carries the numbers."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    time: float = field(default_factory=time.time)


Listener = Callable[[JobEvent], None]


class JobCancelled(Exception):
    """Raised by `JobContext.check_cancelled` to unwind a job the user stopped."""


class JobContext:
    """Thread-safe channel between a running job and whoever watches it.

    Listeners are called synchronously in the job's thread; they must be quick
    (the Qt adapter only re-emits a signal).
    """

    def __init__(self, listeners: list[Listener] | None = None):
        self._listeners: list[Listener] = list(listeners or [])
        self._cancel = threading.Event()
        self._resume = threading.Event()
        self._resume.set()

    # --- the watcher's side -------------------------------------------------
    def add_listener(self, listener: Listener) -> None:
        """Call `listener(event)` for every later event (in the job's thread)."""
        self._listeners.append(listener)

    def cancel(self) -> None:
        """Ask the job to stop (it raises JobCancelled at its next check); wakes it if paused."""
        self._cancel.set()
        self._resume.set()  # a paused job must wake up to notice the cancel

    def pause(self) -> None:
        """Make the job wait at its next `wait_if_paused` until `resume` or `cancel`."""
        self._resume.clear()

    def resume(self) -> None:
        """Let a paused job go on."""
        self._resume.set()

    # --- the job's side -------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        """True once `cancel` was called."""
        return self._cancel.is_set()

    @property
    def paused(self) -> bool:
        """True between `pause` and `resume` (or `cancel`)."""
        return not self._resume.is_set()

    def check_cancelled(self) -> None:
        """Raise JobCancelled when the job was cancelled."""
        if self._cancel.is_set():
            raise JobCancelled()

    def wait_if_paused(self, poll_s: float = 0.1) -> None:
        """Block while paused; returns at once when running or cancelled."""
        while not self._resume.wait(poll_s):
            pass

    def emit(self, kind: str, **data: Any) -> None:
        """Send JobEvent(kind, data) to every listener, synchronously."""
        event = JobEvent(kind, data)
        for listener in self._listeners:
            listener(event)

    def progress(self, done: int, total: int | None = None, message: str = "") -> None:
        """Emit a 'progress' event: `done` of `total` units (None: unknown) and a message."""
        self.emit("progress", done=done, total=total, message=message)


class ShiftedContext(JobContext):
    """A part of a job's work seen as the whole job: cancel and pause are the `outer`
    context's; its progress is shifted by `offset` into the whole job's `total`; with
    `shift_index`, the per-sentence events' 'index' is shifted by `offset` too (one
    document of several); `rename` renames 'translation' events (a comparison's
    baseline phase: 'baseline_translation')."""

    def __init__(self, outer: JobContext, offset: int, total: int, shift_index: bool = False,
                 rename: str = "translation"):
        super().__init__()
        self.outer, self.offset, self.total = outer, offset, total
        self.shift_index, self.rename = shift_index, rename

    @property
    def cancelled(self) -> bool:
        """The outer context's."""
        return self.outer.cancelled

    def check_cancelled(self) -> None:
        """The outer context's."""
        self.outer.check_cancelled()

    def wait_if_paused(self, poll_s: float = 0.1) -> None:
        """The outer context's."""
        self.outer.wait_if_paused(poll_s)

    def emit(self, kind: str, **data: Any) -> None:
        """To the outer context, progress and indices shifted, 'translation' renamed."""
        if kind == "progress":
            data["done"] = self.offset + int(data.get("done") or 0)
            data["total"] = self.total
        elif kind in ("translation", "baseline_translation"):
            if self.shift_index and data.get("index") is not None:
                data["index"] = self.offset + int(data["index"])
            kind = self.rename if kind == "translation" else kind
        self.outer.emit(kind, **data)


class RecordingContext(JobContext):
    """A JobContext that keeps every event: for tests and scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[JobEvent] = []
        self.add_listener(self.events.append)

    def of_kind(self, kind: str) -> list[JobEvent]:
        """The recorded events of `kind`, in order."""
        return [e for e in self.events if e.kind == kind]

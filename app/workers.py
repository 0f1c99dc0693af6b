"""Core jobs, adapted to Qt.

A core job is a plain function `fn(*args, ctx: JobContext, **kwargs)`. `Job` runs it on
a worker thread (QThreadPool) and re-emits what the job reports as Qt signals, which
Qt delivers in the GUI thread (queued connections):

    event(kind: str, data: dict)   every JobEvent the job emits ('step', 'progress', ...)
    finished(result)               the function returned normally
    failed(message, traceback)     it raised; traceback is '' for a WorkbenchError
    cancelled()                    the user cancelled it (JobCancelled, or ctx.cancelled)
    state_changed(state)           queued / running / paused / finished / failed / cancelled

Exceptions are never swallowed: every failure is logged here, emitted as `failed`, and
the JobManager shows it in an error dialog unless the submitter asked to handle it.
"""
from __future__ import annotations

import itertools
import logging
import traceback
from collections import deque
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal, Slot
from PySide6.QtWidgets import QMessageBox, QWidget

from core.errors import WorkbenchError
from core.jobs import JobCancelled, JobContext, JobEvent

log = logging.getLogger("app.jobs")

QUEUED, RUNNING, PAUSED = "queued", "running", "paused"
FINISHED, FAILED, CANCELLED = "finished", "failed", "cancelled"
DONE_STATES = (FINISHED, FAILED, CANCELLED)

_ids = itertools.count(1)


class Job(QObject):
    """One core function to run off the GUI thread, with its JobContext."""

    event = Signal(str, object)
    finished = Signal(object)
    failed = Signal(str, str)
    cancelled = Signal()
    state_changed = Signal(str)
    # worker thread -> GUI thread: every public signal is emitted from the GUI thread, so
    # a slot connected right after submit() can never miss a fast job's result
    _post = Signal(str, object)

    def __init__(self, fn: Callable[..., Any], *args: Any, name: str = "",
                 parent: QObject | None = None, **kwargs: Any):
        super().__init__(parent)
        self.id = next(_ids)
        self.name = name or getattr(fn, "__name__", "job")
        self.ctx = JobContext([self._relay])
        self._fn, self._args, self._kwargs = fn, args, kwargs
        self.state = QUEUED
        self.started = False  # handed to a thread (then the thread settles the end)
        self.result: Any = None
        self.error: str | None = None
        self.last_progress: dict[str, Any] = {}
        self.state_changed.connect(self._remember_state)
        self._post.connect(self._dispatch, Qt.ConnectionType.QueuedConnection)

    # --- control (GUI thread) ------------------------------------------------
    def cancel(self) -> None:
        """Ask the job to stop; one not started yet ends cancelled at once."""
        self.ctx.cancel()
        if not self.started:  # never handed to a thread: settle it here
            self._settle_cancelled()

    def pause(self) -> None:
        """Pause a running job at its next check."""
        if self.state == RUNNING:
            self.ctx.pause()
            self.state_changed.emit(PAUSED)

    def resume(self) -> None:
        """Resume a paused job."""
        if self.state == PAUSED:
            self.ctx.resume()
            self.state_changed.emit(RUNNING)

    @property
    def done(self) -> bool:
        """Whether the job has ended (finished, failed or cancelled)."""
        return self.state in DONE_STATES

    # --- the worker thread ---------------------------------------------------
    def _relay(self, event: JobEvent) -> None:
        # Runs in the job's thread: only re-emit (Qt queues it to the GUI thread).
        self._send("event", event.kind, dict(event.data))

    def run_here(self) -> None:
        """Run the function in the calling thread (the pool calls this)."""
        self.started = True
        if self.ctx.cancelled:
            self._settle_cancelled()
            return
        self._send("state_changed", RUNNING)
        try:
            result = self._fn(*self._args, ctx=self.ctx, **self._kwargs)
        except JobCancelled:
            self._end(CANCELLED, "cancelled")
            return
        except WorkbenchError as exc:
            log.warning("job %s failed: %s", self.name, exc)
            self.error = str(exc)
            self._end(FAILED, "failed", str(exc), "")
            return
        except BaseException as exc:  # noqa: BLE001 - reported, never swallowed
            text = traceback.format_exc()
            log.error("job %s crashed:\n%s", self.name, text)
            self.error = f"{type(exc).__name__}: {exc}"
            self._end(FAILED, "failed", self.error, text)
            return
        self.result = result
        if self.ctx.cancelled:
            self._end(CANCELLED, "cancelled")
        else:
            self._end(FINISHED, "finished", result)

    def _settle_cancelled(self) -> None:
        self._end(CANCELLED, "cancelled")

    @Slot(str, object)
    def _dispatch(self, name: str, args: tuple) -> None:
        if name == "end":  # the final state and the result signal, in one event
            state, signal_name, rest = args
            self.state_changed.emit(state)
            getattr(self, signal_name).emit(*rest)
        else:
            getattr(self, name).emit(*args)

    def _send(self, name: str, *args: Any) -> None:
        self._post.emit(name, args)

    def _end(self, state: str, signal_name: str, *args: Any) -> None:
        """Post the end state with its result signal as one event: whoever sees
        `done` on the GUI thread can rely on the result's slots having run."""
        self._send("end", state, signal_name, args)

    @Slot(str)
    def _remember_state(self, state: str) -> None:
        self.state = state

    def __repr__(self) -> str:
        return f"<Job {self.id} {self.name!r} {self.state}>"


class _Runnable(QRunnable):
    def __init__(self, job: Job):
        super().__init__()
        self.job = job
        self.setAutoDelete(True)

    def run(self) -> None:
        self.job.run_here()


def show_error(parent: QWidget | None, title: str, message: str, details: str = "") -> None:
    """The one place errors reach the user: a message box, with the traceback (for a
    programming error) under 'Show Details...'."""
    box = QMessageBox(QMessageBox.Icon.Critical if details else QMessageBox.Icon.Warning,
                      title, message, QMessageBox.StandardButton.Ok, parent)
    if details:
        box.setDetailedText(details)
    box.exec()


class JobManager(QObject):
    """Keeps every job of the session: concurrent ones, and named queues whose jobs run
    one after another (e.g. 'training', so a queued run starts when the previous ends).
    """

    jobs_changed = Signal()
    job_failed = Signal(object, str, str)  # job, message, traceback

    def __init__(self, parent: QObject | None = None, max_threads: int = 4,
                 error_parent: QWidget | None = None):
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        self.jobs: list[Job] = []
        self._queues: dict[str, deque[Job]] = {}
        self._queue_busy: dict[str, list[Job]] = {}  # the queue's jobs handed to threads
        self.error_parent = error_parent

    def submit(self, fn: Callable[..., Any], *args: Any, name: str = "", queue: str | None = None,
               wait: bool = True, report_errors: bool = True, **kwargs: Any) -> Job:
        """Run `fn(*args, ctx=..., **kwargs)`; with `queue`, after the queue's previous
        jobs, or with `wait=False` at once, the queue's later jobs waiting for it too.
        Unless `report_errors` is False, a failure opens an error dialog."""
        job = Job(fn, *args, name=name, parent=self, **kwargs)
        job._queue = queue  # type: ignore[attr-defined]
        job.state_changed.connect(self._on_state)
        if report_errors:
            job.failed.connect(lambda msg, tb, j=job: self._report(j, msg, tb))
        self.jobs.append(job)
        if queue is None:
            self._start(job)
        elif not wait:
            self._queue_busy.setdefault(queue, []).append(job)
            self._start(job)
        else:
            self._queues.setdefault(queue, deque()).append(job)
            self._pump(queue)
        self.jobs_changed.emit()
        return job

    def _start(self, job: Job) -> None:
        job.started = True
        self.pool.start(_Runnable(job))

    def _pump(self, queue: str) -> None:
        busy = self._queue_busy[queue] = [j for j in self._queue_busy.get(queue, []) if not j.done]
        if busy:
            return
        pending = self._queues.get(queue, deque())
        while pending:
            job = pending.popleft()
            if job.done:  # cancelled while waiting
                continue
            busy.append(job)
            self._start(job)
            return

    def _on_state(self, state: str) -> None:
        if state in DONE_STATES:
            for queue in list(self._queues):
                self._pump(queue)
        self.jobs_changed.emit()

    def _report(self, job: Job, message: str, tb: str) -> None:
        self.job_failed.emit(job, message, tb)
        title = f"{job.name} failed"
        show_error(self.error_parent, title, message, tb)

    # --- queries for the status bar -------------------------------------------
    def active(self) -> list[Job]:
        """The jobs not ended yet."""
        return [j for j in self.jobs if not j.done]

    def running(self) -> list[Job]:
        """The jobs running or paused."""
        return [j for j in self.jobs if j.state in (RUNNING, PAUSED)]

    def cancel_all(self) -> None:
        """Cancel every job not ended yet."""
        for job in self.active():
            job.cancel()

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Cancel everything and wait for the worker threads (window close)."""
        self.cancel_all()
        return self.pool.waitForDone(timeout_ms)

"""The JobManager (app/workers.py): a job's events and result reach the GUI thread; an
exception fails the job with its traceback, a user error with its message only; jobs
are cancelled, paused and resumed; a queue runs its jobs one after another, a queued
job waits for a job of its queue started at once and, cancelled, never runs; a job is
seen done only once its result is delivered."""
from __future__ import annotations

import threading
import time

import pytest

from app import workers
from core.errors import CorpusError
from core.jobs import JobContext


def _counting_job(n: int, ctx: JobContext) -> int:
    total = 0
    for i in range(n):
        total += i
        ctx.emit("step", step=i, thread=threading.get_ident())
    return total


def test_a_jobs_events_and_result_reach_the_gui_thread_from_its_own(qtbot):
    manager = workers.JobManager()
    received: list[tuple[str, dict]] = []
    job = manager.submit(_counting_job, 5, name="count")
    job.event.connect(lambda kind, data: received.append((kind, data)))
    with qtbot.waitSignal(job.finished, timeout=5000) as blocker:
        pass
    assert blocker.args == [0 + 1 + 2 + 3 + 4]
    qtbot.waitUntil(lambda: len(received) == 5, timeout=2000)
    assert [d["step"] for _, d in received] == [0, 1, 2, 3, 4]
    # the job ran on another thread than the GUI's
    assert {d["thread"] for _, d in received} != {threading.get_ident()}
    assert job.state == workers.FINISHED
    manager.shutdown()


def _crash(ctx: JobContext) -> None:
    raise ZeroDivisionError("boom in the job")


def _user_error(ctx: JobContext) -> None:
    raise CorpusError("corpus.en", 7, "line is empty; remove it or use lenient mode")


def test_exception_is_reported_with_traceback(qtbot, errors):
    manager = workers.JobManager()
    job = manager.submit(_crash, name="crasher")
    with qtbot.waitSignal(job.failed, timeout=5000) as blocker:
        pass
    message, tb = blocker.args
    assert "ZeroDivisionError: boom in the job" == message
    assert "Traceback" in tb and "_crash" in tb
    qtbot.waitUntil(lambda: len(errors) == 1, timeout=2000)
    assert errors[0][1] == message and "_crash" in errors[0][2]
    assert job.state == workers.FAILED


def test_user_error_is_a_message_without_traceback(qtbot, errors):
    manager = workers.JobManager()
    job = manager.submit(_user_error, name="reader")
    with qtbot.waitSignal(job.failed, timeout=5000) as blocker:
        pass
    assert blocker.args == ["corpus.en, line 7: line is empty; remove it or use lenient mode", ""]
    qtbot.waitUntil(lambda: len(errors) == 1, timeout=2000)


def _long_job(ctx: JobContext) -> int:
    steps = 0
    while steps < 10_000:  # ~100 s if never cancelled
        ctx.wait_if_paused()
        ctx.check_cancelled()
        time.sleep(0.01)
        steps += 1
        ctx.emit("step", step=steps)
    return steps


def test_cancel_a_long_job(qtbot):
    manager = workers.JobManager()
    job = manager.submit(_long_job, name="long")
    qtbot.waitUntil(lambda: job.state == workers.RUNNING, timeout=5000)
    with qtbot.waitSignal(job.cancelled, timeout=5000):
        job.cancel()
    assert job.state == workers.CANCELLED
    assert manager.shutdown(2000)


def test_pause_stops_progress_and_resume_continues(qtbot):
    manager = workers.JobManager()
    steps: list[int] = []
    job = manager.submit(_long_job, name="long")
    job.event.connect(lambda kind, data: steps.append(data["step"]))
    qtbot.waitUntil(lambda: len(steps) >= 3, timeout=5000)
    job.pause()
    qtbot.wait(150)  # let in-flight events arrive
    frozen = len(steps)
    qtbot.wait(300)
    assert len(steps) <= frozen + 1 and job.state == workers.PAUSED
    job.resume()
    qtbot.waitUntil(lambda: len(steps) >= frozen + 5, timeout=5000)
    job.cancel()
    assert manager.shutdown(2000)


def _tagged(log: list[str]):
    """A job function that logs its start and end (0.1 s apart) and returns its tag."""

    def tagged(tag: str, ctx: JobContext) -> str:
        log.append(f"start {tag}")
        time.sleep(0.1)
        log.append(f"end {tag}")
        return tag

    return tagged


def test_queue_runs_jobs_one_after_another(qtbot):
    manager = workers.JobManager()
    log: list[str] = []
    tagged = _tagged(log)

    first = manager.submit(tagged, "a", queue="training")
    second = manager.submit(tagged, "b", queue="training")
    assert second.state == workers.QUEUED and not second.started
    with qtbot.waitSignal(second.finished, timeout=5000):
        pass
    assert first.state == workers.FINISHED
    assert log == ["start a", "end a", "start b", "end b"]


def test_a_queued_job_waits_for_a_job_of_its_queue_started_at_once(qtbot):
    """submit(queue=..., wait=False) starts at once; the queue's next job waits for it."""
    manager = workers.JobManager()
    log: list[str] = []
    tagged = _tagged(log)

    now = manager.submit(tagged, "now", queue="training", wait=False)
    assert now.started
    later = manager.submit(tagged, "later", queue="training")
    assert later.state == workers.QUEUED and not later.started
    with qtbot.waitSignal(later.finished, timeout=5000):
        pass
    assert now.state == workers.FINISHED
    assert log == ["start now", "end now", "start later", "end later"]


def test_cancelling_a_queued_job_never_runs_it(qtbot):
    manager = workers.JobManager()
    ran: list[str] = []
    first = manager.submit(_long_job, queue="q")
    second = manager.submit(lambda ctx: ran.append("second"), queue="q")
    with qtbot.waitSignal(second.cancelled, timeout=2000):
        second.cancel()
    first.cancel()
    assert manager.shutdown(3000)
    qtbot.wait(50)
    assert ran == []


@pytest.mark.parametrize("exc", [KeyError("k"), RuntimeError("r")])
def test_every_exception_type_fails_the_job(qtbot, errors, exc):
    def fn(ctx: JobContext) -> None:
        raise exc

    manager = workers.JobManager()
    job = manager.submit(fn)
    with qtbot.waitSignal(job.failed, timeout=5000):
        pass
    assert job.error.startswith(type(exc).__name__)


@pytest.mark.parametrize("fn, signal_name", [(lambda ctx: 42, "finished"),
                                              (_crash, "failed")])
def test_done_is_seen_only_with_the_result_delivered(qtbot, fn, signal_name):
    """The GUI thread handles the worker's posts one event at a time; after any single
    event, a job that reads `done` has already delivered its result (or failure) to
    its slots: waiting for `done` is waiting for the result. (The state and the result
    once travelled as two events, and a panel could see `done` before its result.)"""
    job = workers.Job(fn, name="one")
    posts: list[tuple[str, tuple]] = []
    job._post.disconnect(job._dispatch)  # this test is the event loop
    job._post.connect(lambda name, args: posts.append((name, args)))
    delivered: list[object] = []
    getattr(job, signal_name).connect(lambda *args: delivered.append(args))
    job.run_here()
    assert posts
    for name, args in posts:
        job._dispatch(name, args)
        if job.done:
            assert delivered, f"done after {name!r} before {signal_name!r} was delivered"
    assert job.done and len(delivered) == 1
    assert job.state == (workers.FINISHED if signal_name == "finished" else workers.FAILED)

"""Cycles are collected on the GUI thread, never in a job's thread (app/gc_guard.py):
a Qt object destroyed in a worker by the collector deadlocked the suite."""
from __future__ import annotations

import gc
import threading


class Cyclic:
    """Part of a reference cycle; notes the thread that finally frees it."""

    freed_in: list[str] = []

    def __init__(self):
        self.me = self

    def __del__(self):
        Cyclic.freed_in.append(threading.current_thread().name)


def test_garbage_made_in_a_worker_is_collected_on_the_gui_thread(qtbot, gc_on_gui_thread):
    Cyclic.freed_in.clear()
    assert not gc.isenabled()

    def make_garbage():  # far past the gen-0 threshold: automatic gc would run here
        for _ in range(20 * gc.get_threshold()[0]):
            Cyclic()

    worker = threading.Thread(target=make_garbage, name="job-thread")
    worker.start()
    worker.join()
    assert Cyclic.freed_in == []  # nothing collected in the worker
    qtbot.waitUntil(lambda: len(Cyclic.freed_in) > 0, timeout=5000)  # the GUI thread's timer
    gc.collect()
    assert len(Cyclic.freed_in) == 20 * gc.get_threshold()[0]
    assert set(Cyclic.freed_in) == {threading.main_thread().name}


def test_collect_due_follows_the_thresholds(gc_on_gui_thread):
    gc.collect()
    assert gc_on_gui_thread.collect_due() == -1  # nothing due right after a collection
    keep = [[] for _ in range(gc.get_threshold()[0] + 10)]  # container allocations count
    assert gc_on_gui_thread.collect_due() == 0
    assert gc.get_count()[0] < gc.get_threshold()[0]
    del keep


def test_full_collections_back_off_by_their_cost(gc_on_gui_thread, monkeypatch):
    """A generation-2 collection waits FULL_BACKOFF times its last duration; until then a
    younger generation is collected instead."""
    from app import gc_guard

    clock = iter([100.0, 100.5, 110.0, 200.0, 200.1])  # monotonic() readings
    monkeypatch.setattr(gc_guard.time, "monotonic", lambda: next(clock))
    counts = {"now": (0, 0, 99)}  # every generation past its threshold
    monkeypatch.setattr(gc_guard.gc, "get_count", lambda: counts["now"])
    collected = []
    monkeypatch.setattr(gc_guard.gc, "collect", lambda generation=2: collected.append(generation))
    collector = gc_guard.MainThreadCollector()
    collector._thresholds = (1, 1, 1)
    counts["now"] = (5, 5, 5)
    assert collector.collect_due() == 2  # at 100.0, took 0.5 s: next full one at 150.5
    assert collector.collect_due() == 1  # at 110.0: too soon, generation 1 instead
    assert collector.collect_due() == 2  # at 200.0 (took 0.1 s)
    assert collected == [2, 1, 2]

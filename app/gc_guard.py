"""Python's cyclic garbage collector, run on the GUI thread only.

Automatic collection runs in whichever thread happens to allocate. When that is a job's
worker thread and the garbage holds Qt wrappers (a closed screen's widgets), their C++
objects are destroyed there: QObject's destructor takes Qt's connection lock, then waits
for the GIL, while the GUI thread holds the GIL and waits for that lock. Both threads
hang for good (seen in the test suite: a pairs job's regex match triggered the
collection). So the workbench turns automatic collection off and collects on a timer
in the GUI thread, at the thresholds Python would have used.
"""
from __future__ import annotations

import gc
import time

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 500  # between checks; a check that finds little garbage costs microseconds
#: a full (generation 2) collection waits at least this many times its last duration
#: since it ended: on a large heap (a loaded corpus of a million pairs) a full
#: collection takes a while, and CPython too spaces them out by the long-lived objects
FULL_BACKOFF = 100


class MainThreadCollector(QObject):
    """While it lives (and `start` was called), cycles are collected in the thread that
    owns it, never in a worker."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._thresholds = gc.get_threshold()
        self._full_allowed_at = 0.0  # time.monotonic() before which gen 2 waits
        self._timer = QTimer(self)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self.collect_due)

    def start(self) -> None:
        """Turn Python's automatic collection off and collect on the GUI thread's timer instead."""
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        """Automatic collection on again (after a final collection here)."""
        self._timer.stop()
        gc.collect()
        gc.enable()

    def collect_due(self) -> int:
        """Collect the oldest generation whose count passed its threshold, as automatic
        collection would have. -> the generation collected, or -1 for none."""
        counts, now = gc.get_count(), time.monotonic()
        for generation in (2, 1, 0):
            if not self._thresholds[generation] or counts[generation] < self._thresholds[generation]:
                continue
            if generation == 2 and now < self._full_allowed_at:
                continue  # a younger generation instead, as CPython would
            gc.collect(generation)
            if generation == 2:
                end = time.monotonic()
                self._full_allowed_at = end + FULL_BACKOFF * (end - now)
            return generation
        return -1


_collector: MainThreadCollector | None = None


def collect_on_gui_thread() -> MainThreadCollector:
    """Install the collector once per process (call from the GUI thread, after the
    QApplication exists). -> the collector."""
    global _collector
    if _collector is None:
        _collector = MainThreadCollector()
        _collector.start()
    return _collector

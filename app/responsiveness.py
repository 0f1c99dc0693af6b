"""How responsive the GUI stays while a model trains: a timer probe on the event loop.

`python main.py bench gui` runs this module in its own process (offscreen by default):
it opens the main window on a fresh demo workspace, trains a small model from the
Training screen and prints how late a 20 ms timer's ticks came. The test suite uses
`LatenessProbe` too, but asserts only what does not depend on the machine's speed.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer


class LatenessProbe:
    """A QTimer on the GUI thread; records when each tick came and how late (ms)."""

    def __init__(self, interval_ms: int = 20):
        self.interval = interval_ms
        self.clock = QElapsedTimer()
        self.timer = QTimer()
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.late: list[float] = []
        self.ticks: list[float] = []  # ms since start()

    def start(self) -> None:
        """Start the clock and the timer (ticks and lateness recorded from now)."""
        self.clock.start()
        self.last = 0.0
        self.timer.start()

    def now(self) -> float:
        """Milliseconds since start(), on the probe's clock."""
        return self.clock.nsecsElapsed() / 1e6

    def _tick(self) -> None:
        now = self.now()
        self.late.append(now - self.last - self.interval)
        self.ticks.append(now)
        self.last = now

    def stop(self) -> float:
        """Stop ticking; the worst lateness in ms."""
        self.timer.stop()
        return max(self.late)

    def ticks_between(self, start_ms: float, end_ms: float) -> int:
        """How many ticks fell strictly between `start_ms` and `end_ms` (probe clock)."""
        return sum(start_ms < t < end_ms for t in self.ticks)


def measure(steps: int, hidden: int) -> dict[str, float]:
    """Train `steps` steps of the demo preset (hidden x hidden LSTM) from the Training
    screen of a fresh demo workspace; lateness statistics of the event loop."""
    from PySide6.QtWidgets import QApplication

    from app import workers
    from app.gc_guard import collect_on_gui_thread
    from app.main_window import MainWindow
    from core.config import load_preset
    from core.services.demo import import_demo_corpus
    from core.workspace.store import Workspace

    app = QApplication.instance() or QApplication(sys.argv[:1])
    collect_on_gui_thread()  # as the workbench: its cost is part of what is measured
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        ws = Workspace.open(root, create=True)
        import_demo_corpus(ws)
        ws.close()
        window = MainWindow(root)
        _wait(app, lambda: window.warm_up_job.done)
        cfg = load_preset("demo")
        cfg.name = "responsiveness"
        cfg.model.emb_size = cfg.model.hidden_size = hidden
        cfg.train.max_steps, cfg.train.valid_every, cfg.train.device = steps, steps, "cpu"
        panel = window.training
        panel.set_config(cfg)
        panel.corpus.setCurrentIndex(0)
        probe = LatenessProbe()
        probe.start()
        job = panel.start()
        if job is None:
            raise SystemExit("bench gui: the training job did not start")
        _wait(app, lambda: job.done)
        worst = probe.stop()
        state = job.state
        window.close()
    if state != workers.FINISHED:
        raise SystemExit(f"bench gui: the training job ended {state}")
    late = sorted(probe.late)
    return {"ticks": len(late), "median_ms": statistics.median(late),
            "p99_ms": late[min(len(late) - 1, int(0.99 * len(late)))], "max_ms": worst}


def _wait(app, done, timeout_s: float = 600.0) -> None:
    """Run the event loop until done() is true (polled every 50 ms)."""
    loop = QEventLoop()
    clock = QElapsedTimer()
    clock.start()
    poll = QTimer()
    poll.setInterval(50)
    poll.timeout.connect(lambda: (done() or clock.elapsed() > timeout_s * 1000) and loop.quit())
    poll.start()
    if not done():
        loop.exec()
    poll.stop()
    if not done():
        raise SystemExit("bench gui: timed out")


def main(argv: list[str] | None = None) -> int:
    """`python main.py bench gui`: train a small run in a job and print how late the event loop's
    20 ms timer ran."""
    p = argparse.ArgumentParser(prog="bench gui", description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=60, help="training steps")
    p.add_argument("--hidden", type=int, default=64, help="LSTM and embedding size")
    args = p.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    r = measure(args.steps, args.hidden)
    print(f"event-loop lateness over {r['ticks']} ticks of a 20 ms timer while training "
          f"{args.steps} steps: median {r['median_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms, "
          f"max {r['max_ms']:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The commands' progress output: a '\r' bar on a terminal, whole lines in a log file."""
from __future__ import annotations

import io

import core.cli.progress as progress
from core.cli.progress import ProgressPrinter, StderrProgress
from core.jobs import JobEvent


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _step(step: int) -> JobEvent:
    return JobEvent("step", {"step": step, "epoch": 0, "loss": 2.5, "ppl": 12.2,
                             "lr": 1e-3, "tok_per_s": 3000.0, "eta_s": 60.0})


class Clock:
    """time.monotonic for the module, advanced by hand."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _train(printer, clock, steps=100, validate_at=50):
    printer(JobEvent("start", {"total_steps": steps, "device": "cpu", "params": 1234,
                               "steps_per_epoch": 100}))
    for s in range(1, steps + 1):
        clock.now += 1.0  # a step a second
        printer(_step(s))
        if s == validate_at:
            printer(JobEvent("validation", {"step": s, "dev_ppl": 9.87}))


def test_training_into_a_log_file_writes_whole_lines_every_half_minute(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    log = io.StringIO()
    _train(ProgressPrinter(stream=log), clock)
    text = log.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    steps = [line.split()[1] for line in lines if line.startswith("step ") and "loss" in line]
    # the first step, then one every 30 s (a step a second), and the last
    assert steps == ["1/100", "31/100", "61/100", "91/100", "100/100"]
    assert "step 50: dev perplexity 9.87" in lines
    assert lines[0] == "training on cpu: 1,234 parameters, 100 batches per epoch"


def test_training_on_a_terminal_keeps_its_bar_on_one_line(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    tty = Terminal()
    _train(ProgressPrinter(stream=tty), clock, steps=4, validate_at=2)
    text = tty.getvalue()
    assert text.count("\r[") == 4  # every step: the bar redraws at most twice a second
    # the validation line starts on a line of its own, after the bar
    assert "tok/s ETA 1.0 min   \nstep 2: dev perplexity 9.87\n\r[" in text


def test_translation_progress_into_a_pipe_is_lines_and_on_a_terminal_one_line(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    log, tty = io.StringIO(), Terminal()
    for stream in (log, tty):
        counter = StderrProgress(stream=stream, line_interval_s=10.0)
        for done in range(32, 321, 32):  # 10 batches, 4 s each
            clock.now += 4.0
            counter(JobEvent("progress", {"done": min(done, 300), "total": 300}))
    assert log.getvalue().splitlines() == [
        "translated 32/300", "translated 128/300", "translated 224/300", "translated 300/300"]
    assert tty.getvalue() == "".join(f"\rtranslated {min(d, 300)}/300"
                                     for d in range(32, 321, 32)) + "\n"

"""Progress on the terminal for the commands: a training progress bar with validation
lines (`train`, `demo`) and a 'translated i/n' counter (`translate`, `evaluate`).

On a terminal each rewrites its own line ('\r'); into a file or a pipe (`nohup ... >
log`, a cluster job) they write whole lines instead, at most one every LINE_INTERVAL_S
seconds (and the last), so that a log reads line by line rather than as one line of
megabytes."""
from __future__ import annotations

import sys
import time

from core.jobs import JobEvent
from core.textsafe import printable

PROGRESS_MIN = 20  # inputs with more sentences show progress on stderr
LINE_INTERVAL_S = 30.0  # into a file or a pipe: a progress line at most this often


def is_terminal(stream) -> bool:
    """Whether `stream` is a terminal (False for files, pipes and streams without
    isatty)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class ProgressPrinter:
    """Prints job events as a one-line progress bar plus validation lines."""

    def __init__(self, stream=None, quiet: bool = False,
                 line_interval_s: float = LINE_INTERVAL_S):
        self._stream, self.quiet = stream, quiet
        self.line_interval_s = line_interval_s
        self.total = None
        self.last = float("-inf")
        self.open_line = False  # a '\r' bar is on the terminal's current line

    @property
    def stream(self):
        """The stream printed to: the one given, else sys.stderr as it is now."""
        # resolved when printing: sys.stderr may be replaced after import (pytest, GUI)
        return self._stream or sys.stderr

    def __call__(self, e: JobEvent) -> None:
        d = e.data
        if e.kind == "start":
            self.total = d.get("total_steps")
            resumed = f", resumed at step {d['resumed_from']}" if d.get("resumed_from") else ""
            print(f"training on {d['device']}: {d['params']:,} parameters, "
                  f"{d['steps_per_epoch']} batches per epoch{resumed}", file=self.stream)
        elif e.kind == "step" and not self.quiet:
            terminal = is_terminal(self.stream)
            now = time.monotonic()
            if (now - self.last < (0.5 if terminal else self.line_interval_s)
                    and d["step"] != self.total):
                return
            self.last = now
            eta = d.get("eta_s")
            eta_txt = f"{eta / 60:.1f} min" if eta is not None else "?"
            status = (f"step {d['step']}/{self.total} epoch {d['epoch'] + 1} "
                      f"loss {d['loss']:.3f} ppl {d['ppl']:.1f} lr {d['lr']:.2g} "
                      f"{d['tok_per_s']:.0f} tok/s ETA {eta_txt}")
            if terminal:
                frac = d["step"] / self.total if self.total else 0.0
                bar = "#" * int(frac * 30)
                print(f"\r[{bar:<30}] {status}   ", end="", file=self.stream, flush=True)
                self.open_line = True
            else:
                print(status, file=self.stream, flush=True)
        elif e.kind == "validation":
            bleu = f", dev BLEU {d['dev_bleu']:.2f}" if d.get("dev_bleu") is not None else ""
            self._line(f"step {d['step']}: dev perplexity {d['dev_ppl']:.2f}{bleu}")
        elif e.kind == "log":
            self._line(printable(d["message"]))

    def _line(self, text: str) -> None:
        """`text` on a line of its own, after the progress bar where one is open."""
        print(f"\n{text}" if self.open_line else text, file=self.stream, flush=True)
        self.open_line = False


class StderrProgress:
    """Prints 'translated i/n' on stderr for long inputs: on a terminal overwriting
    itself, into a file or a pipe as a line at most every `line_interval_s` seconds
    (and the last)."""

    def __init__(self, label: str = "translated", stream=None,
                 line_interval_s: float = LINE_INTERVAL_S):
        self.label, self.stream = label, stream
        self.line_interval_s = line_interval_s
        self.last = float("-inf")

    def __call__(self, e: JobEvent) -> None:
        if e.kind != "progress" or not e.data.get("total") or e.data["total"] < PROGRESS_MIN:
            return
        done, total = e.data["done"], e.data["total"]
        stream = self.stream or sys.stderr
        if is_terminal(stream):
            end = "\n" if done >= total else ""
            print(f"\r{self.label} {done}/{total}", end=end, file=stream, flush=True)
            return
        now = time.monotonic()
        if now - self.last >= self.line_interval_s or done >= total:
            self.last = now
            print(f"{self.label} {done}/{total}", file=stream, flush=True)

"""Progress on the terminal for the commands: a training progress bar with validation
lines (`train`, `demo`) and a 'translated i/n' counter (`translate`, `evaluate`)."""
from __future__ import annotations

import sys
import time

from core.jobs import JobEvent
from core.textsafe import printable

PROGRESS_MIN = 20  # inputs with more sentences show progress on stderr


class ProgressPrinter:
    """Prints job events as a one-line progress bar plus validation lines."""

    def __init__(self, stream=None, quiet: bool = False):
        self._stream, self.quiet = stream, quiet
        self.total = None
        self.last = 0.0

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
            now = time.monotonic()
            if now - self.last < 0.5 and d["step"] != self.total:
                return
            self.last = now
            frac = d["step"] / self.total if self.total else 0.0
            bar = "#" * int(frac * 30)
            eta = d.get("eta_s")
            eta_txt = f"{eta / 60:.1f} min" if eta is not None else "?"
            print(f"\r[{bar:<30}] step {d['step']}/{self.total} epoch {d['epoch'] + 1} "
                  f"loss {d['loss']:.3f} ppl {d['ppl']:.1f} lr {d['lr']:.2g} "
                  f"{d['tok_per_s']:.0f} tok/s ETA {eta_txt}   ", end="", file=self.stream, flush=True)
        elif e.kind == "validation":
            bleu = f", dev BLEU {d['dev_bleu']:.2f}" if d.get("dev_bleu") is not None else ""
            print(f"\nstep {d['step']}: dev perplexity {d['dev_ppl']:.2f}{bleu}", file=self.stream)
        elif e.kind == "log":
            message = printable(d["message"])
            print(f"\n{message}" if not self.quiet else message, file=self.stream)


class StderrProgress:
    """Prints 'translated i/n' on stderr (overwriting itself) for long inputs."""

    def __init__(self, label: str = "translated", stream=None):
        self.label, self.stream = label, stream

    def __call__(self, e: JobEvent) -> None:
        if e.kind != "progress" or not e.data.get("total") or e.data["total"] < PROGRESS_MIN:
            return
        done, total = e.data["done"], e.data["total"]
        end = "\n" if done >= total else ""
        print(f"\r{self.label} {done}/{total}", end=end, file=self.stream or sys.stderr,
              flush=True)

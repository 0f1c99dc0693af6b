"""Every path a device must carry, run once through the product's own command line:
`python main.py device-check --device cuda` (`make gpu-check` on a CUDA machine).

On the bundled demo corpus (459 pairs with documents) and demo gold set, in a fresh
workspace: every model family trained in fp32 and with bf16 autocast, a training process
killed and resumed, torchrun (NCCL on CUDA, gloo on the CPU), translation (greedy, beam,
ensemble, a document with source and with target context), attention AER against the
gold set, BLEU on the test split and a contrastive set in the DiscEvalMT layout. One line
per path, "ok" with what it measured or "FAIL" with the error; any failure makes the
exit status 1. `tiny` shrinks every model so the whole check runs in a minute on a CPU
(the test suite does that); without it each family trains at its preset's size.

Needs neither Qt nor eflomal: it runs on the GPU machine's image (Python, torch, numpy,
sacrebleu, sacremoses, sentencepiece, defusedxml, tomli-w, pysbd, platformdirs).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from core.config import load_preset
from core.errors import ConfigError
from core.families import family_traits
from core.workspace.store import Workspace

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "resources" / "demo"

#: (name, preset, extra --set values): every family once
FAMILY_RUNS: list[tuple[str, str, tuple[str, ...]]] = [
    ("luong-global", "luong-cpu", ("model.attention=global",)),
    ("luong-local-p", "luong-cpu", ("model.attention=local-p",)),
    ("rnnsearch", "bahdanau-cpu", ()),
    ("encdec", "encdec-cpu", ()),
    ("transformer", "transformer-cpu", ()),
    ("concat", "concat-cpu", ()),
    ("context-ws", "context-ws-cpu", ()),
    ("context-tgt", "context-tgt-cpu", ()),
]
RECURRENT_TINY = ("model.emb_size=16", "model.hidden_size=16", "model.layers=1",
                  "model.maxout_pool=2")
TRANSFORMER_TINY = ("model.d_model=16", "model.ff_size=32", "model.heads=2",
                    "model.enc_layers=1", "model.dec_layers=1", "model.ctx_layers=1")


@dataclass
class CheckResult:
    """One path: `ok`, what it measured or the error, and its wall time."""

    name: str
    ok: bool
    detail: str
    seconds: float

    def line(self) -> str:
        """'ok    NAME   DETAIL  (S s)' or 'FAIL  NAME   ERROR  (S s)'."""
        return (f"{'ok  ' if self.ok else 'FAIL'}  {self.name:<34} {self.detail}  "
                f"({self.seconds:.1f} s)")


#: runs one command line (argv without the program name) and returns its exit status: the
#: CLI passes its own `run_cli`, so this service never imports the front that calls it
CommandRunner = Callable[[list[str]], int]


class DeviceCheck:
    """The checks on one device, sharing a workspace under `workdir`."""

    def __init__(self, device: str, steps: int, workdir: Path, run_command: CommandRunner,
                 tiny: bool = False):
        self.device, self.steps, self.tiny = device, steps, tiny
        self.run_command = run_command
        self.workdir = workdir
        self.ws = workdir / "ws"
        self.results: list[CheckResult] = []

    # --- running the product -------------------------------------------------------------
    def cli(self, *args: str, workspace: Path | None = None) -> str:
        """`main.py --workspace WS ARGS` in this process; -> its stdout. A non-zero exit
        raises RuntimeError with the command's last error line."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = self.run_command(["--workspace", str(workspace or self.ws), *args])
        if code != 0:
            lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
            raise RuntimeError(f"exit {code}: {lines[-1] if lines else 'no message'}")
        return out.getvalue()

    def subprocess_args(self, *args: str, workspace: Path | None = None) -> list[str]:
        """The argv that runs `main.py --workspace WS ARGS` in a new interpreter."""
        return [sys.executable, str(ROOT / "main.py"), "--workspace",
                str(workspace or self.ws), *args]

    def size_args(self, preset: str) -> list[str]:
        """--set values that shrink the preset's model (tiny) and use word vocabularies
        (sentencepiece sizes do not fit a 459-pair corpus; it is no device path)."""
        family = load_preset(preset).model.family
        sets = ["data.vocab=word", "data.src_vocab_size=2000", "data.tgt_vocab_size=2000",
                "data.dev_sample=20", "data.batch_tokens=0", "data.batch_size=32"]
        if self.tiny:
            sets += TRANSFORMER_TINY if family_traits(family).transformer else RECURRENT_TINY
        return [arg for s in sets for arg in ("--set", s)]

    def train_args(self, name: str, preset: str, extra: tuple[str, ...] = (),
                   steps: int | None = None, amp: bool = False) -> list[str]:
        """`train` arguments for run `name` of `preset` on this device: `steps` updates
        (default the check's), validating half-way, with bf16 autocast when `amp`. The
        epoch limit is lifted to `steps`: the presets' 5-10 epochs of the demo corpus end
        a run after 60-120 updates, before a few hundred."""
        steps = steps or self.steps
        args = ["train", "--preset", preset, "--corpus", "demo", "--name", name,
                "--max-steps", str(steps), "--epochs", str(steps),
                "--valid-every", str(max(1, steps // 2)),
                "--device", self.device, "--quiet", *self.size_args(preset)]
        for s in extra:
            args += ["--set", s]
        if amp:
            args += ["--set", "train.amp=true"]
        return args

    def run(self, name: str, fn: Callable[[], str]) -> CheckResult:
        """Run one check: ok with `fn`'s detail, or FAIL with the exception it raised."""
        start = time.perf_counter()
        try:
            result = CheckResult(name, True, fn(), 0.0)
        except Exception as exc:  # every failure is a line of the report, never a stop
            message = " ".join(str(exc).split())[:300]
            result = CheckResult(name, False, f"{type(exc).__name__}: {message}", 0.0)
        result.seconds = time.perf_counter() - start
        self.results.append(result)
        return result

    # --- the checks ------------------------------------------------------------------------
    def setup(self) -> str:
        """The demo corpus (with its documents) in a new workspace."""
        self.cli("corpus", "import", str(DEMO / "demo.es"), str(DEMO / "demo.en"),
                 "--docids", str(DEMO / "demo.docids"), "--src-lang", "es",
                 "--tgt-lang", "en", "--name", "demo")
        return f"workspace {self.ws}"

    def train(self, name: str, preset: str, extra: tuple[str, ...], amp: bool) -> str:
        """Train one run to its step budget; -> steps, tokens/s, dev perplexity, precision."""
        from core.train.device import precision_note  # lazy: a top-level import would load torch

        self.cli(*self.train_args(name, preset, extra, amp=amp))
        with Workspace.open(self.ws) as ws:
            run = ws.get_run(name)
            if run.status != "finished" or run.steps != self.steps:
                raise RuntimeError(f"status {run.status} after {run.steps} steps")
            curves = ws.curves(run.id, "train")
            valid = ws.curves(run.id, "valid")
        tok_s = curves["tok_per_s"][1][-1]
        ppl = valid["dev_ppl"][1][-1]
        note = precision_note(self.device, amp)
        return f"{run.steps} steps, {tok_s:,.0f} tgt tok/s, dev ppl {ppl:.1f}; {note}"

    def stage_two(self) -> str:
        """Two-stage training: context parts trained on the frozen transformer run."""
        self.cli(*self.train_args("context-ts", "context-ts-cpu", ()),
                 "--init-from", "transformer-fp32")
        return "stage 2 from transformer-fp32"

    def kill_and_resume(self) -> str:
        """A training process killed by SIGKILL after its first checkpoint, then resumed
        to the end: the run finishes at its step budget."""
        ws_dir = self.workdir / "ws-resume"
        self.cli("corpus", "import", str(DEMO / "demo.es"), str(DEMO / "demo.en"),
                 "--src-lang", "es", "--tgt-lang", "en", "--name", "demo", workspace=ws_dir)
        steps = max(4, 2 * self.steps)
        args = self.train_args("killed", "luong-cpu", ("model.attention=global",), steps=steps)
        args[args.index("--valid-every") + 1] = str(max(1, steps // 4))
        log_path = self.workdir / "killed-train.log"
        log = log_path.open("wb")
        proc = subprocess.Popen(self.subprocess_args(*args, workspace=ws_dir),
                                stdout=subprocess.DEVNULL, stderr=log)
        last = list((ws_dir / "runs").glob("*/last.pt"))
        deadline = time.monotonic() + 600
        while not last and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            last = list((ws_dir / "runs").glob("*/last.pt")) if (ws_dir / "runs").exists() else []
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        log.close()
        if not last:
            raise RuntimeError(f"the run wrote no checkpoint before it ended or was killed "
                               f"(exit {proc.returncode}): "
                               f"{log_path.read_text(errors='replace')[-300:]}")
        if proc.returncode != -signal.SIGKILL:
            raise RuntimeError(f"the run ended (exit {proc.returncode}) before it could be "
                               f"killed: {log_path.read_text(errors='replace')[-300:]}")
        with Workspace.open(ws_dir) as ws:
            killed_at = ws.get_run("killed").steps
        self.cli("train", "--resume", "killed", "--device", self.device, "--quiet",
                 workspace=ws_dir)
        with Workspace.open(ws_dir) as ws:
            run = ws.get_run("killed")
        if run.status != "finished" or run.steps != steps:
            raise RuntimeError(f"after resuming: status {run.status} at step {run.steps}")
        return f"killed at step {killed_at}, resumed to step {run.steps}"

    def torchrun(self) -> str:
        """`torchrun --nproc_per_node 1 main.py train --distributed`: NCCL on CUDA."""
        args = self.train_args("distributed", "luong-cpu", ("model.attention=global",))
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               "--nproc_per_node", "1", str(ROOT / "main.py"), "--workspace", str(self.ws),
               *args, "--distributed"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1200,
                              env={**os.environ, "OMP_NUM_THREADS": "1"})
        if done.returncode != 0:
            lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
            raise RuntimeError(f"exit {done.returncode}: {lines[-1] if lines else ''}")
        backend = "nccl" if self.device.startswith("cuda") else "gloo"
        return f"1 process, {backend}, {self.steps} steps"

    def translate(self, label: str, *args: str, lines: int) -> str:
        """`translate ARGS` to a file that must hold `lines` lines (a --document's
        paragraphs: its blank lines between them are kept, and not counted)."""
        out = self.workdir / f"translate-{label}.txt"
        self.cli("translate", *args, "--device", self.device, "--output", str(out))
        got = out.read_text(encoding="utf-8").splitlines()
        if "--document" in args:
            got = [line for line in got if line.strip()]
        if len(got) != lines:
            raise RuntimeError(f"{len(got)} output lines for {lines} inputs")
        return f"{lines} lines"

    def align(self) -> str:
        """AER of a trained run's attention on the demo gold set (no eflomal baseline)."""
        text = self.cli("align", "--run", "luong-global-fp32", "--device", self.device,
                        "--gold-set", "demo-gold", "--gold-src", str(DEMO / "gold.es"),
                        "--gold-tgt", str(DEMO / "gold.en"), "--gold-links",
                        str(DEMO / "gold.links"), "--baseline", "none")
        row = first_row(text)
        return (f"AER {row['AER %']}%, precision {row['precision %']}%, recall "
                f"{row['recall %']}% ({row['system']})")

    def evaluate(self) -> str:
        """BLEU, chrF and perplexity on 40 sentences of the test split, beam 5."""
        text = self.cli("evaluate", "--run", "luong-global-fp32", "--device", self.device,
                        "--beam", "5", "--max-sentences", "40")
        row = first_row(text)
        return f"BLEU {row['BLEU']}, chrF {row['chrF']}, perplexity {row['perplexity']}"

    def contrastive(self, run: str = "context-ws-fp32") -> str:
        """A context model's accuracy on a DiscEvalMT-layout set (write_contrastive_set)."""
        path = write_contrastive_set(self.workdir / "contrastive.json")
        text = self.cli("evaluate", "--run", run, "--device", self.device,
                        "--contrastive", str(path))
        row = first_row(text)
        return f"accuracy {row['accuracy %']}% of {row['examples']} examples"

    def all_checks(self) -> Iterator[tuple[str, Callable[[], str]]]:
        """(name, check) pairs in the order they run; later checks use earlier runs."""
        yield "workspace and demo corpus", self.setup
        for name, preset, extra in FAMILY_RUNS:
            for amp in (False, True):
                run = f"{name}-{'bf16' if amp else 'fp32'}"
                yield f"train {run}", (lambda r=run, p=preset, e=extra, a=amp:
                                       self.train(r, p, e, a))
        yield "train context-ts (two-stage)", self.stage_two
        yield "kill -9 and resume", self.kill_and_resume
        yield "torchrun --distributed", self.torchrun
        sentences = (DEMO / "gold.es").read_text(encoding="utf-8").splitlines()[:12]
        src = self.workdir / "sentences.es"
        src.write_text("\n".join(sentences) + "\n", encoding="utf-8")
        letter = self.workdir / "letter.txt"
        letter.write_text(" ".join(sentences[:4]) + "\n\n" + " ".join(sentences[4:8]) + "\n",
                          encoding="utf-8")
        n = len(sentences)
        yield "translate greedy", lambda: self.translate(
            "greedy", "--run", "luong-global-fp32", "--beam", "1", "--input", str(src), lines=n)
        yield "translate beam 5", lambda: self.translate(
            "beam", "--run", "rnnsearch-fp32", "--beam", "5", "--input", str(src), lines=n)
        yield "translate ensemble", lambda: self.translate(
            "ensemble", "--run", "luong-global-fp32", "--ensemble", "luong-local-p-fp32",
            "--beam", "5", "--input", str(src), lines=n)
        yield "translate document (context)", lambda: self.translate(
            "document", "--run", "context-ws-fp32", "--document", "--input", str(letter),
            lines=2)
        yield "translate document (target ctx)", lambda: self.translate(
            "target-context", "--run", "context-ws-fp32", "--document", "--target-context",
            "--input", str(letter), lines=2)
        yield "translate document (target model)", lambda: self.translate(
            "target-model", "--run", "context-tgt-fp32", "--document", "--input", str(letter),
            lines=2)
        yield "align (attention AER)", self.align
        yield "evaluate (BLEU, test split)", self.evaluate
        yield "evaluate --contrastive", self.contrastive
        yield "evaluate --contrastive (target model)", lambda: self.contrastive(
            "context-tgt-fp32")


def first_row(markdown: str) -> dict[str, str]:
    """The first data row of the first Markdown table in a command's output, by header."""
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")]
            for ln in markdown.splitlines() if ln.lstrip().startswith("|")]
    if len(rows) < 3:
        raise RuntimeError("the command printed no table")
    return dict(zip(rows[0], rows[2], strict=False))


def write_contrastive_set(path: Path) -> Path:
    """A small DiscEvalMT-layout set from the demo corpus's documents: the correct
    variant is the reference, the incorrect one swaps in another sentence's reference."""
    src = (DEMO / "demo.es").read_text(encoding="utf-8").splitlines()
    tgt = (DEMO / "demo.en").read_text(encoding="utf-8").splitlines()
    blocks = {}
    for i in range(1, 21):
        other = tgt[(i + 7) % len(tgt)]
        blocks[str(i)] = {"type": "demo", "src": [src[i - 1], src[i]], "trg": [
            {"correct": [tgt[i - 1], tgt[i]], "incorrect": [tgt[i - 1], other]}]}
    path.write_text(json.dumps(blocks, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def run_device_check(device: str, steps: int, out: TextIO, run_command: CommandRunner,
                     tiny: bool = False, workdir: str | None = None) -> list[CheckResult]:
    """Run every check on `device` through `run_command` (the CLI's run_cli), printing one
    line each to `out` as it ends; -> the results (all ok = the device carries every
    path)."""
    # lazy: a top-level import would load torch
    from core.train.device import describe_device, machine_summary, pick_device

    with contextlib.ExitStack() as stack:
        root = Path(workdir) if workdir else Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="nmt-device-check-")))
        if root.exists() and any(root.iterdir()):
            raise ConfigError(f"{root}: not empty; give --workdir a new or empty folder "
                              "(the check creates its own workspace there)")
        root.mkdir(parents=True, exist_ok=True)
        print(f"{machine_summary()}\ndevice {describe_device(pick_device(device))}, "
              f"{steps} steps a run{' (tiny models)' if tiny else ''}", file=out, flush=True)
        check = DeviceCheck(device, steps, root, run_command, tiny=tiny)
        for name, fn in check.all_checks():
            print(check.run(name, fn).line(), file=out, flush=True)
        failed = [r for r in check.results if not r.ok]
        print(f"{len(check.results) - len(failed)} of {len(check.results)} paths ok"
              + (f"; failed: {', '.join(r.name for r in failed)}" if failed else ""),
              file=out, flush=True)
        return check.results

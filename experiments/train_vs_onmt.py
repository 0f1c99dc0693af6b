"""Issue 17 item 1 in one command: the CPU training speed of the bench model against
OpenNMT-py 3.5.1, in alternating rounds of one time window, with the ratios and the
targets (>= 2x in fp32, >= 3x in bf16 where the CPU has native bf16).

Each round runs the peer (`../shared/bench/peers-onmt.sh WORKDIR PEER_STEPS`: OpenNMT-py
on the deterministic Tatoeba es->en split, its steady target tokens/s) and the workbench
(`main.py bench train --split onmt` on the same split, the same model, `--amp` for the
bf16 row); which goes first alternates, so a drift of the shared machine's speed hits
both sides alike. Each round prints its rates, the ratios and the load; the medians and
the verdict close the output. The peer's run folders (about 180 MB each, a checkpoint)
are removed after each round unless --keep-peer-runs.

    python experiments/train_vs_onmt.py --rounds 3
    python experiments/train_vs_onmt.py --rounds 3 --json ratios.json

On a machine without ../shared (a user's clone) it stops with the path it looked for.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.atomic import write_text_atomic  # noqa: E402
from core.train.device import machine_summary  # noqa: E402

PEER_SCRIPT = ROOT.parent / "shared" / "bench" / "peers-onmt.sh"
#: the issue's targets: the workbench's tok/s over OpenNMT-py's, by precision
TARGETS = {"fp32": 2.0, "bf16": 3.0}
_PEER_RATE = re.compile(r"^onmt_tgt_tok_per_s\s+([0-9.]+)\s*$", re.M)


@dataclass
class Round:
    """One round's rates (target tokens/s) and its load average before and after."""

    number: int
    peer: float
    workbench: dict[str, float] = field(default_factory=dict)  # precision -> tok/s
    load: tuple[str, str] = ("", "")

    def ratios(self) -> dict[str, float]:
        """precision -> the workbench's rate over the peer's."""
        return {p: rate / self.peer for p, rate in self.workbench.items()}


def peer_rate(stdout: str) -> float:
    """peers-onmt.sh's output -> its steady target tokens/s (its last
    `onmt_tgt_tok_per_s N` line). ValueError, quoting the output's tail, when it has none."""
    found = _PEER_RATE.findall(stdout)
    if not found:
        tail = "\n".join(stdout.strip().splitlines()[-5:])
        raise ValueError(f"peers-onmt.sh printed no 'onmt_tgt_tok_per_s N' line; its "
                         f"output ended with:\n{tail}")
    return float(found[-1])


def workbench_rates(rows: list[dict], variant: str) -> dict[str, float]:
    """`bench train --json` rows -> precision ("fp32", "bf16") -> target tokens/s of
    `variant`. ValueError when the variant's fp32 row is missing."""
    rates = {}
    for row in rows:
        name = row["variant"].removesuffix(" +bf16")
        if name == variant and not row.get("sampled_softmax"):
            rates["bf16" if row["amp"] else "fp32"] = float(row["tgt_tok_per_s"])
    if "fp32" not in rates:
        raise ValueError(f"bench train gave no fp32 row for {variant!r}: "
                         f"{[row['variant'] for row in rows]}")
    return rates


def summary(rounds: list[Round]) -> tuple[list[str], bool]:
    """rounds -> (the closing lines: per precision the ratios' median and range against
    its target, the verdict; whether every precision measured met its target by its
    median)."""
    lines, met = [], True
    for precision, target in TARGETS.items():
        ratios = [r.ratios()[precision] for r in rounds if precision in r.workbench]
        if not ratios:
            lines.append(f"{precision}: not measured (no native {precision} on this CPU)")
            continue
        median = statistics.median(ratios)
        ok = median >= target
        met &= ok
        lines.append(f"{precision}: median {median:.2f}x OpenNMT-py (rounds {min(ratios):.2f}-"
                     f"{max(ratios):.2f}x), target >= {target:g}x: {'met' if ok else 'NOT met'}")
    return lines, met


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def _run(command: list[str], timeout: float) -> str:
    """Run command from the project root -> its stdout; RuntimeError with its output's
    tail when it fails or runs past `timeout` seconds."""
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f"{' '.join(command)} ran past {timeout:.0f} s") from e
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
        raise RuntimeError(f"{' '.join(command)} exited with {done.returncode}:\n{tail}")
    return done.stdout


def _peer_round(workdir: Path, steps: int, keep_runs: bool, timeout: float) -> float:
    before = set(workdir.glob("run-*"))
    try:
        return peer_rate(_run(["bash", str(PEER_SCRIPT), str(workdir), str(steps)], timeout))
    finally:
        if not keep_runs:
            for run in set(workdir.glob("run-*")) - before:
                shutil.rmtree(run, ignore_errors=True)


def _workbench_round(data: Path, args, timeout: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        rows_file = Path(tmp) / "rows.json"
        command = [sys.executable, "main.py", "bench", "train", "--data", str(data),
                   "--split", "onmt", "--variant", args.variant, "--threads", str(args.threads),
                   "--warmup", str(args.warmup), "--steps", str(args.steps),
                   "--json", str(rows_file)] + ([] if args.no_amp else ["--amp"])
        _run(command, timeout)
        return workbench_rates(json.loads(rows_file.read_text()), args.variant)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peers", type=Path, default=Path.home() / ".cache" / "nmt-peers",
                    help="peers-onmt.sh's work folder (its venv, the split, its runs)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--peer-steps", type=int, default=200, help="OpenNMT-py's updates a round")
    ap.add_argument("--variant", default="luong-global-general")
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--steps", type=int, default=150, help="the workbench's timed steps a round")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2,
                    help="the workbench's threads (OpenNMT-py runs with OMP_NUM_THREADS=nproc)")
    ap.add_argument("--no-amp", action="store_true", help="fp32 only")
    ap.add_argument("--keep-peer-runs", action="store_true")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds a side a round")
    ap.add_argument("--json", type=Path, help="the rounds and the summary as JSON")
    args = ap.parse_args(argv)
    if not PEER_SCRIPT.is_file():
        print(f"error: the peer's script {PEER_SCRIPT} is missing: this comparison needs "
              f"../shared/bench beside the checkout", file=sys.stderr)
        return 2
    data = args.peers / "tatoeba-es-en"
    print(f"# {machine_summary()}")
    print(f"# OpenNMT-py {args.peer_steps} updates, workbench {args.variant} {args.warmup} + "
          f"{args.steps} steps, {args.threads} threads; {args.rounds} rounds, which side goes "
          f"first alternating", flush=True)
    rounds = []
    started = time.time()
    for number in range(1, args.rounds + 1):
        load_before = _load()
        peer, workbench = 0.0, {}
        sides = ["peer", "workbench"] if number % 2 else ["workbench", "peer"]
        try:
            # round 1 runs the peer first: its script writes the split on first use
            for side in sides:
                if side == "peer":
                    peer = _peer_round(args.peers, args.peer_steps, args.keep_peer_runs, args.timeout)
                else:
                    workbench = _workbench_round(data, args, args.timeout)
        except (RuntimeError, ValueError) as e:
            print(f"error in round {number}: {e}", file=sys.stderr)
            return 1
        rnd = Round(number, peer, workbench, (load_before, _load()))
        rounds.append(rnd)
        cells = "  ".join(f"{p} {rate:,.0f} ({rnd.ratios()[p]:.2f}x)" for p, rate in workbench.items())
        print(f"round {number}: OpenNMT-py {peer:,.0f}  {cells}  tgt tok/s; load "
              f"{rnd.load[0]} -> {rnd.load[1]}", flush=True)
    lines, met = summary(rounds)
    print(f"# {len(rounds)} rounds in {time.time() - started:.0f} s")
    print("\n".join(lines))
    if args.json:
        write_text_atomic(args.json, json.dumps({"rounds": [asdict(r) for r in rounds],
                                                 "summary": lines, "targets_met": met}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

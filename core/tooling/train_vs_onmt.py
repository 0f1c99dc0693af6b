"""Issue 17 item 1 in one command: the CPU training speed of the bench model against
OpenNMT-py 3.5.1, in alternating rounds of one time window, with the ratios and the
targets (>= 2x in fp32, >= 3x in bf16 where the CPU has native bf16).

Each round runs the peer (`../shared/bench/peers-onmt.sh`: OpenNMT-py on the
deterministic Tatoeba es->en split, its steady target tokens/s) and the workbench
(`main.py bench train --device cpu --split onmt` on the same split, the same model,
`--amp` for the bf16 row), both with the same number of threads; which goes first
alternates, so a drift of the shared machine's speed hits both sides alike. Each round
prints its rates, the ratios and the load; the medians and the verdict close the output,
and --json FILE is rewritten after every round.

Each round also prints, per side, the share of this host's matrix-product peak that the
training step's products use (issue 50 item 4): `bench train --flops` counts the
workbench's matmul FLOP per target token and measures the host's peak per precision
(core/tooling/bench_roofline.py); OpenNMT-py trains the same model in fp32 on the same
split, so its share is taken as that fp32 FLOP per target token at its own rate over the
fp32 peak (its padding and batching differ a little: an estimate, not a count).

The peer runs in a folder of its own for each round (its venv and the split linked in
from --peers), removed afterwards with the run's checkpoint (about 180 MB); where --peers
has no venv or split yet, a first set-up run of the peer's script creates them there.

    python experiments/train_vs_onmt.py --rounds 3
    python experiments/train_vs_onmt.py --rounds 3 --json ratios.json

(experiments/train_vs_onmt.py is the script; the work is this module's.)

On a machine without ../shared (a user's clone) it stops with the path it looked for.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from core.atomic import write_text_atomic
from core.train.device import cpu_bf16_status, machine_summary

#: the project's root: `main.py bench train` runs from there
ROOT = Path(__file__).resolve().parents[2]

PEER_SCRIPT = ROOT.parent / "shared" / "bench" / "peers-onmt.sh"
#: the issue's targets: the workbench's tok/s over OpenNMT-py's, by precision
TARGETS = {"fp32": 2.0, "bf16": 3.0}
#: what the peer's script keeps in its work folder and every round reuses
PEER_ASSETS = ("venv-onmt", "tatoeba-es-en")
#: the fewest updates that give the peer's script a rate: it reports every 50 steps and
#: leaves the first report out
MIN_PEER_STEPS = 100
PEER = "OpenNMT-py"
_PEER_RATE = re.compile(r"^onmt_tgt_tok_per_s\s+([0-9.]+)\s*$", re.M)


@dataclass
class Round:
    """One round's rates (target tokens/s) and its load average before and after."""

    number: int
    peer: float
    workbench: dict[str, float] = field(default_factory=dict)  # precision -> tok/s
    load: tuple[str, str] = ("", "")
    #: precision -> (matmul MFLOP per target token, the host's peak GFLOP/s), from
    #: `bench train --flops`; empty where it was not measured
    roofline: dict[str, tuple[float, float]] = field(default_factory=dict)

    def ratios(self) -> dict[str, float]:
        """precision -> the workbench's rate over the peer's."""
        return {p: rate / self.peer for p, rate in self.workbench.items()}

    def shares(self) -> dict[str, float]:
        """'OpenNMT-py' and each precision -> the share of the host's matmul peak its
        step's products use (achieved GFLOP/s over the peak); empty without a roofline.
        OpenNMT-py: the workbench's fp32 FLOP per token at the peer's rate."""
        out = {}
        if "fp32" in self.roofline:
            mflop, peak = self.roofline["fp32"]
            out[PEER] = mflop * 1e6 * self.peer / (peak * 1e9)
        for precision, rate in self.workbench.items():
            if precision in self.roofline:
                mflop, peak = self.roofline[precision]
                out[precision] = mflop * 1e6 * rate / (peak * 1e9)
        return out


def peer_rate(stdout: str) -> float:
    """peers-onmt.sh's output -> its steady target tokens/s (its last
    `onmt_tgt_tok_per_s N` line). ValueError, quoting the output's tail, when it has none
    or N is not positive."""
    found = _PEER_RATE.findall(stdout)
    if not found or float(found[-1]) <= 0:
        tail = "\n".join(stdout.strip().splitlines()[-5:])
        raise ValueError(f"peers-onmt.sh printed no positive 'onmt_tgt_tok_per_s N' line; "
                         f"its output ended with:\n{tail}")
    return float(found[-1])


def workbench_rates(rows: list[dict], variant: str) -> dict[str, float]:
    """`bench train --json` rows -> precision ("fp32", "bf16") -> target tokens/s of
    `variant` with the full softmax. ValueError when the variant's fp32 row is missing."""
    rates = {}
    for row in rows:
        name = row["variant"].removesuffix(" +bf16")
        if name == variant and not row.get("sampled_softmax"):
            rates["bf16" if row["amp"] else "fp32"] = float(row["tgt_tok_per_s"])
    if "fp32" not in rates:
        raise ValueError(f"bench train gave no fp32 row for {variant!r}: "
                         f"{[row['variant'] for row in rows]}")
    return rates


def workbench_roofline(rows: list[dict], variant: str) -> dict[str, tuple[float, float]]:
    """`bench train --flops --json` rows -> precision -> (matmul MFLOP per target token,
    the host's peak GFLOP/s) of `variant` with the full softmax; empty without --flops."""
    out = {}
    for row in rows:
        name = row["variant"].removesuffix(" +bf16")
        if name == variant and not row.get("sampled_softmax") and "mflop_per_tok" in row:
            out["bf16" if row["amp"] else "fp32"] = (float(row["mflop_per_tok"]),
                                                      float(row["peak_gflops"]))
    return out


def share_text(shares: dict[str, float]) -> str:
    """{'OpenNMT-py': 0.05, 'fp32': 0.1} -> 'OpenNMT-py 5.0 %, fp32 10.0 %'."""
    return ", ".join(f"{side} {100 * share:.1f} %" for side, share in shares.items())


def summary(rounds: list[Round], bf16_expected: bool, bf16_why: str) -> tuple[list[str], bool]:
    """rounds -> (the closing lines: per precision the ratios' median and range against
    its target over the rounds that measured it; whether every target was met by its
    median). bf16_expected: the bf16 rows were asked for on a CPU with native bf16, so a
    round without one counts against the verdict; else bf16_why says why none was."""
    lines, met = [], True
    for precision, target in TARGETS.items():
        ratios = [r.ratios()[precision] for r in rounds if precision in r.workbench]
        expected = precision == "fp32" or bf16_expected
        if not ratios:
            met &= not expected
            lines.append(f"{precision}: not measured ({bf16_why if not expected else 'no rows'})")
            continue
        median = statistics.median(ratios)
        ok = median >= target and len(ratios) == len(rounds)
        met &= ok
        lines.append(f"{precision}: median {median:.2f}x OpenNMT-py over {len(ratios)} of "
                     f"{len(rounds)} rounds ({min(ratios):.2f}-{max(ratios):.2f}x), target "
                     f">= {target:g}x: {'met' if ok else 'NOT met'}")
    shares: dict[str, list[float]] = {}
    for r in rounds:
        for side, share in r.shares().items():
            shares.setdefault(side, []).append(share)
    if shares:
        medians = {side: statistics.median(v) for side, v in shares.items()}
        lines.append(f"share of this host's matmul peak (median; bench train --flops): "
                     f"{share_text(medians)}")
    return lines, met


def _load() -> str:
    """The 1, 5 and 15 minute load averages ('?' off Linux)."""
    path = Path("/proc/loadavg")
    return " ".join(path.read_text().split()[:3]) if path.exists() else "?"


def _run(command: list[str], timeout: float, env: dict[str, str] | None = None) -> str:
    """Run command from the project root -> its stdout. RuntimeError with its output's
    tail when it fails or runs past `timeout` seconds; then its whole process group
    (onmt_train under bash, bench's child under main.py) is killed, not just the child."""
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=env, start_new_session=True) as proc:
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            raise RuntimeError(f"{' '.join(command)} ran past {timeout:.0f} s; its output "
                               f"ended with:\n{_tail(out)}") from None
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {proc.returncode}:\n{_tail(out)}")
    return out


def _tail(text: str, lines: int = 8) -> str:
    return "\n".join((text or "").strip().splitlines()[-lines:])


def _peer_env(threads: int) -> dict[str, str]:
    # the script runs OpenNMT-py with OMP_NUM_THREADS=$(nproc); nproc honours the variable
    return {**os.environ, "OMP_NUM_THREADS": str(threads)}


def _peer_round(peers: Path, steps: int, threads: int, timeout: float) -> float:
    """One OpenNMT-py run of `steps` updates in a folder of its own (the venv and the
    split linked from `peers`), removed afterwards -> its steady target tokens/s. A
    failed run's error quotes the tail of OpenNMT-py's own log."""
    with tempfile.TemporaryDirectory(prefix="onmt-round-") as tmp:
        for asset in PEER_ASSETS:
            (Path(tmp) / asset).symlink_to(peers / asset)
        try:
            return peer_rate(_run(["bash", str(PEER_SCRIPT), tmp, str(steps)], timeout,
                                  _peer_env(threads)))
        except (RuntimeError, ValueError) as e:
            logs = sorted(Path(tmp).glob("run-*/stdout"))
            log = _tail(logs[-1].read_text(errors="replace")) if logs else "(no log)"
            raise RuntimeError(f"{e}\nOpenNMT-py's log ended with:\n{log}") from None


def _workbench_round(data: Path, args, timeout: float
                     ) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """One `bench train --flops` run on the CPU (fp32, and bf16 unless --no-amp) ->
    (precision -> target tokens/s, precision -> (MFLOP per token, peak GFLOP/s))."""
    with tempfile.TemporaryDirectory() as tmp:
        rows_file = Path(tmp) / "rows.json"
        command = [sys.executable, "main.py", "bench", "train", "--device", "cpu",
                   "--data", str(data), "--split", "onmt", "--variant", args.variant,
                   "--threads", str(args.threads), "--warmup", str(args.warmup),
                   "--steps", str(args.steps), "--flops", "--json", str(rows_file)]
        _run(command + ([] if args.no_amp else ["--amp"]), timeout)
        rows = json.loads(rows_file.read_text())
        return workbench_rates(rows, args.variant), workbench_roofline(rows, args.variant)


def _cpus() -> int:
    """The CPUs this process may run on (affinity and cpusets included), as nproc."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def main(argv: list[str] | None = None) -> int:
    """The comparison's command line (experiments/train_vs_onmt.py, `make bench-vs-onmt`):
    alternating rounds of OpenNMT-py and the workbench; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers", type=Path, default=Path.home() / ".cache" / "nmt-peers",
                        help="peers-onmt.sh's work folder (its venv and the split)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peer-steps", type=int, default=200,
                        help=f"OpenNMT-py's updates (at least {MIN_PEER_STEPS})")
    parser.add_argument("--variant", default="luong-global-general")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--steps", type=int, default=150, help="the workbench's timed steps")
    parser.add_argument("--threads", type=int, default=_cpus(), help="for both tools")
    parser.add_argument("--no-amp", action="store_true", help="fp32 only")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a side a round")
    parser.add_argument("--json", type=Path, help="the rounds and the summary as JSON")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.peer_steps < MIN_PEER_STEPS:
        parser.error(f"--peer-steps must be at least {MIN_PEER_STEPS} for OpenNMT-py's "
                     "steady rate")
    if not PEER_SCRIPT.is_file():
        print(f"error: the peer's script {PEER_SCRIPT} is missing: this comparison needs "
              f"../shared/bench beside the checkout", file=sys.stderr)
        return 2
    peers = args.peers.expanduser().resolve()
    native, why = cpu_bf16_status()
    bf16_expected = native and not args.no_amp
    bf16_why = "--no-amp" if args.no_amp else f"no native bf16 here: {why}"
    print(f"# {machine_summary()}")
    print(f"# OpenNMT-py {args.peer_steps} updates, workbench {args.variant} {args.warmup} + "
          f"{args.steps} steps, {args.threads} threads each; {args.rounds} rounds, which "
          f"side goes first alternating", flush=True)
    started = time.time()
    try:
        if not all((peers / asset).exists() for asset in PEER_ASSETS):
            print(f"# set-up: {PEER_SCRIPT.name} creates its venv and the split in {peers} "
                  f"(one short run of its own, kept there)", flush=True)
            _run(["bash", str(PEER_SCRIPT), str(peers), str(MIN_PEER_STEPS)], args.timeout,
                 _peer_env(args.threads))
    except RuntimeError as e:
        print(f"error in the set-up: {e}", file=sys.stderr)
        return 1
    rounds: list[Round] = []
    for number in range(1, args.rounds + 1):
        load_before = _load()
        peer, workbench, roofline = 0.0, {}, {}
        sides = ["peer", "workbench"] if number % 2 else ["workbench", "peer"]
        try:
            for side in sides:
                if side == "peer":
                    peer = _peer_round(peers, args.peer_steps, args.threads, args.timeout)
                else:
                    workbench, roofline = _workbench_round(peers / "tatoeba-es-en", args,
                                                           args.timeout)
        except (RuntimeError, ValueError) as e:
            print(f"error in round {number}: {e}", file=sys.stderr)
            return 1
        done = Round(number, peer, workbench, (load_before, _load()), roofline)
        rounds.append(done)
        cells = "  ".join(f"{p} {rate:,.0f} ({done.ratios()[p]:.2f}x)"
                          for p, rate in workbench.items())
        share = f"; share of the matmul peak: {share_text(done.shares())}" \
            if done.roofline else ""
        print(f"round {number}: OpenNMT-py {peer:,.0f}  {cells}  tgt tok/s{share}; load "
              f"{done.load[0]} -> {done.load[1]}", flush=True)
        lines, met = summary(rounds, bf16_expected, bf16_why)
        if args.json:  # after every round: a later failure keeps what was measured
            write_text_atomic(args.json, json.dumps(
                {"rounds": [asdict(r) for r in rounds], "summary": lines, "targets_met": met},
                indent=2))
    print(f"# {len(rounds)} rounds in {time.time() - started:.0f} s")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

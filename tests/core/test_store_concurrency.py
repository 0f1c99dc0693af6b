"""Two processes writing one workspace at once: no 'database is locked', no lost rows."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from core.workspace.store import Workspace

ROOT = Path(__file__).resolve().parents[2]

# Each writer opens the workspace itself, says it is ready, waits for "go" so both
# write at the same time, then logs STEPS transactions of three metrics, reading back between writes like a GUI would.
WRITER = """
import sys, time
from pathlib import Path
from core.workspace.store import Workspace
ws = Workspace.open(sys.argv[1])
run_id, tag, steps = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
(Path(sys.argv[1]) / ("ready_" + tag)).touch()
while not (Path(sys.argv[1]) / "go").exists():  # start writing together
    time.sleep(0.01)
for step in range(steps):
    ws.log_metrics(run_id, step, "train", {tag + "_loss": step / 10, tag + "_lr": 0.1,
                                           "shared": float(step)})
    if step % 25 == 0:
        ws.metrics(run_id, "train", tag + "_loss")
ws.close()
print("done", tag)
"""
STEPS = 150


def test_two_processes_write_metrics_concurrently(tmp_path):
    with Workspace.open(tmp_path / "ws") as ws:
        run_id = ws.create_run("shared-run", {"model": {"family": "luong"}}, None)

    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path / "ws"), str(run_id), tag, str(STEPS)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for tag in ("a", "b")
    ]
    ready = [tmp_path / "ws" / "ready_a", tmp_path / "ws" / "ready_b"]
    deadline = time.monotonic() + 60
    while not all(r.exists() for r in ready) and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break  # a writer died before writing: its stderr is asserted below
        time.sleep(0.01)
    (tmp_path / "ws" / "go").touch()
    results = [p.communicate(timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert out.startswith("done")

    with Workspace.open(tmp_path / "ws") as ws:
        assert ws.integrity_check() == "ok"
        curves = ws.curves(run_id, "train")
        assert sorted(curves) == ["a_loss", "a_lr", "b_loss", "b_lr", "shared"]
        for tag in ("a", "b"):
            steps, values = curves[f"{tag}_loss"]
            assert steps == list(range(STEPS))
            assert values == [s / 10 for s in steps]
        # Both processes logged every step of the shared name: one row per step (metrics
        # are idempotent per run, kind, name and step).
        assert curves["shared"] == (list(range(STEPS)), [float(s) for s in range(STEPS)])
        assert len(ws.metrics(run_id)) == (2 * 2 + 1) * STEPS

"""Stopping, locking and recovering runs: SIGTERM like SIGINT, one
trainer per run, runs of a killed process marked 'interrupted' on the next open."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.errors import TrainingError
from core.jobs import RecordingContext
from core.runlock import RunLock, is_locked
from core.services.training import create_run, train_run
from core.workspace.store import Workspace
from tests.core.tiny_runs import tiny_run_config

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--preset", "demo", "--set", "model.emb_size=8", "--set", "model.hidden_size=8",
        "--set", "data.dev_sample=0", "--device", "cpu", "--threads", "1"]


def _wait(predicate, timeout: float, proc=None) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"process ended early: {proc.communicate()}")
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _train(ws_dir: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "main.py", "--workspace", str(ws_dir), "train",
                             "--quiet", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def _steps(ws_dir: Path, name: str) -> int:
    with Workspace.open(ws_dir) as ws:
        info = ws.list_runs()
        run = [r for r in info if r.name == name]
        if not run or run[0].status != "running":
            return 0
        points = ws.metrics(run[0].id, "train", "loss")
        return points[-1].step if points else 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_saves_a_checkpoint_and_stops_cleanly(workspace, sig):
    ws_dir = workspace.root
    proc = _train(ws_dir, *TINY, "--corpus", "demo", "--name", "sig", "--max-steps", "100000")
    _wait(lambda: _steps(ws_dir, "sig") >= 10, 60, proc)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err and f"stopped by {sig.name}" in err
    run = workspace.get_run("sig")
    assert run.status == "cancelled" and run.steps >= 10
    assert (workspace.run_dir(run.id) / "last.pt").exists()
    assert not is_locked(workspace.run_dir(run.id))


def test_a_second_trainer_of_a_run_is_refused(workspace):
    run_id = create_run(workspace, "demo", tiny_run_config(max_steps=3))
    with RunLock.acquire(workspace.run_dir(run_id), "tiny"):
        with pytest.raises(TrainingError, match=f"being trained by process {os.getpid()}"):
            train_run(workspace, run_id, RecordingContext())
        assert workspace.get_run(run_id).status == "queued"  # the refused one changed nothing
    train_run(workspace, run_id, RecordingContext())
    assert workspace.get_run(run_id).status == "finished"
    assert not is_locked(workspace.run_dir(run_id))


def test_a_second_resume_does_not_touch_the_run(workspace, capsys):
    from core.cli import run_cli

    run_id = create_run(workspace, "demo", tiny_run_config(max_steps=3))
    train_run(workspace, run_id, RecordingContext())
    with RunLock.acquire(workspace.run_dir(run_id), "tiny"):
        rc = run_cli(["--workspace", str(workspace.root), "train", "--resume", "tiny",
                      "--max-steps", "350"])
    assert rc == 2 and "is being trained by process" in capsys.readouterr().err
    assert workspace.get_run(run_id).config["train"]["max_steps"] == 3


HOLDER = """
import sys, time
from core.runlock import RunLock
lock = RunLock.acquire(sys.argv[1], "r")
print("locked", flush=True)
time.sleep(60)
"""


def test_runs_of_a_killed_process_are_marked_interrupted_on_open(workspace):
    dead = create_run(workspace, "demo", tiny_run_config(), name="dead")
    alive = create_run(workspace, "demo", tiny_run_config(), name="alive")
    procs = {}
    for run_id in (dead, alive):
        workspace.update_run(run_id, status="running")
        procs[run_id] = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(workspace.run_dir(run_id))], cwd=ROOT,
            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert procs[run_id].stdout.readline().strip() == "locked"
    try:
        procs[dead].kill()
        procs[dead].wait(10)
        with Workspace.open(workspace.root) as again:
            assert again.get_run("alive").status == "running"
            info = again.get_run("dead")
            assert info.status == "interrupted"
            assert f"process {procs[dead].pid}" in info.error and "--resume dead" in info.error
    finally:
        procs[alive].kill()
        procs[alive].wait(10)


def test_orphan_temp_files_are_removed_on_the_next_open(workspace):
    idle = create_run(workspace, "demo", tiny_run_config(), name="idle")
    busy = create_run(workspace, "demo", tiny_run_config(), name="busy")
    left = [workspace.run_dir(idle) / ".last.pt.k2j3h4.tmp",
            workspace.run_dir(idle) / ".best-00000300.pt.a1b2c3.tmp",
            workspace.root / "corpora" / "1" / ".raw.src.x9y8z7.tmp",
            workspace.root / "corpora" / "7" / "raw.src",  # import killed before its row
            workspace.root / "corpora" / "7" / ".importing"]
    kept = [workspace.run_dir(busy) / ".last.pt.q1w2e3.tmp",  # its trainer is writing it
            workspace.run_dir(idle) / "notes.tmp",
            # no row and no import mark: a corpus that a lost database knew stays
            workspace.root / "corpora" / "8" / "raw.src",
            workspace.root / "corpora" / "1" / "raw.src"]
    for path in left + kept[:3]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * 100)
    with RunLock.acquire(workspace.run_dir(busy), "busy"):
        Workspace.open(workspace.root).close()
    assert [p for p in left if p.exists()] == []
    assert not (workspace.root / "corpora" / "7").exists()
    assert all(p.exists() for p in kept)
    assert len(workspace.load_corpus("demo")) > 0


def test_a_gold_set_import_killed_mid_way_is_put_right_on_open(workspace, tmp_path):
    from core.evaluate.goldsets import import_gold_set, list_gold_sets, load_gold_set

    src, tgt, links = (tmp_path / n for n in ("g.src", "g.tgt", "g.links"))
    src.write_text("a b\n", encoding="utf-8")
    tgt.write_text("x y\n", encoding="utf-8")
    links.write_text("0-0 1-1\n", encoding="utf-8")
    import_gold_set(workspace, "g", src, tgt, links)
    gold = workspace.root / "gold"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(10)
    # killed while replacing "g": the old set moved aside, the new one half-written
    os.replace(gold / "g", gold / f".g.old-{dead.pid}")
    (gold / f".g.tmp-{dead.pid}-abc123").mkdir()
    (gold / f".g.tmp-{dead.pid}-abc123" / "src.txt").write_text("half")
    live = gold / f".h.tmp-{os.getpid()}-xyz789"  # a writer that is still running
    live.mkdir()
    assert list_gold_sets(workspace) == []
    Workspace.open(workspace.root).close()
    assert list_gold_sets(workspace) == ["g"] and len(load_gold_set(workspace, "g")) == 1
    assert sorted(p.name for p in gold.iterdir()) == [live.name, "g"]


def test_resuming_a_run_whose_folder_was_deleted_is_refused(workspace, capsys):
    import shutil

    from core.cli import run_cli

    run_id = create_run(workspace, "demo", tiny_run_config(max_steps=3, valid_every=3),
                        name="gone")
    train_run(workspace, run_id, RecordingContext())
    folder = workspace.run_dir(run_id)
    shutil.rmtree(folder)
    code = run_cli(["--workspace", str(workspace.root), "train", "--resume", "gone",
                    "--quiet", "--max-steps", "6"])
    err = capsys.readouterr().err
    assert code == 2 and f"error: {folder}: the folder of run 'gone' is missing" in err
    assert not folder.exists()  # not made again, empty
    ctx = RecordingContext()
    with pytest.raises(TrainingError, match="is missing"):
        train_run(workspace, run_id, ctx, resume=True)  # the GUI's 'Continue run'
    assert not folder.exists() and ctx.of_kind("start") == []
    assert workspace.get_run(run_id).steps == 3
    # made again empty (e.g. by an older version): its last checkpoint is missing
    folder.mkdir()
    with pytest.raises(TrainingError, match="trained 3 steps but its last checkpoint is "
                       "missing"):
        train_run(workspace, run_id, ctx, resume=True)
    assert not (folder / "src.vocab").exists()


def test_a_resumed_run_adds_its_wall_time_to_the_earlier_sessions(workspace):
    """The run's elapsed time (the Training screen's, a bundle's meta) sums its sessions:
    a resume used to overwrite it with its own wall time alone."""
    from core.jobs import JobContext

    config = tiny_run_config()
    config.train.max_steps = 4
    run = create_run(workspace, "demo", config, "sessions")
    assert train_run(workspace, run, JobContext()).status == "finished"
    workspace.update_run(run, elapsed_s=1000.0)  # as if the first session had taken that
    raw = workspace.get_run(run).config
    raw["train"]["max_steps"] = 8
    workspace.update_run(run, config=raw)
    assert train_run(workspace, run, JobContext(), resume=True).step == 8
    assert 1000.0 < workspace.get_run(run).elapsed_s < 1000.0 + 600

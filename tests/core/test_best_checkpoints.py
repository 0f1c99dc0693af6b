"""Best-k checkpoints: write the new file first, then delete; rows equal files."""
from __future__ import annotations

import pytest

from core.jobs import RecordingContext
from core.services.training import create_run, train_run
from core.train import checkpoint as ckpt
from tests.core.tiny_runs import tiny_run_config


def test_a_kill_while_writing_a_new_best_keeps_the_old_ones(tmp_path, monkeypatch):
    keeper = ckpt.BestKeeper(tmp_path, 2, [])
    keeper.offer(9.0, 100, {"step": 100})
    keeper.offer(8.0, 200, {"step": 200})
    real_save = ckpt.save_checkpoint

    def killed(path, payload):
        raise KeyboardInterrupt  # the process dies while the new best is being written

    monkeypatch.setattr(ckpt, "save_checkpoint", killed)
    with pytest.raises(KeyboardInterrupt):
        keeper.offer(7.0, 300, {"step": 300})
    assert sorted(p.name for p in tmp_path.glob("best-*.pt")) == [
        "best-00000100.pt", "best-00000200.pt"]
    monkeypatch.setattr(ckpt, "save_checkpoint", real_save)
    assert keeper.offer(7.0, 300, {"step": 300}).name == "best-00000300.pt"
    assert [p.name for p in keeper.dropped] == ["best-00000100.pt"]
    assert sorted(p.name for p in tmp_path.glob("best-*.pt")) == [
        "best-00000200.pt", "best-00000300.pt"]


def test_checkpoint_rows_equal_the_files_of_the_run(workspace):
    run_id = create_run(workspace, "demo", tiny_run_config(max_steps=8, valid_every=1, keep_best=2))
    train_run(workspace, run_id, RecordingContext())
    run_dir = workspace.run_dir(run_id)
    files = {p.name for p in run_dir.glob("*.pt")}
    rows = [c.path.name for c in workspace.checkpoints(run_id)]
    assert len(files) == 3 and sorted(rows) == sorted(files)  # last + 2 best, one row each
    # a file deleted behind the store's back, or one written without its row, is synced
    (run_dir / sorted(run_dir.glob("best-*.pt"))[0].name).unlink()
    (run_dir / "best-00000099.pt").write_bytes((run_dir / "last.pt").read_bytes())
    workspace.sync_checkpoints(run_id)
    rows = {c.path.name: c for c in workspace.checkpoints(run_id)}
    assert set(rows) == {p.name for p in run_dir.glob("*.pt")}
    assert rows["best-00000099.pt"].step == 99

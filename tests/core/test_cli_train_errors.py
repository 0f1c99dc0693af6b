"""`train` refuses what it cannot do with one line (exit status 2) naming the option or
setting and what to do, and leaves no run behind that would hold the name."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import run_cli
from core.store import Workspace

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"
TINY = ["--set", "model.emb_size=8", "--set", "model.hidden_size=8", "--set", "model.layers=1",
        "--set", "data.dev_sample=2", "--threads", "1", "--quiet"]


@pytest.fixture
def ws_dir(tmp_path):
    ws_dir = str(tmp_path / "ws")
    assert run_cli(["--workspace", ws_dir, "corpus", "import", str(DEMO / "demo.es"),
                    str(DEMO / "demo.en"), "--docids", str(DEMO / "demo.docids"),
                    "--src-lang", "es", "--tgt-lang", "en", "--name", "demo"]) == 0
    return ws_dir


def train(ws_dir, *args):
    return run_cli(["--workspace", ws_dir, "train", "--preset", "demo", "--corpus", "demo",
                    "--max-steps", "1", *TINY, *args])


def test_init_from_without_stage_2_is_refused_naming_the_setting(ws_dir, capsys):
    assert train(ws_dir, "--name", "r1") == 0
    capsys.readouterr()
    assert train(ws_dir, "--name", "i1", "--init-from", "r1") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: train.init_from (--init-from) = 'r1' has an effect only with "
                          "train.stage = 2")
    assert "context-ts-cpu" in err and err.count("\n") == 1
    assert [r.name for r in Workspace.open(ws_dir).list_runs()] == ["r1"]


def test_init_from_an_unknown_run_is_refused(ws_dir, capsys):
    assert run_cli(["--workspace", ws_dir, "train", "--preset", "context-ts-cpu", "--corpus",
                    "demo", "--max-steps", "1", "--name", "i1", "--init-from", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "train.init_from (--init-from) = 'nosuch'" in err and "no run named 'nosuch'" in err
    assert Workspace.open(ws_dir).list_runs() == []


def test_distributed_outside_torchrun_says_to_launch_with_torchrun(ws_dir, capsys, monkeypatch):
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    monkeypatch.delenv("MASTER_PORT", raising=False)
    assert train(ws_dir, "--name", "d1", "--distributed") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --distributed: MASTER_ADDR and MASTER_PORT not set")
    assert "torchrun --nproc_per_node 2 main.py train --distributed" in err
    assert Workspace.open(ws_dir).list_runs() == []

"""`train` refuses what it cannot do with one line (exit status 2) naming the option or
setting and what to do, and leaves no run behind that would hold the name."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from core.cli import run_cli
from core.config import load_preset
from core.workspace.store import Workspace

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


def test_a_model_too_large_for_the_machine_is_refused_before_a_run_exists(ws_dir, capsys):
    args = ["--set", "model.hidden_size=60000", "--name", "big"]
    assert train(ws_dir, *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the model is too large to train here: ")
    assert "parameters, training needs about" in err and "lower the model's sizes" in err
    assert "GiB available (the limit)" in err and err.count("\n") == 1
    assert Workspace.open(ws_dir).list_runs() == []
    assert train(ws_dir, "--name", "big") == 0  # the name is free


def test_an_allocation_failure_while_building_is_a_training_error(tmp_path, monkeypatch):
    import core.models.registry as registry
    from core.errors import TrainingError
    from core.jobs import RecordingContext
    from core.train.loop import train_model

    def refuse(*args, **kwargs):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: "
                           "can't allocate memory: you tried to allocate 409600000000 bytes.")

    monkeypatch.setattr(registry, "build_model", refuse)
    config = load_preset("demo")
    config.train.device = "cpu"
    with pytest.raises(TrainingError, match=r"too large to train here: .* memory for 381.5 GiB "
                       "at once could not be had"):
        train_model(config, SimpleNamespace(src_vocab_size=9, tgt_vocab_size=9), tmp_path,
                    RecordingContext())


@pytest.mark.parametrize("garbage", ["garbage{", '{"src": 1, "tgt": {}}', "[]"])
def test_a_damaged_preprocess_json_is_one_error_naming_the_file(ws_dir, capsys, monkeypatch,
                                                                 garbage):
    import io

    assert train(ws_dir, "--name", "r1") == 0
    path = Workspace.open(ws_dir).run_dir(1) / "preprocess.json"
    path.write_text(garbage, encoding="utf-8")
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO("hola\n"))
    for command in (["translate", "--run", "r1"], ["evaluate", "--run", "r1"]):
        assert run_cli(["--workspace", ws_dir, *command]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {path}: the run's preprocessing settings are damaged")
        assert "the run is damaged: train it again" in err and err.count("\n") == 1


def test_ctrl_c_before_any_validation_says_so_not_nan(ws_dir, capsys, monkeypatch):
    import os
    import signal

    import core.cli.train_cmd as train_cmd

    class CtrlCAtFirstStep(train_cmd.ProgressPrinter):
        def __call__(self, event):
            if event.kind == "step" and not getattr(self, "sent", False):
                self.sent = True
                os.kill(os.getpid(), signal.SIGINT)  # as Ctrl+C in the terminal
            return super().__call__(event)

    monkeypatch.setattr(train_cmd, "ProgressPrinter", CtrlCAtFirstStep)
    assert run_cli(["--workspace", ws_dir, "train", "--preset", "demo", "--corpus", "demo",
                    "--name", "c1", *TINY, "--max-steps", "50", "--valid-every", "40"]) == 130
    out = capsys.readouterr().out
    assert "run c1 (id 1): cancelled after 1 steps; no validation yet, so no best dev " \
           "perplexity; folder" in out
    assert "nan" not in out


def test_a_split_without_dev_or_test_share_gets_the_right_advice(ws_dir, capsys):
    assert run_cli(["--workspace", ws_dir, "corpus", "split", "demo", "--ratios", "1,0,0"]) == 0
    capsys.readouterr()
    assert train(ws_dir, "--name", "s1") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: corpus 'demo' has no dev pairs: its split (ratios 1,0,0) "
                          "gives 459 training and 0 dev pairs of 459; split it again")
    assert "--ratios 0.8,0.1,0.1" in err and "import a larger corpus" not in err
    assert Workspace.open(ws_dir).list_runs() == []

    assert run_cli(["--workspace", ws_dir, "corpus", "split", "demo", "--ratios",
                    "0.9,0.1,0"]) == 0
    assert train(ws_dir, "--name", "s2") == 0
    capsys.readouterr()
    assert run_cli(["--workspace", ws_dir, "evaluate", "--run", "s2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: corpus 'demo' has no test pairs: its split (ratios 0.9,0.1,0) "
                          "gives the test set no share;")
    assert "test files of your own" in err and "<input>" not in err

"""Checkpoint averaging (core.train.averaging, `runs average`): the weights are the mean
of the checkpoints', the model loads and translates from the average; checkpoints of
another configuration or with other non-float tensors, reserved or taken names and
shipped int8 weights are refused with a message naming the file."""
from __future__ import annotations

import pytest
import torch

from core.cli import run_cli
from core.errors import CheckpointError, ConfigError
from core.train.artifacts import load_model
from core.train.averaging import average_checkpoints
from core.train.checkpoint import load_checkpoint, save_checkpoint
from core.workspace.store import Workspace
from tests.core.conftest import train_tiny_demo_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """The folder of a tiny trained run, with `shifted.pt`: its last checkpoint with every
    float weight + 1 (step + 10), and `other.pt`: its last with one weight of a wider shape."""
    root = train_tiny_demo_run(tmp_path_factory.mktemp("avg") / "ws", steps=6, dev_sample=0)
    with Workspace.open(root) as ws:
        folder = ws.run_dir(ws.get_run("tiny").id)
    state = load_checkpoint(folder / "last.pt")
    shifted = dict(state, model={k: v + 1 if v.is_floating_point() else v
                                 for k, v in state["model"].items()},
                   position=dict(state["position"], step=state["position"]["step"] + 10))
    save_checkpoint(folder / "shifted.pt", shifted)
    name = next(k for k, v in state["model"].items() if v.dim() == 2)
    wider = dict(state["model"], **{name: torch.zeros(state["model"][name].shape[0], 3)})
    save_checkpoint(folder / "other.pt", dict(state, model=wider))
    return folder


def test_the_average_is_the_mean_and_translates(run_dir, capsys, tmp_path):
    path = average_checkpoints(run_dir, ["last.pt", "shifted.pt"], "avg")
    assert path.name == "avg.pt"
    last, avg = load_checkpoint(run_dir / "last.pt"), load_checkpoint(path)
    for name, weight in last["model"].items():
        if weight.is_floating_point():
            assert torch.allclose(avg["model"][name], weight + 0.5, atol=1e-6), name
        else:
            assert torch.equal(avg["model"][name], weight)
    assert avg["position"]["step"] == last["position"]["step"] + 10  # the newest's
    assert avg["averaged_from"] == [["last.pt", last["position"]["step"]],
                                    ["shifted.pt", last["position"]["step"] + 10]]
    loaded = load_model(run_dir, "avg.pt")
    assert loaded.step == last["position"]["step"] + 10
    # the average of a checkpoint with itself translates exactly as that checkpoint
    root = run_dir.parents[1]
    assert run_cli(["--workspace", str(root), "runs", "average", "tiny", "last", "last.pt",
                    "shifted", "--out", "same.pt"]) == 2  # one checkpoint twice: refused
    assert "last.pt: given twice ('best' and 'last' name files too)" in capsys.readouterr().err
    assert not (run_dir / "same.pt").exists()
    save_checkpoint(run_dir / "copy.pt", load_checkpoint(run_dir / "last.pt"))
    assert run_cli(["--workspace", str(root), "runs", "average", "tiny", "last", "copy",
                    "--out", "same.pt"]) == 0
    assert "same.pt = the mean of last.pt, copy.pt" in capsys.readouterr().out
    src = tmp_path / "src.es"
    src.write_text("Compré una mesa nueva para la cocina .\nEs muy bonita .\n", encoding="utf-8")
    out = {}
    for which in ("last", "same.pt"):
        assert run_cli(["--workspace", str(root), "translate", "--run", "tiny", "--checkpoint",
                        which, "--input", str(src)]) == 0
        out[which] = capsys.readouterr().out
    assert out["last"] == out["same.pt"] and len(out["last"].strip().splitlines()) == 2


def test_what_cannot_be_averaged_is_refused(run_dir):
    with pytest.raises(CheckpointError, match="other.pt: .* is .*the first checkpoint's"):
        average_checkpoints(run_dir, ["last.pt", "other.pt"], "bad")
    for name in ("last.pt", "best-00000006.pt", "best", "step-00000010.pt"):
        with pytest.raises(ConfigError, match="training writes checkpoints of that name"):
            average_checkpoints(run_dir, ["last.pt", "shifted.pt"], name)
    with pytest.raises(ConfigError, match="give a file name"):
        average_checkpoints(run_dir, ["last.pt", "shifted.pt"], "../x.pt")
    average_checkpoints(run_dir, ["last.pt", "shifted.pt"], "taken.pt")
    with pytest.raises(ConfigError, match="exists already"):
        average_checkpoints(run_dir, ["last.pt", "shifted.pt"], "taken.pt")
    average_checkpoints(run_dir, ["last.pt", "shifted.pt"], "taken.pt", replace=True)
    state = load_checkpoint(run_dir / "last.pt")
    config = dict(state["config"], model=dict(state["config"]["model"], hidden_size=48))
    save_checkpoint(run_dir / "bigger.pt", dict(state, config=config))
    with pytest.raises(CheckpointError, match="bigger.pt: belongs to another configuration"):
        average_checkpoints(run_dir, ["last.pt", "bigger.pt"], "bad")
    save_checkpoint(run_dir / "int8.pt", dict(state, int8_scales={}))
    with pytest.raises(CheckpointError, match="int8.pt: holds shipped int8 weights"):
        average_checkpoints(run_dir, ["int8.pt", "last.pt"], "bad")
    assert not (run_dir / "bad.pt").exists()


def test_keep_every_keeps_the_checkpoints_to_average(tmp_path):
    """train.keep_every = 4 with a validation every 2 updates keeps the checkpoints of
    updates 4 and 8 as step-*.pt (the best-k pruning never touches them); each loads at its
    step, and `runs average` takes them."""
    from core.jobs import JobContext
    from core.services.demo import demo_config, import_demo_corpus
    from core.services.training import create_run, train_run

    with Workspace.open(tmp_path / "ws") as ws:
        config = demo_config("kept", dict(emb_size=16, hidden_size=24), max_steps=8,
                             valid_every=2, device="cpu")
        config.data.dev_sample = 0
        config.train.keep_every, config.train.keep_best = 4, 1
        run = create_run(ws, import_demo_corpus(ws), config, "kept")
        assert train_run(ws, run, JobContext()).status == "finished"
        folder = ws.run_dir(run)
    kept = sorted(p.name for p in folder.glob("step-*.pt"))
    assert kept == ["step-00000004.pt", "step-00000008.pt"]
    assert len(list(folder.glob("best-*.pt"))) == 1
    assert load_model(folder, "step-00000004.pt").step == 4
    kept8, last = load_checkpoint(folder / "step-00000008.pt"), load_checkpoint(folder / "last.pt")
    assert kept8["position"]["step"] == last["position"]["step"] == 8
    assert all(torch.equal(kept8["model"][k], v) for k, v in last["model"].items())
    avg = load_checkpoint(average_checkpoints(folder, kept, "avg.pt"))
    assert avg["averaged_from"] == [["step-00000004.pt", 4], ["step-00000008.pt", 8]]
    with pytest.raises(ConfigError, match="training writes checkpoints of that name"):
        average_checkpoints(folder, kept, "step-00000012.pt")
    # a resumed run may keep them from now on (a bookkeeping option, as the budget)
    assert run_cli(["--workspace", str(tmp_path / "ws"), "train", "--resume", "kept",
                    "--max-steps", "12", "--keep-every", "6", "--quiet"]) == 0
    assert sorted(p.name for p in folder.glob("step-*.pt")) == kept + ["step-00000012.pt"]

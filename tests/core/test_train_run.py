"""A training run inside a workspace: status, stored curves, checkpoints, CLI resume."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import run_cli
from core.errors import TrainingError
from core.jobs import JobCancelled, RecordingContext
from core.services.training import cancel_queued, create_run, train_run
from core.train.artifacts import load_model
from core.workspace.store import Workspace
from tests.core.tiny_runs import tiny_run_config

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


def test_run_records_status_curves_and_checkpoints(workspace):
    run_id = create_run(workspace, "demo", tiny_run_config())
    assert workspace.get_run(run_id).status == "queued"
    ctx = RecordingContext()
    result = train_run(workspace, run_id, ctx)
    info = workspace.get_run(run_id)
    assert (info.status, info.steps, result.step) == ("finished", 6, 6)
    train = workspace.curves(run_id, "train")
    assert train["loss"][0] == list(range(1, 7))
    assert workspace.curves(run_id, "valid")["dev_ppl"][0] == [3, 6]
    kinds = {c.kind for c in workspace.checkpoints(run_id)}
    assert kinds == {"last", "best"}
    assert ctx.of_kind("finished")[0].data["status"] == "finished"
    # the split was stored once and documents were kept whole
    split = workspace.load_split("demo")
    corpus = workspace.load_corpus("demo")
    doc_of = {i: corpus.pairs[i].doc_id for i in range(len(corpus))}
    sets = {name: {doc_of[i] for i in idx} for name, idx in split.assignment.items()}
    assert not (sets["train"] & sets["dev"]) and not (sets["train"] & sets["test"])
    # the run folder is enough to load the model and its vocabularies back
    loaded = load_model(workspace.run_dir(run_id), "best")
    assert loaded.config.model.attention == "local-p" and len(loaded.src_vocab) <= 300


def test_cancelled_run_is_marked_and_resumes(workspace):
    run_id = create_run(workspace, "demo", tiny_run_config(max_steps=8, valid_every=0))
    ctx = RecordingContext()
    ctx.add_listener(lambda e: ctx.cancel() if e.kind == "step" and e.data["step"] == 2 else None)
    result = train_run(workspace, run_id, ctx)
    assert result.status == "cancelled" and workspace.get_run(run_id).status == "cancelled"
    again = RecordingContext()
    train_run(workspace, run_id, again, resume=True)
    assert [e.data["step"] for e in again.of_kind("step")] == list(range(3, 9))
    assert workspace.get_run(run_id).status == "finished"


def test_failed_run_keeps_the_reason(workspace, monkeypatch):
    import core.services.training as run_module

    def explode(*args, **kwargs):
        raise TrainingError("loss became nan at step 4: lower the learning rate")

    monkeypatch.setattr(run_module, "train_model", explode)
    run_id = create_run(workspace, "demo", tiny_run_config())
    ctx = RecordingContext()
    with pytest.raises(TrainingError):
        train_run(workspace, run_id, ctx)
    info = workspace.get_run(run_id)
    assert info.status == "failed" and "loss became nan" in info.error
    assert ctx.of_kind("failed")[0].data["message"].startswith("loss became nan")


def test_job_cancelled_during_preparation_marks_run(workspace, monkeypatch):
    import core.services.training as run_module

    def cancelled(*args, **kwargs):
        raise JobCancelled()

    monkeypatch.setattr(run_module, "prepare_dataset", cancelled)
    run_id = create_run(workspace, "demo", tiny_run_config())
    with pytest.raises(JobCancelled):
        train_run(workspace, run_id, RecordingContext())
    assert workspace.get_run(run_id).status == "cancelled"


def test_cancel_queued_marks_only_a_run_no_trainer_took(workspace):
    """A run cancelled while it waited in the GUI's queue is 'cancelled', not 'queued'
    for ever; a run that trained keeps the status its trainer gave it."""
    waiting = create_run(workspace, "demo", tiny_run_config())
    assert cancel_queued(workspace, waiting) is True
    assert workspace.get_run(waiting).status == "cancelled"
    trained = create_run(workspace, "demo", tiny_run_config(max_steps=2), name="trained")
    train_run(workspace, trained, RecordingContext())
    assert cancel_queued(workspace, trained) is False
    assert workspace.get_run(trained).status == "finished"


def test_cli_train_and_resume(tmp_path, capsys):
    ws_dir = str(tmp_path / "ws")
    assert run_cli(["--workspace", ws_dir, "corpus", "import", str(DEMO / "demo.es"),
                    str(DEMO / "demo.en"), "--format", "parallel", "--src-lang", "es",
                    "--tgt-lang", "en", "--name", "demo"]) == 0
    common = ["--set", "model.emb_size=16", "--set", "model.hidden_size=16", "--set",
              "model.layers=1", "--set", "data.dev_sample=5", "--threads", "1", "--quiet"]
    assert run_cli(["--workspace", ws_dir, "train", "--preset", "demo", "--corpus", "demo",
                    "--name", "cli-run", "--max-steps", "3", "--valid-every", "3", *common]) == 0
    out = capsys.readouterr().out
    assert "run cli-run (id 1): finished after 3 steps" in out
    # resume continues the stored run: the stored config's max_steps (3) is reached already
    assert run_cli(["--workspace", ws_dir, "train", "--resume", "cli-run", "--quiet"]) == 0
    assert "finished after 3 steps" in capsys.readouterr().out
    # ... and --max-steps extends its budget: 3 more steps, from the checkpoint at step 3
    assert run_cli(["--workspace", ws_dir, "train", "--resume", "cli-run", "--max-steps", "6",
                    "--quiet"]) == 0
    assert "finished after 6 steps" in capsys.readouterr().out
    ws = Workspace.open(ws_dir)
    assert ws.get_run("cli-run").config["train"]["max_steps"] == 6  # saved for the GUI
    assert ws.get_run("cli-run").config["model"]["hidden_size"] == 16  # the rest unchanged
    assert run_cli(["--workspace", ws_dir, "train", "--resume", "cli-run", "--set",
                    "model.hidden_size=32"]) == 2
    assert "only --max-steps, --max-minutes" in capsys.readouterr().err
    assert run_cli(["--workspace", ws_dir, "train", "--preset", "demo"]) == 2
    assert "train needs --corpus" in capsys.readouterr().err
    assert run_cli(["--workspace", ws_dir, "train", "--preset", "demo", "--corpus", "demo",
                    "--set", "model.attention=sideways"]) == 2
    assert "model.attention must be one of" in capsys.readouterr().err

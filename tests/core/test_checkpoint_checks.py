"""A checkpoint is checked against its run before it is used."""
from __future__ import annotations

import shutil

import pytest
import torch

from core.errors import CheckpointError
from core.infer.session import TranslationSession
from core.jobs import RecordingContext
from core.services.training import create_run, train_run
from core.train import checkpoint as ckpt
from core.train.artifacts import load_model
from tests.core.tiny_runs import tiny_run_config


def _trained(workspace, name: str, hidden: int = 16, steps: int = 2):
    config = tiny_run_config(max_steps=steps, valid_every=steps)
    config.model.hidden_size = hidden
    run_id = create_run(workspace, "demo", config, name=name)
    train_run(workspace, run_id, RecordingContext())
    return run_id, workspace.run_dir(run_id)


def _edit(path, **changes):
    state = torch.load(path, weights_only=True)
    for key, value in changes.items():
        if value is None:
            del state[key]
        else:
            state[key] = value
    ckpt.save_checkpoint(path, state)


def test_missing_keys_are_named_not_a_key_error(workspace):
    run_id, run_dir = _trained(workspace, "a")
    _edit(run_dir / "last.pt", optimizer=None, rng=None)
    workspace.update_run(run_id, config={**workspace.get_run(run_id).config,
                                         "train": {**tiny_run_config(max_steps=4).train.__dict__}})
    with pytest.raises(CheckpointError, match=r"last.pt: an incomplete checkpoint, missing optimizer, rng"):
        train_run(workspace, run_id, RecordingContext(), resume=True)
    assert workspace.get_run(run_id).status == "failed"
    _edit(run_dir / "last.pt", position={"epoch": 0})
    with pytest.raises(CheckpointError, match=r"missing position.batch, position.step"):
        load_model(run_dir, "last")


def test_a_checkpoint_of_another_config_is_refused_on_resume_and_translate(workspace):
    _, small_dir = _trained(workspace, "small", hidden=16)
    big_id, big_dir = _trained(workspace, "big", hidden=24)
    for name in ("last.pt", *(p.name for p in big_dir.glob("best-*.pt"))):
        (big_dir / name).unlink()
    shutil.copy(small_dir / "last.pt", big_dir / "last.pt")
    with pytest.raises(CheckpointError, match=r"model.hidden_size = 16 in the checkpoint, 24 in the run"):
        TranslationSession.open(workspace, ["big"], which="last")
    workspace.update_run(big_id, config={**workspace.get_run(big_id).config,
                                         "train": {**tiny_run_config(max_steps=4).train.__dict__}})
    with pytest.raises(CheckpointError, match=r"model.hidden_size = 16 in the checkpoint, 24"):
        train_run(workspace, big_id, RecordingContext(), resume=True)


def test_vocabulary_sizes_must_match_the_run(workspace):
    _, run_dir = _trained(workspace, "v")
    state = torch.load(run_dir / "last.pt", weights_only=True)
    src, tgt = state["vocab_sizes"]
    _edit(run_dir / "last.pt", vocab_sizes=[src + 7, tgt])
    with pytest.raises(CheckpointError, match=f"vocabularies of {src + 7} source"):
        load_model(run_dir, "last")


def _poison(path, value=float("nan")):
    """One weight of the checkpoint at `path` set to `value`; returns its name."""
    state = torch.load(path, weights_only=True)
    name = next(k for k, v in state["model"].items() if v.is_floating_point())
    state["model"][name].view(-1)[0] = value
    ckpt.save_checkpoint(path, state)
    return name


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_checkpoint_with_non_finite_weights_is_refused_at_load(workspace, value):
    """NaN weights made `translate --checkpoint last` search for ever (round 2, item 7):
    load_model and a resume refuse them, naming the checkpoint and the tensor."""
    run_id, run_dir = _trained(workspace, "nan")
    name = _poison(run_dir / "last.pt", value)
    with pytest.raises(CheckpointError, match=rf"last.pt: the weights '{name}' hold 1 NaN or "
                                              "infinite values"):
        load_model(run_dir, "last")
    workspace.update_run(run_id, config={**workspace.get_run(run_id).config,
                                         "train": {**tiny_run_config(max_steps=4).train.__dict__}})
    with pytest.raises(CheckpointError, match=rf"last.pt: the weights '{name}' hold 1 NaN"):
        train_run(workspace, run_id, RecordingContext(), resume=True)


@pytest.mark.parametrize("beam", [1, 3])
def test_non_finite_scores_in_a_search_name_the_checkpoint(workspace, beam):
    """Weights that go bad after loading (or overflow) end translate and n-best lists
    with a CheckpointError naming the checkpoint, not a hang or '<pad> <pad> ...'."""
    from core.services.n_best import n_best_lists

    _trained(workspace, "diverged")
    session = TranslationSession.open(workspace, ["diverged"], which="last")
    model, steps = session.models[0], []
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(float("nan"))

    def counted(*args, plain=model.step, **kwargs):  # unfixed, beam search never ends
        steps.append(1)
        assert len(steps) < 1000, "the search does not stop"
        return plain(*args, **kwargs)

    model.step = counted
    with pytest.raises(CheckpointError, match=r"last.pt: translating stopped: the model's "
                                              r"scores are not finite .* at output step \d+"):
        session.translate(["hola mundo"], beam=beam)
    if beam > 1:
        with pytest.raises(CheckpointError, match=r"last.pt: translating stopped"):
            n_best_lists(session, ["hola mundo"], beam, 2)


BAD_CONTENTS = [  # (what the checkpoint holds, what the error says): each was a traceback
    (dict(position={"epoch": 0, "batch": 0, "step": -3}), r"position.step is -3, not a whole "
     r"number from 0 to 1,000,000,000 \(the limit\)"),
    (dict(position={"epoch": "one", "batch": 0, "step": 2}), r"position.epoch is 'one'"),
    (dict(position={"epoch": 0, "batch": 0, "step": 10**15}), r"position.step is "
     r"1000000000000000, not a whole number from 0 to 1,000,000,000 \(the limit\)"),
    (dict(model=[1, 2]), r"'model' is a list, not a table of named weights"),
    (dict(config=["model"]), r"'config' is a list, not a table"),
    (dict(vocab_sizes=["a", "b"]), r"vocab_sizes is \['a', 'b'\], not two whole numbers up "
     r"to 10,000,000 \(the limit\)"),
    (dict(bad_validations="x"), r"bad_validations is 'x'"),
]


def test_checkpoint_contents_out_of_type_or_range_are_refused(workspace):
    """Negative or text positions, a step of 10**15, weights or config of the wrong type,
    vocabulary sizes that are not numbers: each was a traceback or a run "finished after
    1000000000000000 steps" (round 2, item 9); now one CheckpointError naming the key, on
    load and on resume."""
    run_id, run_dir = _trained(workspace, "contents")
    good = torch.load(run_dir / "last.pt", weights_only=True)
    workspace.update_run(run_id, config={**workspace.get_run(run_id).config,
                                         "train": {**tiny_run_config(max_steps=4).train.__dict__}})
    for changes, says in BAD_CONTENTS:
        _edit(run_dir / "last.pt", **changes)
        with pytest.raises(CheckpointError, match=rf"last.pt: not a valid workbench checkpoint: {says}"):
            load_model(run_dir, "last")
        with pytest.raises(CheckpointError, match=rf"not a valid workbench checkpoint: {says}"):
            train_run(workspace, run_id, RecordingContext(), resume=True)
        ckpt.save_checkpoint(run_dir / "last.pt", good)
    assert load_model(run_dir, "last").step == 2

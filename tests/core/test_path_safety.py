"""Names from files and the database stay inside their folder."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.config import load_preset
from core.errors import CheckpointError, ConfigError, StoreError
from core.evaluate.goldsets import import_gold_set, load_gold_set
from core.jobs import RecordingContext
from core.safepath import inside
from core.services.training import create_run, train_run
from core.train import checkpoint as ckpt
from core.train.artifacts import load_model, pick_checkpoint
from tests.core.tiny_runs import tiny_run_config


def test_inside_refuses_names_that_leave_the_folder(tmp_path):
    assert inside(tmp_path, "best-00000003.pt", "x", bare=True) == tmp_path.resolve() / "best-00000003.pt"
    for bad in ("../victim.txt", "/etc/passwd", "a/../../b", "", "..", "sub/x.pt"):
        with pytest.raises(CheckpointError):
            inside(tmp_path, bad, "best checkpoint", CheckpointError, bare=True)
    assert inside(tmp_path, "sub/x.pt", "x") == tmp_path.resolve() / "sub" / "x.pt"


def _craft(path: Path, name: str, ppl: float = 1.0) -> None:
    state = torch.load(path, weights_only=True)
    state["best"] = [[ppl, 3, name]] + list(state["best"])
    ckpt.save_checkpoint(path, state)


def test_resume_refuses_a_best_entry_outside_the_run_and_deletes_nothing(workspace, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    run_id = create_run(workspace, "demo", tiny_run_config(max_steps=3, valid_every=1, keep_best=2))
    train_run(workspace, run_id, RecordingContext())
    run_dir = workspace.run_dir(run_id)
    rel = Path("..", "..", "..", victim.name)
    assert (run_dir / rel).resolve() == victim.resolve()
    _craft(run_dir / ckpt.LAST, str(rel), ppl=1e9)  # the worst: the next best drops it
    workspace.update_run(run_id, config={**workspace.get_run(run_id).config,
                                         "train": {**workspace.get_run(run_id).config["train"],
                                                   "max_steps": 5}})
    with pytest.raises(CheckpointError, match="victim.txt"):
        train_run(workspace, run_id, RecordingContext(), resume=True)
    assert victim.read_text() == "keep me"


def test_best_entry_with_an_absolute_path_is_not_loaded(workspace, tmp_path):
    run_id = create_run(workspace, "demo", tiny_run_config(max_steps=3, valid_every=3))
    train_run(workspace, run_id, RecordingContext())
    run_dir = workspace.run_dir(run_id)
    outside = tmp_path / "foreign.pt"
    ckpt.save_checkpoint(outside, {"x": 1})
    newest = sorted(run_dir.glob("best-*.pt"))[-1]
    _craft(newest, str(outside))
    with pytest.raises(CheckpointError, match="foreign.pt"):
        pick_checkpoint(run_dir, "best")
    with pytest.raises(CheckpointError):
        pick_checkpoint(run_dir, str(outside))
    with pytest.raises(CheckpointError):
        pick_checkpoint(run_dir, "../1/last.pt")


def test_checkpoint_rows_outside_the_workspace_are_refused(workspace, tmp_path):
    run_id = create_run(workspace, "demo", tiny_run_config())
    with pytest.raises(StoreError, match="elsewhere.pt"):
        workspace.add_checkpoint(run_id, 3, tmp_path / "elsewhere.pt", "best")
    # a row written by an older version (or by hand) is refused when read
    with workspace._write() as conn:
        conn.execute("INSERT INTO checkpoints (run_id, step, path, kind, created)"
                     " VALUES (?, 3, ?, 'best', 0)", (run_id, str(tmp_path / "elsewhere.pt")))
    with pytest.raises(StoreError, match="elsewhere.pt"):
        workspace.checkpoints(run_id)


def test_gold_set_and_preset_names_are_not_paths(workspace, tmp_path):
    src, tgt, links = (tmp_path / n for n in ("g.src", "g.tgt", "g.links"))
    src.write_text("a b\n", encoding="utf-8")
    tgt.write_text("x y\n", encoding="utf-8")
    links.write_text("0-0 1-1\n", encoding="utf-8")
    import_gold_set(workspace, "g", src, tgt, links)
    assert len(load_gold_set(workspace, "g")) == 1
    with pytest.raises(ConfigError, match="gold set name"):
        load_gold_set(workspace, "../gold/g")  # resolves to a real gold set: still refused
    evil = tmp_path / "evil.toml"
    evil.write_text('name = "evil"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="no preset named"):
        load_preset(str(tmp_path / "evil"))
    with pytest.raises(ConfigError, match="no preset named"):
        load_preset("../../" + "resources/presets/demo")


# --- links out of the workspace (#round 2, items 1 and 2) --------------------------------------
def _bait(folder: Path) -> list[Path]:
    """A folder outside the workspace holding files that look like orphan temp files."""
    folder.mkdir()
    files = [folder / ".notes.tmp", folder / ".bash_history.tmp", folder / ".x.unfinished-abcd1234.tmp"]
    for f in files:
        f.write_text("mine")
    return files


def test_opening_a_workspace_never_deletes_through_a_link(workspace, tmp_path, capsys):
    from core.cli import run_cli

    run_id = create_run(workspace, "demo", tiny_run_config())
    elsewhere = _bait(tmp_path / "elsewhere")
    corpus_dir = workspace.root / "corpora" / "1"
    corpus_dir.rename(tmp_path / "moved-corpus")
    corpus_dir.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    run_dir = workspace.run_dir(run_id)
    for f in run_dir.iterdir():  # run.json, the copy of its row
        f.unlink()
    run_dir.rmdir()
    run_dir.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    stray = workspace.root / "corpora" / "9"  # a link without a corpus row
    stray.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert run_cli(["--workspace", str(workspace.root), "corpus", "list"]) == 0
    capsys.readouterr()
    assert [f.read_text() for f in elsewhere] == ["mine"] * 3
    assert not stray.is_symlink()  # the orphan link itself went, its target stayed
    with pytest.raises(StoreError, match="leads outside"):
        workspace.load_corpus("demo")
    with pytest.raises(StoreError, match="leads outside"):
        workspace.run_dir(run_id)
    workspace.delete_run(run_id)  # removes the link, not what it leads to
    assert not run_dir.is_symlink() and [f.read_text() for f in elsewhere] == ["mine"] * 3


def _link_out(path: Path, outside: Path) -> None:
    """Move `path` out of the workspace to `outside` and leave a link to it."""
    path.rename(outside)
    path.symlink_to(outside)


def test_checkpoints_reached_through_links_out_are_not_used(workspace, tmp_path):
    run_id = create_run(workspace, "demo", tiny_run_config(max_steps=3, valid_every=3))
    train_run(workspace, run_id, RecordingContext())
    run_dir = workspace.run_dir(run_id)
    # a best file linked out, the run's best list naming no file it has
    for best in run_dir.glob("best-*.pt"):
        _link_out(best, tmp_path / "foreign-best.pt")
    state = torch.load(run_dir / ckpt.LAST, weights_only=True)
    ckpt.save_checkpoint(run_dir / ckpt.LAST, dict(state, best=[]))
    with pytest.raises(CheckpointError, match="points outside"):
        load_model(run_dir, "best")
    # last.pt linked out: translate and resume refuse it alike
    _link_out(run_dir / ckpt.LAST, tmp_path / "foreign-last.pt")
    with pytest.raises(CheckpointError, match="points outside"):
        load_model(run_dir, "last")
    config = workspace.get_run(run_id).config
    workspace.update_run(run_id, config={**config, "train": {**config["train"], "max_steps": 6}})
    ctx = RecordingContext()
    with pytest.raises(CheckpointError, match="points outside"):
        train_run(workspace, run_id, ctx, resume=True)
    assert not [e for e in ctx.events if e.kind == "start"]  # never "resumed at step 3"
    workspace.sync_checkpoints(run_id)  # the links are no checkpoints of the run
    assert all(c.path.parent == run_dir for c in workspace.checkpoints(run_id))


def test_run_files_linked_out_are_not_read(workspace, tmp_path):
    run_id = create_run(workspace, "demo", tiny_run_config(max_steps=3, valid_every=3))
    train_run(workspace, run_id, RecordingContext())
    run_dir = workspace.run_dir(run_id)
    _link_out(run_dir / "src.vocab", tmp_path / "foreign.vocab")
    with pytest.raises(CheckpointError, match="points outside"):
        load_model(run_dir, "last")


def test_files_inside_run_corpus_and_gold_folders_linked_out_are_not_read(workspace, tmp_path):
    """Not only the folders: a run's shortlist, a corpus's stored alignment links and a
    gold set's files that are links out of the workspace are refused, not read."""
    from core.evaluate.goldsets import gold_root
    from core.services.shortlist_store import lexicon_path
    from core.train.guidance import link_file
    from core.workspace.gold_folders import SRC_FILE

    src, tgt, links = (tmp_path / n for n in ("g.src", "g.tgt", "g.links"))
    src.write_text("a b\n", encoding="utf-8")
    tgt.write_text("x y\n", encoding="utf-8")
    links.write_text("0-0 1-1\n", encoding="utf-8")
    import_gold_set(workspace, "g", src, tgt, links)
    (tmp_path / "foreign.txt").write_text("p q\n", encoding="utf-8")
    _link_out(gold_root(workspace) / "g" / SRC_FILE, tmp_path / "outside-src.txt")
    with pytest.raises(StoreError, match="points outside"):
        load_gold_set(workspace, "g")

    run_id = create_run(workspace, "demo", tiny_run_config())
    shortlist = workspace.run_dir(run_id) / "shortlist.npz"
    shortlist.symlink_to(tmp_path / "foreign.txt")
    with pytest.raises(StoreError, match="points outside"):
        lexicon_path(workspace, run_id)

    corpus_dir = workspace.corpus_dir(workspace.corpus_id("demo"))
    plain = link_file(corpus_dir, [["a"]], [["x"]])  # inside: the path to write
    plain.parent.mkdir(parents=True, exist_ok=True)
    plain.symlink_to(tmp_path / "foreign.txt")
    with pytest.raises(StoreError, match="points outside"):
        link_file(corpus_dir, [["a"]], [["x"]])

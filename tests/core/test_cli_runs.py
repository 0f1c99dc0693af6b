"""`runs list / rename / delete` and `corpus rename / delete` on the command line: the
table, the store's refusals, the GUI's deletion text, confirmation, and a run that trains."""
from __future__ import annotations

import io
import json

import pytest

from core.cli import run_cli
from core.runlock import RunLock
from core.services.manage import corpus_deletion, run_deletion
from core.workspace.store import Workspace


def cli(ws: Workspace, *argv: str) -> int:
    return run_cli(["--workspace", str(ws.root), *argv])


@pytest.fixture
def runs(workspace):
    """The demo workspace with a failed luong run 'glob' (120 steps, dev perplexity 42.5
    then 40.25) and a queued transformer run 'tf', both on corpus 'demo'."""
    glob = workspace.create_run("glob", {"model": {"family": "luong",
                                                   "attention": "global-general"}}, "demo")
    workspace.update_run(glob, status="failed", steps=120, error="out of memory")
    workspace.log_metrics(glob, 100, "valid", {"dev_ppl": 42.5})
    workspace.log_metrics(glob, 120, "valid", {"dev_ppl": 40.25})
    (workspace.run_dir(glob) / "last.pt").write_bytes(b"not really a checkpoint")
    workspace.create_run("tf", {"model": {"family": "transformer"}}, "demo")
    return workspace


class Terminal(io.StringIO):
    """A stdin that says it is a terminal, holding the user's answer."""

    def isatty(self) -> bool:
        return True


def rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def test_list_shows_each_run_with_steps_and_best_dev_perplexity(runs, capsys):
    assert cli(runs, "runs", "list") == 0
    table = rows(capsys.readouterr().out)
    assert table[0][:6] == ["id", "name", "family", "attention", "corpus", "status"]
    assert table[1][:8] == ["1", "glob", "luong", "global-general", "demo", "failed", "120",
                            "40.25"]
    assert table[2][:8] == ["2", "tf", "transformer", "multi-head", "demo", "queued", "0", "-"]
    assert len(table) == 3


def test_list_filters_by_status_and_corpus_and_speaks_json(runs, capsys):
    assert cli(runs, "runs", "list", "--status", "queued", "--json") == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(x)["name"] for x in lines] == ["tf"]
    assert json.loads(lines[0])["best_dev_ppl"] is None
    assert cli(runs, "runs", "list", "--corpus", "demo", "--json") == 0
    got = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(r["name"], r["steps"], r["best_dev_ppl"]) for r in got] == [
        ("glob", 120, 40.25), ("tf", 0, None)]
    assert cli(runs, "runs", "list", "--status", "finished") == 0
    assert capsys.readouterr().out.strip() == "no matching runs"


def test_list_of_an_unknown_corpus_names_the_known_ones(runs, capsys):
    assert cli(runs, "runs", "list", "--corpus", "nope") == 2
    err = capsys.readouterr().err
    assert "no corpus named 'nope'" in err and "known: demo" in err
    assert len(err.strip().splitlines()) == 1


def test_rename_frees_the_old_name(runs, capsys):
    assert cli(runs, "runs", "rename", "glob", "luong-1") == 0
    assert "renamed run 1 'glob' to 'luong-1'" in capsys.readouterr().out
    assert cli(runs, "runs", "delete", "glob", "--yes") == 2
    assert "no run named 'glob'" in capsys.readouterr().err
    assert runs.get_run("luong-1").id == 1 and runs.get_run("luong-1").steps == 120
    # the failed run's old name is free for a new run
    assert runs.create_run("glob", {"model": {"family": "luong"}}, "demo") == 3


def test_rename_to_a_taken_or_digit_name_is_refused(runs, capsys):
    assert cli(runs, "runs", "rename", "glob", "tf") == 2
    assert "a run named 'tf' already exists" in capsys.readouterr().err
    assert cli(runs, "runs", "rename", "glob", "42") == 2
    assert "only digits" in capsys.readouterr().err
    assert cli(runs, "runs", "rename", "nope", "x") == 2
    assert "no run named 'nope' (known: glob, tf)" in capsys.readouterr().err
    assert [r.name for r in runs.list_runs()] == ["glob", "tf"]


def test_delete_prints_the_guis_text_and_removes_record_and_folder(runs, capsys):
    folder = runs.get_run("glob").path
    _, text = run_deletion(runs, 1, training=False)
    assert cli(runs, "runs", "delete", "glob", "--yes") == 0
    out = capsys.readouterr().out
    assert text.split("\n")[0] in out and "folder 1/ under runs/ are removed" in out
    assert "deleted run 1 'glob'" in out
    assert not folder.exists()
    assert [r.name for r in runs.list_runs()] == ["tf"]
    assert runs.metrics(1) == [] and runs.get_run("tf").path.is_dir()


def test_delete_removes_the_evaluations_it_counts_ensembles_included(runs, capsys):
    """The text says how many evaluations go; that many go. An ensemble's score kept under
    its other member alone would read as that run's own (the Evaluation screen labels a
    row by its runs, and would show it in place of the run's own score on that test)."""
    own = runs.add_evaluation(2, "demo:test", {"bleu": 10.0})
    runs.add_evaluation(1, "demo:test", {"bleu": 12.0})
    runs.add_evaluation([1, 2], "demo:test", {"bleu": 14.0})
    assert cli(runs, "runs", "delete", "glob", "--yes") == 0
    assert "2 evaluations and its folder" in capsys.readouterr().out
    assert [(e.id, e.run_ids, e.metrics["bleu"]) for e in runs.evaluations()] == [
        (own, [2], 10.0)]


def test_delete_without_yes_and_without_a_terminal_is_refused(runs, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # piped: not a terminal
    assert cli(runs, "runs", "delete", "glob") == 2
    captured = capsys.readouterr()
    assert "\u201cglob\u201d" in captured.out  # what would go was shown
    assert "stdin is not a terminal" in captured.err and "pass --yes" in captured.err
    assert runs.get_run("glob").path.is_dir()


def test_delete_asks_on_a_terminal(runs, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    assert cli(runs, "runs", "delete", "glob") == 1
    assert "nothing was deleted" in capsys.readouterr().out
    assert runs.get_run("glob").path.is_dir()
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    assert cli(runs, "runs", "delete", "glob") == 0
    assert "[y/N]" in capsys.readouterr().out
    assert [r.name for r in runs.list_runs()] == ["tf"]


def test_a_run_training_in_another_process_is_not_deleted(runs, capsys):
    run = runs.get_run("glob")
    runs.update_run(run.id, status="running")
    with RunLock.acquire(run.path, run.name):  # as a trainer holds it
        assert cli(runs, "runs", "delete", "glob", "--yes") == 2
        err = capsys.readouterr().err
        assert "\u201cglob\u201d is training" in err and "nothing was deleted" in err
        assert len(err.strip().splitlines()) == 1
        assert run_deletion(runs, run.id, training=False)[0] is False
    assert runs.get_run("glob").status == "running" and run.path.is_dir()
    assert (run.path / "last.pt").is_file()


def test_corpus_rename_keeps_its_runs(runs, capsys):
    assert cli(runs, "corpus", "rename", "demo", "demo-es-en") == 0
    assert "renamed corpus 1 'demo' to 'demo-es-en'" in capsys.readouterr().out
    assert cli(runs, "corpus", "stats", "demo") == 2
    assert "no corpus named 'demo' (known: demo-es-en)" in capsys.readouterr().err
    assert {r.corpus_id for r in runs.list_runs()} == {1}
    assert cli(runs, "runs", "list", "--corpus", "demo-es-en", "--json") == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_corpus_delete_is_refused_while_runs_use_it(runs, capsys):
    assert cli(runs, "corpus", "delete", "demo", "--yes") == 2
    err = capsys.readouterr().err
    assert "used by 2 runs (1: glob, 2: tf)" in err and "Delete those runs first" in err
    assert [c.name for c in runs.list_corpora()] == ["demo"]
    assert [r.name for r in runs.list_runs()] == ["glob", "tf"]


def test_corpus_delete_after_its_runs(runs, capsys, monkeypatch):
    for name in ("glob", "tf"):
        assert cli(runs, "runs", "delete", name, "--yes") == 0
    capsys.readouterr()
    folder = runs.get_corpus("demo").path
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert cli(runs, "corpus", "delete", "demo") == 2  # not a terminal: nothing goes
    assert "pass --yes" in capsys.readouterr().err and folder.is_dir()
    _, text = corpus_deletion(runs, 1)
    assert cli(runs, "corpus", "delete", "demo", "--yes") == 0
    out = capsys.readouterr().out
    assert text.split("\n")[0] in out and "No run uses it" in out
    assert runs.list_corpora() == [] and not folder.exists()
    assert cli(runs, "corpus", "delete", "demo", "--yes") == 2
    assert "no corpus named 'demo' (known: none yet)" in capsys.readouterr().err


def test_the_deletion_itself_holds_the_runs_lock(runs):
    """A trainer that takes the lock after the verdict (both fronts delete through
    core.services.manage.delete_run) stops the deletion."""
    from core.errors import TrainingError
    from core.services.manage import delete_run

    run = runs.get_run("glob")
    with RunLock.acquire(run.path, run.name):  # taken after the verdict said yes
        with pytest.raises(TrainingError, match="being trained by process"):
            delete_run(runs, run.id)
    assert runs.get_run("glob").id == run.id and (run.path / "last.pt").is_file()
    delete_run(runs, run.id)
    assert [r.name for r in runs.list_runs()] == ["tf"] and not run.path.exists()


def test_workspace_may_follow_the_command_and_then_wins(runs, tmp_path, capsys):
    """`runs list --workspace D` and `corpus list --workspace D`, as users type them,
    read D; after the command it overrides a --workspace given before it."""
    other = Workspace.open(tmp_path / "other")  # a workspace without runs or corpora

    def names(out: str) -> list[str]:
        return [json.loads(line)["name"] for line in out.splitlines()]

    assert run_cli(["runs", "list", "--json", "--workspace", str(runs.root)]) == 0
    assert names(capsys.readouterr().out) == ["glob", "tf"]
    assert run_cli(["--workspace", str(other.root), "runs", "list", "--json",
                    "--workspace", str(runs.root)]) == 0
    assert names(capsys.readouterr().out) == ["glob", "tf"]
    assert run_cli(["--workspace", str(runs.root), "runs", "list", "--json"]) == 0
    assert names(capsys.readouterr().out) == ["glob", "tf"]
    assert run_cli(["corpus", "list", "--workspace", str(runs.root)]) == 0
    assert rows(capsys.readouterr().out)[1][1] == "demo"
    assert run_cli(["corpus", "list", "--workspace", str(other.root)]) == 0
    assert "demo" not in capsys.readouterr().out


# --- a damaged, emptied or lost database on the command line ---------------------------------
@pytest.fixture(scope="module")
def trained_root(tmp_path_factory):
    """A workspace with the demo corpus and a tiny run 'tiny' trained 3 steps (built once)."""
    from tests.core.conftest import train_tiny_demo_run

    return train_tiny_demo_run(tmp_path_factory.mktemp("lost") / "ws", steps=3, dev_sample=4)


@pytest.fixture
def trained(trained_root, tmp_path):
    import shutil

    root = tmp_path / "ws"
    shutil.copytree(trained_root, root)
    return root


def main(root, *argv: str) -> int:
    return run_cli(["--workspace", str(root), *argv])


def test_an_emptied_database_is_refused_then_rebuilt_and_translates(trained, capsys,
                                                                    monkeypatch):
    db = trained / "workspace.sqlite"
    db.write_bytes(b"")
    files = sorted(p for p in trained.rglob("*") if p.is_file() and p.parent.name.isdigit())
    for argv in (["runs", "list"], ["corpus", "list"]):
        assert main(trained, *argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {db}: the workspace database is empty (0 bytes")
        assert f"`nmt-workbench --workspace {trained} workspace rebuild`" in err
        assert err.count("\n") == 1
    assert sorted(p for p in trained.rglob("*") if p.is_file()
                  and p.parent.name.isdigit()) == files  # corpora/1 and runs/1 are kept
    assert main(trained, "workspace", "rebuild") == 0
    out = capsys.readouterr().out
    assert "run 1 'tiny' (finished, 3 steps)" in out and "corpus 1 'demo' (459 pairs)" in out
    assert main(trained, "workspace", "check") == 0
    assert "ok (1 corpora, 1 runs)" in capsys.readouterr().out
    monkeypatch.setattr("sys.stdin", io.StringIO("hola\n"))
    assert main(trained, "translate", "--run", "tiny") == 0
    assert capsys.readouterr().out.strip()
    with Workspace.open(trained) as ws:
        assert ws.create_run("next", {}, "demo") == 2  # a new run: a new folder


@pytest.mark.parametrize("offset", [16384, 40960])
def test_a_damaged_database_fails_every_command_in_one_line_and_writes_nothing(
        trained, capsys, offset):
    import os

    db = trained / "workspace.sqlite"
    with open(db, "r+b") as f:
        f.seek(offset)
        f.write(os.urandom(4096))
    damaged = db.read_bytes()
    for argv in (["runs", "list"], ["corpus", "list"], ["runs", "delete", "tiny", "--yes"],
                 ["workspace", "check"]):
        assert main(trained, *argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {db}: the workspace database is damaged (")
        assert "workspace rebuild" in err and err.count("\n") == 1
    assert db.read_bytes() == damaged and (trained / "runs" / "1" / "last.pt").is_file()
    assert main(trained, "workspace", "rebuild") == 0
    assert "run 1 'tiny'" in capsys.readouterr().out
    assert main(trained, "runs", "list") == 0


@pytest.mark.parametrize("sql, argv, says", [
    ("UPDATE runs SET config = '{not json'", ["runs", "list"],
     "run 1 'tiny': its config field is damaged"),
    ("UPDATE corpora SET sources = '[1'", ["corpus", "list"],
     "corpus 1 'demo': its sources field is damaged"),
    ("UPDATE runs SET steps = 'many'", ["runs", "list"],
     "run 1 'tiny': its steps field is damaged"),
    ("DROP TABLE metrics", ["runs", "list"], "the workspace database lacks table metrics"),
    ("PRAGMA user_version = 1", ["runs", "list"],
     "the workspace database says schema version 1 (PRAGMA user_version"),
])
def test_a_changed_database_is_one_line_naming_what(trained, capsys, sql, argv, says):
    import sqlite3

    conn = sqlite3.connect(trained / "workspace.sqlite", isolation_level=None)
    conn.execute(sql)
    conn.close()
    assert main(trained, *argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {trained / 'workspace.sqlite'}: {says}")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_runs_as_a_file_is_one_line(trained, capsys):
    import shutil

    shutil.move(trained / "runs", trained.parent / "runs-moved")
    (trained / "runs").write_text("oops")
    assert main(trained, "runs", "list") == 2
    err = capsys.readouterr().err
    assert err == (f"error: {trained / 'runs'}: is a file, but the workspace keeps its runs in "
                   "a folder of that name; move or rename the file, then open the workspace "
                   "again.\n")

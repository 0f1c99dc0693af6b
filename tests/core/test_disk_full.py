"""A full disk: the error says the disk is full, with the space free and
needed; nothing half-written stays; a healthy database is never called damaged; the
next command works. The disk is made "full" by patching the writes to fail with ENOSPC
and, for SQLite, with PRAGMA max_page_count (a genuine SQLITE_FULL)."""
from __future__ import annotations

import errno
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core import atomic, diskspace
from core.atomic import write_atomic, write_text_atomic
from core.cli import run_cli
from core.data.corpus import Corpus, SentencePair
from core.errors import DiskFullError, OutputError, StoreError, WorkbenchError
from core.workspace.database import database_error
from core.workspace.store import Workspace

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


def enospc(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def genuine_sqlite_full() -> sqlite3.Error:
    """The exception SQLite raises when its database cannot grow."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (x BLOB)")
    conn.execute("PRAGMA max_page_count = 3")
    try:
        conn.execute("INSERT INTO t VALUES (zeroblob(100000))")
    except sqlite3.Error as exc:
        return exc
    raise AssertionError("max_page_count did not fill the database")


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp"))


# --- atomic writes ----------------------------------------------------------------------------
def test_atomic_write_on_a_full_disk(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    monkeypatch.setattr(atomic.os, "fsync", enospc)
    with pytest.raises(DiskFullError) as err:
        write_text_atomic(target, "x" * 3 * 1024 * 1024)
    message = str(err.value)
    assert "the disk is full" in message and "about 3.0 MB needed" in message
    assert "free" in message and "\n" not in message
    assert isinstance(err.value, OutputError) and isinstance(err.value, OSError)
    assert target.read_text() == "old\n" and leftovers(tmp_path) == []


def test_a_streaming_writer_that_fills_the_disk(tmp_path):
    def writer(f):
        f.write(b"y" * 200_000)
        f.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(DiskFullError, match=r"about 195\.3 KB needed"):
        write_atomic(tmp_path / "big.bin", writer)
    assert list(tmp_path.iterdir()) == []


def test_other_write_errors_are_not_called_a_full_disk(tmp_path):
    def writer(f):
        raise OSError(errno.EIO, "Input/output error")

    with pytest.raises(OutputError) as err:
        write_atomic(tmp_path / "a.bin", writer)
    assert not isinstance(err.value, DiskFullError) and "disk is full" not in str(err.value)
    assert list(tmp_path.iterdir()) == []


KILLED_WRITER = """
import os, signal, sys
from core.atomic import write_atomic
def writer(f):
    f.write(b"a complete translation\\n")
    f.flush()
    os.kill(os.getpid(), signal.SIGKILL)
write_atomic(sys.argv[1], writer)
"""


def test_a_killed_writers_temp_file_goes_at_the_next_write_there(tmp_path):
    root = Path(__file__).resolve().parents[2]
    target = tmp_path / "existing.txt"
    target.write_text("old\n")
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target)], cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True)
    assert proc.returncode == -signal.SIGKILL
    dead = [p.name for p in tmp_path.iterdir() if p.name != target.name]
    assert len(dead) == 1 and dead[0].startswith(".existing.txt.unfinished-")  # says what it is
    assert target.read_text() == "old\n"
    mine = tmp_path / ".notes.tmp"  # the user's own, not the workbench's
    mine.write_text("keep")
    live_fd, live = atomic._temp_beside(tmp_path / "other.txt", None)  # a writer at work
    try:
        write_text_atomic(tmp_path / "next.txt", "x\n")  # the next write to that folder
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            [".notes.tmp", Path(live).name, "existing.txt", "next.txt"])
    finally:
        os.close(live_fd)
        os.unlink(live)
    assert target.read_text() == "old\n" and mine.read_text() == "keep"


def test_translate_output_written_but_not_recorded_says_so(tmp_path, monkeypatch, capsys):
    from tests.core.conftest import train_tiny_demo_run

    root = train_tiny_demo_run(tmp_path / "ws", steps=2, dev_sample=0)
    source = tmp_path / "in.txt"
    source.write_text("hola\nbuenos días\n", encoding="utf-8")
    out = tmp_path / "existing.txt"
    out.write_text("old\n")

    def database_full(self, *_args, **_kwargs):
        raise diskspace.disk_full(self.db_path, None, "the workspace database")

    monkeypatch.setattr(Workspace, "add_translation", database_full)
    code = run_cli(["--workspace", str(root), "translate", "--run", "tiny", "--input",
                    str(source), "--output", str(out), "--beam", "1"])
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error: ")]
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"error: {out}: the translations were written in full; only "
                             "noting them in the workspace's list of translations failed: ")
    assert "workspace.sqlite (the workspace database): cannot be written, the disk is full" \
        in err[0]
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2  # complete, new
    assert leftovers(tmp_path) == []


# --- corpus import --------------------------------------------------------------------------------
def test_corpus_import_into_a_full_disk_leaves_nothing_and_the_next_import_works(
        tmp_path, monkeypatch, capsys):
    ws_dir = tmp_path / "ws"
    Workspace.open(ws_dir).close()
    calls = {"n": 0}
    real_fsync = os.fsync

    def fsync_fills_on_second_file(fd):
        calls["n"] += 1
        if calls["n"] >= 2:  # raw.src is complete; raw.tgt does not fit
            enospc()
        real_fsync(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync_fills_on_second_file)
    argv = ["--workspace", str(ws_dir), "corpus", "import", str(DEMO / "demo.es"),
            str(DEMO / "demo.en"), "--src-lang", "es", "--tgt-lang", "en", "--name", "demo"]
    assert run_cli(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "(corpus 'demo'): cannot be written, the disk is full" in err
    assert "KB needed" in err and "Nothing was left half-written" in err and "backup" not in err
    assert list((ws_dir / "corpora").iterdir()) == []  # no partial folder, no temp file
    monkeypatch.setattr(atomic.os, "fsync", real_fsync)  # space freed
    assert run_cli(argv) == 0
    with Workspace.open(ws_dir) as ws:
        assert [c.name for c in ws.list_corpora()] == ["demo"]
        assert len(ws.load_corpus("demo")) == 459


# --- the database --------------------------------------------------------------------------------
def test_a_full_database_says_so_and_stays_healthy(tmp_path):
    ws = Workspace.open(tmp_path / "ws")
    conn = ws._conn()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    big = Corpus([SentencePair("a", "b", None, 1)], "es", "en", name="big",
                 warnings=["w" * 100_000])  # the row needs ~25 pages
    with pytest.raises(DiskFullError) as err:
        ws.add_corpus(big)
    assert "(the workspace database): cannot be written, the disk is full" in str(err.value)
    assert "restore" not in str(err.value)
    assert ws.list_corpora() == [] and list((ws.root / "corpora").iterdir()) == []
    assert ws.integrity_check() == "ok"
    conn.execute("PRAGMA max_page_count = 1073741823")  # space freed: the next write works
    assert ws.get_corpus(ws.add_corpus(big)).name == "big"
    ws.close()


def test_opening_on_a_full_disk_is_not_called_damage(tmp_path, monkeypatch):
    Workspace.open(tmp_path / "ws").close()
    full = genuine_sqlite_full()
    assert diskspace.is_full(full)

    def migrations_fail(*_args):
        raise full

    monkeypatch.setattr("core.workspace.store.apply_migrations", migrations_fail)
    with pytest.raises(DiskFullError, match="the disk is full") as err:
        Workspace.open(tmp_path / "ws")
    assert "backup" not in str(err.value) and "damaged" not in str(err.value)


def test_which_sqlite_errors_mean_what(tmp_path, monkeypatch):
    db = tmp_path / "workspace.sqlite"
    io_error = sqlite3.OperationalError("disk I/O error")
    io_error.sqlite_errorcode = sqlite3.SQLITE_IOERR_SHMSIZE  # what a full disk gives WAL
    monkeypatch.setattr(diskspace, "free_bytes", lambda _path: 4096)
    assert isinstance(database_error(db, io_error), DiskFullError)
    monkeypatch.setattr(diskspace, "free_bytes", lambda _path: 10 * 2**30)
    plain = database_error(db, io_error)
    assert isinstance(plain, StoreError) and "backup" not in str(plain)
    assert "disk has space" in str(plain)
    locked = sqlite3.OperationalError("database is locked")
    locked.sqlite_errorcode = sqlite3.SQLITE_BUSY
    assert "backup" not in str(database_error(db, locked))


def test_a_damaged_database_is_the_one_to_restore(tmp_path):
    root = tmp_path / "ws"
    Workspace.open(root).close()
    (root / "workspace.sqlite").write_bytes(b"this is not a database" * 100)
    for name in ("workspace.sqlite-wal", "workspace.sqlite-shm"):
        (root / name).unlink(missing_ok=True)
    with pytest.raises(StoreError, match="is damaged .*Restore it from a backup, or .*workspace rebuild"):
        Workspace.open(root)


def test_a_full_disk_anywhere_in_a_command_is_one_line(tmp_path, monkeypatch, capsys):
    Workspace.open(tmp_path / "ws").close()

    def import_fills(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "scratch"))

    monkeypatch.setattr("core.services.corpora.import_corpus", import_fills)
    code = run_cli(["--workspace", str(tmp_path / "ws"), "corpus", "import",
                    str(DEMO / "demo.es"), str(DEMO / "demo.en"), "--src-lang", "es",
                    "--tgt-lang", "en"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"error: {tmp_path / 'scratch'}: cannot be written, the disk is full")
    assert "half-written" not in err  # nobody cleaned up there: no promise
    assert not isinstance(DiskFullError("x"), StoreError) and issubclass(DiskFullError,
                                                                          WorkbenchError)

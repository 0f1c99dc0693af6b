"""The workspace database's plumbing, shared by every part of `Workspace`: one SQLite
connection per thread (WAL journal, busy timeout), write transactions (BEGIN IMMEDIATE,
rolled back on error, refused once SQLite said the file is damaged), paths kept
relative to the workspace folder, and the checks of a new corpus's or run's name and
folder. `database_error` says what an SQLite error means to the user.

The tables themselves are read and written by the mixins that make up
core.workspace.store.Workspace: corpus_records (corpora, splits), runs (the runs table)
and run_records (what runs leave: metrics, checkpoints, evaluations, translations).
"""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core import diskspace, limits
from core.errors import StoreError, WorkbenchError
from core.safepath import inside, remove_tree
from core.textsafe import unprintable_chars
from core.workspace.health import damaged, is_corrupt, rebuild_hint
from core.workspace.paths import DB_NAME, IMPORTING, schema_version

BUSY_TIMEOUT_S = 60.0  # how long a writer waits for another process's transaction


def connect(db_path: Path) -> sqlite3.Connection:
    """A new connection to `db_path`, set up as every workspace connection is."""
    # isolation_level=None: no implicit transactions; writes use explicit BEGIN IMMEDIATE
    # so a writer takes the lock up front and waits (busy_timeout) instead of failing.
    conn = sqlite3.connect(
        str(db_path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")  # durable enough with WAL, much faster
    conn.row_factory = sqlite3.Row
    return conn


def database_error(db: Path, exc: sqlite3.Error) -> WorkbenchError:
    """What an SQLite error on opening or writing `db` means to the user. Only a damaged
    file (SQLITE_CORRUPT, SQLITE_NOTADB) is one to restore from a backup; a full disk
    (SQLITE_FULL, or an I/O error with less than a MB free) says so, with the space free;
    anything else (permissions, a lock, an I/O error) asks to check the folder, never to
    replace a database that may be healthy."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if diskspace.is_full(exc) or (code == sqlite3.SQLITE_IOERR and diskspace.nearly_full(db)):
        return diskspace.disk_full(db, None, "the workspace database")
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return StoreError(f"{db}: cannot be used as a workspace database, it is damaged "
                          f"({exc}); nothing was written to it. Restore it from a backup, "
                          f"or {rebuild_hint(db.parent)}.")
    return StoreError(f"{db}: the workspace database cannot be used now ({exc}); check that "
                      "its folder can be read and written and its disk has space, then try "
                      "again.")


class WorkspaceDatabase:
    """The connection, transactions and shared helpers of one workspace folder; the
    base of the mixins that make up core.workspace.store.Workspace."""

    def __init__(self, root: Path):
        self.root = root
        self.db_path = root / DB_NAME
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._damage: StoreError | None = None  # set by the first 'malformed' error

    def close(self) -> None:
        """Close every database connection; later use raises StoreError."""
        with self._lock:
            self._closed = True
            for conn in self._conns:
                conn.close()
            self._conns.clear()

    def __enter__(self) -> WorkspaceDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """The database's schema version (PRAGMA user_version)."""
        return schema_version(self._conn())

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection (created on first use)."""
        conn = getattr(self._local, "conn", None)
        if conn is None or self._closed:
            with self._lock:
                if self._closed:
                    raise StoreError(f"{self.root}: the workspace is closed; open it again.")
                conn = connect(self.db_path)
                self._conns.append(conn)
            self._local.conn = conn
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; rolled back if the body raises. Refused once SQLite
        has said the database is damaged."""
        if self._damage is not None:
            raise self._damage
        conn = self._conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:  # SQLite may have rolled back already (disk full)
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if diskspace.is_full(exc):
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise diskspace.disk_full(self.db_path, None, "the workspace database") \
                    from exc
            self._note_damage(exc)
            raise

    def _note_damage(self, exc: sqlite3.Error) -> None:
        """After SQLite says the file is damaged: refuse every later write, and raise
        that refusal now (other errors pass through)."""
        if is_corrupt(exc):
            self._damage = damaged(self.db_path, str(exc))
            raise self._damage from exc

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        try:
            return self._conn().execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            self._note_damage(exc)
            raise

    def _rel(self, path: str | Path) -> str:
        """Paths inside the workspace are stored relative, so the folder can move."""
        p = Path(path).resolve()
        try:
            return p.relative_to(self.root).as_posix()
        except ValueError:
            return str(p)

    def _abs(self, stored: str) -> Path:
        return self.root / stored  # an absolute `stored` stays absolute

    def _inside(self, stored: str, what: str) -> Path:
        """A stored path that must lie in the workspace (checkpoints, splits)."""
        return inside(self.root, stored, f"{self.db_path}: {what}", StoreError)

    def integrity_check(self) -> str:
        """SQLite's own check: 'ok' or the problems it found."""
        rows = self._conn().execute("PRAGMA integrity_check").fetchall()
        return "\n".join(str(r[0]) for r in rows)

    # --- lookups by id or name ------------------------------------------------------------
    def _resolve(self, table: str, what: str, ref: int | str) -> int:
        if isinstance(ref, str):
            rows = self._query(f"SELECT id FROM {table} WHERE name = ?", (ref,))
            if rows:
                return int(rows[0]["id"])
            if not ref.strip().isdigit():
                names = [r["name"] for r in self._query(f"SELECT name FROM {table} ORDER BY id")]
                known = ", ".join(names) if names else "none yet"
                raise StoreError(f"{self.root}: no {what} named {ref!r} (known: {known}).")
            ref = int(ref)
        if not self._query(f"SELECT 1 FROM {table} WHERE id = ?", (ref,)):
            raise StoreError(f"{self.root}: no {what} with id {ref}; list them to see the ids.")
        return int(ref)

    def _free_name(self, table: str, name: str) -> str:
        taken = {r["name"] for r in self._query(f"SELECT name FROM {table}")}
        k = 2
        while f"{name}-{k}" in taken:
            k += 1
        return f"{name}-{k}"

    def _check_new_name(self, table: str, what: str, name: str) -> str:
        name = name.strip()
        if not name:
            raise StoreError(f"a {what} needs a name; give one (e.g. --name).")
        bad = unprintable_chars(name)
        if bad:
            raise StoreError(f"{what} name {name!r} holds control characters ({', '.join(bad)}), "
                             "which would garble terminals and lists; choose a name of letters, "
                             "digits, spaces and punctuation.")
        if name.isdigit():
            raise StoreError(f"{what} name {name!r} is only digits and would read as an id; "
                             "add a letter.")
        if len(name) > limits.MAX_NAME_CHARS:
            raise StoreError(f"a {what} name may have {limits.MAX_NAME_CHARS} characters (the "
                             f"limit), this one has {len(name):,} ({name[:40]!r}...); choose a "
                             "shorter name.")
        if self._query(f"SELECT 1 FROM {table} WHERE name = ?", (name,)):
            raise StoreError(f"{self.root}: a {what} named {name!r} already exists; choose "
                             f"another name, e.g. {self._free_name(table, name)!r}.")
        return name

    def _claim_folder(self, folder: Path, what: str) -> None:
        """Make `folder` the new `what`'s (inside its write transaction): refused when it
        holds files the database does not know (it lost rows: restored from an older
        backup, or replaced), which the new corpus or run would overwrite; a killed
        import's leftovers (IMPORTING) go."""
        if folder.is_dir() and (folder / IMPORTING).exists():
            remove_tree(folder)
        if folder.is_dir() and any(folder.iterdir()):
            raise StoreError(
                f"{folder}: holds the files of a {what} this workspace database does not "
                f"know (it was replaced or restored from an older backup?); nothing was "
                f"written. Restore the newer database, or {rebuild_hint(self.root)}.")
        folder.mkdir(parents=True, exist_ok=True)

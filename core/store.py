"""The workspace: an SQLite index (`workspace.sqlite`) plus a folder of files.

`Workspace.open(dir)` creates or opens one; its methods take and return plain Python
types and dataclasses, so the CLI, the GUI and a background training thread all use
the same calls. Thread-safe: each thread gets its own connection. Several processes
may write at once (WAL journal, busy timeout, writes in BEGIN IMMEDIATE transactions).
The schema is versioned with PRAGMA user_version and brought forward by MIGRATIONS.
See core/workspace_paths.py for the folder layout.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core import diskspace, limits, runlock
from core.atomic import write_text_atomic
from core.data.corpus import Corpus
from core.errors import StoreError, WorkbenchError
from core.gold_folders import GOLD_DIR, recover_gold_folders
from core.safepath import inside, remove_tree, within
from core.store_records import (  # noqa: F401 - re-exported: core.store is the API
    CheckpointInfo,
    CorpusInfo,
    EvaluationInfo,
    MetricPoint,
    RunInfo,
    SplitInfo,
    TranslationInfo,
)
from core.store_run_records import RunRecords
from core.textsafe import unprintable_chars
from core.workspace_health import (
    check_database,
    check_layout,
    check_missing_database,
    damaged,
    is_corrupt,
    rebuild_hint,
    row_json,
    row_number,
)
from core.workspace_paths import (
    CORPORA_DIR,
    CORPUS_META,
    DB_NAME,
    EXPORTS_DIR,
    IMPORTING,
    LATEST_VERSION,
    RUN_META,
    RUNS_DIR,
    apply_migrations,
    corpus_files_size,
    corpus_needs_escaping,
    read_corpus_files,
    resolve_workspace_dir,
    schema_version,
    write_corpus_files,
    write_meta,
)

RUN_STATUSES = ("queued", "running", "paused", "finished", "failed", "cancelled", "interrupted")
BUSY_TIMEOUT_S = 60.0  # how long a writer waits for another process's transaction



def _connect(db_path: Path) -> sqlite3.Connection:
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


class Workspace(RunRecords):
    """A workspace folder. Open with `Workspace.open(path)`; use as a context manager."""

    def __init__(self, root: Path):
        self.root = root
        self.db_path = root / DB_NAME
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._damage: StoreError | None = None  # set by the first 'malformed' error

    # --- opening and closing ------------------------------------------------------------
    @classmethod
    def open(
        cls, path: str | Path | None = None, create: bool = True, allow_nonempty: bool = False
    ) -> Workspace:
        """Open the workspace in `path` (None: the per-user default), migrating an older
        schema. With `create`, a missing or empty folder becomes a new workspace; a
        non-empty folder that is not a workspace is refused unless `allow_nonempty`."""
        root = resolve_workspace_dir(path)
        db = root / DB_NAME
        if root.is_dir():
            check_layout(root)
        if not db.exists():
            if root.exists() and not root.is_dir():
                raise StoreError(f"{root}: is a file, not a workspace folder; choose a folder.")
            if root.is_dir():
                check_missing_database(root, db)
            if not create and not root.exists():
                raise StoreError(f"{root}: no such folder (moved, deleted, or on a drive "
                                 "not mounted); open or create another workspace.")
            if not create:
                raise StoreError(
                    f"{root}: is not a workspace (no {DB_NAME}); choose an existing "
                    "workspace or let the workbench create one."
                )
            if root.exists() and any(root.iterdir()) and not allow_nonempty:
                raise StoreError(
                    f"{root}: the folder is not empty and holds no {DB_NAME}; choose an "
                    "empty or new folder for a workspace."
                )
            try:
                root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"{root}: cannot create the workspace folder "
                    f"({exc.strerror or exc}); choose a folder you can write to "
                    "(--workspace DIR).") from None
        ws = cls(root.resolve())
        try:
            conn = ws._conn()
            check_database(conn, root, db)  # damaged, emptied, or not its version's tables
            conn.execute("PRAGMA journal_mode = WAL")  # persistent: stored in the file
            apply_migrations(conn, LATEST_VERSION, db)
            for sub in (CORPORA_DIR, RUNS_DIR, EXPORTS_DIR):
                (ws.root / sub).mkdir(exist_ok=True)
            ws.recover()
        except sqlite3.Error as exc:
            ws.close()
            raise database_error(db, exc) from exc
        except BaseException:
            ws.close()
            raise
        return ws

    def recover(self) -> list[str]:
        """What a killed process left behind, put right (run on every open): runs that
        say 'running' or 'paused' while no process holds their lock become
        'interrupted'; half-written temp files (`.NAME.*.tmp` of core.atomic) go from
        the folders of runs nobody trains and of corpora, and so do corpus folders
        without a row that an import killed mid-way left (marked IMPORTING; any other
        folder without a row is data a lost database knew: kept). Returns the names of
        the runs marked."""
        self._remove_orphan_files()
        marked = []
        for row in self._query("SELECT id, name FROM runs WHERE status IN ('running', 'paused')"):
            folder = self.root / RUNS_DIR / str(row["id"])
            if runlock.is_locked(folder):
                continue
            pid = runlock.holder(folder)
            by = f" (process {pid})" if pid else ""
            with self._write() as conn:  # re-checked inside the write lock
                if runlock.is_locked(folder):
                    continue
                conn.execute(
                    "UPDATE runs SET status = 'interrupted', error = ? WHERE id = ? AND"
                    " status IN ('running', 'paused')",
                    (f"the process training it{by} ended without saving its status (killed?); "
                     f"resume it from its last checkpoint with `train --resume {row['name']}`",
                     row["id"]))
            marked.append(row["name"])
        return marked

    def _own_folder(self, path: Path) -> bool:
        """Whether `path` is a real folder of the workspace: not a link, inside it.
        Cleanup looks only in such folders, so it never deletes through a link."""
        try:
            return (path.is_dir() and not path.is_symlink()
                    and self.root in path.resolve().parents)
        except OSError:
            return False

    def _remove_orphan_files(self) -> None:
        def temps(folder: Path) -> list[Path]:
            return [p for p in folder.glob(".*.tmp") if p.is_file() and not p.is_symlink()]

        def run_temps() -> list[Path]:
            runs = self.root / RUNS_DIR
            return [tmp for folder in (sorted(runs.iterdir()) if self._own_folder(runs) else ())
                    if self._own_folder(folder) and not runlock.is_locked(folder)
                    for tmp in temps(folder)]

        if run_temps():
            # create_run and update_run write RUN_META inside a write transaction: holding
            # one, no other process is writing a run folder but its trainer (locked).
            with self._write():
                for tmp in run_temps():
                    tmp.unlink(missing_ok=True)
        gold = self.root / GOLD_DIR
        if self._own_folder(gold) and any(p.name.startswith(".") for p in gold.iterdir()):
            recover_gold_folders(gold)
        corpora = self.root / CORPORA_DIR
        if not self._own_folder(corpora):
            return
        def killed_import(folder: Path, ids: set[str]) -> bool:
            return folder.name not in ids and (folder / IMPORTING).exists()

        ids = {str(r[0]) for r in self._query("SELECT id FROM corpora")}

        def orphan(f: Path) -> bool:
            """A link without its row (it goes itself; its target stays), a killed
            import's folder, or temp files in a corpus's own folder."""
            if f.name not in ids:
                return f.is_symlink() or (self._own_folder(f) and killed_import(f, ids))
            return self._own_folder(f) and bool(temps(f))

        if not any(orphan(f) for f in corpora.iterdir()):
            return  # the usual case: no write transaction on open
        # add_corpus and save_split write their files inside a write transaction: holding
        # one here, no other process is writing a corpus folder.
        with self._write() as conn:
            ids = {str(r[0]) for r in conn.execute("SELECT id FROM corpora")}
            for folder in sorted(corpora.iterdir()):
                if folder.name not in ids and folder.is_symlink():
                    remove_tree(folder)  # a link goes itself, its target stays
                    continue
                if not self._own_folder(folder):
                    continue
                if killed_import(folder, ids):
                    remove_tree(folder)
                    continue
                for tmp in temps(folder):
                    tmp.unlink(missing_ok=True)

    def close(self) -> None:
        """Close every database connection; later use raises StoreError."""
        with self._lock:
            self._closed = True
            for conn in self._conns:
                conn.close()
            self._conns.clear()

    def __enter__(self) -> Workspace:
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
                conn = _connect(self.db_path)
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

    # --- corpora --------------------------------------------------------------------------
    def add_corpus(
        self,
        corpus: Corpus,
        name: str | None = None,
        format: str = "",
        options: dict[str, Any] | None = None,
        sources: Sequence[str | Path] = (),
    ) -> int:
        """Store `corpus` under `name` (default: corpus.name): its text as files in
        corpora/<id>/ and its row. Returns the new id."""
        pairs = corpus.pairs
        n_docs = len({p.doc_id for p in pairs if p.doc_id is not None})
        escaped = corpus_needs_escaping(corpus)
        with self._write() as conn:
            name = self._check_new_name("corpora", "corpus", name or corpus.name)
            cur = conn.execute(
                "INSERT INTO corpora (name, format, src_lang, tgt_lang, n_pairs, n_documents,"
                " created, sources, options, warnings, escaped)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (name, format, corpus.src_lang, corpus.tgt_lang, len(pairs), n_docs,
                 time.time(), json.dumps([str(s) for s in sources]),
                 json.dumps(options or {}), json.dumps(list(corpus.warnings)), int(escaped)),
            )
            corpus_id = int(cur.lastrowid)
            # Written inside the transaction: a failure leaves neither row nor files (a
            # crash leaves a folder marked IMPORTING, which the next open removes).
            folder = self.root / CORPORA_DIR / str(corpus_id)
            if folder.is_symlink():
                remove_tree(folder)  # a link left there goes itself: nothing is written through it
            self._claim_folder(folder, "corpus")
            folder = self.corpus_dir(corpus_id)
            try:
                (folder / IMPORTING).touch()
                write_corpus_files(folder, corpus, escaped)
                row = conn.execute("SELECT * FROM corpora WHERE id = ?", (corpus_id,)).fetchone()
                write_meta(folder / CORPUS_META, self._corpus_meta(row))
            except BaseException as exc:
                remove_tree(folder)  # no partial corpus stays
                if diskspace.is_full(exc):
                    raise diskspace.disk_full(folder, corpus_files_size(corpus),
                                              f"corpus {name!r}") from None
                raise
        (folder / IMPORTING).unlink(missing_ok=True)
        return corpus_id

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

    @staticmethod
    def _corpus_meta(row: sqlite3.Row) -> dict[str, Any]:
        """A corpus row as the CORPUS_META record beside its files."""
        meta = {k: row[k] for k in row.keys() if k != "id"}
        for key in ("sources", "options", "warnings"):
            meta[key] = json.loads(meta[key])
        return meta

    def _corpus_info(self, row: sqlite3.Row) -> CorpusInfo:
        db = self.db_path
        return CorpusInfo(
            id=row["id"], name=row["name"], format=row["format"], src_lang=row["src_lang"],
            tgt_lang=row["tgt_lang"], n_pairs=row_number(db, "corpus", row, "n_pairs"),
            n_documents=row_number(db, "corpus", row, "n_documents"),
            created=row_number(db, "corpus", row, "created", float),
            sources=row_json(db, "corpus", row, "sources", list, []),
            options=row_json(db, "corpus", row, "options", dict, {}),
            warnings=row_json(db, "corpus", row, "warnings", list, []),
            path=self.root / CORPORA_DIR / str(row["id"]),
        )

    def corpus_dir(self, ref: int | str) -> Path:
        """The folder of corpus `ref` (id or name), checked to lie inside the workspace
        (core.safepath.within: StoreError for a link out); not created."""
        path = self.root / CORPORA_DIR / str(self.corpus_id(ref))
        within(self.root, path, "the corpus folder", StoreError)
        return path

    def corpus_id(self, ref: int | str) -> int:
        """The id of corpus `ref` (an id, a name, or an id written as text)."""
        return self._resolve("corpora", "corpus", ref)

    def get_corpus(self, ref: int | str) -> CorpusInfo:
        """CorpusInfo of corpus `ref` (id or name); StoreError when there is none."""
        row = self._query("SELECT * FROM corpora WHERE id = ?", (self.corpus_id(ref),))[0]
        return self._corpus_info(row)

    def list_corpora(self) -> list[CorpusInfo]:
        """CorpusInfo of every corpus, by id."""
        return [self._corpus_info(r) for r in self._query("SELECT * FROM corpora ORDER BY id")]

    def load_corpus(self, ref: int | str) -> Corpus:
        """The corpus exactly as it was added: pairs, doc ids, origin lines, languages."""
        info = self.get_corpus(ref)
        escaped = bool(self._query("SELECT escaped FROM corpora WHERE id = ?",
                                   (info.id,))[0]["escaped"])
        pairs = read_corpus_files(self.corpus_dir(info.id), info.n_pairs, escaped)
        return Corpus(pairs, info.src_lang, info.tgt_lang, name=info.name,
                      warnings=list(info.warnings))

    def rename_corpus(self, ref: int | str, name: str) -> None:
        """Give a corpus a new, unused name; its id, files, split and runs stay."""
        corpus_id = self.corpus_id(ref)
        with self._write() as conn:
            current = conn.execute("SELECT name FROM corpora WHERE id = ?", (corpus_id,))
            if current.fetchone()[0] != name.strip():
                conn.execute("UPDATE corpora SET name = ? WHERE id = ?",
                             (self._check_new_name("corpora", "corpus", name), corpus_id))
                row = conn.execute("SELECT * FROM corpora WHERE id = ?",
                                   (corpus_id,)).fetchone()
                folder = self.root / CORPORA_DIR / str(corpus_id)
                if folder.is_dir():
                    write_meta(folder / CORPUS_META, self._corpus_meta(row))

    def delete_corpus(self, ref: int | str) -> None:
        """Delete a corpus, its split and its files. Refused while runs use it."""
        corpus_id = self.corpus_id(ref)
        with self._write() as conn:
            runs = [r[0] for r in conn.execute(
                "SELECT name FROM runs WHERE corpus_id = ? ORDER BY id", (corpus_id,))]
            if runs:
                raise StoreError(f"corpus {ref!r} is used by runs {', '.join(runs)}; delete "
                                 "those runs first.")
            conn.execute("DELETE FROM corpora WHERE id = ?", (corpus_id,))
        remove_tree(self.root / CORPORA_DIR / str(corpus_id))  # a link: only the link goes

    # --- splits -----------------------------------------------------------------------------
    def save_split(
        self, ref: int | str, seed: int, ratios: Sequence[float],
        assignment: dict[str, Sequence[int]],
    ) -> None:
        """Store the train/dev/test assignment of corpus `ref` (replacing an older one).
        `assignment`: split name -> pair indices."""
        info = self.get_corpus(ref)
        clean = {name: [int(i) for i in idx] for name, idx in assignment.items()}
        for name, idx in clean.items():
            bad = [i for i in idx if not 0 <= i < info.n_pairs]
            if bad:
                raise ValueError(f"split {name!r} holds index {bad[0]} outside corpus "
                                 f"{info.name!r} of {info.n_pairs} pairs")
        path = self.corpus_dir(info.id) / "split.json"
        payload = {"seed": seed, "ratios": [float(r) for r in ratios], "assignment": clean}
        with self._write() as conn:
            write_text_atomic(path, json.dumps(payload))
            conn.execute(
                "INSERT OR REPLACE INTO corpus_splits (corpus_id, seed, ratios, sizes, path,"
                " created) VALUES (?, ?, ?, ?, ?, ?)",
                (info.id, seed, json.dumps(payload["ratios"]),
                 json.dumps({k: len(v) for k, v in clean.items()}), self._rel(path),
                 time.time()),
            )

    def split_sizes(self, ref: int | str) -> dict[str, int] | None:
        """Pairs per set of corpus `ref`'s stored split (from its row, no file read), or
        None when it has none yet."""
        rows = self._query("SELECT corpus_id AS id, sizes FROM corpus_splits WHERE "
                           "corpus_id = ?", (self.corpus_id(ref),))
        if not rows:
            return None
        sizes = row_json(self.db_path, "split of corpus", rows[0], "sizes", dict, {})
        return {k: int(v) for k, v in sizes.items()}

    def split_settings(self, ref: int | str) -> tuple[int, list[float]] | None:
        """(seed, ratios) of corpus `ref`'s stored split, from its row (no file read: they
        survive a damaged split.json), or None when it has none yet."""
        rows = self._query("SELECT corpus_id AS id, seed, ratios FROM corpus_splits WHERE "
                           "corpus_id = ?", (self.corpus_id(ref),))
        if not rows:
            return None
        return (row_number(self.db_path, "split of corpus", rows[0], "seed"),
                row_json(self.db_path, "split of corpus", rows[0], "ratios", list, []))

    def load_split(self, ref: int | str) -> SplitInfo | None:
        """The stored split of corpus `ref`, or None when it has none yet."""
        corpus_id = self.corpus_id(ref)
        rows = self._query("SELECT * FROM corpus_splits WHERE corpus_id = ?", (corpus_id,))
        if not rows:
            return None
        path = self._inside(rows[0]["path"], f"the stored split of corpus {corpus_id}")
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise StoreError(f"{path}: cannot read the stored split ({exc}); split the corpus "
                             "again.") from exc
        return SplitInfo(corpus_id, int(payload["seed"]), list(payload["ratios"]),
                         {k: list(v) for k, v in payload["assignment"].items()},
                         rows[0]["created"])

    # --- runs -------------------------------------------------------------------------------
    def create_run(self, name: str, config: dict[str, Any], corpus_id: int | str | None) -> int:
        """A new run in status 'queued'; its folder is `run_dir(id)`."""
        cid = None if corpus_id is None else self.corpus_id(corpus_id)
        family = str(config.get("model", {}).get("family", ""))
        with self._write() as conn:
            name = self._check_new_name("runs", "run", name)
            cur = conn.execute(
                "INSERT INTO runs (name, family, config, corpus_id, created)"
                " VALUES (?, ?, ?, ?, ?)",
                (name, family, json.dumps(config), cid, time.time()),
            )
            run_id = int(cur.lastrowid)
            folder = self.root / RUNS_DIR / str(run_id)
            within(self.root, folder, "the run folder", StoreError)  # no link out
            self._claim_folder(folder, "run")
            self._write_run_meta(conn, run_id)
        return run_id

    def _write_run_meta(self, conn: sqlite3.Connection, run_id: int) -> None:
        """The run's RUN_META record (name, corpus id and name, config, created) beside
        its checkpoints, from its row (inside a write transaction)."""
        row = conn.execute("SELECT runs.name, runs.config, runs.corpus_id, runs.created, "
                           "corpora.name AS corpus FROM runs LEFT JOIN corpora ON "
                           "corpora.id = runs.corpus_id WHERE runs.id = ?", (run_id,)).fetchone()
        folder = self.root / RUNS_DIR / str(run_id)
        if row is not None and folder.is_dir():
            meta = {k: row[k] for k in row.keys()}
            meta["config"] = json.loads(meta["config"])
            write_meta(folder / RUN_META, meta)

    def run_dir(self, run_id: int) -> Path:
        """The folder of run `run_id`, created when missing; StoreError when it (or runs/)
        leads outside the workspace through a link (core.safepath.within)."""
        path = self.root / RUNS_DIR / str(int(run_id))
        within(self.root, path, "the run folder", StoreError)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def run_id(self, ref: int | str) -> int:
        """The id of run `ref` (an id, a name, or an id written as text); StoreError when
        there is none."""
        return self._resolve("runs", "run", ref)

    _RUN_FIELDS = ("name", "config", "status", "device", "error", "started", "finished",
                   "steps", "elapsed_s")

    def update_run(self, ref: int | str, **fields: Any) -> None:
        """Set fields of a run (name, config, status, device, error, started, finished,
        steps, elapsed_s). Moving to 'running' stamps `started` if unset; moving to
        finished/failed/cancelled stamps `finished` unless given."""
        unknown = set(fields) - set(self._RUN_FIELDS)
        if unknown:
            raise TypeError(f"update_run: unknown fields {sorted(unknown)}")
        status = fields.get("status")
        if status is not None and status not in RUN_STATUSES:
            raise ValueError(f"run status must be one of {RUN_STATUSES}, not {status!r}")
        run_id = self.run_id(ref)
        values = dict(fields)
        if "config" in values:
            values["family"] = str(values["config"].get("model", {}).get("family", ""))
            values["config"] = json.dumps(values["config"])
        if status in ("finished", "failed", "cancelled") and "finished" not in values:
            values["finished"] = time.time()
        with self._write() as conn:
            if "name" in values:
                current = conn.execute("SELECT name FROM runs WHERE id = ?", (run_id,))
                if current.fetchone()[0] != values["name"]:
                    values["name"] = self._check_new_name("runs", "run", values["name"])
            sets = [f"{k} = ?" for k in values]
            params = list(values.values())
            if status == "running" and "started" not in values:
                sets.append("started = COALESCE(started, ?)")  # a resume keeps its start
                params.append(time.time())
            if sets:
                conn.execute(f"UPDATE runs SET {', '.join(sets)} WHERE id = ?",
                             (*params, run_id))
            if "name" in values or "config" in values:
                self._write_run_meta(conn, run_id)

    def _run_info(self, row: sqlite3.Row) -> RunInfo:
        db = self.db_path

        def number(column: str, kind: type = float, optional: bool = False) -> Any:
            return row_number(db, "run", row, column, kind, optional)

        return RunInfo(
            id=row["id"], name=row["name"], family=row["family"],
            config=row_json(db, "run", row, "config", dict, {}),
            corpus_id=number("corpus_id", int, optional=True), status=row["status"],
            device=row["device"], error=row["error"], created=number("created"),
            started=number("started", optional=True), finished=number("finished", optional=True),
            steps=number("steps", int), elapsed_s=number("elapsed_s"),
            path=self.root / RUNS_DIR / str(row["id"]),
        )

    def get_run(self, ref: int | str) -> RunInfo:
        """RunInfo of run `ref` (id or name); StoreError when there is none."""
        return self._run_info(self._query("SELECT * FROM runs WHERE id = ?",
                                          (self.run_id(ref),))[0])

    def list_runs(self, corpus_id: int | None = None, status: str | None = None) -> list[RunInfo]:
        """RunInfo of the runs, by id, optionally only of `corpus_id` and/or with `status`."""
        sql, params = "SELECT * FROM runs WHERE 1", []
        if corpus_id is not None:
            sql, params = sql + " AND corpus_id = ?", [*params, corpus_id]
        if status is not None:
            sql, params = sql + " AND status = ?", [*params, status]
        return [self._run_info(r) for r in self._query(sql + " ORDER BY id", params)]

    def delete_run(self, ref: int | str) -> None:
        """Delete a run with its metrics, checkpoints, evaluations and folder. An ensemble's
        evaluation goes too: kept with the other members only, its scores would read as
        theirs."""
        run_id = self.run_id(ref)
        with self._write() as conn:
            conn.execute("DELETE FROM evaluations WHERE id IN (SELECT evaluation_id FROM "
                         "evaluation_runs WHERE run_id = ?)", (run_id,))
            conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        remove_tree(self.root / RUNS_DIR / str(run_id))  # a link: only the link goes

    @property
    def exports_dir(self) -> Path:
        """The workspace's folder for exported translations; StoreError when it leads
        outside the workspace through a link."""
        return within(self.root, EXPORTS_DIR, "the exports folder", StoreError)

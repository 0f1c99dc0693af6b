"""The workspace: an SQLite index (`workspace.sqlite`) plus a folder of files.

`Workspace.open(dir)` creates or opens one; its methods take and return plain Python
types and the dataclasses of core.workspace.info, so the CLI, the GUI and a background
training thread all use the same calls. Thread-safe: each thread gets its own
connection. Several processes may write at once (WAL journal, busy timeout, writes in
BEGIN IMMEDIATE transactions). The schema is versioned with PRAGMA user_version and
brought forward by MIGRATIONS (core.workspace.paths, with the folder layout).

This module opens a workspace and puts right what a killed process left (`recover`);
the tables are the mixins': corpus_records (corpora, splits), runs, run_records
(metrics, checkpoints, evaluations, translations), over database (connections,
transactions).
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

from core import runlock
from core.errors import StoreError
from core.safepath import remove_tree, within
from core.workspace.corpus_records import CorpusRecords
from core.workspace.database import database_error
from core.workspace.gold_folders import GOLD_DIR, recover_gold_folders
from core.workspace.health import check_database, check_layout, check_missing_database
from core.workspace.paths import (
    CORPORA_DIR,
    DB_NAME,
    EXPORTS_DIR,
    IMPORTING,
    LATEST_VERSION,
    RUNS_DIR,
    apply_migrations,
    resolve_workspace_dir,
)
from core.workspace.run_records import RunRecords
from core.workspace.runs import RunTable


class Workspace(CorpusRecords, RunTable, RunRecords):
    """A workspace folder. Open with `Workspace.open(path)`; use as a context manager."""

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


    @property
    def exports_dir(self) -> Path:
        """The workspace's folder for exported translations; StoreError when it leads
        outside the workspace through a link."""
        return within(self.root, EXPORTS_DIR, "the exports folder", StoreError)

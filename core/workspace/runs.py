"""The runs table of a workspace: `RunTable`, mixed into core.workspace.store.Workspace.
A run is a row (name, config, status, timings) plus its folder runs/<id>/ with run.json,
a copy of the row written with it. What a run leaves (metrics, checkpoints, evaluations,
translations) is core.workspace.run_records.
"""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from core.errors import StoreError
from core.safepath import remove_tree, within
from core.workspace.database import WorkspaceDatabase
from core.workspace.health import row_json, row_number
from core.workspace.info import RunInfo
from core.workspace.paths import RUN_META, RUNS_DIR, write_meta

RUN_STATUSES = ("queued", "running", "paused", "finished", "failed", "cancelled", "interrupted")


class RunTable(WorkspaceDatabase):
    """Runs: create, look up, update (status, timings, name, config), list, delete."""

    def create_run(self, name: str, config: dict[str, Any], corpus_id: int | str | None) -> int:
        """A new run in status 'queued'; its folder is `run_dir(id)`."""
        cid = None if corpus_id is None else self._resolve("corpora", "corpus", corpus_id)
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

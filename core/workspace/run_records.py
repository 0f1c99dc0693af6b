"""What runs leave in the workspace index: their metrics, checkpoints, evaluations and
translation exports. `RunRecords` is mixed into core.workspace.store.Workspace (the API
is `Workspace.log_metrics`, `.checkpoints`, ...); it uses the connection helpers of
core.workspace.database: `_write` (a transaction), `_query`, and `_rel` / `_abs` /
`_inside` for paths kept relative to the workspace folder.
"""
from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.workspace.database import WorkspaceDatabase
from core.workspace.health import row_json
from core.workspace.info import CheckpointInfo, EvaluationInfo, MetricPoint, TranslationInfo
from core.workspace.paths import RUNS_DIR

METRIC_KINDS = ("train", "valid")
CHECKPOINT_KINDS = ("last", "best")


class RunRecords(WorkspaceDatabase):
    """Metrics, checkpoints, evaluations and translations of a workspace's runs."""

    # --- metrics ----------------------------------------------------------------------------
    def log_metrics(self, run_id: int, step: int, kind: str, values: dict[str, float]) -> None:
        """Record one step's values (e.g. {'loss': 2.3, 'ppl': 9.9}); kind train|valid.
        Idempotent: a value logged again for the same step (a resumed run repeating the
        steps after its last checkpoint) replaces the old one."""
        if kind not in METRIC_KINDS:
            raise ValueError(f"metric kind must be one of {METRIC_KINDS}, not {kind!r}")
        now = time.time()
        rows = [(run_id, int(step), kind, name, float(v), now) for name, v in values.items()]
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO metrics (run_id, step, kind, name, value, time)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, kind, name, step) DO UPDATE"
                " SET value = excluded.value, time = excluded.time", rows)

    def metrics(
        self, run_id: int, kind: str | None = None, name: str | None = None,
        after_step: int | None = None,
    ) -> list[MetricPoint]:
        """Logged values in step order; `after_step` returns only newer ones (for a view
        that polls while training runs)."""
        sql, params = "SELECT step, kind, name, value, time FROM metrics WHERE run_id = ?", [
            run_id]
        for column, value in (("kind", kind), ("name", name)):
            if value is not None:
                sql, params = sql + f" AND {column} = ?", [*params, value]
        if after_step is not None:
            sql, params = sql + " AND step > ?", [*params, after_step]
        rows = self._query(sql + " ORDER BY step, rowid", params)
        return [MetricPoint(r["step"], r["kind"], r["name"],
                            math.nan if r["value"] is None else r["value"], r["time"])
                for r in rows]

    def best_dev_ppl(self, run_ids: Sequence[int] | None = None) -> dict[int, float]:
        """Run id -> the lowest dev perplexity it logged (NaN values ignored; runs that
        never validated are left out), for every run or `run_ids`, in one query."""
        sql = ("SELECT run_id, MIN(value) AS best FROM metrics WHERE kind = 'valid' "
               "AND name = 'dev_ppl' AND value IS NOT NULL")
        params: list[Any] = []
        if run_ids is not None:
            ids = [int(r) for r in run_ids]
            sql += f" AND run_id IN ({', '.join('?' * len(ids))})"
            params = ids
        return {r["run_id"]: float(r["best"])
                for r in self._query(sql + " GROUP BY run_id", params)}

    def curves(self, run_id: int, kind: str) -> dict[str, tuple[list[int], list[float]]]:
        """Metric name -> (steps, values) for one kind: ready to plot."""
        out: dict[str, tuple[list[int], list[float]]] = {}
        for m in self.metrics(run_id, kind):
            steps, values = out.setdefault(m.name, ([], []))
            steps.append(m.step)
            values.append(m.value)
        return out

    # --- checkpoints ------------------------------------------------------------------------
    def add_checkpoint(
        self, run_id: int, step: int, path: str | Path, kind: str, dev_ppl: float | None = None
    ) -> int:
        """Record a checkpoint file; the same path again (e.g. last.pt rewritten) updates
        its row."""
        if kind not in CHECKPOINT_KINDS:
            raise ValueError(f"checkpoint kind must be one of {CHECKPOINT_KINDS}, not {kind!r}")
        self._inside(str(Path(path).resolve()), f"a checkpoint of run {run_id}")
        with self._write() as conn:
            conn.execute(
                "INSERT INTO checkpoints (run_id, step, path, kind, dev_ppl, created)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, path) DO UPDATE SET"
                " step = excluded.step, kind = excluded.kind, dev_ppl = excluded.dev_ppl,"
                " created = excluded.created",
                (run_id, int(step), self._rel(path), kind, dev_ppl, time.time()))
            row = conn.execute("SELECT id FROM checkpoints WHERE run_id = ? AND path = ?",
                               (run_id, self._rel(path))).fetchone()
        return int(row[0])

    def remove_checkpoint(self, run_id: int, path: str | Path) -> None:
        """Forget the row of a checkpoint file (deleted by best-k)."""
        with self._write() as conn:
            conn.execute("DELETE FROM checkpoints WHERE run_id = ? AND path = ?",
                         (run_id, self._rel(path)))

    def sync_checkpoints(self, run_id: int) -> None:
        """Make the run's rows equal its folder: rows of missing files (or of links out of
        the workspace) go; best-*.pt and last.pt files without a row (a kill between the
        write and the row) get one."""
        folder = self.root / RUNS_DIR / str(int(run_id))
        with self._write() as conn:
            rows = conn.execute("SELECT id, path FROM checkpoints WHERE run_id = ?",
                                (run_id,)).fetchall()
            known = set()
            for r in rows:
                path = self._abs(r["path"])
                if path.is_file() and self.root in path.resolve().parents:
                    known.add(path.resolve())
                else:  # gone, or a link out of the workspace: no checkpoint of it
                    conn.execute("DELETE FROM checkpoints WHERE id = ?", (r["id"],))
            steps = conn.execute("SELECT steps FROM runs WHERE id = ?", (run_id,)).fetchone()
            for path in sorted(folder.glob("best-*.pt")) + [folder / "last.pt"]:
                if not path.is_file() or path.resolve() in known \
                        or self.root not in path.resolve().parents:
                    continue
                kind = "last" if path.name == "last.pt" else "best"
                digits = path.stem.removeprefix("best-")
                step = int(digits) if kind == "best" and digits.isdigit() else int(steps[0] or 0)
                conn.execute(
                    "INSERT OR IGNORE INTO checkpoints (run_id, step, path, kind, created)"
                    " VALUES (?, ?, ?, ?, ?)", (run_id, step, self._rel(path), kind, time.time()))

    def checkpoints(self, run_id: int, kind: str | None = None) -> list[CheckpointInfo]:
        """The run's checkpoints by step (oldest first)."""
        sql, params = "SELECT * FROM checkpoints WHERE run_id = ?", [run_id]
        if kind is not None:
            sql, params = sql + " AND kind = ?", [*params, kind]
        return [CheckpointInfo(r["id"], r["run_id"], r["step"],
                               self._inside(r["path"], f"a checkpoint of run {run_id}"), r["kind"],
                               r["dev_ppl"], r["created"])
                for r in self._query(sql + " ORDER BY step, id", params)]

    # --- evaluations and translations -------------------------------------------------------
    def add_evaluation(
        self, run_ids: int | Sequence[int], test_name: str, metrics: dict[str, Any]
    ) -> int:
        """Record scores of one run (or an ensemble: several runs) on a test set."""
        ids = [int(run_ids)] if isinstance(run_ids, int) else [int(r) for r in run_ids]
        with self._write() as conn:
            cur = conn.execute(
                "INSERT INTO evaluations (test_name, metrics, created) VALUES (?, ?, ?)",
                (test_name, json.dumps(metrics), time.time()))
            eval_id = int(cur.lastrowid)
            conn.executemany(
                "INSERT INTO evaluation_runs (evaluation_id, run_id, position) VALUES (?, ?, ?)",
                [(eval_id, r, k) for k, r in enumerate(ids)])
        return eval_id

    def evaluations(self, run_id: int | None = None) -> list[EvaluationInfo]:
        """All evaluations, or those that involve `run_id`, oldest first."""
        sql, params = "SELECT * FROM evaluations", []
        if run_id is not None:
            sql += " WHERE id IN (SELECT evaluation_id FROM evaluation_runs WHERE run_id = ?)"
            params = [run_id]
        out = []
        for r in self._query(sql + " ORDER BY id", params):
            runs = [x["run_id"] for x in self._query(
                "SELECT run_id FROM evaluation_runs WHERE evaluation_id = ? ORDER BY position",
                (r["id"],))]
            out.append(EvaluationInfo(r["id"], runs, r["test_name"],
                                      row_json(self.db_path, "evaluation", r, "metrics", dict, {}),
                                      r["created"]))
        return out

    def add_translation(self, run_id: int | None, document: str, path: str | Path) -> int:
        """Record a translated document written to `path` (usually under exports/)."""
        with self._write() as conn:
            cur = conn.execute(
                "INSERT INTO translations (run_id, document, path, created) VALUES (?, ?, ?, ?)",
                (run_id, document, self._rel(path), time.time()))
        return int(cur.lastrowid)

    def translations(self, run_id: int | None = None) -> list[TranslationInfo]:
        """The recorded translation exports (all, or of `run_id`), by id, paths resolved against
        the workspace folder."""
        sql, params = "SELECT * FROM translations", []
        if run_id is not None:
            sql, params = sql + " WHERE run_id = ?", [run_id]
        return [TranslationInfo(r["id"], r["run_id"], r["document"], self._abs(r["path"]),
                                r["created"])
                for r in self._query(sql + " ORDER BY id", params)]

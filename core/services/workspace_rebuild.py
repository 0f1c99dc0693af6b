"""`workspace rebuild`: a new database indexed from the workspace's folders, for one that
is damaged, emptied or lost (core.workspace.health refuses to open those).

The old database (with its -wal and -shm files) is moved aside to
`workspace.sqlite.damaged-<time>`, never deleted. Then every corpora/<id>/ holding its
three text files becomes a corpus row again (name, languages and reader settings from
its corpus.json; a corpus stored before those existed gets `corpus-<id>` and language
'und'), its split.json its split, and every runs/<id>/ with a run.json or a checkpoint
a run (config from run.json, else from its checkpoint) with the same id: checkpoints
from its *.pt files, steps from last.pt, the dev perplexities its best-k kept. What
only the database held is lost: training curves, evaluations, translation records.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import runlock
from core.errors import StoreError, WorkbenchError
from core.services.language_pairs import saved_languages
from core.workspace.health import check_layout
from core.workspace.paths import (
    CORPORA_DIR,
    CORPUS_META,
    DB_NAME,
    RUN_META,
    RUNS_DIR,
    apply_migrations,
    read_meta,
    resolve_workspace_dir,
    text_to_lines,
)
from core.workspace.store import Workspace

UNKNOWN_LANG = "und"  # ISO 639: undetermined


@dataclass
class RebuildReport:
    """What `rebuild_workspace` did: where the old database went, what was indexed, and
    the folders left out (with why)."""

    root: Path
    moved_to: list[Path] = field(default_factory=list)
    corpora: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def rebuild_workspace(path: str | Path | None, force: bool = False) -> RebuildReport:
    """Move the workspace's database aside and index its folders into a new one (see the
    module docstring). Refused while a run trains, and for a healthy database unless
    `force` (it would drop curves and evaluations)."""
    root = resolve_workspace_dir(path)
    if not root.is_dir():
        raise StoreError(f"{root}: no such workspace folder; give the folder that holds "
                         "corpora/ and runs/ (--workspace DIR).")
    check_layout(root)
    busy = [f for f in _numbered(root / RUNS_DIR) if runlock.is_locked(f)]
    if busy:
        raise StoreError(f"{busy[0]}: a run is training in this workspace (process "
                         f"{runlock.holder(busy[0]) or '?'}); stop it, then rebuild.")
    db = root / DB_NAME
    if db.exists() and not force and _healthy(root, db):
        raise StoreError(f"{db}: the workspace database is healthy; rebuilding would drop its "
                         "training curves, evaluations and translation records. Give --force "
                         "to rebuild it anyway.")
    report = RebuildReport(root)
    report.moved_to = _move_aside(db)
    ws = Workspace(root)  # a fresh database, filled before anything else opens it
    try:
        conn = ws._conn()
        conn.execute("PRAGMA journal_mode = WAL")
        apply_migrations(conn, db_path=db)
        for folder in _numbered(root / CORPORA_DIR):
            _index_corpus(ws, folder, report)
        for folder in _numbered(root / RUNS_DIR):
            _index_run(ws, folder, report)
    finally:
        ws.close()
    Workspace.open(root).close()  # the usual checks and recovery, on the new database
    report.notes.append("training curves (but the kept dev perplexities), evaluations and "
                        "translation records were only in the old database and are not back")
    return report


def _healthy(root: Path, db: Path) -> bool:
    try:
        Workspace.open(root, create=False).close()
    except WorkbenchError:
        return False
    return True


def _numbered(parent: Path) -> list[Path]:
    """The sub-folders of `parent` named by an id, by id."""
    if not parent.is_dir():
        return []
    return sorted((f for f in parent.iterdir() if f.is_dir() and f.name.isdigit()),
                  key=lambda f: int(f.name))


def _move_aside(db: Path) -> list[Path]:
    """Rename the database and its -wal/-shm files to `<name>.damaged-<time>[-k]`."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = f"{db.name}.damaged-{stamp}"
    k = 1
    while any((db.parent / f"{base}{s}").exists() for s in ("", "-wal", "-shm")):
        k += 1
        base = f"{db.name}.damaged-{stamp}-{k}"
    moved = []
    for suffix in ("", "-wal", "-shm"):
        old = db.parent / f"{db.name}{suffix}"
        if old.exists():
            new = db.parent / f"{base}{suffix}"
            os.replace(old, new)
            moved.append(new)
    return moved


def _count_lines(path: Path) -> int | None:
    try:
        return len(text_to_lines(path.read_bytes().decode("utf-8")))
    except (OSError, UnicodeDecodeError):
        return None


def _unique(ws: Workspace, table: str, name: str, ident: int) -> str:
    taken = {r["name"] for r in ws._query(f"SELECT name FROM {table}")}
    name = name.strip() or f"{'corpus' if table == 'corpora' else 'run'}-{ident}"
    if name.isdigit():
        name = f"{table[:-1] if table == 'runs' else 'corpus'}-{name}"
    return name if name not in taken else f"{name}-{ident}"


def _index_corpus(ws: Workspace, folder: Path, report: RebuildReport) -> None:
    """The row (and split) of the corpus stored in `folder`, when its files agree."""
    counts = {n: _count_lines(folder / n) for n in ("raw.src", "raw.tgt", "lines")}
    if None in counts.values() or len(set(counts.values())) != 1:
        report.skipped.append(f"{folder}: not a complete corpus (raw.src, raw.tgt and lines "
                              "must be there with as many lines); left as it is")
        return
    n_pairs = counts["lines"]
    meta = read_meta(folder / CORPUS_META) or {}
    if not meta:
        report.notes.append(f"{folder}: no {CORPUS_META} (stored by an older workbench): "
                            f"named corpus-{folder.name}, languages '{UNKNOWN_LANG}'; rename "
                            "it with `corpus rename`")
    cid = int(folder.name)
    docs = _count_documents(folder / "docids")
    name = _unique(ws, "corpora", str(meta.get("name") or f"corpus-{cid}"), cid)
    with ws._write() as conn:
        conn.execute(
            "INSERT INTO corpora (id, name, format, src_lang, tgt_lang, n_pairs, n_documents,"
            " created, sources, options, warnings, escaped) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " ?, ?, ?)",
            (cid, name, str(meta.get("format", "")), str(meta.get("src_lang") or UNKNOWN_LANG),
             str(meta.get("tgt_lang") or UNKNOWN_LANG), n_pairs, docs,
             _number(meta.get("created"), folder.stat().st_mtime),
             json.dumps(_typed(meta.get("sources"), list)),
             json.dumps(_typed(meta.get("options"), dict)),
             json.dumps(_typed(meta.get("warnings"), list)), int(bool(meta.get("escaped")))))
    report.corpora.append(f"{cid} {name!r} ({n_pairs} pairs)")
    _index_split(ws, cid, folder, report)


def _count_documents(path: Path) -> int:
    try:
        ids = {d for d in text_to_lines(path.read_text(encoding="utf-8")) if d}
    except (OSError, UnicodeDecodeError):
        return 0
    return len(ids)


def _typed(value: Any, kind: type) -> Any:
    return value if isinstance(value, kind) else kind()


def _number(value: Any, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else default


def _index_split(ws: Workspace, cid: int, folder: Path, report: RebuildReport) -> None:
    path = folder / "split.json"
    if not path.exists():
        return
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
        seed, ratios = int(payload["seed"]), [float(r) for r in payload["ratios"]]
        sizes = {str(k): len(v) for k, v in payload["assignment"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        report.notes.append(f"{path}: not a readable split ({exc}); the corpus has none now, "
                            "split it again")
        return
    with ws._write() as conn:
        conn.execute("INSERT INTO corpus_splits (corpus_id, seed, ratios, sizes, path, created)"
                     " VALUES (?, ?, ?, ?, ?, ?)", (cid, seed, json.dumps(ratios),
                                                     json.dumps(sizes), ws._rel(path),
                                                     path.stat().st_mtime))


def _checkpoint(folder: Path) -> dict[str, Any] | None:
    """The newest readable checkpoint of the run in `folder` (last.pt, else the newest
    best-*.pt), or None."""
    # lazy: a top-level import would load numpy, torch
    from core.train.checkpoint import load_checkpoint

    for path in [folder / "last.pt", *sorted(folder.glob("best-*.pt"), reverse=True)]:
        if path.is_file():
            try:
                state = load_checkpoint(path)
            except (WorkbenchError, OSError, RuntimeError, ValueError):
                continue
            if isinstance(state, dict) and isinstance(state.get("config"), dict):
                return state
    return None


def _index_run(ws: Workspace, folder: Path, report: RebuildReport) -> None:
    """The row, checkpoints and kept dev perplexities of the run stored in `folder`."""
    meta = read_meta(folder / RUN_META) or {}
    state = _checkpoint(folder)
    config = meta.get("config") if isinstance(meta.get("config"), dict) else None
    if config is None and state is not None:
        config = state["config"]
    if config is None:
        report.skipped.append(f"{folder}: neither {RUN_META} nor a readable checkpoint says "
                              "what run it is; left as it is")
        return
    rid = int(folder.name)
    name = _unique(ws, "runs", str(meta.get("name") or config.get("name") or ""), rid)
    corpus_id = _run_corpus(ws, meta, folder, report)
    position = state.get("position", {}) if state is not None else {}
    steps = int(position.get("step", 0)) if isinstance(position, dict) else 0
    max_steps = int(config.get("train", {}).get("max_steps", 0) or 0)
    status = ("queued" if state is None else
              "finished" if max_steps and steps >= max_steps else "interrupted")
    error = "" if status != "interrupted" else (
        f"re-indexed by `workspace rebuild`; resume it with `train --resume {name}`")
    with ws._write() as conn:
        conn.execute(
            "INSERT INTO runs (id, name, family, config, corpus_id, status, error, created,"
            " steps, elapsed_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (rid, name, str(config.get("model", {}).get("family", "")), json.dumps(config),
             corpus_id, status, error, _number(meta.get("created"), folder.stat().st_mtime),
             steps, _number(position.get("seconds") if isinstance(position, dict) else None,
                            0.0)))
    ws.sync_checkpoints(rid)
    _restore_best(ws, rid, folder, state)
    report.runs.append(f"{rid} {name!r} ({status}, {steps} steps)")


def _run_corpus(ws: Workspace, meta: dict[str, Any], folder: Path,
                report: RebuildReport) -> int | None:
    """The run's corpus: the one its RUN_META names (by id, else by name), else the
    workspace's only corpus when its languages are those the run's preprocess.json was
    saved with, else none (said in the report)."""
    rows = ws._query("SELECT id, name, src_lang, tgt_lang FROM corpora")
    corpora = {r["id"]: r["name"] for r in rows}
    cid = meta.get("corpus_id")
    if isinstance(cid, int) and cid in corpora:
        return cid
    by_name = [i for i, n in corpora.items() if n == meta.get("corpus")]
    if by_name:
        return by_name[0]
    langs = saved_languages(folder)
    if len(rows) == 1 and langs == (rows[0]["src_lang"], rows[0]["tgt_lang"]):
        return rows[0]["id"]
    why = "which corpus it was trained on is not known"
    if len(rows) == 1:
        run = "->".join(langs) if langs else "of languages not known (no preprocess.json)"
        why = (f"its corpus is not in the workspace, and the only corpus, {rows[0]['name']!r}, "
               f"is {rows[0]['src_lang']}->{rows[0]['tgt_lang']} while the run is {run}")
    report.notes.append(f"{folder}: {why}; it keeps its checkpoints and translates, but "
                        "cannot be resumed or evaluated on a corpus split")
    return None


def _restore_best(ws: Workspace, rid: int, folder: Path, state: dict[str, Any] | None) -> None:
    """The dev perplexities the checkpoint's best-k list kept: on their checkpoint rows and
    as the run's 'valid' dev_ppl curve points."""
    if state is None:
        return
    # lazy: a top-level import would load numpy, torch
    from core.train.checkpoint import best_entries

    try:
        entries = best_entries(state.get("best", []), folder, folder / "last.pt")
    except WorkbenchError:
        return
    for dev_ppl, step, file_name in entries:
        ws.log_metrics(rid, step, "valid", {"dev_ppl": dev_ppl})
        with ws._write() as conn:
            conn.execute("UPDATE checkpoints SET dev_ppl = ? WHERE run_id = ? AND path = ?",
                         (dev_ppl, rid, ws._rel(folder / file_name)))

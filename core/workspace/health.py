"""Whether a workspace's database can be trusted, checked before anything is written.

`Workspace.open` runs `check_layout` and `check_database`: a database that is damaged
(PRAGMA quick_check), emptied or lost while corpora/ and runs/ still hold data, missing
tables of its schema version, or holding tables of a later version than it says, is
refused with a message saying what happened and how to recover (`workspace rebuild`,
core.services.workspace_rebuild, re-indexes the folders). Refusing at open means no command
writes into a damaged database, and no new corpus or run takes the id, and so the
folder, of one the database has lost. `row_json` and `row_number` read a row's fields,
naming the row when one was changed outside the workbench.
"""
from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from core.errors import StoreError
from core.workspace.paths import (
    CORPORA_DIR,
    EXPORTS_DIR,
    LATEST_VERSION,
    MIGRATIONS,
    RUNS_DIR,
    VERSION_NOTES,
    schema_version,
)

CORRUPT_CODES = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def rebuild_hint(root: Path) -> str:
    """How to re-index a workspace whose database is lost: the command that does it."""
    return (f"re-index its corpora and runs from their folders with `nmt-workbench "
            f"--workspace {root} workspace rebuild` (it moves the old database aside, "
            "never deletes it)")


def is_corrupt(exc: BaseException) -> bool:
    """True when `exc` is SQLite saying the database file is damaged or not one."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    return isinstance(exc, sqlite3.DatabaseError) and code in CORRUPT_CODES


def damaged(db: Path, detail: str) -> StoreError:
    """The refusal of a damaged database `db`: what SQLite found, and the two ways out."""
    return StoreError(f"{db}: the workspace database is damaged ({detail}); nothing was "
                      f"written to it. Restore it from a backup, or {rebuild_hint(db.parent)}.")


def data_folders(root: Path) -> list[Path]:
    """The corpora/<id>/ and runs/<id>/ folders under `root` that hold files: what a
    database that lost its rows would otherwise hand out again as new ids."""
    found = []
    for sub in (CORPORA_DIR, RUNS_DIR):
        parent = root / sub
        if not parent.is_dir():
            continue
        for folder in sorted(parent.iterdir()):
            if folder.is_dir() and folder.name.isdigit() and any(folder.iterdir()):
                found.append(folder)
    return found


def describe_folders(root: Path, folders: list[Path]) -> str:
    """'2 corpus folders and 1 run folder (corpora/1, corpora/2, runs/1)'."""
    n_corpora = sum(f.parent.name == CORPORA_DIR for f in folders)
    n_runs = len(folders) - n_corpora
    names = [f.relative_to(root).as_posix() for f in folders]
    shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    return (f"{n_corpora} corpus folder{'s' * (n_corpora != 1)} and {n_runs} run "
            f"folder{'s' * (n_runs != 1)} ({shown})")


def check_layout(root: Path) -> None:
    """Refuse a workspace whose corpora/, runs/ or exports/ is a file, not a folder."""
    for sub in (CORPORA_DIR, RUNS_DIR, EXPORTS_DIR):
        path = root / sub
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path}: is a file, but the workspace keeps its {sub} in a "
                             "folder of that name; move or rename the file, then open the "
                             "workspace again.")


def check_missing_database(root: Path, db: Path) -> None:
    """Refuse to make a new database in a folder whose corpora/ or runs/ hold data: the
    old one was deleted or moved, and a new one would reuse their ids."""
    folders = data_folders(root)
    if folders:
        raise StoreError(f"{db}: the workspace database is missing, but the folder holds "
                         f"{describe_folders(root, folders)}; nothing was changed. Put the "
                         f"database back (from a backup), or {rebuild_hint(root)}.")


def check_database(conn: sqlite3.Connection, root: Path, db: Path) -> None:
    """Refuse a database that is damaged, emptied beside data, or whose tables do not
    match its schema version (see the module docstring). Reads only."""
    quick_check(conn, db)
    tables = table_names(conn)
    version = schema_version(conn)
    if version == 0 and not tables:
        folders = data_folders(root)
        if folders:
            size = db.stat().st_size if db.exists() else 0
            raise StoreError(
                f"{db}: the workspace database is empty ({size} bytes, no tables), but the "
                f"folder holds {describe_folders(root, folders)}: the database was emptied "
                "or replaced. Nothing was changed. Restore it from a backup, or "
                f"{rebuild_hint(root)}.")
        return
    if 0 <= version <= LATEST_VERSION:
        check_tables(tables, version, db)


def quick_check(conn: sqlite3.Connection, db: Path) -> None:
    """SQLite's quick structural check of every page; StoreError (damaged) on a problem."""
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        if is_corrupt(exc):
            raise damaged(db, str(exc)) from exc
        raise
    problems = [str(r[0]) for r in rows if str(r[0]) != "ok"]
    if problems:
        first = " ".join(problems[0].split())
        more = f"; and {len(problems) - 1} more" if len(problems) > 1 else ""
        raise damaged(db, f"PRAGMA quick_check: {first}{more}")


def table_names(conn: sqlite3.Connection) -> set[str]:
    """The database's own tables (SQLite's internal sqlite_* ones left out)."""
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT "
                        "LIKE 'sqlite_%'").fetchall()
    return {str(r[0]) for r in rows}


def tables_of(version: int) -> dict[str, int]:
    """Table name -> the schema version that made it, for the tables up to `version`."""
    made: dict[str, int] = {}
    for k, statements in enumerate(MIGRATIONS[:version], start=1):
        for statement in statements:
            match = re.match(r"\s*CREATE TABLE (\w+)", statement)
            if match:
                made[match.group(1)] = k
    return made


def check_tables(tables: set[str], version: int, db: Path) -> None:
    """StoreError when a table of schema `version` is missing, or a table of a later
    version is there already (the version number was changed outside the workbench)."""
    expected = tables_of(version)
    missing = sorted(set(expected) - tables)
    if missing:
        raise StoreError(
            f"{db}: the workspace database lacks table{'s' * (len(missing) > 1)} "
            f"{', '.join(missing)}, which its schema version {version} has; it was changed "
            f"outside the workbench. Nothing was written to it. Restore it from a backup, "
            f"or {rebuild_hint(db.parent)}.")
    later = {name: k for name, k in tables_of(LATEST_VERSION).items()
             if name in tables and name not in expected}
    if later:
        shown = max(later.values())
        meaning = "; ".join(f"{k} {VERSION_NOTES[k]}" for k in sorted(VERSION_NOTES))
        raise StoreError(
            f"{db}: the workspace database says schema version {version} (PRAGMA "
            f"user_version, the number of schema steps applied: {meaning}), but it already "
            f"holds table{'s' * (len(later) > 1)} {', '.join(sorted(later))} of version "
            f"{shown}: the number was changed outside the workbench. Nothing was written to "
            f"it. If only the number changed, set it back with `sqlite3 {db} \"PRAGMA "
            f"user_version = {shown}\"`; otherwise restore a backup, or "
            f"{rebuild_hint(db.parent)}.")


# --- a row's fields ----------------------------------------------------------------------
def damaged_row(db: Path, what: str, row: sqlite3.Row, column: str, detail: str) -> StoreError:
    """A row whose field was changed outside the workbench: which row, which field."""
    name = f" {row['name']!r}" if "name" in row.keys() else ""
    return StoreError(f"{db}: {what} {row['id']}{name}: its {column} field is damaged ({detail}); "
                      "the database was changed outside the workbench. Restore it from a "
                      f"backup, or {rebuild_hint(db.parent)}.")


def row_json(db: Path, what: str, row: sqlite3.Row, column: str, kind: type,
             default: Any) -> Any:
    """Field `column` of `row` (of a `what`: 'corpus', 'run', ...) read as JSON of type
    `kind` (dict or list); `default` when NULL."""
    text = row[column]
    if text is None:
        return default
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise damaged_row(db, what, row, column, f"not JSON: {exc}") from None
    if not isinstance(value, kind):
        wanted = "an object" if kind is dict else "a list"
        raise damaged_row(db, what, row, column, f"{text[:40]!r} is not {wanted}")
    return value


def row_number(db: Path, what: str, row: sqlite3.Row, column: str, kind: type = int,
               optional: bool = False) -> Any:
    """Field `column` of `row` as a number of type `kind` (int or float); None when NULL
    and `optional`."""
    value = row[column]
    if value is None and optional:
        return None
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        ok = ok and float(value).is_integer()
    if not ok:
        raise damaged_row(db, what, row, column, f"{value!r} is not a number")
    return kind(value)

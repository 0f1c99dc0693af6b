"""The on-disk format of a workspace: where it lives, its folder layout, how corpus
files are encoded, and the database schema with its forward migrations.

A workspace is a folder holding `workspace.sqlite` (the index: corpora, runs, metrics,
checkpoints, evaluations, translations) and the files the rows point to:

    workspace.sqlite
    corpora/<id>/raw.src, raw.tgt, lines, docids (optional), split.json (optional),
                 corpus.json (its row: name, languages, format, ...),
                 alignments/<sha256>.pharaoh (eflomal links: guided alignment, shortlists)
    runs/<id>/        checkpoints, vocabularies, logs of one training run; run.json (its
                      name, corpus and config); shortlist.npz (its lexical shortlist's
                      link counts, core.services.shortlist_store)
    exports/          files the user exported (translations, TMX, tables)
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from platformdirs import user_data_dir

from core.atomic import write_text_atomic
from core.data.corpus import Corpus, SentencePair
from core.errors import StoreError
from core.safepath import inside

APP_NAME = "nmt-workbench"
DB_NAME = "workspace.sqlite"
CORPORA_DIR = "corpora"
RUNS_DIR = "runs"
EXPORTS_DIR = "exports"
CORPUS_META = "corpus.json"  # a corpus's row, beside its files: `workspace rebuild` reads it
RUN_META = "run.json"  # a run's name, corpus and config, beside its checkpoints
IMPORTING = ".importing"  # in a corpus folder while its import has not committed
#: written into an installed bundled run's folder: its training corpus is not in the
#: workspace (the demo corpus it is attached to is not what it was trained on)
BUNDLED_MARK = "bundled.txt"


def default_workspace_dir() -> Path:
    """The per-user workspace used when no `--workspace DIR` is given."""
    return Path(user_data_dir(APP_NAME)) / "workspace"


def resolve_workspace_dir(path: str | Path | None) -> Path:
    """The folder the user asked for (`~` expanded), or the per-user default."""
    if path is None or str(path) == "":
        return default_workspace_dir()
    return Path(path).expanduser()


# --- corpus files ---------------------------------------------------------------------
# raw.src / raw.tgt hold one segment per line, UTF-8, so they open in any editor. A
# segment holding a line break (possible in TMX) cannot be one line: then the whole
# corpus is stored escaped (backslash, \n, \r) and the row says so.

_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {"\\": "\\", "n": "\n", "r": "\r"}


def needs_escaping(segments: list[str]) -> bool:
    """True when a segment holds a line break (LF or CR), which the line-based corpus
    files must escape."""
    return any("\n" in s or "\r" in s for s in segments)


def escape_segment(text: str) -> str:
    """`text` with backslash, LF and CR written as backslash escapes (_ESCAPES)."""
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def unescape_segment(text: str) -> str:
    """The inverse of escape_segment; an unknown escape keeps its backslash."""
    if "\\" not in text:
        return text
    out: list[str] = []
    chars = iter(text)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            out.append(_UNESCAPES.get(nxt, "\\" + nxt))
        else:
            out.append(ch)
    return "".join(out)


def lines_to_text(lines: list[str]) -> str:
    """One item per line, each ended by '\\n' (an empty list gives '')."""
    return "".join(line + "\n" for line in lines)


def text_to_lines(text: str) -> list[str]:
    """Inverse of `lines_to_text`. Splits on '\\n' only: other separators that
    str.splitlines knows (U+2028, \\x0b, ...) are ordinary characters of a segment."""
    if not text:
        return []
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n")


# --- schema -----------------------------------------------------------------------------
# MIGRATIONS[k] takes the database from schema version k to k + 1. Never edit a released
# migration: append one. Enumerations are checked in Python, not by CHECK constraints,
# so adding a status never needs SQLite's table-rebuild dance.

# Version 1: corpora, their splits, runs and what training writes about them.
_V1 = (
    """CREATE TABLE corpora (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        name        TEXT NOT NULL UNIQUE,
        format      TEXT NOT NULL,
        src_lang    TEXT NOT NULL,
        tgt_lang    TEXT NOT NULL,
        n_pairs     INTEGER NOT NULL,
        n_documents INTEGER NOT NULL DEFAULT 0,
        created     REAL NOT NULL,
        sources     TEXT NOT NULL DEFAULT '[]',  -- JSON list of the files read
        options     TEXT NOT NULL DEFAULT '{}',  -- JSON reader options
        warnings    TEXT NOT NULL DEFAULT '[]',  -- JSON list of reader warnings
        escaped     INTEGER NOT NULL DEFAULT 0   -- 1: raw.* backslash-escape newlines
    )""",
    """CREATE TABLE corpus_splits (
        corpus_id INTEGER PRIMARY KEY REFERENCES corpora(id) ON DELETE CASCADE,
        seed      INTEGER NOT NULL,
        ratios    TEXT NOT NULL,  -- JSON list of floats
        sizes     TEXT NOT NULL,  -- JSON {split name: n pairs}
        path      TEXT NOT NULL,  -- JSON file with the assignment, workspace-relative
        created   REAL NOT NULL
    )""",
    """CREATE TABLE runs (
        id        INTEGER PRIMARY KEY AUTOINCREMENT,
        name      TEXT NOT NULL UNIQUE,
        family    TEXT NOT NULL DEFAULT '',
        config    TEXT NOT NULL,  -- JSON RunConfig.to_dict()
        corpus_id INTEGER REFERENCES corpora(id) ON DELETE RESTRICT,
        status    TEXT NOT NULL DEFAULT 'queued',
        device    TEXT NOT NULL DEFAULT '',
        error     TEXT NOT NULL DEFAULT '',
        created   REAL NOT NULL,
        started   REAL,
        finished  REAL,
        steps     INTEGER NOT NULL DEFAULT 0,
        elapsed_s REAL NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX runs_by_corpus ON runs(corpus_id)",
    "CREATE INDEX runs_by_status ON runs(status)",
    # value is NULL for NaN (SQLite stores NaN as NULL); unique per step from version 3.
    """CREATE TABLE metrics (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        step   INTEGER NOT NULL,
        kind   TEXT NOT NULL,
        name   TEXT NOT NULL,
        value  REAL,
        time   REAL NOT NULL
    )""",
    "CREATE INDEX metrics_by_run ON metrics(run_id, kind, name, step)",
    """CREATE TABLE checkpoints (
        id      INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        step    INTEGER NOT NULL,
        path    TEXT NOT NULL,  -- workspace-relative when inside the workspace
        kind    TEXT NOT NULL,
        dev_ppl REAL,
        created REAL NOT NULL,
        UNIQUE (run_id, path)
    )""",
    "CREATE INDEX checkpoints_by_run ON checkpoints(run_id, kind, step)",
)

# Version 2: what is done with trained runs (evaluations, translated documents).
_V2 = (
    """CREATE TABLE evaluations (
        id        INTEGER PRIMARY KEY AUTOINCREMENT,
        test_name TEXT NOT NULL,
        metrics   TEXT NOT NULL,  -- JSON {metric: value}
        created   REAL NOT NULL
    )""",
    # An evaluation of an ensemble names several runs.
    """CREATE TABLE evaluation_runs (
        evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
        run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        position      INTEGER NOT NULL,
        PRIMARY KEY (evaluation_id, run_id)
    )""",
    "CREATE INDEX evaluation_runs_by_run ON evaluation_runs(run_id)",
    """CREATE TABLE translations (
        id       INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id   INTEGER REFERENCES runs(id) ON DELETE SET NULL,
        document TEXT NOT NULL,
        path     TEXT NOT NULL,
        created  REAL NOT NULL
    )""",
    "CREATE INDEX translations_by_run ON translations(run_id)",
)

# Version 3: one metric value per (run, kind, name, step). A resumed run repeats the
# steps after its last checkpoint; those rows now replace the killed run's, not add to
# them. Older duplicates keep their newest row.
_V3 = (
    """DELETE FROM metrics WHERE rowid NOT IN (
        SELECT MAX(rowid) FROM metrics GROUP BY run_id, kind, name, step)""",
    "DROP INDEX metrics_by_run",
    "CREATE UNIQUE INDEX metrics_by_run ON metrics(run_id, kind, name, step)",
)

MIGRATIONS: list[tuple[str, ...]] = [_V1, _V2, _V3]
LATEST_VERSION = len(MIGRATIONS)
# What each schema version (PRAGMA user_version: how many MIGRATIONS were applied) brought.
VERSION_NOTES = {1: "corpora, splits, runs, metrics and checkpoints",
                 2: "evaluations and translations", 3: "one metric value per step"}



def schema_version(conn: sqlite3.Connection) -> int:
    """The database's schema version (PRAGMA user_version) on `conn`."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def apply_migrations(
    conn: sqlite3.Connection, target: int = LATEST_VERSION, db_path: str | Path = "<db>"
) -> int:
    """Bring the database to schema `target`, one migration per transaction.

    `conn` must be in autocommit mode (isolation_level=None). Safe when two processes
    open an old workspace at once: the version is re-read inside the write lock.
    Returns the version reached.
    """
    version = schema_version(conn)
    if version > LATEST_VERSION:
        raise StoreError(
            f"{db_path}: this workspace was written by a newer NMT Workbench "
            f"(schema version {version}; this version knows up to {LATEST_VERSION}). "
            "Upgrade the workbench to open it."
        )
    while version < target:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = schema_version(conn)
            if version < target:
                for statement in MIGRATIONS[version]:
                    conn.execute(statement)
                version += 1
                conn.execute(f"PRAGMA user_version = {version:d}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return version


def write_meta(path: Path, meta: dict) -> None:
    """A corpus's or run's record (CORPUS_META, RUN_META) as JSON beside its files,
    written atomically: what `workspace rebuild` indexes when the database is lost."""
    write_text_atomic(path, json.dumps(meta, ensure_ascii=False, indent=1))


def read_meta(path: Path) -> dict | None:
    """The record `write_meta` wrote, or None when it is missing or not a JSON object."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


# --- a corpus as files -------------------------------------------------------------------


def corpus_needs_escaping(corpus: Corpus) -> bool:
    """True when any source or target segment of `corpus` holds a line break."""
    return needs_escaping([p.src for p in corpus.pairs]) or needs_escaping(
        [p.tgt for p in corpus.pairs])


def write_corpus_files(folder: Path, corpus: Corpus, escaped: bool) -> None:
    """raw.src, raw.tgt, lines (origin line numbers) and, when any pair has a document,
    docids (an empty line: no document) in `folder`, each written atomically."""
    enc = escape_segment if escaped else (lambda s: s)
    pairs = corpus.pairs
    write_text_atomic(folder / "raw.src", lines_to_text([enc(p.src) for p in pairs]))
    write_text_atomic(folder / "raw.tgt", lines_to_text([enc(p.tgt) for p in pairs]))
    write_text_atomic(folder / "lines", lines_to_text([str(p.line) for p in pairs]))
    if any(p.doc_id is not None for p in pairs):
        write_text_atomic(folder / "docids",
                          lines_to_text([escape_segment(p.doc_id or "") for p in pairs]))


def corpus_files_size(corpus: Corpus) -> int:
    """About the bytes `write_corpus_files` writes for `corpus` (for 'space needed')."""
    return sum(len(p.src.encode("utf-8", "replace")) + len(p.tgt.encode("utf-8", "replace"))
               + len(str(p.line)) + len(p.doc_id or "") + 4 for p in corpus.pairs)


def read_corpus_files(folder: Path, n_pairs: int, escaped: bool) -> list[SentencePair]:
    """The pairs `write_corpus_files` wrote; StoreError when files are missing or do not
    hold `n_pairs` lines."""

    def read(name: str) -> list[str]:
        path = inside(folder, name, "corpus file", StoreError, bare=True)  # no link out
        try:
            lines = text_to_lines(path.read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"{path}: cannot read the stored corpus ({exc}); delete the "
                             "corpus from the workspace and import it again.") from exc
        if len(lines) != n_pairs:
            raise StoreError(f"{path}: holds {len(lines)} lines, the workspace expects "
                             f"{n_pairs}; delete the corpus and import it again.")
        return lines

    dec = unescape_segment if escaped else (lambda s: s)
    src, tgt, lines = read("raw.src"), read("raw.tgt"), read("lines")
    docs: list[str | None] = [None] * n_pairs
    if (folder / "docids").exists():
        docs = [unescape_segment(d) or None for d in read("docids")]
    return [SentencePair(dec(s), dec(t), d, int(n))
            for s, t, d, n in zip(src, tgt, docs, lines, strict=True)]

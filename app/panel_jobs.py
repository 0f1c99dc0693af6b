"""Job functions of the Corpora screen, the Attention screen's "Choose readings" and
File -> Import model: thin Qt-free calls of core.services that the screens submit to the
JobManager (app/workers.py), so no screen reads or writes a file on the GUI thread.

Each is `fn(*args, ctx: JobContext)`; it runs on a worker thread and returns what the
screen shows. The translation, attention and evaluation jobs are in app/core_jobs.py.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.config import RunConfig
from core.data.langid import ColumnGuess, guess_tsv_columns
from core.errors import ConfigError, OutputError, WorkbenchError
from core.evaluate.report import Table
from core.formats.records import TranslationRecord
from core.jobs import JobContext
from core.services.corpora import corpus_statistics, import_corpus, split_and_store
from core.workspace.store import Workspace


# --- Corpora screen ----------------------------------------------------------------------------
def import_job(fmt: str, paths: list[str], src_lang: str, tgt_lang: str,
               options: dict[str, Any], name: str, workspace: Workspace,
               ctx: JobContext) -> int:
    """core.services.corpora.import_corpus; returns the new corpus's id."""
    return import_corpus(workspace, fmt, paths, src_lang, tgt_lang, name, options, ctx)


def load_job(workspace: Workspace, corpus_id: int, ctx: JobContext) -> tuple[Any, Any]:
    """(corpus, statistics) of corpus `corpus_id` (core.services.corpora.corpus_statistics)."""
    return corpus_statistics(workspace, corpus_id)


def split_job(workspace: Workspace, corpus_id: int, seed: int,
              ratios: tuple[float, float, float], ctx: JobContext | None = None) -> dict[str, int]:
    """core.services.corpora.split_and_store; returns {set name: pairs} of the split."""
    return {k: len(v) for k, v in split_and_store(workspace, corpus_id, seed, ratios).items()}


PREVIEW_LINES = 8  # lines the import dialog previews


@dataclass(frozen=True)
class ImportPreview:
    """What the import dialog shows of its first file: `lines` (its first lines, or
    why it cannot be read) and, for a TSV file, `guess` (which column holds which
    language; None when not guessed)."""

    lines: list[str] | str
    guess: ColumnGuess | None = None


def first_lines(path: str, n: int = PREVIEW_LINES) -> list[str] | str:
    """The first `n` lines of `path` (undecodable bytes replaced), or why it cannot
    be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = [next(handle, None) for _ in range(n)]
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror}"
    return [line.rstrip("\r\n") for line in lines if line is not None]


def preview_job(path: str, tsv_languages: tuple[str, str] | None,
                columns: tuple[int, int], ctx: JobContext) -> ImportPreview:
    """The import dialog's preview of `path`; with `tsv_languages` (source, target) the
    TSV columns guessed too (core.data.langid.guess_tsv_columns; `columns`, the
    dialog's current (source, target) columns, kept when the text does not tell)."""
    lines = first_lines(path)
    guess = None
    if tsv_languages is not None and all(tsv_languages) and Path(path).is_file():
        try:
            guess = guess_tsv_columns(path, *tsv_languages, default=columns)
        except OSError:
            guess = None  # the preview says why it cannot be read
    return ImportPreview(lines, guess)


# --- Training screen ------------------------------------------------------------------------------
def create_run_job(ws: Workspace, corpus_id: int, config: RunConfig, ctx: JobContext) -> int:
    """A queued run of `config` on corpus `corpus_id` (core.services.training.create_run:
    the device, memory and the corpus's split checked); returns its id."""
    from core.services.training import create_run

    return create_run(ws, corpus_id, config)


def alignment_head_run_job(ws: Workspace, run_id: int, ctx: JobContext) -> int:
    """A queued run training an alignment head over finished run `run_id`
    (core.services.training.alignment_head_config); returns its id."""
    from core.services.training import alignment_head_config, create_run

    corpus_id, config = alignment_head_config(ws, run_id)
    return create_run(ws, corpus_id, config, config.name)


# --- files the screens write ----------------------------------------------------------------------
def _as_output_error(exc: OSError | ValueError) -> OutputError:
    """A failed write as the user's error: its message shown as it is, no traceback."""
    return exc if isinstance(exc, OutputError) else OutputError(str(exc))


def export_translation_job(ws: Workspace | None, path: str | Path,
                           records: Sequence[TranslationRecord], ctx: JobContext,
                           **options: Any) -> list[Path]:
    """The Translate screen's export: core.services.translation.export(ws, path,
    records, **options) (the file written, the export noted in the workspace); -> the
    files written. A file that cannot be written raises OutputError."""
    from core.services.translation import export

    ctx.progress(0, 1, f"writing {Path(path).name}")
    try:
        return export(ws, path, records, **options)
    except (OSError, ValueError) as exc:
        if isinstance(exc, WorkbenchError):
            raise
        raise _as_output_error(exc) from exc


def write_report_job(path: str | Path, tables: list[Table], figures: list[tuple[str, bytes]],
                     title: str, decoding: dict[str, dict | None], ctx: JobContext) -> Path:
    """The Evaluation screen's HTML report (core.evaluate.report.write_html_report: the
    tables, the figures as PNG bytes rendered on the GUI thread); -> its path. A file
    that cannot be written raises OutputError."""
    from core.evaluate.report import write_html_report

    try:
        return write_html_report(Path(path), tables, figures=figures, title=title,
                                 decoding=decoding)
    except OSError as exc:
        raise _as_output_error(exc) from exc


# --- Attention screen ----------------------------------------------------------------------------
def choose_readings_job(ws: Workspace, run_ids: list[int], ctx: JobContext) -> list[str]:
    """Store each run's reading chosen by anchor words
    (core.services.reading_anchors.choose_by_anchors); -> one line per run: the reading
    and its share of anchors, or why the run was left as it was."""
    from core.services.reading_anchors import choose_by_anchors

    lines = []
    for run_id in run_ids:
        name = ws.get_run(run_id).name
        try:
            best, table, total = choose_by_anchors(ws, run_id, ctx=ctx)
        except ConfigError as exc:
            lines.append(f"{name}: unchanged ({exc})")
            continue
        lines.append(f"{name}: '{best}' ({100 * table[best]:.0f} % of {total} anchor words "
                     "linked)")
    return lines


# --- File -> Import model ------------------------------------------------------------------------
def import_model_job(ws: Workspace, path: str, name: str,
                     languages: tuple[str, str] | None, ctx: JobContext) -> int:
    """Import the model at `path` as run `name` translating `languages` (source, target;
    None: as its files say; core.services.model_import); returns the run's id."""
    from core.services.model_import import import_model

    ctx.progress(0, 1, f"importing {Path(path).name}")
    run_id = import_model(ws, path, name, languages)
    ctx.progress(1, 1, "imported")
    return run_id

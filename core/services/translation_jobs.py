"""Translation as the Translate screen runs it, one job each (`fn(*args, ctx)` on a
worker thread of app/workers.py): a document read, sentences translated by the run(s)
or beside a baseline run, the result exported; and the lines both fronts say before a
translation runs (`decoding_lines`: the `translate` command prints them, the screen's
job logs them). What they compute is core.services.translation's.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import OutputError, WorkbenchError
from core.formats.records import TranslationRecord
from core.infer.decoding import decoding_settings, searched_alpha
from core.jobs import JobContext
from core.services import translation
from core.services.shortlist_store import load_shortlist
from core.services.translation import SessionCache
from core.workspace.store import Workspace

if TYPE_CHECKING:  # annotations only: importing the session would load torch
    from core.infer.session import TranslationSession


def decoding_lines(session: TranslationSession,
                   target_context: bool = False, amp: bool | None = None,
                   int8: bool | None = None, beam: int = 5,
                   length_penalty: float | None = None) -> list[str]:
    """What a translation says before it runs: 'decoding: <the arithmetic>' ('int8 (x86
    engine, ...)', 'bf16 autocast' or 'fp32'; `amp`, `int8`: None for the session's own
    settings), 'beam length penalty: alpha A' where a search at `beam` applies one
    (core.infer.decoding.searched_alpha; `length_penalty` None: the session's), and, with
    `target_context` on a context model whose vocabularies are
    separate, 'note: <how its own translations become context>'."""
    lines = [f"decoding: {session.path_text(amp, int8)}"]
    alpha = searched_alpha(session, beam, length_penalty)
    if alpha:
        lines.append(f"beam length penalty: alpha {alpha:g}")
    note = session.target_context_note() if target_context and session.is_context_model \
        else None
    return lines + ([f"note: {note}"] if note else [])


def read_document_job(path: str | Path, lang: str, ctx: JobContext) -> translation.Document:
    """A document file as paragraphs of sentences (translation.read_document), read in a
    job: a big .docx takes seconds to parse and split."""
    ctx.progress(0, 1, f"reading {Path(path).name}")
    return translation.read_document(path, lang)


def translate_job(ws: Workspace, cache: SessionCache, run_ids: Sequence[int], sentences: list[str],
                  beam: int, unk_replace: bool, ctx: JobContext,
                  target_context: bool = False, amp: bool = False,
                  shortlist: bool = False, int8: bool = False,
                  doc_ids: Sequence[str | None] | None = None,
                  length_penalty: float | None = None) -> list[Any]:
    """Translate `sentences` with the run(s) (several = an ensemble); a context model
    reads them as one document (each of its `doc_ids` apart: an XLIFF of several
    documents, translation.translate_apart), with `target_context` seeing its own previous
    translations as context instead of the previous source sentences; `amp`: in bf16
    where the CPU has it; `shortlist`: over the first run's lexical shortlist (built
    from its training split on first use); `int8`: int8 products (core.models.int8);
    `length_penalty`: the beam's alpha for this job (None: the run's own)."""
    session = cache.get(ws, run_ids)
    ctx.emit("log", message=f"loaded {', '.join(session.names)}")
    lexicon = _shortlist(ws, run_ids[0], ctx) if shortlist else None
    _emit_decoding(ctx, session, beam, unk_replace, target_context, amp, lexicon, int8,
                   length_penalty)
    return translation.translate_apart(session, sentences, doc_ids, beam=beam,
                                       unk_replace=unk_replace, ctx=ctx,
                                       target_context=target_context, amp=amp,
                                       shortlist=lexicon, int8=int8,
                                       length_penalty=length_penalty)


def compare_job(ws: Workspace, cache: SessionCache, run_ids: Sequence[int], baseline_id: int,
                sentences: list[str], beam: int, unk_replace: bool, ctx: JobContext,
                target_context: bool = False, amp: bool = False,
                shortlist: bool = False, int8: bool = False,
                doc_ids: Sequence[str | None] | None = None,
                length_penalty: float | None = None) -> translation.Comparison:
    """The run(s) and a baseline run on the same sentences (translation.compare: a
    baseline of another language pair than the first run's is a ConfigError), each of
    `doc_ids` apart as translate_job reads them; with `shortlist`, each over its own
    run's shortlist."""
    # lazy: alignment_runs loads the aligners' modules
    from core.services.alignment_runs import run_languages

    run, base = ws.get_run(run_ids[0]), ws.get_run(baseline_id)
    pairs = (run_languages(ws, run), run_languages(ws, base))
    translation.check_baseline_pair(pairs, (run.name, base.name))  # before a model loads
    lists = ((_shortlist(ws, run_ids[0], ctx), _shortlist(ws, baseline_id, ctx))
             if shortlist else (None, None))
    session = cache.get(ws, run_ids)
    _emit_decoding(ctx, session, beam, unk_replace, target_context, amp, lists[0], int8,
                   length_penalty)
    return translation.compare(session, cache.get(ws, [baseline_id]),
                               sentences, beam=beam, unk_replace=unk_replace, ctx=ctx,
                               target_context=target_context, amp=amp, shortlists=lists,
                               int8=int8, pairs=pairs, doc_ids=doc_ids,
                               length_penalty=length_penalty)


def _emit_decoding(ctx: JobContext, session: TranslationSession, beam: int, unk_replace: bool,
                   target_context: bool, amp: bool, shortlist: Any, int8: bool,
                   length_penalty: float | None = None) -> None:
    """The decoding_lines as 'log' events, and a 'decoding' event: the settings
    (core.infer.decoding) an export of this translation records. `int8` is this job's
    alone: the session, shared by the screens, keeps its own setting (fp32), so the
    Attention and Evaluation screens never turn int8 silently."""
    for line in decoding_lines(session, target_context, amp, int8, beam, length_penalty):
        ctx.emit("log", message=line)
    ctx.emit("decoding", settings=decoding_settings(
        session, beam=beam, amp=amp, shortlist=shortlist, unk_replace=unk_replace,
        target_context=target_context, int8=int8, length_penalty=length_penalty))


def _shortlist(ws: Workspace, run_id: int, ctx: JobContext):
    """Run `run_id`'s lexical shortlist (its default size), progress logged to the job."""
    return load_shortlist(ws, run_id, log=lambda m: ctx.emit("log", message=m))


def export_translation_job(ws: Workspace | None, path: str | Path,
                           records: Sequence[TranslationRecord], ctx: JobContext,
                           **options: Any) -> list[Path]:
    """The Translate screen's export: translation.export(ws, path, records, **options)
    (the file written, the export noted in the workspace); -> the files written. A file
    that cannot be written raises OutputError, its message shown as it is."""
    ctx.progress(0, 1, f"writing {Path(path).name}")
    try:
        return translation.export(ws, path, records, **options)
    except (OSError, ValueError) as exc:
        if isinstance(exc, WorkbenchError):
            raise
        raise OutputError(str(exc)) from exc

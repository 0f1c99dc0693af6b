"""Job functions the panels submit to the JobManager: thin calls of core.services, Qt-free
(they run on worker threads). What they compute is core's: a document read and
translated (core.services.translation), the attention of sentence pairs under several
runs with their AER (core.services.attention_view: one pair; core.services.attention_set:
the pairs, the runs, the whole-set AER table), runs evaluated on their test split
(core.services.eval_scores).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.evaluate.alignment import Alignment
from core.jobs import JobContext
from core.services import attention_set, eval_scores, translation
from core.services.attention_view import PairInput, PairView
from core.services.test_pairs import run_test_pairs
from core.services.translation import SessionCache
from core.workspace.store import Workspace


# --- translating --------------------------------------------------------------------------------
def read_document_job(path: str | Path, lang: str,
                      ctx: JobContext) -> translation.Document:
    """A document file as paragraphs of sentences (core.services.translation.
    read_document), read in a job: a big .docx takes seconds to parse and split."""
    ctx.progress(0, 1, f"reading {Path(path).name}")
    return translation.read_document(path, lang)


def translate_job(ws: Workspace, cache: SessionCache, run_ids: Sequence[int], sentences: list[str],
                  beam: int, unk_replace: bool, ctx: JobContext,
                  target_context: bool = False, amp: bool = False,
                  shortlist: bool = False, int8: bool = False) -> list[Any]:
    """Translate `sentences` with the run(s) (several = an ensemble); a context model
    reads them as one document, with `target_context` seeing its own previous
    translations as context instead of the previous source sentences; `amp`: in bf16
    where the CPU has it; `shortlist`: over the first run's lexical shortlist (built
    from its training split on first use); `int8`: int8 products (core.models.int8)."""
    session = cache.get(ws, run_ids)
    ctx.emit("log", message=f"loaded {', '.join(session.names)}")
    if target_context and session.is_context_model:
        note = session.target_context_note()
        if note:
            ctx.emit("log", message=note)
    lexicon = _shortlist(ws, run_ids[0], ctx) if shortlist else None
    _emit_decoding(ctx, session, beam, unk_replace, target_context, amp, lexicon, int8)
    return translation.translate(session, sentences, beam=beam, unk_replace=unk_replace,
                                 ctx=ctx, target_context=target_context, amp=amp,
                                 shortlist=lexicon, int8=int8)


def _emit_decoding(ctx: JobContext, session: Any, beam: int, unk_replace: bool,
                   target_context: bool, amp: bool, shortlist: Any, int8: bool) -> None:
    """A 'log' event naming the arithmetic ('decoding: int8 (x86 engine, ...)') and a
    'decoding' event: the settings (core.infer.decoding) an export of this translation
    records. `int8` is this job's alone: the session, shared by the screens, keeps its
    own setting (fp32), so the Attention and Evaluation screens never turn int8 silently."""
    from core.infer.decoding import decoding_settings

    ctx.emit("log", message=f"decoding: {session.path_text(amp, int8)}")
    ctx.emit("decoding", settings=decoding_settings(
        session, beam=beam, amp=amp, shortlist=shortlist, unk_replace=unk_replace,
        target_context=target_context, int8=int8))


def _shortlist(ws: Workspace, run_id: int, ctx: JobContext):
    """Run `run_id`'s lexical shortlist (its default size), progress logged to the job."""
    from core.services.shortlist_store import load_shortlist

    return load_shortlist(ws, run_id, log=lambda m: ctx.emit("log", message=m))


def compare_job(ws: Workspace, cache: SessionCache, run_ids: Sequence[int], baseline_id: int,
                sentences: list[str], beam: int, unk_replace: bool, ctx: JobContext,
                target_context: bool = False, amp: bool = False,
                shortlist: bool = False, int8: bool = False) -> translation.Comparison:
    """The run(s) and a baseline run on the same sentences (translation.compare); with
    `shortlist`, each over its own run's shortlist."""
    lists = ((_shortlist(ws, run_ids[0], ctx), _shortlist(ws, baseline_id, ctx))
             if shortlist else (None, None))
    session = cache.get(ws, run_ids)
    _emit_decoding(ctx, session, beam, unk_replace, target_context, amp, lists[0], int8)
    return translation.compare(session, cache.get(ws, [baseline_id]),
                               sentences, beam=beam, unk_replace=unk_replace, ctx=ctx,
                               target_context=target_context, amp=amp, shortlists=lists,
                               int8=int8)


# --- attention of sentence pairs ------------------------------------------------------------------
def pairs_job(ws: Workspace, gold_name: str | None, run_id: int | None, limit: int,
              ctx: JobContext) -> list[PairInput]:
    """A gold set's pairs (`gold_name`), else the first `limit` pairs of the run's test
    split (none for a run without a corpus, e.g. an imported one), read in a job: a big
    corpus takes seconds to load, and its split may be created and saved on the way."""
    ctx.progress(0, None, f"reading {gold_name or 'the test split'}")
    if gold_name:
        return attention_set.gold_pairs(ws, gold_name, limit)
    if run_id is None or ws.get_run(run_id).corpus_id is None:
        return []  # an imported run has no test split: gold sets and typed pairs remain
    return [PairInput(s, t) for s, t in run_test_pairs(ws, run_id, limit)]


def attention_job(ws: Workspace, cache: SessionCache, runs: Sequence[tuple[int, str]],
                  pairs: Sequence[tuple[int, PairInput]], forced: bool, ctx: JobContext
                  ) -> dict[tuple[int, int], PairView]:
    """The views of every (pair index, run) asked for (core.services.attention_set.
    attention_views)."""
    return attention_set.attention_views(ws, cache, runs, pairs, forced, ctx)


def pairs_attention_job(ws: Workspace, cache: SessionCache, runs: Sequence[tuple[int, str]],
                        gold_name: str | None, run_id: int, limit: int, forced: bool,
                        ctx: JobContext) -> tuple[list[PairInput], dict]:
    """pairs_job then attention_job in one worker: -> (pairs, views)."""
    pairs = pairs_job(ws, gold_name, run_id, limit, ctx)
    return pairs, attention_job(ws, cache, runs, list(enumerate(pairs)), forced, ctx)


def baseline_job(ws: Workspace, run_id: int, words: Sequence[tuple[list[str], list[str]]],
                 ctx: JobContext, pairs: Sequence[PairInput] = ()) -> list[Alignment]:
    """eflomal's links of the given pairs beside the run's attention
    (core.services.attention_set.gold_baseline)."""
    return attention_set.gold_baseline(ws, run_id, words, ctx, pairs)


# --- evaluation ----------------------------------------------------------------------------------------
def evaluate_job(ws: Workspace, cache: SessionCache, run_ids: Sequence[int], beam: int,
                 gold_name: str | None, ctx: JobContext, limit: int = 0) -> list[int]:
    """Each run on its corpus's test split, as `evaluate --run R --test test` does
    (core.services.eval_scores.evaluate_runs). Returns the evaluation ids."""
    return eval_scores.evaluate_runs(ws, cache, run_ids, beam, gold_name, ctx, limit)


# --- start-up ------------------------------------------------------------------------------------------
def warm_up(ctx: JobContext) -> None:
    """Import the training and inference stack and take one optimiser step on a dummy
    tensor (the first Adam step imports torch._dynamo and sympy: ~2-3 s of imports
    that would otherwise run inside the first training job, holding the GIL long
    enough to make the GUI stutter for a few hundred ms). Run once at start-up."""
    import sacrebleu  # noqa: F401
    import torch

    import core.infer.beam  # noqa: F401
    import core.infer.greedy  # noqa: F401
    import core.train.loop  # noqa: F401

    weight = torch.zeros(2, requires_grad=True)
    optimiser = torch.optim.Adam([weight])
    weight.sum().backward()
    optimiser.step()

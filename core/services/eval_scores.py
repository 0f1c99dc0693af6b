"""Sentence-level evaluation of trained runs, stored, for the CLI (`evaluate`) and the
GUI (Evaluation screen's job), and the report files of every evaluation.

    sessions, run_ids = open_systems(ws, ["a", "b"])          # core.services.test_pairs
    pairs, name, src_lang, tgt_lang = evaluation_pairs(ws, ws.get_run("a"), "test")
    systems, lengths, ids = evaluate_and_store(ws, sessions, run_ids, pairs, name,
                                               src_lang, tgt_lang, beam=5)

Scores are sacreBLEU BLEU (with its signature), chrF, TER, tokenised BLEU (Moses
tokens), the teacher-forced test perplexity, the run's best dev perplexity and BLEU by
source length; a context model translates the test pairs document by document
(`translate_pairs`). Every system's scores are stored as one workspace evaluation under
METRIC_KEYS, whichever front asked. Document-level BLEU is core.services.doc_eval,
contrastive sets and gates core.services.contrastive_eval.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.atomic import check_writable, write_text_atomic
from core.errors import ConfigError, CorpusError, OutputError
from core.evaluate.goldsets import gold_set_for, load_gold_set
from core.evaluate.report import Table, decoding_table, write_html_report
from core.infer.decoding import decoding_settings
from core.jobs import JobContext
from core.services.test_pairs import evaluation_pairs
from core.workspace.store import Workspace

if TYPE_CHECKING:  # annotations only: importing the session would load torch
    from core.infer.session import TranslationSession

#: the keys of a stored sentence-level evaluation (Workspace.add_evaluation metrics);
#: 'aer' / 'aer_sentences' / 'aer_reading' (core.evaluate.readings) / 'aer_gold' (its
#: name) only with a gold set
METRIC_KEYS = ("bleu", "bleu_signature", "chrf", "ter", "tokenized_bleu", "perplexity",
               "best_dev_ppl", "beam", "sentences", "bleu_by_length", "bucket_sizes",
               "decoding")


@dataclass
class SystemScores:
    """One system's translations of the test pairs and its metrics (METRIC_KEYS)."""

    name: str
    run_ids: list[int]
    hyps: list[str]
    metrics: dict[str, Any] = field(default_factory=dict)


def parse_buckets(text: str | None) -> list[tuple[int, int | None]]:
    """--buckets '10,20,30' -> [(0, 10), (10, 20), (20, 30), (30, None)] (lo inclusive, hi
    exclusive); DEFAULT_BUCKETS for none; ConfigError unless increasing positive integers."""
    # lazy: a top-level import would load sacrebleu
    from core.evaluate.metrics import DEFAULT_BUCKETS

    if not text:
        return list(DEFAULT_BUCKETS)
    try:
        edges = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"--buckets must be increasing integers like 10,20,30, not {text!r}") \
            from None
    if not edges or edges != sorted(set(edges)) or edges[0] <= 0:
        raise ConfigError(f"--buckets must be increasing positive integers, not {text!r}")
    lows = [0, *edges]
    return [(lo, hi) for lo, hi in zip(lows, [*edges, None], strict=True)]


def bucket_label(lo: int, hi: int | None) -> str:
    """'lo-(hi-1)', or 'lo+' for the open last bucket."""
    return f"{lo}-{hi - 1}" if hi is not None else f"{lo}+"


def translate_pairs(session: TranslationSession,
                    pairs: Sequence, beam: int, ctx: JobContext | None = None
                    ) -> list[str]:
    """Detokenised translations of the pairs' sources; a context model translates the
    pairs document by document, a pair without a document as a document of its own (as
    training and forced_perplexity see it: core.data.context)."""
    sources = [p.src for p in pairs]
    if not session.is_context_model:
        return [t.text for t in session.translate(sources, beam=beam, ctx=ctx)]
    groups: dict[Any, list[int]] = {}
    for i, p in enumerate(pairs):
        groups.setdefault(p.doc_id or ("no document", i), []).append(i)
    order = list(groups.values())
    out = session.translate_documents([[sources[i] for i in g] for g in order], beam=beam,
                                      ctx=ctx)
    hyps = [""] * len(pairs)
    for g, doc in zip(order, out, strict=True):
        for i, t in zip(g, doc, strict=True):
            hyps[i] = t.text
    return hyps


def forced_perplexity(session: TranslationSession,
                      pairs: Sequence, batch_size: int = 32) -> float | None:
    """Teacher-forced perplexity of the references (EOS counted), pairs with an empty
    side skipped; context models get each pair's previous source sentence(s) (target
    sentences for model.ctx_side 'target') and, with model.ctx_following > 0, its
    following ones within its document
    (core.infer.scoring, core.data.context.sentence_context)."""
    from core.evaluate.metrics import perplexity  # lazy: a top-level import would load sacrebleu

    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.infer.scoring import ForcedScorer

    scorer = ForcedScorer.for_session(session)
    k, f = scorer.k_context, scorer.k_following
    items = []
    for i, p in enumerate(pairs):
        item = scorer.item(p.src, p.tgt)
        if not item.src or not item.tgt:
            continue
        if scorer.uses_context:  # a target-side model reads the previous references
            side = "tgt" if scorer.ctx_side == "target" else "src"
            prev = [getattr(q, side) for q in pairs[max(0, i - k):i]
                    if q.doc_id == p.doc_id and q.doc_id]
            after = [q.src for q in pairs[i + 1:i + 1 + f] if q.doc_id == p.doc_id and q.doc_id]
            item.ctx = scorer.context_ids(prev, after)
        items.append(item)
    if not items:
        return None
    results = scorer.score(items, batch_size=batch_size)
    nll = -sum(r.log_prob for r in results)
    n_tok = sum(len(it.tgt) + 1 for it in items)
    return perplexity(nll, n_tok)


def score_systems(sessions: dict[str, Any], run_ids: dict[str, list[int]], pairs: Sequence,
                  src_lang: str, tgt_lang: str, beam: int = 5,
                  buckets: Sequence[tuple[int, int | None]] | None = None,
                  ctx: JobContext | None = None, log=None,
                  hyps_given: dict[str, list[str]] | None = None
                  ) -> tuple[list[SystemScores], Any]:
    """Translate `pairs` with every session (unless `hyps_given` has the system's
    translations) and score them. Returns the systems' scores (metrics ready for
    Workspace.add_evaluation) and the BLEU-by-length table."""
    from core.data.preprocess import Preprocessor  # lazy: a top-level import would load sacremoses

    # lazy: a top-level import would load sacrebleu
    from core.evaluate.metrics import (
        DEFAULT_BUCKETS,
        bleu_by_length,
        chrf,
        corpus_bleu,
        ter,
        tokenized_bleu,
    )

    if not pairs:
        raise CorpusError(None, None, "the test set holds no sentence pairs")
    buckets = list(buckets or DEFAULT_BUCKETS)
    refs = [p.tgt for p in pairs]
    src_moses, tgt_moses = Preprocessor(src_lang), Preprocessor(tgt_lang)
    src_tokens = [src_moses.tokenize(p.src) for p in pairs]
    ref_tokens = [tgt_moses.tokenize(r) for r in refs]
    systems = []
    for name, session in sessions.items():
        decoding = None  # given translations: not decoded here
        if hyps_given and name in hyps_given:
            hyps = list(hyps_given[name])
        else:
            decoding = decoding_settings(session, beam=beam)
            if log:
                log(f"translating {len(pairs)} sentences with {name} (beam {beam})")
            hyps = translate_pairs(session, pairs, beam, ctx)
        bleu = corpus_bleu(hyps, refs)
        tok = tokenized_bleu([tgt_moses.tokenize(h) for h in hyps], ref_tokens)
        ppl = forced_perplexity(session, pairs)
        metrics = {"bleu": bleu.score, "bleu_signature": bleu.signature,
                   "chrf": chrf(hyps, refs).score, "ter": ter(hyps, refs).score,
                   "tokenized_bleu": tok.score,
                   "perplexity": ppl if ppl is not None and math.isfinite(ppl) else None,
                   "beam": beam, "sentences": len(pairs),
                   "decoding": decoding}
        systems.append(SystemScores(name, run_ids[name], hyps, metrics))
    # a sentence longer than the last bucket's edge needs an open bucket
    if buckets[-1][1] is not None:
        buckets.append((buckets[-1][1], None))
    lengths = bleu_by_length(src_tokens, {s.name: s.hyps for s in systems}, refs, buckets)
    for s in systems:
        s.metrics["bleu_by_length"] = {
            bucket_label(lo, hi): (None if v is None else round(v, 2))
            for (lo, hi), v in zip(lengths.buckets, lengths.scores[s.name], strict=True)}
        s.metrics["bucket_sizes"] = {bucket_label(lo, hi): n for (lo, hi), n
                                     in zip(lengths.buckets, lengths.counts, strict=True)}
    return systems, lengths


def metrics_table(systems: list[SystemScores], title: str):
    """A Table with one row per system: BLEU, chrF, TER, tokenised BLEU and perplexity (2
    decimals), the sacreBLEU signatures as notes."""
    rows = []
    for s in systems:
        m = s.metrics
        rows.append([s.name, round(m["bleu"], 2), round(m["chrf"], 2), round(m["ter"], 2),
                     round(m["tokenized_bleu"], 2),
                     None if m["perplexity"] is None else round(m["perplexity"], 2)])
    sigs = sorted({s.metrics["bleu_signature"] for s in systems})
    return Table(["system", "BLEU", "chrF", "TER", "tok. BLEU", "perplexity"], rows, title,
                 notes=[f"sacreBLEU {sig}" for sig in sigs])


def report_format(path: str | Path) -> str:
    """A report's format by its suffix: html, md, markdown, csv or json; ConfigError
    naming the file otherwise."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("html", "md", "markdown", "csv", "json"):
        raise ConfigError(f"{path}: unknown report format {path.suffix!r}: use .md, .csv, "
                          ".json or .html")
    return fmt


def check_report(path: str | Path) -> None:
    """A --report checked before the evaluation: a known format (report_format) and a
    place it can be written (core.atomic.check_writable)."""
    check_writable(path)  # first: a folder given as the report is told so
    report_format(path)


def write_report(path: str | Path, tables: list, title: str,
                  decoding: dict[str, dict | None] | None = None) -> list[Path]:
    """.md and .html hold every table, under their title the systems' `decoding`
    settings ({system: core.infer.decoding settings}) when given; .csv/.json hold the
    first table, the others go to '<stem>.<k>.<suffix>' beside it."""
    path = Path(path)
    fmt = report_format(path)
    if fmt == "html":
        return [write_html_report(path, tables, title, decoding=decoding)]
    if fmt in ("md", "markdown"):
        head = [decoding_table(decoding)] if decoding else []
        text = f"# {title}\n\n" + "\n".join(t.to_markdown() for t in [*head, *tables])
        return [write_text_atomic(path, text)]
    out = [tables[0].save(path, fmt)]
    for k, t in enumerate(tables[1:], start=2):
        out.append(t.save(path.with_name(f"{path.stem}.{k}{path.suffix}"), fmt))
    return out


def best_dev_ppl(ws: Workspace, run_ids: Sequence[int]) -> float | None:
    """The lowest dev perplexity a single run logged while training (None for an
    ensemble, or a run that never validated)."""
    if len(run_ids) != 1:
        return None
    return ws.best_dev_ppl(run_ids).get(int(run_ids[0]))


def evaluate_and_store(ws: Workspace, sessions: dict[str, Any], run_ids: dict[str, list[int]],
                       pairs: Sequence, test_name: str, src_lang: str = "", tgt_lang: str = "",
                       beam: int = 5, buckets: Sequence[tuple[int, int | None]] | None = None,
                       gold=None, ctx: JobContext | None = None, log=None
                       ) -> tuple[list[SystemScores], Any, list[int]]:
    """score_systems, plus each single run's best dev perplexity and, with a gold set,
    the AER of its forced attention; every system stored as an evaluation named
    `test_name`. Returns (systems, BLEU-by-length table, evaluation ids)."""
    first = next(iter(sessions.values()))
    src_lang = src_lang or first.first.src_pre.lang
    tgt_lang = tgt_lang or first.first.tgt_pre.lang
    systems, lengths = score_systems(sessions, run_ids, pairs, src_lang, tgt_lang, beam,
                                     buckets, ctx, log)
    ids = []
    for s in systems:
        s.metrics["best_dev_ppl"] = best_dev_ppl(ws, s.run_ids)
        if gold is not None:  # read where the run's attention aligns (its default reading)
            from core.evaluate.aer import corpus_aer  # lazy: a top-level import would load numpy

            # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
            from core.evaluate.attention_aer import attention_alignments

            # lazy: a top-level import would load numpy
            from core.evaluate.readings import default_reading

            session = sessions[s.name]
            reading = default_reading(session.first.config)
            if reading == "head" and len(session.members) > 1:  # an ensemble has no head
                reading = "predict"
            found = attention_alignments(session, gold, reading=reading)
            counts = corpus_aer(found, gold.alignments)
            s.metrics.update(aer=counts.aer, aer_sentences=len(gold), aer_reading=reading,
                             aer_gold=gold.name)
        ids.append(ws.add_evaluation(s.run_ids, test_name, s.metrics))
    return systems, lengths, ids


def evaluate_runs(ws: Workspace, cache, run_ids: Sequence[int], beam: int, gold_name: str | None,
                  ctx: JobContext, limit: int = 0) -> list[int]:
    """Each run alone on its corpus's test split (the first `limit` pairs; 0 = all), as
    `evaluate --run R --test test` does (evaluate_and_store: the same translation,
    document grouping for context models, metrics and keys), with the AER of its forced
    attention on gold set `gold_name` when given; sessions from `cache`
    (core.services.translation.SessionCache). Returns the evaluation ids.
    Each run's AER is read on the gold set of its own language pair (goldsets.gold_set_for:
    `gold_name` when it fits, read from the other side for a run of the reversed pair);
    a run no gold set fits gets no AER, rather than another pair's meaningless one."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.evaluate.attention_aer import gold_for_run

    ids: list[int] = []
    golds: dict[str, Any] = {}  # each set read once, however many runs it scores
    for k, run_id in enumerate(run_ids):
        ctx.check_cancelled()
        info = ws.get_run(run_id)
        ctx.progress(k, len(run_ids), f"evaluating {info.name}")
        pairs, test_name, src_lang, tgt_lang = evaluation_pairs(
            ws, info, "test", max_sentences=limit)
        if not pairs:
            raise ConfigError(f"run {info.name!r}: the test split is empty; import a bigger "
                              "corpus")
        sessions = {info.name: cache.get(ws, [run_id])}
        gold_set = gold_set_for(ws, (src_lang, tgt_lang), preferred=gold_name)
        if gold_set and gold_set not in golds:
            golds[gold_set] = load_gold_set(ws, gold_set)
        gold = gold_for_run(golds[gold_set], (src_lang, tgt_lang)) if gold_set else None
        _, _, new = evaluate_and_store(ws, sessions, {info.name: [run_id]}, pairs, test_name,
                                       src_lang, tgt_lang, beam, gold=gold, ctx=ctx)
        ids += new
    ctx.progress(len(run_ids), len(run_ids), "evaluated")
    return ids


def write_report_job(path: str | Path, tables: list[Table], figures: list[tuple[str, bytes]],
                     title: str, decoding: dict[str, dict | None], ctx: JobContext) -> Path:
    """The Evaluation screen's HTML report (core.evaluate.report.write_html_report: the
    tables, the figures as PNG bytes rendered on the GUI thread), written in a job; ->
    its path. A file that cannot be written raises OutputError, its message shown as it is."""
    try:
        return write_html_report(Path(path), tables, figures=figures, title=title,
                                 decoding=decoding)
    except OSError as exc:
        raise exc if isinstance(exc, OutputError) else OutputError(str(exc)) from exc

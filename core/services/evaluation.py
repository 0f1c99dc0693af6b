"""Evaluation of trained runs, for the CLI (`evaluate`) and the GUI (Evaluation screen).

    sessions, run_ids = open_systems(ws, ["a", "b"])
    pairs, name, src_lang, tgt_lang = evaluation_pairs(ws, ws.get_run("a"), "test")
    systems, lengths = evaluate_and_store(ws, sessions, run_ids, pairs, name, src_lang,
                                          tgt_lang, beam=5)

Sentence-level scores are sacreBLEU BLEU (with its signature), chrF, TER, tokenised
BLEU (Moses tokens), the teacher-forced test perplexity, the run's best dev perplexity
and BLEU by source length; a context model translates the test pairs document by
document (`translate_pairs`). Every system's scores are stored as one workspace
evaluation under METRIC_KEYS, whichever front asked. Document-level BLEU (thesis Table
5.5) and contrastive accuracy live here too.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.atomic import check_writable, write_text_atomic
from core.config import RunConfig
from core.data.corpus import SentencePair
from core.data.textio import CONVERT_TO_UTF8, read_lines
from core.errors import ConfigError, CorpusError
from core.evaluate.gates import contrastive_gate_profile, watched_words
from core.evaluate.report import Table, decoding_table, write_html_report
from core.infer.decoding import decoding_settings
from core.jobs import JobContext
from core.services.contrastive_scoring import contrastive_score_fn
from core.services.corpora import SPLIT_NAMES
from core.services.translation import open_session
from core.store import Workspace

#: the keys of a stored sentence-level evaluation (Workspace.add_evaluation metrics);
#: 'aer' / 'aer_sentences' / 'aer_reading' (core.evaluate.readings) only with a gold set
METRIC_KEYS = ("bleu", "bleu_signature", "chrf", "ter", "tokenized_bleu", "perplexity",
               "best_dev_ppl", "beam", "sentences", "bleu_by_length", "bucket_sizes",
               "decoding")


@dataclass
class SystemScores:
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


def translate_pairs(session, pairs: Sequence, beam: int, ctx: JobContext | None = None
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


def forced_perplexity(session, pairs: Sequence, batch_size: int = 32) -> float | None:
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


# ------------------------------------------------------------------ systems and test sets


def open_systems(ws: Workspace, runs: Sequence[str | int], ensemble: Sequence[str | int] = (),
                 which: str = "best", device: str = "cpu"
                 ) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """Each run alone, plus the ensemble of the first run with `ensemble` runs:
    ({system name: session}, {system name: run ids})."""
    groups: list[list[str | int]] = [[r] for r in runs]
    if ensemble:
        groups = [g for g in groups if len(runs) > 1] + [[runs[0], *ensemble]]
    sessions, run_ids = {}, {}
    for group in groups:
        infos = [ws.get_run(r) for r in group]
        name = "+".join(i.name for i in infos)
        sessions[name] = open_session(ws, [i.id for i in infos], which, device)
        run_ids[name] = [i.id for i in infos]
    return sessions, run_ids


def evaluation_pairs(ws: Workspace, run_info, split: str | None = None,
                     src: str | Path | None = None, ref: str | Path | None = None,
                     max_sentences: int = 0) -> tuple[list, str, str, str]:
    """The pairs to score -> (pairs, test name, src_lang, tgt_lang): the run corpus's
    stored `split` (default test; name 'corpus:split'), or line-parallel `src`/`ref`
    files (languages ''). `max_sentences` > 0 keeps a prefix (name '...[:N]')."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.services.training import load_split_corpora

    if src or ref:
        if not (src and ref) or split:
            raise ConfigError("give --src and --ref together, or --test SPLIT")
        sources, _ = read_lines(Path(src), False, CONVERT_TO_UTF8)
        refs, _ = read_lines(Path(ref), False, CONVERT_TO_UTF8)
        if len(sources) != len(refs):
            raise CorpusError(ref, None, f"{len(refs)} references for {len(sources)} sources "
                              f"in {src}: the files must be line-parallel")
        pairs = [SentencePair(s, r, None, k)
                 for k, (s, r) in enumerate(zip(sources, refs, strict=True), 1)]
        name, src_lang, tgt_lang = Path(src).name, "", ""
    else:
        split = split or "test"
        if run_info.corpus_id is None:
            raise ConfigError(f"run {run_info.name!r} has no corpus: give --src and --ref")
        config = RunConfig.from_dict(run_info.config, source=f"run {run_info.name}")
        corpus, parts = load_split_corpora(ws, run_info.corpus_id, config.train.seed)
        if split not in parts:
            raise ConfigError(f"--test {split!r}: the corpus split has {', '.join(parts)}")
        pairs = parts[split].pairs
        cname = ws.get_corpus(run_info.corpus_id).name
        if not pairs:
            ratios = ws.load_split(run_info.corpus_id).ratios
            shares = ",".join(f"{r:g}" for r in ratios)
            why = (f"gives the {split} set no share" if ratios[SPLIT_NAMES.index(split)] <= 0
                   else f"leaves the {split} set empty (too few pairs or documents)")
            raise ConfigError(
                f"corpus {cname!r} has no {split} pairs: its split (ratios {shares}) {why}; "
                "evaluate on test files of your own, or import the corpus again under a new "
                "name, split it with a "
                f"{split} share and train on that")
        name = f"{cname}:{split}"
        src_lang, tgt_lang = corpus.src_lang, corpus.tgt_lang
    if max_sentences > 0 and len(pairs) > max_sentences:
        pairs, name = pairs[:max_sentences], f"{name}[:{max_sentences}]"
    return list(pairs), name, src_lang, tgt_lang


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
            s.metrics.update(aer=counts.aer, aer_sentences=len(gold), aer_reading=reading)
        ids.append(ws.add_evaluation(s.run_ids, test_name, s.metrics))
    return systems, lengths, ids


# ------------------------------------------------------------------ document level


def system_info(session):
    """The doc-level table's description of a session's model (strategy, context layers)."""
    from core.evaluate.doclevel import SystemInfo  # lazy: a top-level import would load sacrebleu

    m = session.first.config.model
    if m.family == "context_transformer":
        side = ", target context" if m.ctx_side == "target" else ""
        return SystemInfo(m.strategy + side, m.ctx_layers)
    if m.family == "concat":
        return SystemInfo("concat", None)
    return SystemInfo("sentence-level", None)



def document_groups(pairs: Sequence) -> list[list[int]]:
    """Indices of the pairs per document, in first-seen order (pairs without a document
    are left out)."""
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        if p.doc_id is not None:
            groups.setdefault(p.doc_id, []).append(i)
    return list(groups.values())


def document_level_and_store(ws: Workspace, sessions: dict[str, Any], run_ids: dict[str, list[int]],
                             pairs: Sequence, test_name: str, beam: int = 5,
                             ctx: JobContext | None = None, log=None):
    """Document-level BLEU of every system on the pairs' documents (thesis Table 5.5),
    stored as evaluations '<test_name>:documents'. Returns core.evaluate.doclevel's
    result."""
    # lazy: a top-level import would load sacrebleu
    from core.evaluate.doclevel import document_bleu

    groups = document_groups(pairs)
    if not groups:
        raise ConfigError(f"{test_name}: the test pairs have no documents; --doc-level needs "
                          "a corpus imported with document ids")
    documents = [[(pairs[i].src, pairs[i].tgt) for i in g] for g in groups]
    systems = {}
    for name, session in sessions.items():
        if log:
            log(f"translating {len(documents)} documents with {name}")
        out = session.translate_documents([[s for s, _ in d] for d in documents],
                                          beam=beam, ctx=ctx)
        systems[name] = [[t.text for t in doc] for doc in out]
    result = document_bleu(documents, systems,
                           info={n: system_info(s) for n, s in sessions.items()})
    for name in systems:
        ws.add_evaluation(run_ids[name], f"{test_name}:documents",
                          {"doc_bleu": result.scores[name].score,
                           "bleu_signature": result.scores[name].signature,
                           "delta_bleu": result.delta(name), "documents": len(documents)})
    return result


# ------------------------------------------------------------------ contrastive


#: how Voita et al. (2019) join the sentences of a JSON contrastive set
EOS_SEPARATOR = "_eos"


def _joined_with_eos(path: Path) -> bool:
    """Whether the file holds '_eos' as a word (its own token, not part of one)."""

    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return False  # read_json_set reports the problem
    return re.search(r"(?<!\w)_eos(?!\w)", text) is not None


def contrastive_examples(path: Path, separator: str | None = None, k: int = 1,
                         log=None) -> list:
    """The examples of a ContraPro-style folder, a DiscEvalMT set (one JSON object of
    blocks, core.evaluate.discevalmt) or a Voita-style JSON set. For a JSON set without
    `separator`, '_eos'-joined sentences (Voita et al.) are detected and split (said
    through `log`); separator '' splits nothing."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.evaluate.contrastive import read_json_set, read_pronoun_set

    if path.is_dir():
        if separator is not None:
            raise ConfigError("--separator splits the joined sentences of a JSON set; a "
                              f"ContraPro-style folder ({path}) keeps its context sentences "
                              "on their own lines: drop --separator")
        return read_pronoun_set(path, k=k)
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.evaluate.discevalmt import is_discevalmt, read_discevalmt

    if is_discevalmt(path):
        if separator:
            raise ConfigError(f"{path.name} is a DiscEvalMT set ([previous, current] lists): "
                              "drop --separator")
        if log:
            log(f"{path.name}: DiscEvalMT layout (blocks of src [previous, current] and "
                "correct / semi-correct / incorrect variants); accuracy per type")
        return read_discevalmt(path)
    if separator is None and _joined_with_eos(path):
        separator = EOS_SEPARATOR
        if log:
            log(f"{path.name}: sentences are joined with '{EOS_SEPARATOR}' (Voita et al.): "
                f"splitting on it, the leading sentences are the context (--separator '' "
                "turns this off, --separator TEXT picks another)")
    return read_json_set(path, separator=separator or None)


def contrastive_and_store(ws: Workspace, sessions: dict[str, Any], run_ids: dict[str, list[int]],
                          path: Path, examples: Sequence, ctx: JobContext | None = None,
                          log=None) -> dict[str, Any]:
    """Contrastive accuracy of every system on `examples` (from contrastive_examples),
    each stored as an evaluation 'contrastive:<file name>'. Returns {system: report}."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.evaluate.contrastive import contrastive_accuracy

    reports = {}
    for name, session in sessions.items():
        if log:
            log(f"scoring {len(examples)} contrastive examples with {name} "
                f"(context sentences: {session.context_sentences})")
        # a target-side model sees each example's previous target sentence(s)
        side = "tgt" if session.context_side == "target" else "src"
        if side == "tgt" and examples and not any(ex.context_tgt for ex in examples):
            raise ConfigError(
                f"{path}: the set gives no target-side context (e.g. no .context.trg file), "
                f"but {name!r} reads the previous target sentence as its context; use a set "
                "with target context, or a source-side context model")
        report = contrastive_accuracy(contrastive_score_fn(session), examples, ctx=ctx,
                                      context_side=side)
        ws.add_evaluation(run_ids[name], f"contrastive:{path.name}",
                          {"contrastive_accuracy": 100 * report.accuracy,
                           "examples": report.overall.total,
                           "by_pronoun": {k: 100 * g.accuracy
                                          for k, g in report.by_phenomenon.items()}})
        reports[name] = report
    return reports


def gates_and_store(ws: Workspace, sessions: dict[str, Any], run_ids: dict[str, list[int]],
                    path: Path, examples: Sequence, words: Sequence[str] = (),
                    ctx: JobContext | None = None, log=None) -> dict[str, Any]:
    """Where each gated system's gate opens on the contrastive `examples`: the
    GateProfile at `words` (none given: the source language's watched words) against
    every other source word, stored as an evaluation 'gates:<file name>'. Systems
    without gates are left out (and said so). Returns {system: GateProfile}."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.infer.scoring import ForcedScorer

    profiles = {}
    for name, session in sessions.items():
        watched = tuple(words) or watched_words(session.first.src_pre.lang)
        if not watched:
            raise ConfigError(f"no default words to watch for source language "
                              f"{session.first.src_pre.lang!r}: name them, --gates WORD ...")
        side = "tgt" if session.context_side == "target" else "src"
        profile = contrastive_gate_profile(ForcedScorer.for_session(session), examples,
                                           watched, side, ctx=ctx)
        if profile is None:
            if log:
                log(f"{name}: no gates (not a gated context model); left out of the gate table")
            continue
        ws.add_evaluation(run_ids[name], f"gates:{path.name}",
                          {k: v for k, v in profile.metrics().items() if v is not None})
        profiles[name] = profile
    return profiles


def contrastive_tables(reports: dict[str, Any], title: str) -> list:
    """The summary (one row per system, accuracy overall and per phenomenon) and each
    system's own table."""
    phenomena = sorted({k for r in reports.values() for k in r.by_phenomenon})
    rows = [[name, r.overall.total, r.overall.correct, r.overall.ties,
             round(100 * r.accuracy, 2),
             *[round(100 * r.by_phenomenon[k].accuracy, 2) if k in r.by_phenomenon else None
               for k in phenomena]]
            for name, r in reports.items()]
    summary = Table(["system", "examples", "correct", "ties", "accuracy %",
                     *[f"{k} %" for k in phenomena]], rows, title,
                    notes=["An example is correct when the correct translation scores "
                           "strictly higher than every contrastive one; ties count as wrong."])
    return [summary, *[r.to_table(f"{title} ({name})") for name, r in reports.items()]]

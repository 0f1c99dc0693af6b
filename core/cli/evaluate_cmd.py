"""`evaluate`: score trained runs on a test set, side by side.

    evaluate --run A [--run B ...] [--ensemble RUN ...] --test test|dev|train
             | --src F --ref F  [--beam 5] [--buckets 10,20,30,40,50,60] [--report F]
    evaluate --run A [--run B ...] [--ensemble RUN ...] --contrastive DIR|FILE.json [--k 1]
             [--separator TEXT]
    evaluate --run A [--run B ...] --doc-level [--test test]

Sentence-level: sacreBLEU (with its signature), chrF, TER, tokenized BLEU (Moses
tokens), teacher-forced perplexity and BLEU by source length (Luong Fig. 6), one
column per system; each system's scores are stored as an evaluation of the workspace
(metrics["bleu_by_length"] = {bucket label: BLEU}). --report writes the tables
(.md, .csv, .json or .html). Contrastive: accuracy overall and per pronoun, one row per
system (each --run, and the --ensemble, as above). Doc-level:
corpus BLEU of each system on the test split's documents, in the thesis Table 5.5
layout.
"""
from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.cli.translate_cmd import StderrProgress, add_model_args, open_session
from core.errors import ConfigError, CorpusError
from core.jobs import JobContext


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("evaluate", help="BLEU/chrF/TER/perplexity, BLEU by length, "
                       "contrastive and document-level scores")
    add_model_args(p)
    p.add_argument("--test", default=None, metavar="SPLIT",
                   help="the run corpus's stored split to score: test (default), dev, train")
    p.add_argument("--src", metavar="FILE", help="raw source sentences, one per line")
    p.add_argument("--ref", metavar="FILE", help="reference translations, line-parallel")
    p.add_argument("--beam", type=int, default=5, help="beam size (default 5)")
    p.add_argument("--max-sentences", type=int, default=0, metavar="N",
                   help="score only the first N test sentences (in corpus order, so "
                   "documents stay whole up to the cut); 0 = all")
    p.add_argument("--buckets", default=None, metavar="EDGES",
                   help="source-length bucket edges for BLEU by length, e.g. 10,20,30,40 "
                   "(default 10,20,...,60)")
    p.add_argument("--report", metavar="FILE", help="write the tables to .md/.csv/.json/.html")
    p.add_argument("--contrastive", metavar="DIR|FILE.json",
                   help="contrastive pronoun set: a ContraPro-style folder or a JSON set")
    p.add_argument("--k", type=int, default=1, help="context sentences of the contrastive set")
    p.add_argument("--separator", default=None, metavar="TEXT",
                   help="a JSON contrastive set joins context and current sentence with TEXT "
                   "(default: '_eos' when the file has it, as Voita et al.'s sets; '' = none)")
    p.add_argument("--doc-level", action="store_true",
                   help="document-level BLEU of the runs on the test split's documents")
    p.set_defaults(func=run)


# ------------------------------------------------------------------ scoring pieces


@dataclass
class SystemScores:
    name: str
    run_ids: list[int]
    hyps: list[str]
    metrics: dict[str, Any] = field(default_factory=dict)


def parse_buckets(text: str | None) -> list[tuple[int, int | None]]:
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
    return f"{lo}-{hi - 1}" if hi is not None else f"{lo}+"


def translate_pairs(session, pairs: Sequence, beam: int, ctx: JobContext | None = None
                    ) -> list[str]:
    """Detokenised translations of the pairs' sources; a context model translates the
    pairs document by document (pairs without a document form one run of text)."""
    sources = [p.src for p in pairs]
    if not session.is_context_model:
        return [t.text for t in session.translate(sources, beam=beam, ctx=ctx)]
    groups: dict[Any, list[int]] = {}
    for i, p in enumerate(pairs):
        groups.setdefault(p.doc_id, []).append(i)
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
    side skipped; context models get each pair's previous source sentence(s) and, with
    model.ctx_following > 0, its following ones (core.data.context.sentence_context)."""
    from core.data.context import CONTEXT_START, sentence_context
    from core.evaluate.metrics import perplexity
    from core.infer.forced import score_targets
    from core.infer.translate import as_model, pad_batch, source_tokens

    src_vocab, tgt_vocab, src_pre, tgt_pre = session._text_side()
    model = as_model(session.models)
    device = next(session.models[0].parameters()).device
    k, f = session.context_sentences, session.context_following
    start_id = src_vocab.encode([CONTEXT_START])[0]

    def ids(text: str, pre: Any, vocab: Any) -> list[int]:
        return list(vocab.encode(source_tokens(text, pre, vocab)))

    items = []
    for i, p in enumerate(pairs):
        s, t = ids(p.src, src_pre, src_vocab), ids(p.tgt, tgt_pre, tgt_vocab)
        if not s or not t:
            continue
        context: list[int] = []
        if k or f:
            prev = [q for q in pairs[max(0, i - k):i] if q.doc_id == p.doc_id and q.doc_id]
            after = [q for q in pairs[i + 1:i + 1 + f] if q.doc_id == p.doc_id and q.doc_id]
            context = sentence_context([ids(q.src, src_pre, src_vocab) for q in prev],
                                       [ids(q.src, src_pre, src_vocab) for q in after],
                                       k, f, start_id)
        items.append((s, t, context))
    if not items:
        return None
    nll, n_tok = 0.0, 0
    for start in range(0, len(items), batch_size):
        chunk = items[start:start + batch_size]
        src, lens = pad_batch([c[0] for c in chunk], device)
        extra = {}
        if k or f:
            extra["ctx"], extra["ctx_lens"] = pad_batch([c[2] for c in chunk], device)
        for r, c in zip(score_targets(model, src, lens, [c[1] for c in chunk], **extra), chunk,
                        strict=True):
            nll -= r.log_prob
            n_tok += len(c[1]) + 1
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
    from core.data.preprocess import Preprocessor
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
        if hyps_given and name in hyps_given:
            hyps = list(hyps_given[name])
        else:
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
                   "beam": beam, "sentences": len(pairs)}
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
    from core.evaluate.report import Table

    rows = []
    for s in systems:
        m = s.metrics
        rows.append([s.name, round(m["bleu"], 2), round(m["chrf"], 2), round(m["ter"], 2),
                     round(m["tokenized_bleu"], 2),
                     None if m["perplexity"] is None else round(m["perplexity"], 2)])
    sigs = sorted({s.metrics["bleu_signature"] for s in systems})
    return Table(["system", "BLEU", "chrF", "TER", "tok. BLEU", "perplexity"], rows, title,
                 notes=[f"sacreBLEU {sig}" for sig in sigs])


def write_report(path: str | Path, tables: list, title: str) -> list[Path]:
    """.md and .html hold every table; .csv/.json hold the first, the others go to
    '<stem>.<k>.<suffix>' beside it."""
    from core.atomic import write_text_atomic
    from core.evaluate.report import write_html_report

    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt == "html":
        return [write_html_report(path, tables, title)]
    if fmt in ("md", "markdown"):
        text = f"# {title}\n\n" + "\n".join(t.to_markdown() for t in tables)
        return [write_text_atomic(path, text)]
    if fmt not in ("csv", "json"):
        raise ConfigError(f"{path}: unknown report format {path.suffix!r}: use .md, .csv, "
                          ".json or .html")
    out = [tables[0].save(path, fmt)]
    for k, t in enumerate(tables[1:], start=2):
        out.append(t.save(path.with_name(f"{path.stem}.{k}{path.suffix}"), fmt))
    return out


# ------------------------------------------------------------------ the command


def _systems(ws, args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """Each --run alone, plus the ensemble of the first --run with --ensemble runs."""
    groups: list[list[str]] = [[r] for r in args.run]
    if args.ensemble:
        groups = [g for g in groups if len(args.run) > 1] + [[args.run[0], *args.ensemble]]
    sessions, run_ids = {}, {}
    for group in groups:
        infos = [ws.get_run(r) for r in group]
        name = "+".join(i.name for i in infos)
        sessions[name] = open_session(ws, [i.id for i in infos], args.checkpoint, args.device)
        run_ids[name] = [i.id for i in infos]
    return sessions, run_ids


def _test_pairs(ws, args: argparse.Namespace, first_run) -> tuple[list, str, str, str]:
    """-> (pairs, test name, src_lang, tgt_lang)."""
    from core.config import RunConfig
    from core.data.corpus import SentencePair
    from core.data.textio import read_lines
    from core.train.run import load_split_corpora

    if args.src or args.ref:
        if not (args.src and args.ref) or args.test:
            raise ConfigError("give --src and --ref together, or --test SPLIT")
        src, _ = read_lines(Path(args.src), False)
        ref, _ = read_lines(Path(args.ref), False)
        if len(src) != len(ref):
            raise CorpusError(args.ref, None, f"{len(ref)} references for {len(src)} sources "
                              f"in {args.src}: the files must be line-parallel")
        pairs = [SentencePair(s, r, None, k) for k, (s, r) in enumerate(zip(src, ref,
                                                                            strict=True), 1)]
        return pairs, Path(args.src).name, "", ""
    split = args.test or "test"
    if first_run.corpus_id is None:
        raise ConfigError(f"run {first_run.name!r} has no corpus: give --src and --ref")
    config = RunConfig.from_dict(first_run.config, source=f"run {first_run.name}")
    corpus, parts = load_split_corpora(ws, first_run.corpus_id, config.train.seed)
    if split not in parts:
        raise ConfigError(f"--test {split!r}: the corpus split has {', '.join(parts)}")
    info = ws.get_corpus(first_run.corpus_id)
    return parts[split].pairs, f"{info.name}:{split}", corpus.src_lang, corpus.tgt_lang


def run(args: argparse.Namespace) -> int:
    from core.store import Workspace

    modes = sum(bool(x) for x in (args.contrastive, args.doc_level))
    if modes > 1:
        raise ConfigError("choose one of --contrastive and --doc-level")
    with Workspace.open(args.workspace, create=False) as ws:
        if args.contrastive:
            return run_contrastive(ws, args)
        sessions, run_ids = _systems(ws, args)
        first = ws.get_run(args.run[0])
        pairs, test_name, src_lang, tgt_lang = _test_pairs(ws, args, first)
        if args.max_sentences > 0 and len(pairs) > args.max_sentences:
            pairs = pairs[: args.max_sentences]
            test_name = f"{test_name}[:{args.max_sentences}]"
        session0 = next(iter(sessions.values()))
        src_lang = src_lang or session0.first.src_pre.lang
        tgt_lang = tgt_lang or session0.first.tgt_pre.lang
        ctx = JobContext([StderrProgress()])
        if args.doc_level:
            return run_doc_level(ws, args, sessions, run_ids, pairs, test_name, ctx)
        systems, lengths = score_systems(
            sessions, run_ids, pairs, src_lang, tgt_lang, args.beam, parse_buckets(args.buckets),
            ctx, log=lambda m: print(m, file=sys.stderr))
        for s in systems:
            ws.add_evaluation(s.run_ids, test_name, s.metrics)
        tables = [metrics_table(systems, f"{test_name} ({len(pairs)} sentences, beam "
                                f"{args.beam})"), lengths.to_table()]
        for t in tables:
            print(t.to_markdown())
        if args.report:
            for p in write_report(args.report, tables, f"Evaluation on {test_name}"):
                print(f"wrote {p}", file=sys.stderr)
    return 0


def _system_info(session):
    from core.evaluate.doclevel import SystemInfo

    m = session.first.config.model
    if m.family == "context_transformer":
        return SystemInfo(m.strategy, m.ctx_layers)
    if m.family == "concat":
        return SystemInfo("concat", None)
    return SystemInfo("sentence-level", None)


def run_doc_level(ws, args, sessions, run_ids, pairs, test_name, ctx) -> int:
    from core.evaluate.doclevel import document_bleu

    groups: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        if p.doc_id is not None:
            groups.setdefault(p.doc_id, []).append(i)
    if not groups:
        raise ConfigError(f"{test_name}: the test pairs have no documents; --doc-level needs "
                          "a corpus imported with document ids")
    documents = [[(pairs[i].src, pairs[i].tgt) for i in g] for g in groups.values()]
    systems = {}
    for name, session in sessions.items():
        print(f"translating {len(documents)} documents with {name}", file=sys.stderr)
        out = session.translate_documents([[s for s, _ in d] for d in documents],
                                          beam=args.beam, ctx=ctx)
        systems[name] = [[t.text for t in doc] for doc in out]
    result = document_bleu(documents, systems,
                           info={n: _system_info(s) for n, s in sessions.items()})
    for name in systems:
        ws.add_evaluation(run_ids[name], f"{test_name}:documents",
                          {"doc_bleu": result.scores[name].score,
                           "bleu_signature": result.scores[name].signature,
                           "delta_bleu": result.delta(name), "documents": len(documents)})
    table = result.to_table()
    print(table.to_markdown())
    if args.report:
        write_report(args.report, [table], f"Document-level BLEU on {test_name}")
    return 0


#: how Voita et al. (2019) join the sentences of a JSON contrastive set
EOS_SEPARATOR = "_eos"


def _joined_with_eos(path: Path) -> bool:
    """Whether the file holds '_eos' as a word (its own token, not part of one)."""
    import re

    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return False  # read_json_set reports the problem
    return re.search(r"(?<!\w)_eos(?!\w)", text) is not None


def contrastive_examples(path: Path, separator: str | None = None, k: int = 1,
                         log=None) -> list:
    """The examples of a ContraPro-style folder or a JSON set. For a JSON set without
    `separator`, '_eos'-joined sentences (Voita et al.) are detected and split (said
    through `log`); separator '' splits nothing."""
    from core.evaluate.contrastive import read_json_set, read_pronoun_set

    if path.is_dir():
        if separator is not None:
            raise ConfigError("--separator splits the joined sentences of a JSON set; a "
                              f"ContraPro-style folder ({path}) keeps its context sentences "
                              "on their own lines: drop --separator")
        return read_pronoun_set(path, k=k)
    if separator is None and _joined_with_eos(path):
        separator = EOS_SEPARATOR
        if log:
            log(f"{path.name}: sentences are joined with '{EOS_SEPARATOR}' (Voita et al.): "
                f"splitting on it, the leading sentences are the context (--separator '' "
                "turns this off, --separator TEXT picks another)")
    return read_json_set(path, separator=separator or None)


def run_contrastive(ws, args: argparse.Namespace) -> int:
    """Each --run is its own system (the ensemble of the first --run with --ensemble
    runs is one more, as in the sentence-level evaluation): accuracy overall and per
    phenomenon, one row per system, each stored as an evaluation of its runs."""
    from core.evaluate.contrastive import contrastive_accuracy, make_score_fn
    from core.evaluate.report import Table
    from core.infer.translate import as_model

    def log(message: str) -> None:
        print(message, file=sys.stderr)

    path = Path(args.contrastive)
    examples = contrastive_examples(path, args.separator, args.k, log)
    with_context = [len(e.context_src) for e in examples if e.context_src]
    log(f"{path.name}: {len(examples)} examples, {len(with_context)} with source context "
        f"({sum(with_context) / max(1, len(with_context)):.2f} sentences on average)")
    sessions, run_ids = _systems(ws, args)
    reports = {}
    for name, session in sessions.items():
        log(f"scoring {len(examples)} contrastive examples with {name} "
            f"(context sentences: {session.context_sentences})")
        f = session.first
        score_fn = make_score_fn(as_model(session.models), f.src_vocab, f.tgt_vocab,
                                 f.src_pre, f.tgt_pre, k_context=session.context_sentences,
                                 k_following=session.context_following)
        report = contrastive_accuracy(score_fn, examples,
                                      ctx=JobContext([StderrProgress("scored")]))
        ws.add_evaluation(run_ids[name], f"contrastive:{path.name}",
                          {"contrastive_accuracy": 100 * report.accuracy,
                           "examples": report.overall.total,
                           "by_pronoun": {k: 100 * g.accuracy
                                          for k, g in report.by_phenomenon.items()}})
        reports[name] = report
    phenomena = sorted({k for r in reports.values() for k in r.by_phenomenon})
    rows = [[name, r.overall.total, r.overall.correct, r.overall.ties,
             round(100 * r.accuracy, 2),
             *[round(100 * r.by_phenomenon[k].accuracy, 2) if k in r.by_phenomenon else None
               for k in phenomena]]
            for name, r in reports.items()]
    title = f"Contrastive accuracy on {path.name}"
    summary = Table(["system", "examples", "correct", "ties", "accuracy %",
                     *[f"{k} %" for k in phenomena]], rows, title,
                    notes=["An example is correct when the correct translation scores "
                           "strictly higher than every contrastive one; ties count as wrong."])
    tables = [summary, *[r.to_table(f"{title} ({name})") for name, r in reports.items()]]
    for t in tables:
        print(t.to_markdown())
    if args.report:
        for p in write_report(args.report, tables, title):
            log(f"wrote {p}")
    return 0

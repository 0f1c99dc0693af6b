"""`evaluate`: score trained runs on a test set, side by side.

    evaluate --run A [--run B ...] [--ensemble RUN ...] --test test|dev|train
             | --src F --ref F  [--beam 5] [--buckets 10,20,30,40,50,60] [--report F]
    evaluate --run A [--run B ...] [--ensemble RUN ...] --contrastive DIR|FILE.json [--k 1]
             [--gates [WORD ...]]
             [--separator TEXT]
    evaluate --run A [--run B ...] --doc-level [--test test]
    evaluate --run A --tune-length-penalty [0,0.5,1,1.5,2] [--test dev]

Sentence-level: sacreBLEU (with its signature), chrF, TER, tokenized BLEU (Moses
tokens), teacher-forced perplexity and BLEU by source length (Luong Fig. 6), one
column per system; each system's scores are stored as an evaluation of the workspace
(metrics["bleu_by_length"] = {bucket label: BLEU}). --report writes the tables
(.md, .csv, .json or .html). Contrastive: accuracy overall and per pronoun, one row per
system (each --run, and the --ensemble, as above). Doc-level:
corpus BLEU of each system on the test split's documents, in the thesis Table 5.5
layout. Tune: the run's beam length penalty chosen by BLEU on its dev split and stored
as its own (core.services.length_penalty); --length-penalty A scores with another.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core import limits
from core.cli.progress import StderrProgress
from core.cli.translate_cmd import add_model_args, apply_int8, apply_length_penalty, say_decoding
from core.errors import ConfigError
from core.infer.decoding import decoding_settings
from core.infer.shortlist import parse_spec
from core.jobs import JobContext
from core.services import contrastive_eval, doc_eval, eval_scores, length_penalty, test_pairs
from core.services.language_pairs import check_one_pair
from core.services.shortlist_store import load_shortlist
from core.train.device import check_device
from core.workspace.store import Workspace


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `evaluate` command (metrics, BLEU by length, contrastive and document-level
    scores) to `sub`."""
    p = sub.add_parser("evaluate", help="BLEU/chrF/TER/perplexity, BLEU by length, "
                       "contrastive and document-level scores")
    add_model_args(p, run_help="trained run (name or id); repeat --run to score several "
                   "runs side by side, one row each")
    p.add_argument("--test", default=None, metavar="SPLIT",
                   help="the run corpus's stored split to score: test (default), dev, train")
    p.add_argument("--src", metavar="FILE", help="raw source sentences, one per line")
    p.add_argument("--ref", metavar="FILE", help="reference translations, line-parallel")
    p.add_argument("--beam", type=int, default=5, help="beam size (default 5)")
    p.add_argument("--shortlist", nargs="?", const="50,100", metavar="PER_WORD,FREQUENT",
                   help="decode over the first run's lexical shortlist (translate "
                   "--shortlist); each system's name says so")
    p.add_argument("--max-sentences", type=int, default=0, metavar="N",
                   help="score only the first N test sentences (in corpus order, so "
                   "documents stay whole up to the cut); 0 = all")
    p.add_argument("--buckets", default=None, metavar="EDGES",
                   help="source-length bucket edges for BLEU by length, e.g. 10,20,30,40 "
                   "(default 10,20,...,60)")
    p.add_argument("--report", metavar="FILE", help="write the tables to .md/.csv/.json/.html")
    p.add_argument("--contrastive", metavar="DIR|FILE.json",
                   help="contrastive set: a ContraPro-style folder, a DiscEvalMT JSON "
                   "object (Bawden et al. 2018) or a JSON list / JSON lines set")
    p.add_argument("--k", type=int, default=1, help="context sentences of the contrastive set")
    p.add_argument("--separator", default=None, metavar="TEXT",
                   help="a JSON contrastive set joins context and current sentence with TEXT "
                   "(default: '_eos' when the file has it, as Voita et al.'s sets; '' = none)")
    p.add_argument("--gates", nargs="*", metavar="WORD",
                   help="with --contrastive: also the mean gate lambda of each gated context "
                   "model at these source words (default: the source language's pronouns "
                   "and demonstratives, core.evaluate.gates) against every other word")
    p.add_argument("--doc-level", action="store_true",
                   help="document-level BLEU of the runs on the test split's documents")
    p.add_argument("--tune-length-penalty", nargs="?", const=",".join(
                       f"{a:g}" for a in length_penalty.ALPHAS), default=None, metavar="ALPHAS",
                   help="choose one run's beam length penalty (GNMT's alpha) on its dev split "
                   "(or --test / --src and --ref): translate once per alpha (default "
                   "0,0.5,1,1.5,2), keep the one with the best BLEU as the run's own, which "
                   "translate, evaluate and the screens then use")
    p.set_defaults(func=run)


# ------------------------------------------------------------------ the command


def run(args: argparse.Namespace) -> int:
    """`evaluate`: score the runs (one mode: metrics, --contrastive or --doc-level), store
    the results, print the tables and write --report; ConfigError when both modes are given."""
    def log(message: str) -> None:
        print(message, file=sys.stderr)

    modes = sum(bool(x) for x in (args.contrastive, args.doc_level,
                                  args.tune_length_penalty is not None))
    if modes > 1:
        raise ConfigError("choose one of --contrastive, --doc-level and --tune-length-penalty")
    if args.shortlist and args.contrastive:
        raise ConfigError("--contrastive scores given translations by forced decoding over the "
                          "whole vocabulary; --shortlist only changes search: drop it")
    if args.gates is not None and not args.contrastive:
        raise ConfigError("--gates reads the gates on a contrastive set: give --contrastive")
    limits.check_beam(args.beam)
    check_device(args.device)
    if args.shortlist:
        parse_spec(args.shortlist)
    if args.report:
        eval_scores.check_report(args.report)
    with Workspace.open(args.workspace, create=False) as ws:
        if args.tune_length_penalty is not None:
            return run_tune(ws, args, log)
        if args.contrastive:
            if args.int8:
                raise ConfigError("--int8 is not available with --contrastive yet (its "
                                  "scores are stored by system name): leave one of them out")
            return run_contrastive(ws, args, log)
        check_one_pair(ws, args.run, args.ensemble or ())  # one test set for all
        sessions, run_ids = test_pairs.open_systems(ws, args.run, args.ensemble or (),
                                                 args.checkpoint, args.device)
        if args.shortlist:
            sessions, run_ids = with_shortlists(ws, sessions, run_ids, args.shortlist, log)
        arithmetic = apply_int8(sessions.values(), args, say=False)
        apply_length_penalty(sessions.values(), args)
        pairs, test_name, src_lang, tgt_lang = test_pairs.evaluation_pairs(
            ws, ws.get_run(args.run[0]), args.test, args.src, args.ref, args.max_sentences)
        say_decoding(arithmetic)  # after the pairs: a missing split stays the one error line
        if args.shortlist:  # stored apart from the same runs' full-vocabulary scores
            test_name += f" +shortlist {','.join(map(str, parse_spec(args.shortlist)))}"
        if args.int8:  # int8 scores never replace the same runs' fp32 ones
            test_name += " +int8"
        if args.length_penalty is not None:  # nor another alpha's the runs' own
            test_name += f" +length-penalty {args.length_penalty:g}"
        ctx = JobContext([StderrProgress()])
        if args.doc_level:
            result = doc_eval.document_level_and_store(ws, sessions, run_ids, pairs, test_name,
                                                      args.beam, ctx, log)
            table = result.to_table()
            print(table.to_markdown())
            if args.report:

                eval_scores.write_report(args.report, [table], f"Document-level BLEU on {test_name}",
                                     {name: decoding_settings(session, beam=args.beam)
                                      for name, session in sessions.items()})
            return 0
        systems, lengths, _ = eval_scores.evaluate_and_store(
            ws, sessions, run_ids, pairs, test_name, src_lang, tgt_lang, args.beam,
            eval_scores.parse_buckets(args.buckets), ctx=ctx, log=log)
        tables = [eval_scores.metrics_table(systems, f"{test_name} ({len(pairs)} sentences, beam "
                                        f"{args.beam})"), lengths.to_table()]
        for t in tables:
            print(t.to_markdown())
        if args.report:
            decoding = {s.name: s.metrics.get("decoding") for s in systems}
            for p in eval_scores.write_report(args.report, tables, f"Evaluation on {test_name}",
                                          decoding):
                log(f"wrote {p}")
    return 0


def run_tune(ws: Workspace, args: argparse.Namespace, log) -> int:
    """--tune-length-penalty: one run, its dev split unless told otherwise; the table
    printed, the best alpha stored as the run's (core.services.length_penalty)."""
    alphas = length_penalty.parse_alphas(args.tune_length_penalty)
    if len(args.run) != 1 or args.ensemble:
        raise ConfigError("--tune-length-penalty chooses one run's own alpha: give one --run "
                          "and no --ensemble")
    if args.length_penalty is not None or args.shortlist:
        raise ConfigError("--tune-length-penalty tries its own alphas over the whole "
                          "vocabulary: leave out --length-penalty and --shortlist")
    info = ws.get_run(args.run[0])
    split = args.test or (None if args.src else "dev")
    pairs, test_name, _, _ = test_pairs.evaluation_pairs(
        ws, info, split, args.src, args.ref, args.max_sentences,
        instead="tune on held-out pairs of your own (--src FILE --ref FILE; not the test "
        "set, whose scores would no longer be held out)")
    sessions, _ = test_pairs.open_systems(ws, args.run, (), args.checkpoint, args.device)
    session = next(iter(sessions.values()))
    say_decoding(apply_int8([session], args, say=False))
    before = session.length_penalty
    choice = length_penalty.tune(session, pairs, alphas, args.beam,
                                 JobContext([StderrProgress()]), log)
    table = choice.to_table(f"Length penalty of {info.name} on {test_name} ({choice.pairs} "
                            f"sentences, beam {args.beam})")
    print(table.to_markdown())
    length_penalty.store(ws, info.id, choice.best)
    log(f"run {info.name} now translates with length penalty {choice.best:g} "
        f"(it was {before:g}); translate --length-penalty A overrides it for one command")
    if args.report:
        for p in eval_scores.write_report(args.report, [table], table.title):
            log(f"wrote {p}")
    return 0


def with_shortlists(ws: Workspace, sessions: dict, run_ids: dict, spec: str, log):
    """Give each session its first run's shortlist; system names get ' +shortlist SPEC'."""
    per_word, frequent = parse_spec(spec)
    renamed, ids = {}, {}
    for name, session in sessions.items():
        session.shortlist = load_shortlist(ws, run_ids[name][0], per_word, frequent, log)
        new = f"{name} +shortlist {per_word},{frequent}"
        renamed[new], ids[new] = session, run_ids[name]
    return renamed, ids


def run_contrastive(ws: Workspace, args: argparse.Namespace, log) -> int:
    """Each --run is its own system (the ensemble of the first --run with --ensemble
    runs is one more, as in the sentence-level evaluation)."""
    path = Path(args.contrastive)
    examples = contrastive_eval.contrastive_examples(path, args.separator, args.k, log)
    with_context = [len(e.context_src) for e in examples if e.context_src]
    log(f"{path.name}: {len(examples)} examples, {len(with_context)} with source context "
        f"({sum(with_context) / max(1, len(with_context)):.2f} sentences on average)")
    # before the models load: runs of one pair, the set's own where it tells one
    contrastive_eval.check_contrastive_pair(ws, [*args.run, *(args.ensemble or ())], path)
    sessions, run_ids = test_pairs.open_systems(ws, args.run, args.ensemble or (),
                                             args.checkpoint, args.device)
    reports = contrastive_eval.contrastive_and_store(ws, sessions, run_ids, path, examples,
                                            JobContext([StderrProgress("scored")]), log)
    tables = contrastive_eval.contrastive_tables(reports, f"Contrastive accuracy on {path.name}")
    if args.gates is not None:
        profiles = contrastive_eval.gates_and_store(ws, sessions, run_ids, path, examples, args.gates,
                                           JobContext([StderrProgress("gates of")]), log)
        tables += [profile.to_table(f"Mean gate per source word on {path.name} ({name})")
                   for name, profile in profiles.items()]
    for t in tables:
        print(t.to_markdown())
    if args.report:
        for p in eval_scores.write_report(args.report, tables, tables[0].title):
            log(f"wrote {p}")
    return 0

"""`translate`: translate text with one trained run or an ensemble.

    translate --run RUN [--ensemble RUN ...] [--beam 5] [--n-best K] [--unk-replace]
              [--dictionary FILE] [--json] [--input F] [--output F] [--document]
              [--target-context] [--warnings]

Reads one sentence per line from stdin or --input (with --document, or an --input
ending in .docx, .tmx, .xlf or .xliff: a .txt/.md/.docx document split into sentences, or a TMX/XLIFF file's
source segments; the whole file is one document, so a context model's context crosses
paragraph ends) and writes one detokenised translation per line (per paragraph with
--document, the blank lines between paragraphs kept) to stdout or --output
(atomically); an --output ending in .docx is the translated Word document of a .docx
--input (styles and the first run's formatting of each paragraph kept). --target-context gives a context model its own previous translations as
context instead of the previous source sentences (with separate source and target
vocabularies, mapped to source ids by token string). --json writes JSON lines with
tokens, scores and attention (target tokens x source tokens); an --output ending in
.tmx, .xlf, .tsv or .jsonl is written in that format (a TMX/XLIFF input's segment ids
kept) and recorded in the workspace.
--warnings prints to stderr, per sentence, where the output may invent or drop content
(a number or name of the source missing, a number made up, an output much shorter or
longer than usual: core.evaluate.output_checks).
--n-best K writes 'i ||| text ||| score' lines, or to a .jsonl file one record per
hypothesis (id = the sentence's number, meta.rank); .tmx/.xlf/.tsv cannot hold it.
--output is checked (format, writable) before any work.
Progress goes to stderr for long inputs. The work is core.services.translation's, which
the Translate screen uses too.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from core import limits
from core.allocator import limit_onednn_cache
from core.atomic import check_writable, write_text_atomic
from core.cli.progress import StderrProgress
from core.data.textio import CONVERT_TO_UTF8, read_bytes, read_lines, read_stream
from core.errors import ConfigError, CorpusError
from core.evaluate.output_checks import check_translations, warning_lines
from core.formats.decoding_meta import with_decoding
from core.infer.decoding import decoding_settings
from core.jobs import JobContext
from core.services import n_best, translation
from core.workspace.store import Workspace

EXPORT_SUFFIXES = (".tmx", ".xlf", ".xliff", ".tsv", ".jsonl", ".docx")
#: --input files always read as documents (their segments or paragraphs, never their lines)
STRUCTURED_SUFFIXES = (".docx", ".tmx", ".xlf", ".xliff")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `translate` command (text, files or documents with trained runs) to `sub`."""
    p = sub.add_parser("translate", help="translate text or a document with trained runs")
    add_model_args(p)
    p.add_argument("--amp", action="store_true",
                   help="decode in bf16 autocast: on CUDA, or on a CPU with native bf16 "
                   "(AVX512-BF16, AMX; elsewhere fp32, and the command says so). About 2x "
                   "faster beam search on such CPUs (docs/benchmarks.md)")
    p.add_argument("--shortlist", nargs="?", const="50,100", metavar="PER_WORD,FREQUENT",
                   help="decode each batch over a lexical shortlist: each source word's "
                   "PER_WORD likeliest translations (eflomal links of the run's training "
                   "split, computed once and stored with the run) plus the FREQUENT most "
                   "frequent target words (default 50,100). Faster on the CPU, at a small "
                   "cost in BLEU (docs/benchmarks.md)")
    p.add_argument("--beam", type=int, default=5, help="beam size (1 = greedy; default 5)")
    p.add_argument("--n-best", type=int, default=1,
                   help="print the K best translations per sentence ('i ||| text ||| score'; "
                   "to a .jsonl --output one record per hypothesis, meta.rank 1 = best)")
    p.add_argument("--unk-replace", action="store_true",
                   help="replace <unk> by the attended source word or its --dictionary entry")
    p.add_argument("--dictionary", metavar="FILE",
                   help="TSV 'source<TAB>target[<TAB>count<TAB>total]' for --unk-replace")
    p.add_argument("--json", action="store_true",
                   help="JSON lines with tokens, scores and attention instead of text")
    p.add_argument("--input", metavar="FILE", help="read this file instead of stdin")
    p.add_argument("--output", metavar="FILE",
                   help="write here (atomically) instead of stdout; .tmx/.xlf/.tsv/.jsonl "
                   "choose that format; .docx (from a .docx --input) is the translated "
                   "Word document")
    p.add_argument("--document", action="store_true",
                   help="--input is a document (.txt, .md, .docx, .tmx, .xlf): split it into "
                   "sentences and translate them in order as one document (context "
                   "models see the previous ones); one output line per paragraph, blank "
                   "lines kept (implied by a .docx, .tmx, .xlf or .xliff --input)")
    p.add_argument("--target-context", action="store_true",
                   help="context models: use the model's own previous translations as the "
                   "context, not the previous source sentences (sentence i waits for i - 1); "
                   "a run trained with model.ctx_side = 'target' always does")
    p.add_argument("--warnings", action="store_true",
                   help="print to stderr where an output may invent or drop content: a "
                   "number or name of the source missing, a number the source does not "
                   "have, an output much shorter or longer than the others")
    p.set_defaults(func=run)


def add_model_args(p: argparse.ArgumentParser,
                   run_help: str = "trained run (name or id); given again, the runs are "
                   "ensembled, as with --ensemble") -> None:
    """--run, --ensemble, --checkpoint, --device: shared by translate and evaluate
    (`run_help` says what a repeated --run does)."""
    p.add_argument("--run", required=True, action="append", metavar="RUN", help=run_help)
    p.add_argument("--ensemble", nargs="+", default=[], metavar="RUN",
                   help="more runs to ensemble with --run (same vocabularies)")
    p.add_argument("--checkpoint", default="best", metavar="WHICH",
                   help="best (default), last, or a checkpoint file name of the run")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N or auto")
    p.add_argument("--length-penalty", type=float, default=None, metavar="ALPHA",
                   help="the beam's length penalty, GNMT's alpha (0 = the plain sum of "
                   "log-probabilities, which favours short translations). Default: the "
                   "run's own, chosen on its dev split by evaluate --tune-length-penalty "
                   "(0 for a run never tuned)")
    add_int8_arg(p)


def add_int8_arg(p: argparse.ArgumentParser) -> None:
    """--int8 / --no-int8: shared by translate, evaluate and align."""
    p.add_argument("--int8", action=argparse.BooleanOptionalAction, default=False,
                   help="CPU only: compute the weight products (output layer, attention "
                   "and feed-forward projections, recurrent cells) in int8 with per-row "
                   "scales, a shipped int8 run's own (core.models.int8). Faster; results "
                   "differ slightly from fp32 (docs/benchmarks.md). Default: off")


def apply_int8(sessions, args: argparse.Namespace, say: bool = True) -> str:
    """Switch each session to int8 when --int8 was given (ConfigError off the CPU, or
    with --amp) and (`say`) print, on stderr, the line naming the arithmetic that will
    run; returns that line. A command that still reads its input says it after that
    (say_decoding), so that an input error stays the one line printed."""
    if getattr(args, "int8", False) and getattr(args, "amp", False):
        raise ConfigError("--int8 and --amp choose different arithmetic: give one of them")
    line = ""
    for session in sessions:
        line = session.use_int8(bool(getattr(args, "int8", False)))
    if say:
        say_decoding(line)
    return line


def apply_length_penalty(sessions, args: argparse.Namespace) -> None:
    """--length-penalty ALPHA for every session (ConfigError outside [0, 10], or above 0
    for an OpenNMT-py import, whose beam no alpha changes); without it each session keeps
    its run's own (core.infer.session)."""
    alpha = getattr(args, "length_penalty", None)
    if alpha is None:
        return
    if not 0 <= alpha <= 10:
        raise ConfigError(f"--length-penalty {alpha:g}: give GNMT's alpha between 0 and 10 "
                          "(e.g. 1.0; 0 = none)")
    from core.services.length_penalty import ONMT_BEAM  # lazy: it loads the report tables

    for session in sessions:
        if alpha and session.onmt_style:
            raise ConfigError(f"--length-penalty {alpha:g}: {ONMT_BEAM.format(session.names[0])}"
                              "; leave --length-penalty out")
    for session in sessions:
        session.length_penalty = float(alpha)


def say_decoding(line: str) -> None:
    """'decoding: <the arithmetic>' on stderr (apply_int8's line)."""
    print(f"decoding: {line}", file=sys.stderr)


def load_dictionary(path: str | Path) -> dict[str, str]:
    """`src<TAB>tgt` lines, optionally with count and total (core.evaluate.baseline's
    saved dictionary); the first entry of a word wins. Read as any text input
    (core.data.textio): a missing file, a folder or invalid UTF-8 is a CorpusError
    naming the file (and line)."""
    out: dict[str, str] = {}
    lines, _ = read_lines(path, advice=CONVERT_TO_UTF8)
    for k, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        f = line.split("\t")
        if len(f) not in (2, 4) or not f[0] or not f[1]:
            raise CorpusError(path, k, "expected 'source<TAB>target' or "
                              "'source<TAB>target<TAB>count<TAB>total'")
        out.setdefault(f[0], f[1])
    return out


def read_input(args: argparse.Namespace, src_lang: str):
    """The input as a core.services.translation.Document: with --document a document
    file (paragraphs of sentences, or TMX/XLIFF segments), else one sentence per line
    from --input or stdin."""
    if args.document:
        if not args.input:
            raise ConfigError("--document needs --input FILE "
                              f"({', '.join(translation.DOCUMENT_SUFFIXES)})")
        return translation.read_document(args.input, src_lang)

    if args.input:
        return translation.read_lines(read_bytes(args.input), args.input)

    stdin = getattr(sys.stdin, "buffer", None)  # a replaced sys.stdin may be text only
    data = read_stream(stdin, "<stdin>") if stdin is not None else \
        sys.stdin.read().encode("utf-8")
    return translation.read_lines(data, "<stdin>")


def write_output(args: argparse.Namespace, lines: list[str], records: list | None,
                 src_lang: str, tgt_lang: str, document=None,
                 decoding: dict | None = None) -> Path | None:
    """Export formats by --output's suffix (core.services.translation.write_export: a
    .docx, or a TMX/XLIFF keeping `document`'s segment ids); else `document`'s text
    (its layout kept) or `lines` when it is None, or --json lines, to --output
    (atomically) or stdout. `decoding`: the settings (core.infer.decoding) in the
    metadata of TMX, XLIFF and JSON lines. Returns the file written, if any."""
    from core.formats.jsonl import record_to_json  # lazy: a top-level import would load numpy

    if args.output and Path(args.output).suffix.lower() in EXPORT_SUFFIXES and records:
        return translation.write_export(args.output, records, src_lang=src_lang,
                                        tgt_lang=tgt_lang, document=document,
                                        decoding=decoding)[0]
    if args.json and records is not None:
        text = "".join(record_to_json(replace(r, meta=with_decoding(r.meta, decoding))) + "\n"
                       for r in records)
    elif document is not None and records is not None:
        text = translation.document_text(document, [r.translation for r in records])
    else:
        text = "".join(line + "\n" for line in lines)
    if args.output:
        return write_text_atomic(args.output, text)
    sys.stdout.write(text)
    sys.stdout.flush()
    return None


def check_output(path: str, n_best: int, input_path: str | None = None) -> None:
    """--output before any work: a format that can hold the result (an n-best list goes
    to text or .jsonl, not .tmx, .xlf, .tsv or .docx; a .docx comes from a .docx
    `input_path`) and a place it can be written (core.atomic.check_writable);
    ConfigError / OutputError naming it."""
    suffix = Path(path).suffix.lower()
    if suffix == ".docx" and Path(input_path or "").suffix.lower() != ".docx":
        raise ConfigError(f"--output {path}: a Word document is written by translating a "
                          f".docx --input, and {input_path or 'stdin'} is not one: write "
                          ".txt, .tmx, .xlf, .tsv or .jsonl")
    if n_best > 1 and suffix in EXPORT_SUFFIXES and suffix != ".jsonl":
        raise ConfigError(f"--output {path}: a {suffix} file holds one translation per "
                          f"segment, not an n-best list: write --n-best to a .jsonl file (one "
                          "record per hypothesis) or a text file ('i ||| text ||| score' "
                          "lines), or drop --n-best")
    check_writable(path)


def run(args: argparse.Namespace) -> int:
    """`translate`: translate --input (or stdin) and write text, n-best lines, JSON lines or
    an export file; ConfigError on conflicting options. Returns 0."""
    from core.train.device import check_device  # lazy: a top-level import would load torch

    limit_onednn_cache()  # before any product: a document's search would keep ~200 MB
    limits.check_beam(max(args.beam, args.n_best), args.n_best)
    check_device(args.device)
    dictionary = load_dictionary(args.dictionary) if args.dictionary else None
    if dictionary and not args.unk_replace:
        raise ConfigError("--dictionary is used by --unk-replace: add --unk-replace")
    if args.n_best > 1 and (args.json or args.target_context or args.warnings):
        raise ConfigError("--n-best cannot be combined with --json, --target-context or "
                          "--warnings: drop one of them")
    if args.input and Path(args.input).suffix.lower() in STRUCTURED_SUFFIXES:
        args.document = True  # its lines are markup, not sentences
    if args.output:
        check_output(args.output, args.n_best, args.input)
    from core.infer.shortlist import parse_spec  # lazy: a top-level import would load numpy, torch

    spec = parse_spec(args.shortlist) if args.shortlist else None
    with Workspace.open(args.workspace, create=False) as ws:
        runs = [*args.run, *args.ensemble]
        session = translation.open_session(ws, runs, args.checkpoint, args.device)
        apply_int8([session], args, say=False)
        apply_length_penalty([session], args)
        if args.amp:
            # lazy: a top-level import would load torch
            from core.train.device import amp_active, cpu_bf16_status

            session.amp = True
            if not amp_active(session.device, True):
                print(f"note: --amp: {session.device} has no native bf16 "
                      f"({cpu_bf16_status()[1]}); decoding in fp32", file=sys.stderr)
        if spec:
            # lazy: a top-level import would load numpy, torch
            from core.services.shortlist_store import load_shortlist

            session.shortlist = load_shortlist(
                ws, runs[0], *spec, log=lambda m: print(m, file=sys.stderr))
        if args.int8:  # only searches follow: no fp32 copies (the decoding line says so)
            session.drop_fp32()
        src_lang, tgt_lang = session.first.src_pre.lang, session.first.tgt_pre.lang
        document = read_input(args, src_lang)
        if not any(s.strip() for s in document.sentences):  # nothing a file could hold
            raise CorpusError(args.input or "<stdin>", None, "no text to translate (empty, or "
                              "blank lines only): nothing was written")
        translation.check_document_language(document, src_lang, session.names[0])
        if args.target_context:
            translation.check_target_context(session)
        # lazy: a top-level import would load numpy, torch (the shortlist's store)
        from core.services.translation_jobs import decoding_lines

        for line in decoding_lines(session, args.target_context,  # the screen's lines too
                                   beam=max(args.beam, args.n_best)):
            print(line, file=sys.stderr)

        decoding = decoding_settings(session, beam=max(args.beam, args.n_best),
                                     unk_replace=args.unk_replace,
                                     target_context=args.target_context)
        if args.n_best > 1:
            beam, sentences = max(args.beam, args.n_best), document.sentences
            if args.output and Path(args.output).suffix.lower() == ".jsonl":
                records = n_best.n_best_records(session, sentences, beam, args.n_best)
                path = write_output(args, [], records, src_lang, tgt_lang, decoding=decoding)
            else:
                records = n_best.n_best_lines(session, sentences, beam, args.n_best)
                path = write_output(args, records, None, src_lang, tgt_lang)
            if path is not None:  # not recorded: a translation list, not a translation
                print(f"wrote {len(records)} translations (up to {args.n_best} per "
                      f"sentence, {len(sentences)} sentences) to {path}", file=sys.stderr)
            return 0
        paragraphs = translation.translate_document(
            session, document, beam=args.beam, unk_replace=args.unk_replace,
            dictionary=dictionary, ctx=JobContext([StderrProgress()]),
            target_context=args.target_context)
        flat = [t for para in paragraphs for t in para]
        # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
        from core.infer.translate import cut_warnings

        name, unit = args.input or "<stdin>", "sentence" if args.document else "line"
        for warning in cut_warnings(flat, name, unit):
            print(f"warning: {warning}", file=sys.stderr)
        if args.warnings:

            checks = check_translations([t.source for t in flat], [t.text for t in flat],
                                        src_lang, tgt_lang)
            for line in warning_lines(checks, name, unit):
                print(f"warning: {line}", file=sys.stderr)
        # attention only where the output holds it (JSON lines): as lists it would cost
        # more than the translation itself (to_record)
        attention = args.json or Path(args.output or "").suffix.lower() == ".jsonl"
        records = [translation.to_record(t, i, attention=attention)
                   for i, t in enumerate(flat)]
        path = write_output(args, [], records, src_lang, tgt_lang, document, decoding)
        if path is not None:
            translation.record_export(ws, runs[0], document.name, path)
            print(f"wrote {len(records)} translations to {path}", file=sys.stderr)
    return 0

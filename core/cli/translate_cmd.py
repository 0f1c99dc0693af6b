"""`translate`: translate text with one trained run or an ensemble.

    translate --run RUN [--ensemble RUN ...] [--beam 5] [--n-best K] [--unk-replace]
              [--dictionary FILE] [--json] [--input F] [--output F] [--document]
              [--target-context]

Reads one sentence per line from stdin or --input (with --document: a .txt/.md/.docx
document, split into sentences, translated in order so context models see their
context) and writes one detokenised translation per line to stdout or --output
(atomically). --target-context gives a context model its own previous translations as
context instead of the previous source sentences (with separate source and target
vocabularies, mapped to source ids by token string). --json writes JSON lines with
tokens, scores and attention (target tokens x source tokens); an --output ending in
.tmx, .xlf, .tsv or .jsonl is written in that format. Progress goes to stderr for long inputs.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core.errors import ConfigError, CorpusError
from core.jobs import JobContext, JobEvent
from core.services.translation import open_session

PROGRESS_MIN = 20  # inputs with more sentences show progress on stderr
EXPORT_SUFFIXES = (".tmx", ".xlf", ".xliff", ".tsv", ".jsonl")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("translate", help="translate text or a document with trained runs")
    add_model_args(p)
    p.add_argument("--beam", type=int, default=5, help="beam size (1 = greedy; default 5)")
    p.add_argument("--n-best", type=int, default=1,
                   help="print the K best translations per sentence ('i ||| text ||| score')")
    p.add_argument("--unk-replace", action="store_true",
                   help="replace <unk> by the attended source word or its --dictionary entry")
    p.add_argument("--dictionary", metavar="FILE",
                   help="TSV 'source<TAB>target[<TAB>count<TAB>total]' for --unk-replace")
    p.add_argument("--json", action="store_true",
                   help="JSON lines with tokens, scores and attention instead of text")
    p.add_argument("--input", metavar="FILE", help="read this file instead of stdin")
    p.add_argument("--output", metavar="FILE",
                   help="write here (atomically) instead of stdout; .tmx/.xlf/.tsv/.jsonl "
                   "choose that format")
    p.add_argument("--document", action="store_true",
                   help="--input is a document (.txt, .md, .docx): split it into sentences "
                   "and translate them in order (context models see the previous ones)")
    p.add_argument("--target-context", action="store_true",
                   help="context models: use the model's own previous translations as the "
                   "context, not the previous source sentences (sentence i waits for i - 1)")
    p.set_defaults(func=run)


def add_model_args(p: argparse.ArgumentParser) -> None:
    """--run, --ensemble, --checkpoint, --device: shared by translate and evaluate."""
    p.add_argument("--run", required=True, action="append", metavar="RUN",
                   help="trained run (name or id)")
    p.add_argument("--ensemble", nargs="+", default=[], metavar="RUN",
                   help="more runs to ensemble with --run (same vocabularies)")
    p.add_argument("--checkpoint", default="best", metavar="WHICH",
                   help="best (default), last, or a checkpoint file name of the run")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N or auto")


def load_dictionary(path: str | Path) -> dict[str, str]:
    """`src<TAB>tgt` lines, optionally with count and total (core.evaluate.baseline's
    saved dictionary); the first entry of a word wins."""
    out: dict[str, str] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise CorpusError(path, None, "file not found: check the path") from None
    for k, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        f = line.split("\t")
        if len(f) not in (2, 4) or not f[0] or not f[1]:
            raise CorpusError(path, k, "expected 'source<TAB>target' or "
                              "'source<TAB>target<TAB>count<TAB>total'")
        out.setdefault(f[0], f[1])
    return out


class StderrProgress:
    """Prints 'translated i/n' on stderr (overwriting itself) for long inputs."""

    def __init__(self, label: str = "translated", stream=None):
        self.label, self.stream = label, stream

    def __call__(self, e: JobEvent) -> None:
        if e.kind != "progress" or not e.data.get("total") or e.data["total"] < PROGRESS_MIN:
            return
        done, total = e.data["done"], e.data["total"]
        end = "\n" if done >= total else ""
        print(f"\r{self.label} {done}/{total}", end=end, file=self.stream or sys.stderr,
              flush=True)


def read_input(args: argparse.Namespace, src_lang: str) -> tuple[list[str], list[list[str]]]:
    """-> (sentences, documents): documents is [sentences] except with --document, where
    each paragraph's sentences are a group (all translated as one document)."""
    if args.document:
        if not args.input:
            raise ConfigError("--document needs --input FILE (.txt, .md or .docx)")
        from core.formats.documents import read_paragraphs

        paragraphs = read_paragraphs(args.input, src_lang)
        return [s for para in paragraphs for s in para], paragraphs
    # read as a corpus is imported (core.data.textio): invalid UTF-8 and NUL bytes are
    # errors naming the line; lines end at '\n' only
    from core.data.textio import decode_text, read_bytes, read_stream, split_lines

    if args.input:
        data = read_bytes(args.input)
    else:
        stdin = getattr(sys.stdin, "buffer", None)  # a replaced sys.stdin may be text only
        data = read_stream(stdin, "<stdin>") if stdin is not None else \
            sys.stdin.read().encode("utf-8")
    text, _ = decode_text(data, args.input or "<stdin>")
    lines = split_lines(text)
    return lines, [lines]


def to_record(tr: Any, index: int, doc_id: str | None = None):
    """A Translation -> TranslationRecord with tokens, scores and the attention of the
    output tokens (the EOS row left out): target_tokens x source_tokens."""
    from core.formats.records import TranslationRecord

    n = len(tr.target_tokens)
    attention = tr.attention[:n].tolist() if n else []
    meta: dict[str, Any] = {}
    if tr.positions is not None:
        meta["positions"] = [float(x) for x in tr.positions[:n]]
    if tr.gates is not None:  # context models: lambda per source token
        meta["gates"] = [float(x) for x in tr.gates]
    if tr.unk_report is not None and tr.unk_report.n_unk:
        meta["unk_replaced"] = tr.unk_report.n_replaced
    return TranslationRecord(source=tr.source, translation=tr.text, id=str(index + 1),
                             doc_id=doc_id, source_tokens=list(tr.source_tokens),
                             target_tokens=list(tr.target_tokens), score=float(tr.log_prob),
                             attention=attention, meta=meta)


def n_best_lines(session, sentences: list[str], beam: int, n_best: int,
                 batch_size: int = 32) -> list[str]:
    """Moses-style n-best lines 'i ||| translation ||| score' (i 0-based)."""
    from core.infer.search import beam_search
    from core.infer.translate import as_model, detokenize, pad_batch, source_tokens

    if session.is_context_model:
        raise ConfigError("--n-best works with sentence-level runs; a context model "
                          "translates whole documents")
    if n_best > beam:
        raise ConfigError(f"--n-best {n_best} needs --beam of at least {n_best}")
    src_vocab, tgt_vocab, src_pre, tgt_pre = session._text_side()
    model = as_model(session.models)
    device = next(session.models[0].parameters()).device
    out = []
    for start in range(0, len(sentences), batch_size):
        chunk = sentences[start:start + batch_size]
        ids = [list(src_vocab.encode(source_tokens(s, src_pre, src_vocab))) for s in chunk]
        keep = [k for k, s in enumerate(ids) if s]
        found = beam_search(model, *pad_batch([ids[k] for k in keep], device), beam=beam,
                            n_best=n_best) if keep else []
        hyps = dict(zip(keep, found, strict=True))
        for k in range(len(chunk)):
            for h in hyps.get(k, []):
                text = detokenize(list(tgt_vocab.decode(h.tokens)), tgt_pre, tgt_vocab)
                out.append(f"{start + k} ||| {text} ||| {h.score:.4f}")
    return out


def write_output(args: argparse.Namespace, lines: list[str], records: list | None,
                 src_lang: str, tgt_lang: str) -> Path | None:
    from core.atomic import write_text_atomic
    from core.formats.jsonl import record_to_json

    if args.output and Path(args.output).suffix.lower() in EXPORT_SUFFIXES and records:
        from core.formats.export import write_translations

        return write_translations(args.output, records, src_lang=src_lang,
                                  tgt_lang=tgt_lang)[0]
    if args.json and records is not None:
        lines = [record_to_json(r) for r in records]
    text = "".join(line + "\n" for line in lines)
    if args.output:
        return write_text_atomic(args.output, text)
    sys.stdout.write(text)
    sys.stdout.flush()
    return None


def check_target_context(session, args: argparse.Namespace) -> None:
    """--target-context needs a context model (and no --n-best); says on stderr when the
    run's vocabularies differ and the context is mapped by token string."""
    if not session.is_context_model:
        raise ConfigError(f"--target-context works with context models (family concat or "
                          f"context_transformer) translating a document; "
                          f"{session.names[0]!r} is a {session.first.config.model.family!r} "
                          "run that translates each sentence on its own: drop "
                          "--target-context or choose a context model")
    if args.n_best > 1:
        raise ConfigError("--target-context translates documents; --n-best works with "
                          "sentence-level runs only: drop one of them")
    note = session.target_context_note()
    if note:
        print(f"note: {note}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from core.store import Workspace

    if args.beam < 1 or args.n_best < 1:
        raise ConfigError("--beam and --n-best must be 1 or more")
    dictionary = load_dictionary(args.dictionary) if args.dictionary else None
    if dictionary and not args.unk_replace:
        raise ConfigError("--dictionary is used by --unk-replace: add --unk-replace")
    with Workspace.open(args.workspace, create=False) as ws:
        runs = [*args.run, *args.ensemble]
        session = open_session(ws, runs, args.checkpoint, args.device)
        src_lang = session.first.src_pre.lang
        tgt_lang = session.first.tgt_pre.lang
        sentences, documents = read_input(args, src_lang)
        target_context = args.target_context
        if target_context:
            check_target_context(session, args)
        if args.n_best > 1:
            if args.json:
                raise ConfigError("--n-best and --json cannot be combined; choose one")
            write_output(args, n_best_lines(session, sentences, max(args.beam, args.n_best),
                                            args.n_best), None, src_lang, tgt_lang)
            return 0
        ctx = JobContext([StderrProgress()])
        options = dict(beam=args.beam, unk_replace=args.unk_replace, dictionary=dictionary,
                       ctx=ctx, target_context=target_context)
        if args.document:
            translated = session.translate_documents(documents, **options)
            out_lines = [" ".join(t.text for t in para) for para in translated]
            flat = [t for para in translated for t in para]
        else:
            flat = session.translate(sentences, **options) if sentences else []
            out_lines = [t.text for t in flat]
        from core.infer.translate import cut_warnings

        for warning in cut_warnings(flat, args.input or "<stdin>",
                                    "sentence" if args.document else "line"):
            print(f"warning: {warning}", file=sys.stderr)
        records = [to_record(t, i) for i, t in enumerate(flat)]
        path = write_output(args, out_lines, records, src_lang, tgt_lang)
        if path is not None:
            document = Path(args.input).name if args.input else "stdin"
            ws.add_translation(ws.run_id(runs[0]), document, path)
            print(f"wrote {len(flat)} translations to {path}", file=sys.stderr)
    return 0

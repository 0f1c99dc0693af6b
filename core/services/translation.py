"""Translation for both fronts: sessions loaded once, documents read, translated,
compared with a baseline, turned into records, exported and recorded in the workspace.

The `translate` command and the Translate screen both go through here, so a document
translated from either gives the same records (text, log-probability, tokens,
attention, local-p positions, context gates) and the same entry in the workspace's
translations table.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import limits
from core.errors import ConfigError
from core.formats.records import TranslationRecord
from core.jobs import JobContext

#: suffixes `read_document` reads: TMX/XLIFF segments, or text split into sentences
DOCUMENT_SUFFIXES = (".txt", ".md", ".docx", ".tmx", ".xlf", ".xliff")


# --- sessions -----------------------------------------------------------------------------
def open_session(ws, runs: Sequence[int | str], which: str = "best", device: str = "cpu"):
    """A TranslationSession of `runs` (several = an ensemble) at checkpoint `which`
    ('best', 'last' or a file name) on `device` ('cpu', 'cuda', 'auto' ...)."""
    from core.infer.session import TranslationSession
    from core.train.device import pick_device

    return TranslationSession.open(ws, list(runs), which=which, device=pick_device(device))


class SessionCache:
    """TranslationSessions by (workspace, run ids, which): a model is loaded once per
    workbench. Run ids are only unique inside a workspace, so the workspace's folder is
    part of the key. Thread-safe: the GUI opens sessions from worker threads; a model is
    loaded under its own key's lock, so `clear` (on the GUI thread) never waits for a
    load, and two keys load side by side."""

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, tuple[int, ...], str], Any] = {}
        self._loading: dict[tuple[str, tuple[int, ...], str], threading.Lock] = {}
        self._lock = threading.Lock()  # guards the two dicts only, never a load
        self._generation = 0  # bumped by clear: a load begun before it is not kept

    def get(self, ws: Any, run_ids: Sequence[int], which: str = "best"):
        """The cached TranslationSession of `run_ids` of workspace `ws` at checkpoint
        `which`, opened (on the cpu) on first use."""
        ids = tuple(int(r) for r in run_ids)
        key = (str(ws.root), ids, which)
        with self._lock:
            session = self._sessions.get(key)
            if session is not None:
                return session
            key_lock = self._loading.setdefault(key, threading.Lock())
            generation = self._generation
        with key_lock:  # one load per key: a second caller waits for it and reuses it
            with self._lock:
                session = self._sessions.get(key)
            if session is None:
                session = open_session(ws, list(ids), which)
                with self._lock:
                    if generation == self._generation:
                        self._sessions[key] = session
                    if self._loading.get(key) is key_lock:
                        del self._loading[key]
            return session

    def clear(self) -> None:
        """Forget every cached session (e.g. a run has new checkpoints); a load under way
        finishes for its caller but is not kept."""
        with self._lock:
            self._sessions.clear()
            self._generation += 1


# --- documents ----------------------------------------------------------------------------
@dataclass
class Document:
    """A source text as paragraphs of sentences. Translation reads all sentences as one
    document (a context model's context crosses paragraph ends); the paragraphs only
    shape the plain-text output (one line per paragraph)."""

    paragraphs: list[list[str]]
    name: str = "stdin"

    @property
    def sentences(self) -> list[str]:
        """Every paragraph's sentences, in order."""
        return [s for para in self.paragraphs for s in para]

    def regroup(self, items: Sequence[Any]) -> list[list[Any]]:
        """One item per sentence -> the same items grouped by paragraph."""
        it = iter(items)
        return [[next(it) for _ in para] for para in self.paragraphs]

    @classmethod
    def of_lines(cls, lines: Sequence[str], name: str = "stdin") -> Document:
        """One sentence per line (the line becomes its own paragraph)."""
        return cls([[line] for line in lines], name)


def read_document(path: str | Path, lang: str = "en") -> Document:
    """A document file: TMX/XLIFF (each segment's source side is a paragraph of one
    sentence) or .txt/.md/.docx (paragraphs split into sentences with pysbd).
    Errors are CorpusErrors naming the file (and the line where the format has lines)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".tmx":
        from core.formats.tmx import read_tmx

        return Document.of_lines([r.source for r in read_tmx(path)], path.name)
    if suffix in (".xlf", ".xliff"):
        from core.formats.xliff import read_xliff

        return Document.of_lines([r.source for r in read_xliff(path)], path.name)
    from core.formats.documents import read_paragraphs

    return Document(read_paragraphs(path, lang), path.name)


def read_lines(data: bytes, name: str) -> Document:
    """Text with one sentence per line, read as a corpus is imported (core.data.textio:
    invalid UTF-8 and NUL bytes are errors naming the line; lines end at '\\n' only)."""
    from core.data.textio import CONVERT_TO_UTF8, decode_text, split_lines

    text, _ = decode_text(data, name, advice=CONVERT_TO_UTF8)
    return Document.of_lines(split_lines(text), name)


# --- translating --------------------------------------------------------------------------
def translate(session, sentences: list[str], *, beam: int = 5, unk_replace: bool = False,
              dictionary: dict[str, str] | None = None, ctx: JobContext | None = None,
              target_context: bool = False, amp: bool | None = None,
              shortlist: Any = None) -> list[Any]:
    """Translations of `sentences`, in order; a context model reads them as one document
    (with `target_context` it sees its own previous translations, not the sources).
    `amp`: decode in bf16 where the device has it (None: the session's setting);
    `shortlist`: decode over this lexical shortlist (None: the session's)."""
    if target_context:
        check_target_context(session)
    if not sentences:
        return []
    return session.translate(sentences, beam=beam, unk_replace=unk_replace,
                             dictionary=dictionary, ctx=ctx, target_context=target_context,
                             amp=amp, shortlist=shortlist or session.shortlist)


def translate_document(session, document: Document, **options: Any) -> list[list[Any]]:
    """`translate` on the document's sentences, grouped back into its paragraphs."""
    return document.regroup(translate(session, document.sentences, **options))


def check_target_context(session) -> None:
    """Target-side context needs a context model (ConfigError naming the run if not)."""
    if not session.is_context_model:
        raise ConfigError(f"target-side context works with context models (family concat "
                          f"or context_transformer) translating a document; "
                          f"{session.names[0]!r} is a {session.first.config.model.family!r} "
                          "run that translates each sentence on its own: leave the option "
                          "off or choose a context model")


def n_best_lines(session, sentences: list[str], beam: int, n_best: int,
                 batch_size: int | None = None) -> list[str]:
    """Moses-style n-best lines 'i ||| translation ||| score' (i 0-based) of a
    sentence-level run or ensemble (see n_best_lists)."""
    return [f"{i} ||| {text} ||| {score:.4f}"
            for i, hyps in enumerate(n_best_lists(session, sentences, beam, n_best, batch_size))
            for text, score in hyps]


def n_best_records(session, sentences: list[str], beam: int, n_best: int,
                   batch_size: int | None = None) -> list[TranslationRecord]:
    """The n-best lists as TranslationRecords (for JSON lines): one per hypothesis,
    best first; id = the sentence's number (1-based, as to_record's), meta['rank'] =
    the hypothesis's (1 = best), score = its log-probability."""
    return [TranslationRecord(source=src, translation=text, id=str(i + 1), score=score,
                              meta={"rank": rank})
            for i, (src, hyps) in enumerate(zip(sentences, n_best_lists(
                session, sentences, beam, n_best, batch_size), strict=True))
            for rank, (text, score) in enumerate(hyps, start=1)]


def n_best_lists(session, sentences: list[str], beam: int, n_best: int,
                 batch_size: int | None = None) -> list[list[tuple[str, float]]]:
    """Per sentence, its up to `n_best` best (detokenised translation, log-probability),
    best first (none for an empty sentence), of a sentence-level run or ensemble,
    `batch_size` sentences at a time (default:
    core.infer.translate.sentences_per_batch(beam))."""
    from core.infer.search import beam_search
    from core.infer.translate import (
        as_model,
        detokenize,
        pad_batch,
        sentences_per_batch,
        source_tokens,
    )

    if session.is_context_model:
        raise ConfigError("n-best lists work with sentence-level runs; a context model "
                          "translates whole documents")
    if n_best > beam:
        raise ConfigError(f"--n-best {n_best} needs --beam of at least {n_best}")
    limits.check_beam(beam, n_best)
    src_vocab, tgt_vocab, src_pre, tgt_pre = session.text_side()
    model = as_model(session.models)
    device = session.device
    out = []
    batch_size = batch_size or sentences_per_batch(beam)
    for start in range(0, len(sentences), batch_size):
        chunk = sentences[start:start + batch_size]
        ids = [list(src_vocab.encode(source_tokens(s, src_pre, src_vocab))) for s in chunk]
        keep = [k for k, s in enumerate(ids) if s]
        found = []
        if keep:
            src, lens = pad_batch([ids[k] for k in keep], device)
            shortlist = {} if session.shortlist is None else {
                "out_vocab": session.shortlist.candidates(src)}
            with session.precision():
                found = beam_search(model, src, lens, beam=beam, n_best=n_best, **shortlist)
        hyps = dict(zip(keep, found, strict=True))
        for k in range(len(chunk)):
            out.append([(detokenize(list(tgt_vocab.decode(h.tokens)), tgt_pre, tgt_vocab),
                         float(h.score)) for h in hyps.get(k, [])])
    return out


# --- comparing with a baseline --------------------------------------------------------------
class _Phase(JobContext):
    """One phase of a two-phase job: forwards cancel/pause to the outer context, shifts
    progress into the whole job's range and renames per-sentence events."""

    def __init__(self, outer: JobContext, offset: int, total: int, translation_kind: str):
        super().__init__()
        self.outer, self.offset, self.total = outer, offset, total
        self.translation_kind = translation_kind

    @property
    def cancelled(self) -> bool:
        return self.outer.cancelled

    def check_cancelled(self) -> None:
        self.outer.check_cancelled()

    def wait_if_paused(self, poll_s: float = 0.1) -> None:
        self.outer.wait_if_paused(poll_s)

    def emit(self, kind: str, **data: Any) -> None:
        if kind == "progress":
            data["done"] = self.offset + int(data.get("done") or 0)
            data["total"] = self.total
        elif kind == "translation":
            kind = self.translation_kind
        self.outer.emit(kind, **data)


@dataclass
class Comparison:
    """Both models' Translations of the same sentences, in input order."""

    main: list[Any]
    baseline: list[Any]
    main_name: str = "model"
    baseline_name: str = "baseline"

    def differs(self, row: int) -> bool:
        """True when row `row`'s two translations differ (compared token by token on spaces)."""
        return self.main[row].text.split() != self.baseline[row].text.split()

    def n_differ(self) -> int:
        """Rows whose two translations differ."""
        return sum(self.differs(r) for r in range(len(self.main)))


def compare(session, baseline_session, sentences: list[str], *, beam: int = 5,
            unk_replace: bool = False, ctx: JobContext | None = None,
            target_context: bool = False, amp: bool | None = None,
            shortlists: tuple[Any, Any] = (None, None)) -> Comparison:
    """Translate `sentences` with `session` (a context model reads them as one document),
    then with the baseline. Events: 'translation' for the first, 'baseline_translation'
    for the second, 'progress' over both."""
    ctx = ctx or JobContext()
    n = len(sentences)
    main = translate(session, sentences, beam=beam, unk_replace=unk_replace,
                     ctx=_Phase(ctx, 0, 2 * n, "translation"), target_context=target_context,
                     amp=amp, shortlist=shortlists[0])
    baseline = translate(baseline_session, sentences, beam=beam, unk_replace=unk_replace,
                         ctx=_Phase(ctx, n, 2 * n, "baseline_translation"), amp=amp,
                         shortlist=shortlists[1])
    return Comparison(main, baseline, " + ".join(session.names),
                      " + ".join(baseline_session.names))


# --- records, export ----------------------------------------------------------------------
def to_record(tr: Any, index: int, doc_id: str | None = None,
              target: str | None = None) -> TranslationRecord:
    """A Translation -> TranslationRecord (id = index + 1): text, log-probability, tokens,
    attention of the output tokens (the EOS row left out; target_tokens x source_tokens),
    local-p positions and context gates in `meta`. With `target` differing from the
    model's text (a user's edit) the record keeps the text only: the model's scores and
    attention no longer describe it."""
    if target is not None and target != tr.text:
        return TranslationRecord(source=tr.source, translation=target, id=str(index + 1),
                                 doc_id=doc_id, meta={"edited": True})
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


def table_records(sources: Sequence[str], targets: Sequence[str],
                  translations: Sequence[Any]) -> list[TranslationRecord]:
    """Rows of sources and (possibly edited) targets -> records; row i keeps the model's
    extras (to_record) when translations[i] exists and its text is the row's target."""
    if len(sources) != len(targets):
        raise ValueError(f"{len(sources)} sources but {len(targets)} targets")
    return [to_record(translations[i], i, target=t) if i < len(translations)
            else TranslationRecord(source=s, translation=t, id=str(i + 1))
            for i, (s, t) in enumerate(zip(sources, targets, strict=True))]


def export(ws, path: str | Path, records: Sequence[TranslationRecord], *, src_lang: str,
           tgt_lang: str, run: int | str | None = None, document: str = "") -> list[Path]:
    """Write `records` (format by suffix: .txt .tsv .tmx .xlf .xliff .jsonl; atomic) and
    record the export in the workspace's translations table under `run` (when given)."""
    from core.formats.export import write_translations

    written = write_translations(path, list(records), src_lang=src_lang, tgt_lang=tgt_lang)
    record_export(ws, run, document, written[0])
    return written


def record_export(ws, run: int | str | None, document: str, path: Path) -> None:
    """Note a written translation of `document` by `run` in the workspace (no-op without
    a workspace or run)."""
    if ws is not None and run is not None:
        ws.add_translation(ws.run_id(run), document or "untitled", path)

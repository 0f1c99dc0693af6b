"""Translation for both fronts: sessions loaded once, documents read, translated,
compared with a baseline, turned into records, exported and recorded in the workspace.

The `translate` command and the Translate screen both go through here, so a document
translated from either gives the same records (text, log-probability, tokens,
attention, local-p positions, context gates) and the same entry in the workspace's
translations table.
"""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.atomic import write_text_atomic
from core.data.textio import CONVERT_TO_UTF8, decode_text, split_lines
from core.data.tmx import lang_matches
from core.errors import ConfigError, CorpusError, StoreError, WorkbenchError
from core.formats.documents import document_text as rebuild
from core.formats.documents import paragraph_texts, split_paragraphs
from core.formats.docx_write import write_docx
from core.formats.records import TranslationRecord
from core.formats.tmx_records import read_tmx_from
from core.formats.xliff import read_xliff_languages
from core.jobs import JobContext, ShiftedContext
from core.services.language_pairs import UNKNOWN_LANGS, check_baseline_pair
from core.workspace.store import Workspace

if TYPE_CHECKING:  # annotations only: importing the session would load torch
    from core.infer.session import TranslationSession

#: suffixes `read_document` reads: TMX/XLIFF segments, or text split into sentences
DOCUMENT_SUFFIXES = (".txt", ".md", ".docx", ".tmx", ".xlf", ".xliff")


# --- sessions -----------------------------------------------------------------------------
def open_session(ws: Workspace, runs: Sequence[int | str], which: str = "best",
                 device: str = "cpu"):
    """A TranslationSession of `runs` (several = an ensemble) at checkpoint `which`
    ('best', 'last' or a file name) on `device` ('cpu', 'cuda', 'auto' ...)."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.infer.session import TranslationSession
    from core.train.device import pick_device  # lazy: a top-level import would load torch

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

    def get(self, ws: Workspace, run_ids: Sequence[int], which: str = "best"):
        """The cached TranslationSession of `run_ids` of workspace `ws` at checkpoint
        `which`, opened (on the cpu) on first use; what may change after loading read as
        the workspace stores it now (`_follow_stored`)."""
        ids = tuple(int(r) for r in run_ids)
        key = (str(ws.root), ids, which)
        with self._lock:
            session = self._sessions.get(key)
        if session is not None:
            _follow_stored(session, ws, ids)
            return session
        with self._lock:
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


def _follow_stored(session, ws: Workspace, ids: tuple[int, ...]) -> None:
    """A cached session takes its runs' settings as the workspace stores them now: the
    length penalty (the first run's; one tuned since, by evaluate --tune-length-penalty
    in another process, translates with its new alpha) and each member's alignment
    reading (one chosen since, by the Attention screen's "Choose readings" or align
    --remember, is the reading the Evaluation screen's AER reads)."""
    configs = [ws.get_run(run_id).config for run_id in ids]
    session.length_penalty = float(configs[0].get("length_penalty", 0.0))
    for member, config in zip(getattr(session, "members", []), configs, strict=False):
        member.config.alignment_reading = config.get("alignment_reading", "")


# --- documents ----------------------------------------------------------------------------
@dataclass
class Document:
    """A source text as paragraphs of sentences. Translation reads all sentences as one
    document (a context model's context crosses paragraph ends); the paragraphs shape
    the translated document (write_export: a line, or a Word paragraph, per paragraph).

    layout: every paragraph's text in the source, blank ones included (a text file's
    lines, a Word document's paragraphs); each non-blank one is a paragraph of
    `paragraphs`, in order. None: one paragraph per line, no blank ones.
    source: the file read (a .docx export rebuilds it). ids: per sentence, the segment
    id of a TMX/XLIFF source (an export keeps them). doc_ids: per sentence, the
    <file original> of an XLIFF holding several documents: a context model's context
    stops at each one, and an XLIFF export keeps them apart. src_langs: the source
    languages a TMX/XLIFF says it holds (check_document_language); empty elsewhere."""

    paragraphs: list[list[str]]
    name: str = "stdin"
    layout: list[str] | None = None
    source: Path | None = None
    ids: list[str | None] | None = None
    doc_ids: list[str | None] | None = None
    src_langs: tuple[str, ...] = ()

    @property
    def sentences(self) -> list[str]:
        """Every paragraph's sentences, in order."""
        return [s for para in self.paragraphs for s in para]

    def regroup(self, items: Sequence[Any]) -> list[list[Any]]:
        """One item per sentence -> the same items grouped by paragraph."""
        if len(items) != len(self.sentences):
            raise ValueError(f"{len(items)} translations for the {len(self.sentences)} "
                             f"sentences of {self.name}")
        it = iter(items)
        return [[next(it) for _ in para] for para in self.paragraphs]

    @classmethod
    def of_lines(cls, lines: Sequence[str], name: str = "stdin") -> Document:
        """One sentence per line (the line becomes its own paragraph)."""
        return cls([[line] for line in lines], name)


def read_document(path: str | Path, lang: str = "en") -> Document:
    """A document file: TMX/XLIFF (each segment's source side is a paragraph of one
    sentence, its id kept; a TMX read from its `lang` side where it has one) or
    .txt/.md/.docx (paragraphs split into sentences with pysbd, the layout kept). Errors
    are CorpusErrors naming the file (and the line where the format has lines)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in DOCUMENT_SUFFIXES:
        raise CorpusError(path, None, f"cannot read {suffix or 'a file without a suffix'} as a "
                          f"document: open a {', '.join(DOCUMENT_SUFFIXES)} file (plain text "
                          "of one sentence a line: rename it .txt)")
    if suffix in (".tmx", ".xlf", ".xliff"):
        if suffix == ".tmx":  # the side in `lang` where the memory has it
            records, src = read_tmx_from(path, lang)
            langs = {src}
        else:
            records, langs = read_xliff_languages(path)
        document = Document.of_lines([r.source for r in records], path.name)
        document.source, document.ids = path, [r.id for r in records]
        document.src_langs = tuple(sorted(x for x in langs if x))
        if len({r.doc_id for r in records}) > 1:
            document.doc_ids = [r.doc_id for r in records]
        return document

    texts = paragraph_texts(path)
    return Document(split_paragraphs(texts, lang), path.name, layout=texts, source=path)


def text_document(text: str, lang: str = "en", name: str = "typed text") -> Document:
    """Typed or pasted text as a document: each non-blank line a paragraph split into
    sentences, the blank lines kept in its layout."""
    lines = text.splitlines()
    return Document(split_paragraphs(lines, lang), name, layout=lines)


def read_lines(data: bytes, name: str) -> Document:
    """Text with one sentence per line, read as a corpus is imported (core.data.textio:
    invalid UTF-8 and NUL bytes are errors naming the line; lines end at '\\n' only)."""
    text, _ = decode_text(data, name, advice=CONVERT_TO_UTF8)
    return Document.of_lines(split_lines(text), name)


# --- translating --------------------------------------------------------------------------
def translate(session: TranslationSession,
              sentences: list[str], *, beam: int = 5, unk_replace: bool = False,
              dictionary: dict[str, str] | None = None, ctx: JobContext | None = None,
              target_context: bool = False, amp: bool | None = None,
              shortlist: Any = None, int8: bool | None = None,
              length_penalty: float | None = None) -> list[Any]:
    """Translations of `sentences`, in order; a context model reads them as one document
    (with `target_context` it sees its own previous translations, not the sources).
    `amp`: decode in bf16 where the device has it (None: the session's setting);
    `shortlist`: decode over this lexical shortlist (None: the session's); `int8`: with
    int8 products (None: the session's setting; core.models.int8); `length_penalty`:
    the beam's alpha (None: the session's, its run's own)."""
    if target_context:
        check_target_context(session)
    if not sentences:
        return []
    alpha = {} if length_penalty is None else {"length_penalty": float(length_penalty)}
    return session.translate(sentences, beam=beam, unk_replace=unk_replace,
                             dictionary=dictionary, ctx=ctx, target_context=target_context,
                             amp=amp, shortlist=shortlist or session.shortlist, int8=int8,
                             **alpha)


def translate_document(session: TranslationSession,
                       document: Document, **options: Any) -> list[list[Any]]:
    """`translate` on the document's sentences, grouped back into its paragraphs; the
    documents of a several-document source (doc_ids) each on their own, so that a
    context model's context never crosses from one into the next."""
    return document.regroup(translate_apart(session, document.sentences, document.doc_ids,
                                            **options))


def translate_apart(session: TranslationSession, sentences: list[str],
                    doc_ids: Sequence[str | None] | None, **options: Any) -> list[Any]:
    """`translate` on each run of consecutive sentences of one document (`doc_ids`, one
    per sentence; None or a list of another length: all as one document). A `ctx` gets
    the events of the whole list: progress over all sentences, and each translation's
    index in `sentences`, not in its document (core.jobs.ShiftedContext)."""
    if not doc_ids or len(doc_ids) != len(sentences):
        return translate(session, sentences, **options)
    out: list[Any] = []
    start, outer = 0, options.pop("ctx", None)
    for end in range(1, len(sentences) + 1):
        if end == len(sentences) or doc_ids[end] != doc_ids[start]:
            part = None if outer is None else ShiftedContext(outer, start, len(sentences), True)
            out += translate(session, sentences[start:end], ctx=part, **options)
            start = end
    return out


def check_document_language(document: Document, run_src: str, run_name: str) -> None:
    """ConfigError when a TMX/XLIFF `document` says its source text is in a language
    other than `run_src`, the language run `run_name` translates from (a run of unknown
    language, or a file that says none, passes)."""
    if run_src in UNKNOWN_LANGS:
        return
    other = [lang for lang in document.src_langs if not lang_matches(run_src, lang)]
    if other:
        raise ConfigError(
            f"{document.name} says its source text is in {', '.join(map(repr, other))}, but "
            f"run {run_name!r} translates from {run_src!r}: choose a run that translates "
            f"from {other[0]!r}, or correct the file's source language if it is wrong")


def check_target_context(session: TranslationSession) -> None:
    """Target-side context needs a context model (ConfigError naming the run if not)."""
    if not session.is_context_model:
        raise ConfigError(f"target-side context works with context models (family concat "
                          f"or context_transformer) translating a document; "
                          f"{session.names[0]!r} is a {session.first.config.model.family!r} "
                          "run that translates each sentence on its own: leave the option "
                          "off or choose a context model")


# --- comparing with a baseline --------------------------------------------------------------
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


def compare(session: TranslationSession, baseline_session, sentences: list[str], *, beam: int = 5,
            unk_replace: bool = False, ctx: JobContext | None = None,
            target_context: bool = False, amp: bool | None = None,
            shortlists: tuple[Any, Any] = (None, None), int8: bool | None = None,
            pairs: tuple[Sequence[str], Sequence[str]] = (("", ""), ("", "")),
            doc_ids: Sequence[str | None] | None = None,
            length_penalty: float | None = None) -> Comparison:
    """Translate `sentences` with `session` (a context model reads them as one document,
    or each of its `doc_ids` apart: translate_apart), then with the baseline, both in
    the same arithmetic (`amp`, `int8`). Events: 'translation' for the first,
    'baseline_translation' for the second, 'progress' over both. `pairs` = the (source,
    target) languages of the session's run and of the baseline's: a baseline of another
    pair is a ConfigError (it would translate the text as another language), before
    anything is translated.
    `length_penalty`: both runs' beam alpha (None: each run's own)."""
    check_baseline_pair(pairs, (" + ".join(session.names), " + ".join(baseline_session.names)))
    ctx = ctx or JobContext()
    n = len(sentences)
    main = translate_apart(session, sentences, doc_ids, beam=beam, unk_replace=unk_replace,
                           ctx=ShiftedContext(ctx, 0, 2 * n),
                           target_context=target_context, amp=amp, shortlist=shortlists[0],
                           int8=int8, length_penalty=length_penalty)
    baseline = translate_apart(baseline_session, sentences, doc_ids, beam=beam,
                               unk_replace=unk_replace,
                               ctx=ShiftedContext(ctx, n, 2 * n, rename="baseline_translation"),
                               amp=amp, shortlist=shortlists[1], int8=int8,
                               length_penalty=length_penalty)
    return Comparison(main, baseline, " + ".join(session.names),
                      " + ".join(baseline_session.names))


# --- records, export ----------------------------------------------------------------------
def to_record(tr: Any, index: int, doc_id: str | None = None,
              target: str | None = None, attention: bool = True) -> TranslationRecord:
    """A Translation -> TranslationRecord (id = index + 1): text, log-probability, tokens,
    attention of the output tokens (the EOS row left out; target_tokens x source_tokens;
    None when not `attention`: as Python lists it costs about 32 bytes a weight, 110 MB
    for a 3,000-sentence document, which only JSON lines write), local-p positions and
    context gates in `meta`. With `target` differing from the model's text (a user's
    edit) the record keeps the text only: the model's scores and attention no longer
    describe it."""
    if target is not None and target != tr.text:
        return TranslationRecord(source=tr.source, translation=target, id=str(index + 1),
                                 doc_id=doc_id, meta={"edited": True})
    n = len(tr.target_tokens)
    weights = (tr.attention[:n].tolist() if n else []) if attention else None
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
                             attention=weights, meta=meta)


def table_records(sources: Sequence[str], targets: Sequence[str],
                  translations: Sequence[Any]) -> list[TranslationRecord]:
    """Rows of sources and (possibly edited) targets -> records; row i keeps the model's
    extras (to_record) when translations[i] exists and its text is the row's target."""
    if len(sources) != len(targets):
        raise ValueError(f"{len(sources)} sources but {len(targets)} targets")
    return [to_record(translations[i], i, target=t) if i < len(translations)
            else TranslationRecord(source=s, translation=t, id=str(i + 1))
            for i, (s, t) in enumerate(zip(sources, targets, strict=True))]


#: suffixes of the translated document itself (write_export), besides the record formats
#: of core.formats.export
DOCUMENT_EXPORTS = (".docx", ".txt", ".md")


def paragraph_translations(document: Document, targets: Sequence[str]) -> list[str]:
    """One text per paragraph of `document`: its sentences' targets joined by spaces."""
    return [" ".join(t.strip() for t in para if t.strip())
            for para in document.regroup(list(targets))]


def document_text(document: Document, targets: Sequence[str]) -> str:
    """The translated document as text: a line per paragraph, and with a layout its
    blank lines where the source had them."""
    paragraphs = paragraph_translations(document, targets)
    if document.layout is None:
        return "".join(p + "\n" for p in paragraphs)

    return rebuild(document.layout, paragraphs)


def check_docx_export(path: str | Path, document: Document | None) -> None:
    """A .docx is written only from the Word document that was translated (ConfigError
    saying what to export instead)."""
    source = document.source if document is not None else None
    if source is None or source.suffix.lower() != ".docx" or document.layout is None:
        what = document.name if document is not None else "this text"
        raise ConfigError(f"{path}: a Word document (.docx) is written by translating a "
                          f".docx, and {what} is not one: export it as .txt, .tmx, .xlf, "
                          ".tsv or .jsonl")


def write_export(path: str | Path, records: Sequence[TranslationRecord], *, src_lang: str,
                 tgt_lang: str, document: Document | None = None,
                 decoding: dict[str, Any] | None = None) -> list[Path]:
    """Write the translations to `path`, the format by its suffix, atomically: .docx =
    the translated Word document (the source's package, each paragraph's text replaced:
    core.formats.docx_write); .txt/.md with `document` = the translated document as text
    (blank lines kept); else core.formats.export's formats (.txt without a document: a
    line per record), the records taking a TMX/XLIFF source's segment ids; `decoding`
    (core.infer.decoding.decoding_settings) in the metadata of TMX, XLIFF and JSON
    lines. Returns the files written."""
    from core.formats.export import write_translations  # lazy: a top-level import would load numpy

    suffix = Path(path).suffix.lower()
    targets = [r.translation for r in records]
    if suffix == ".docx":
        return [_write_docx(path, document, targets)]
    if document is not None and suffix in (".txt", ".md"):
        return [write_text_atomic(path, document_text(document, targets))]
    if document is not None and document.ids and len(document.ids) == len(records):
        records = [replace(r, id=i) if i else r for r, i in zip(records, document.ids,
                                                                  strict=True)]
    if document is not None and document.doc_ids and len(document.doc_ids) == len(records):
        records = [replace(r, doc_id=d) for r, d in zip(records, document.doc_ids, strict=True)]
    return write_translations(path, list(records), src_lang=src_lang, tgt_lang=tgt_lang,
                              decoding=decoding)


def _write_docx(path: str | Path, document: Document | None, targets: list[str]) -> Path:
    """The translated Word document: the source .docx with its non-blank paragraphs'
    text replaced; CorpusError when the source changed since it was read."""
    check_docx_export(path, document)
    paragraphs = iter(paragraph_translations(document, targets))
    if paragraph_texts(document.source) != document.layout:
        raise CorpusError(document.source, None, "changed since it was read: open it again "
                          "and translate it, then export")
    return write_docx(path, document.source,
                      [next(paragraphs) if text.strip() else None for text in document.layout])


def export(ws: Workspace | None, path: str | Path, records: Sequence[TranslationRecord], *,
           src_lang: str, tgt_lang: str, run: int | str | None = None, document: str = "",
           source: Document | None = None, decoding: dict[str, Any] | None = None
           ) -> list[Path]:
    """Write `records` (write_export: .docx .txt .md .tsv .tmx .xlf .xliff .jsonl, the
    translated document's own form when `source`, the Document translated, is given)
    and record the export in the workspace's translations table under `run` (when
    given) as a translation of `document` (by default the source's name); `decoding`:
    the settings that translated them (write_export)."""
    written = write_export(path, list(records), src_lang=src_lang, tgt_lang=tgt_lang,
                           document=source, decoding=decoding)
    record_export(ws, run, document or (source.name if source else ""), written[0])
    return written


def record_export(ws: Workspace | None, run: int | str | None, document: str, path: Path) -> None:
    """Note a written translation of `document` by `run` in the workspace (no-op without
    a workspace or run). When that fails (a full disk, a locked database) the error, of
    the same kind, says that `path` was written in full and only the note is missing."""
    if ws is None or run is None:
        return
    try:
        ws.add_translation(ws.run_id(run), document or "untitled", path)
    except (WorkbenchError, sqlite3.Error) as exc:
        kind = type(exc) if isinstance(exc, WorkbenchError) and not isinstance(
            exc, CorpusError) else StoreError
        raise kind(f"{path}: the translations were written in full; only noting them in the "
                   f"workspace's list of translations failed: {exc}") from exc

"""Contrastive evaluation of context-aware translation: does the model give the correct
translation a higher log-probability than a contrastive one that differs only in a
context-dependent detail (a pronoun's gender, a deictic form, ...)?

Two readers build `ContrastiveExample`s:

- `read_pronoun_pairs` / `read_pronoun_set`: the large EN->FR contrastive pronoun set
  of Lopes et al. (2020), ContraPro style. ``PREFIX.current.src/.trg`` hold consecutive
  line pairs with the same English source; the FIRST line of each pair is the correct
  French translation, the second the contrastive one, where the pronoun il/elle/ils/elles
  has the other gender (words that agree with it, adjectives and participles, may change
  gender too). ``PREFIX.cK.context.src/.trg`` hold the K previous sentences of each
  current line: either K lines per current line (oldest first; the layout of the
  released files) or one line per current line with the sentences already joined.
- `read_json_set`: sets in the style of Voita et al. (2019): a JSON list of objects or
  JSON lines, with the field names listed in `FIELDS`.

`contrastive_accuracy(score_fn, examples, ...)` scores every candidate and counts an
example as correct when the correct translation scores strictly higher than every
contrastive one (ties are wrong, and counted apart). `make_score_fn` builds the
`score_fn` of a model by batched forced decoding (core.infer.forced.score_targets).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from core.data.textio import decode_text, read_bytes, split_lines
from core.errors import CorpusError
from core.evaluate.report import Table
from core.infer.scoring import ForcedScorer
from core.jobs import JobContext
from core.models.base import Seq2Seq

#: score_fn(sources, contexts, targets) -> one log-probability per target (higher =
#: better); contexts[i] is the list of previous source sentences, oldest first.
ScoreFn = Callable[[list[str], list[list[str]], list[str]], list[float]]

#: masculine <-> feminine subject pronouns of the EN->FR pronoun set
PRONOUN_SWAPS = {"il": "elle", "elle": "il", "ils": "elles", "elles": "ils"}
_LETTERS = re.compile(r"[^\W\d_]+")


@dataclass
class ContrastiveExample:
    """One test item. `context_src`/`context_tgt`: previous sentences, oldest first
    ([] at a document start). `phenomenon`: what is tested; for the pronoun set the
    correct pronoun, lowercased (il, elle, ils or elles). `more_contrastive`: further
    wrong alternatives (JSON sets may give several). `line`: 1-based line (or record
    start line) of the item in its file."""

    source: str
    context_src: list[str]
    context_tgt: list[str]
    correct: str
    contrastive: str
    phenomenon: str
    line: int = 0
    more_contrastive: tuple[str, ...] = ()

    @property
    def alternatives(self) -> tuple[str, ...]:
        """Every wrong candidate: `contrastive` first."""
        return (self.contrastive, *self.more_contrastive)


# --------------------------------------------------------------------- pronoun set


def _read_lines(path: Path) -> list[str]:
    text, _ = decode_text(read_bytes(path), path)
    return split_lines(text)


def _pronoun_swap(a: str, b: str) -> str | None:
    """The pronoun of token `a` when token `b` is `a` with only that pronoun's gender
    swapped (affixes kept: "qu'il"/"qu'elle", "sont-ils"/"sont-elles"), else None."""
    wa, wb = _LETTERS.findall(a), _LETTERS.findall(b)
    if len(wa) != len(wb) or _LETTERS.sub("", a) != _LETTERS.sub("", b):
        return None
    diff = [(x, y) for x, y in zip(wa, wb, strict=True) if x != y]
    if len(diff) != 1:
        return None
    x, y = diff[0][0].lower(), diff[0][1].lower()
    return x if PRONOUN_SWAPS.get(x) == y else None


def _check_pair(correct: str, contrastive: str, path: Path, line: int,
                max_agreement_edits: int) -> str:
    """The tested pronoun of a correct/contrastive line pair; CorpusError(path, line)
    when they differ in anything but one pronoun and a few agreeing words."""
    ta, tb = correct.split(), contrastive.split()
    if ta == tb:
        raise CorpusError(path, line, "the contrastive line is the same as the correct "
                          "line above it; each pair must differ in a pronoun (il/elle/ils/elles)")
    if len(ta) != len(tb):
        raise CorpusError(path, line, f"the contrastive line has {len(tb)} words, the correct "
                          f"line above it {len(ta)}: a pair must differ only in a pronoun")
    diffs = [(x, y) for x, y in zip(ta, tb, strict=True) if x != y]
    pronouns = [p for p in (_pronoun_swap(x, y) for x, y in diffs) if p is not None]
    if len(pronouns) != 1:
        what = "no il/elle/ils/elles swap" if not pronouns else f"{len(pronouns)} pronoun swaps"
        raise CorpusError(path, line, f"the pair (lines {line - 1}-{line}) has {what}: "
                          f"changed words {diffs}; exactly one pronoun must change gender")
    if len(diffs) - 1 > max_agreement_edits:
        raise CorpusError(path, line, f"the pair (lines {line - 1}-{line}) differs in more than "
                          f"a pronoun: {diffs} ({len(diffs) - 1} other words changed, at most "
                          f"{max_agreement_edits} agreeing words allowed)")
    return pronouns[0]


def _context_rows(path: Path, n: int, k: int) -> tuple[list[list[str]], int]:
    """The context sentences of each of `n` current lines: K lines per current line
    (oldest first) or one joined line per current line; empty lines mean 'no
    sentence' (document start). Also returns the lines per current line."""
    lines = _read_lines(path)
    if len(lines) == k * n:
        per = k
    elif len(lines) == n:
        per = 1
    else:
        line = min(len(lines), k * n) + 1
        raise CorpusError(path, line, f"has {len(lines)} lines for {n} current lines: expected "
                          f"{k * n} ({k} previous sentences per current line) or {n} (one "
                          "line per current line); use the context file made for these lines")
    return [[s for s in lines[i * per:(i + 1) * per] if s.strip()] for i in range(n)], per


def read_pronoun_pairs(
    current_src: str | Path, current_tgt: str | Path, context_src: str | Path | None = None,
    context_tgt: str | Path | None = None, k: int = 1, max_agreement_edits: int = 2,
) -> list[ContrastiveExample]:
    """Read a ContraPro-style pair set (see the module docstring).

    `k` is the number of context sentences per line in the context files (the K of
    ``cK``); `max_agreement_edits` bounds the words besides the pronoun that may change
    (the released EN->FR set changes at most one). Raises CorpusError naming the file
    and line of the first problem: line counts that differ or are odd, a pair whose
    sources differ, a pair that differs in more than a pronoun, context files whose
    line counts do not fit, or the two lines of a pair with different contexts."""
    src_path, tgt_path = Path(current_src), Path(current_tgt)
    src, tgt = _read_lines(src_path), _read_lines(tgt_path)
    if len(src) != len(tgt):
        raise CorpusError(tgt_path, min(len(src), len(tgt)) + 1,
                          f"{tgt_path.name} has {len(tgt)} lines but {src_path.name} has "
                          f"{len(src)}; the two current files must be line-parallel")
    if len(src) % 2:
        raise CorpusError(src_path, len(src), f"has an odd number of lines ({len(src)}): lines "
                          "come in pairs (correct, then contrastive); the last line has no partner")
    n = len(src)
    ctx_s = _context_rows(Path(context_src), n, k) if context_src is not None else None
    ctx_t = _context_rows(Path(context_tgt), n, k) if context_tgt is not None else None
    rows_s, rows_t = (c[0] if c else None for c in (ctx_s, ctx_t))
    examples: list[ContrastiveExample] = []
    for i in range(0, n, 2):
        line = i + 1  # the correct line; the contrastive one is line + 1
        if not src[i].strip():
            raise CorpusError(src_path, line, "empty source line; every pair needs its English sentence")
        if src[i] != src[i + 1]:
            raise CorpusError(src_path, line + 1, f"the two lines of the pair at lines {line}-"
                              f"{line + 1} have different sources; both must be the same sentence")
        pronoun = _check_pair(tgt[i], tgt[i + 1], tgt_path, line + 1, max_agreement_edits)
        for c, path in ((ctx_s, context_src), (ctx_t, context_tgt)):
            if c is not None and c[0][i] != c[0][i + 1]:
                raise CorpusError(path, (i + 1) * c[1] + 1, f"the context of current line "
                                  f"{line + 1} differs from that of line {line}, its pair's "
                                  "correct line; the context file does not match these lines")
        examples.append(ContrastiveExample(
            source=src[i], context_src=list(rows_s[i]) if rows_s else [],
            context_tgt=list(rows_t[i]) if rows_t else [], correct=tgt[i],
            contrastive=tgt[i + 1], phenomenon=pronoun, line=line))
    return examples


def read_pronoun_set(folder: str | Path, k: int = 1, prefix: str = "OpenSubs",
                     max_agreement_edits: int = 2) -> list[ContrastiveExample]:
    """The released layout: ``folder/PREFIX.current.{src,trg}`` and, for k > 0,
    ``folder/PREFIX.c{k}.context.{src,trg}``."""
    folder = Path(folder)
    ctx = (None, None) if k <= 0 else tuple(folder / f"{prefix}.c{k}.context.{s}" for s in ("src", "trg"))
    return read_pronoun_pairs(folder / f"{prefix}.current.src", folder / f"{prefix}.current.trg",
                              ctx[0], ctx[1], k=max(k, 1), max_agreement_edits=max_agreement_edits)


# ------------------------------------------------------------------------ JSON sets

#: accepted names of each field of a JSON record (exactly one name per field may be used)
FIELDS: dict[str, tuple[str, ...]] = {
    "source": ("src", "source"),
    "correct": ("dst", "tgt", "target", "correct"),
    "contrastive": ("contrastive", "dst_contrastive", "tgt_contrastive", "incorrect",
                    "dst_alternatives"),
    "context_src": ("context", "src_context", "context_src", "ctx"),
    "context_tgt": ("dst_context", "tgt_context", "context_tgt"),
    "phenomenon": ("phenomenon", "type", "pronoun", "category"),
}
_REQUIRED = ("source", "correct", "contrastive")


def _records(text: str, path: Path) -> list[tuple[int, Any]]:
    """(start line, value) of each record: the items of a top-level JSON list, or one
    JSON value per non-empty line (JSON lines)."""
    def fail(exc: json.JSONDecodeError, base_line: int = 0) -> CorpusError:
        return CorpusError(path, base_line + exc.lineno, f"invalid JSON ({exc.msg}, column "
                           f"{exc.colno}); fix the file or save it as a JSON list or JSON lines")

    stripped = text.lstrip()
    if not stripped.startswith("["):
        out = []
        for no, raw in enumerate(split_lines(text), start=1):
            if raw.strip():
                try:
                    out.append((no, json.loads(raw)))
                except json.JSONDecodeError as exc:
                    raise fail(exc, no - 1) from None
        return out
    decoder = json.JSONDecoder()
    pos, out = text.index("[") + 1, []
    ws = re.compile(r"\s*")
    while True:
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith("]", pos):
            break
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise fail(exc) from None
        out.append((text.count("\n", 0, pos) + 1, value))
        pos = ws.match(text, end).end()  # type: ignore[union-attr]
        if text.startswith(",", pos):
            pos += 1
        elif not text.startswith("]", pos):
            raise CorpusError(path, text.count("\n", 0, pos) + 1,
                              "expected ',' or ']' after a record in the JSON list")
    return out


def _field(rec: dict[str, Any], name: str, where: str, path: Path, line: int) -> Any:
    present = [k for k in FIELDS[name] if k in rec]
    if len(present) > 1:
        raise CorpusError(path, line, f"{where} gives {name} twice ({', '.join(present)}); keep one")
    if not present:
        if name in _REQUIRED:
            raise CorpusError(path, line, f"{where} has no {name} field: give one of "
                              f"{', '.join(FIELDS[name])}")
        return None
    return rec[present[0]]


def _sentences(value: Any, what: str, where: str, path: Path, line: int,
               separator: str | None) -> list[str]:
    if isinstance(value, str):
        parts = value.split(separator) if separator else [value]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        parts = list(value)
    else:
        raise CorpusError(path, line, f"{where}: {what} must be a string or a list of strings, "
                          f"not {type(value).__name__}")
    if not parts:
        raise CorpusError(path, line, f"{where}: {what} is an empty list; give at least one sentence")
    return [p.strip() for p in parts]


def _json_example(rec: Any, n: int, line: int, path: Path, separator: str | None,
                  phen_default: str) -> ContrastiveExample:
    """One JSON record (the n-th, starting at `line`) -> an example (see read_json_set)."""
    where = f"record {n}"
    if not isinstance(rec, dict):
        raise CorpusError(path, line, f"{where} is a {type(rec).__name__}, not an object")

    def get(name: str) -> Any:
        return _field(rec, name, where, path, line)

    def sentences(value: Any, what: str, sep: str | None = separator) -> list[str]:
        return _sentences(value, what, where, path, line, sep)

    src, tgt = sentences(get("source"), "source"), sentences(get("correct"), "correct")
    raw_alts = get("contrastive")
    alts = [sentences(a, "contrastive")[-1]
            for a in (raw_alts if isinstance(raw_alts, list) else [raw_alts])]
    ctx_s, ctx_t = get("context_src"), get("context_tgt")
    ctx_s = src[:-1] if ctx_s is None else sentences(ctx_s, "context", None)
    ctx_t = tgt[:-1] if ctx_t is None else sentences(ctx_t, "context", None)
    if not src[-1] or not tgt[-1] or not alts or not all(alts):  # [] alternatives too
        raise CorpusError(path, line, f"{where} has an empty source, correct or contrastive "
                          "sentence; every candidate needs text")
    if tgt[-1] in alts:
        raise CorpusError(path, line, f"{where}: a contrastive translation equals the correct one")
    phen = get("phenomenon")
    return ContrastiveExample(
        source=src[-1], context_src=[s for s in ctx_s if s], context_tgt=[s for s in ctx_t if s],
        correct=tgt[-1], contrastive=alts[0], more_contrastive=tuple(alts[1:]),
        phenomenon=str(phen) if phen is not None else phen_default, line=line)


def read_json_set(path: str | Path, separator: str | None = None,
                  default_phenomenon: str | None = None) -> list[ContrastiveExample]:
    """Read a Voita-style contrastive set: a JSON list of objects, or one object per
    line. Field names (one per field, see `FIELDS`): source ``src``/``source``;
    correct translation ``dst``/``tgt``/``target``/``correct``; contrastive
    ``contrastive``/``dst_contrastive``/``tgt_contrastive``/``incorrect``/
    ``dst_alternatives`` (a string or a list of several); optional source context
    ``context``/``src_context``/``context_src``/``ctx``, target context
    ``dst_context``/``tgt_context``/``context_tgt`` and ``phenomenon``/``type``/
    ``pronoun``/``category`` (else `default_phenomenon`, else the file's stem). Other
    fields are ignored.

    Source and correct target may be lists of sentences (context first, the current
    sentence last) or, with `separator` (e.g. ``" _eos "``), strings of joined
    sentences; the leading sentences are then the context unless a context field is
    given. Contrastive strings are split the same way and only their last sentence kept.
    """
    path = Path(path)
    text, _ = decode_text(read_bytes(path), path)
    out = [_json_example(rec, n, line, path, separator, default_phenomenon or path.stem)
           for n, (line, rec) in enumerate(_records(text, path), start=1)]
    if not out:
        raise CorpusError(path, None, "holds no records; expected a JSON list of objects or JSON lines")
    return out


# ----------------------------------------------------------------------- accuracy


@dataclass
class GroupScore:
    total: int = 0
    correct: int = 0
    ties: int = 0  # counted as wrong

    @property
    def accuracy(self) -> float:
        """correct / total, a fraction; 0.0 for an empty group."""
        return self.correct / self.total if self.total else 0.0


@dataclass
class ContrastiveReport:
    """Accuracy overall and per phenomenon (pronoun). `margins[i]`: score of the
    correct translation minus the best contrastive score of example i (> 0 = right)."""

    overall: GroupScore
    by_phenomenon: dict[str, GroupScore]
    margins: list[float] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        """The overall accuracy, a fraction."""
        return self.overall.accuracy

    def to_table(self, title: str = "Contrastive accuracy") -> Table:
        """One row per phenomenon (sorted) and 'all': examples, correct, ties, accuracy in %."""
        rows = [[name, g.total, g.correct, g.ties, round(100 * g.accuracy, 2)]
                for name, g in [*sorted(self.by_phenomenon.items()), ("all", self.overall)]]
        return Table(["phenomenon", "examples", "correct", "ties", "accuracy %"], rows, title,
                     notes=["An example is correct when the correct translation scores strictly "
                            "higher than every contrastive one; ties count as wrong."])


def contrastive_accuracy(
    score_fn: ScoreFn, examples: Sequence[ContrastiveExample], batch_size: int = 64,
    ctx: JobContext | None = None, context_side: str = "src",
) -> ContrastiveReport:
    """Score the candidates of `batch_size` examples per `score_fn` call (each example
    contributes its correct and contrastive targets) and count. Emits 'progress'
    (examples done, total) after each batch; raises JobCancelled when cancelled.
    `context_side` picks which context score_fn sees: 'src' or 'tgt'."""
    if context_side not in ("src", "tgt"):
        raise ValueError(f"context_side must be 'src' or 'tgt', not {context_side!r}")
    overall, groups, margins = GroupScore(), {}, []
    for start in range(0, len(examples), max(1, batch_size)):
        if ctx is not None:
            ctx.wait_if_paused()
            ctx.check_cancelled()
        chunk = examples[start:start + max(1, batch_size)]
        sources, contexts, targets = [], [], []
        for ex in chunk:
            context = ex.context_src if context_side == "src" else ex.context_tgt
            for cand in (ex.correct, *ex.alternatives):
                sources.append(ex.source)
                contexts.append(list(context))
                targets.append(cand)
        scores = list(score_fn(sources, contexts, targets))
        if len(scores) != len(targets):
            raise ValueError(f"score_fn returned {len(scores)} scores for {len(targets)} targets")
        pos = 0
        for ex in chunk:
            good, best_bad = scores[pos], max(scores[pos + 1:pos + 1 + len(ex.alternatives)])
            pos += 1 + len(ex.alternatives)
            margins.append(float(good - best_bad))
            for g in (overall, groups.setdefault(ex.phenomenon, GroupScore())):
                g.total += 1
                g.correct += good > best_bad
                g.ties += good == best_bad
        if ctx is not None:
            done = start + len(chunk)
            ctx.progress(done, len(examples), f"scored {done}/{len(examples)} contrastive examples")
    return ContrastiveReport(overall, groups, margins)


# --------------------------------------------------------------- model scorer


def make_score_fn(
    model: Seq2Seq, src_vocab: Any, tgt_vocab: Any, src_pre: Any, tgt_pre: Any,
    device: torch.device | str | None = None, k_context: int = 0, k_following: int = 0,
    ctx_side: str = "source",
) -> ScoreFn:
    """A ScoreFn over `model` by teacher-forced scoring of all targets of a call in one
    batch. Text is tokenised as in training (Preprocessor, then the subword splitter
    when the vocabulary has one). With `k_context` > 0 the model gets ``ctx``/
    ``ctx_lens``: the ids of the last `k_context` context sentences (each tokenised on
    its own), joined oldest first with the '</s>' break, or the single CONTEXT_START id
    when there is no previous sentence, as in training (core.data.context).

    `k_following`: the model's model.ctx_following. Contrastive sets give previous
    context only, so for a model with following context (> 0) each current sentence is
    scored as its document's last one: the following side is the CONTEXT_START
    (document end) marker. `ctx_side` 'target': the model reads target-side context
    (model.ctx_side), so the context sentences given to the ScoreFn are target text
    (contrastive_accuracy's context_side 'tgt')."""
    scorer = ForcedScorer(model, src_vocab, tgt_vocab, src_pre, tgt_pre, k_context,
                          k_following, device, ctx_side=ctx_side)

    def score(sources: list[str], contexts: list[list[str]], targets: list[str]) -> list[float]:
        if not sources:
            return []
        items = [scorer.item(s, t, previous=sents[-k_context:] if k_context > 0 else [])
                 for s, sents, t in zip(sources, contexts, targets, strict=True)]
        empty = [i for i, it in enumerate(items) if not it.src]
        if empty:
            raise ValueError(f"source {empty[0]} has no tokens: {sources[empty[0]]!r}")
        return [r.log_prob for r in scorer.score(items, batch_size=len(items))]

    return score

"""Translate raw sentences or whole documents: the function the CLI and the GUI call.

Text -> tokens (Preprocessor, then the vocabulary's subword splitter if it has one)
-> ids -> length-sorted batches -> beam search (greedy when beam == 1) -> ids ->
tokens -> optional unknown-word replacement -> detokenised text. Results come back in
input order. Progress and each finished translation are reported through the
JobContext; a cancelled job raises JobCancelled between batches.

Tokenisation follows training (core.data.dataset.text_to_tokens): Moses tokens for
word vocabularies, sentencepiece pieces of the normalised text for subword ones.
Document context follows core.data.context (sentence_context): the previous K source
sentences' ids joined with the '</s>' break, or the single CONTEXT_START ('<doc>') id at
a document start; then, for models with following context (F > 0), a break and the
next F source sentences, or '<doc>' at a document end.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from core import limits
from core.data.context import CONTEXT_START, sentence_context
from core.data.dataset import text_to_tokens
from core.errors import ConfigError
from core.infer.beam import beam_search
from core.infer.ensemble import Ensemble
from core.infer.greedy import greedy
from core.infer.search import Hypothesis
from core.infer.shortlist import Shortlist
from core.infer.unk_replace import UnkReport, replace_unknowns
from core.jobs import JobContext
from core.models.base import PAD, Seq2Seq


@dataclass
class Translation:
    source: str  # the input text
    source_tokens: list[str]  # one per source id, natural order
    target_ids: list[int]  # without BOS/EOS
    target_tokens: list[str]  # after unknown-word replacement, if asked
    text: str  # detokenised target_tokens
    score: float  # ranking score of the hypothesis
    log_prob: float
    attention: np.ndarray  # (len(target_ids) + 1) x len(source_tokens), last row EOS
    positions: np.ndarray | None = None  # local-p's p_t per output token
    unk_report: UnkReport | None = None
    #: context models: the gate lambda per source token (len(source_tokens), in the
    #: attention's source order), the mean of the d_model-wide gate: how much each token
    #: kept its own representation (1) rather than drawing on the context (0); an
    #: ensemble gives its gated members' mean. None for models without gates.
    gates: np.ndarray | None = None
    #: the source's token count when it had more than NMT_WB_MAX_SENTENCE_TOKENS and only
    #: its first tokens were translated (source_tokens is what the model saw); 0 if not cut
    cut_from: int = 0


def as_model(models: Seq2Seq | Sequence[Seq2Seq]) -> Seq2Seq:
    """One model as is; several as an Ensemble."""
    if isinstance(models, Seq2Seq):
        return models
    models = list(models)
    return models[0] if len(models) == 1 else Ensemble(models)


def source_tokens(text: str, preprocessor: Any, vocab: Any) -> list[str]:
    """The tokens the model sees, one per id (training's rule, core.data.dataset)."""
    return list(text_to_tokens(text, preprocessor, vocab))


def cut_long(toks: list[list[str]]) -> dict[int, int]:
    """Cut, in place, every token list longer than NMT_WB_MAX_SENTENCE_TOKENS (core.limits)
    to its first tokens; returns {index: its length before} of those cut. A longer
    sentence would cost memory quadratic in its length, and the search writes at most
    `max_len_abs` (200) target tokens anyway: the rest is left out, and said so
    (`cut_warnings`), never silently."""
    limit = limits.SENTENCE_TOKENS.value()
    cut = {i: len(t) for i, t in enumerate(toks) if len(t) > limit}
    for i in cut:
        del toks[i][limit:]
    return cut


def cut_warnings(translations: Sequence[Translation], name: str = "<input>",
                 unit: str = "line") -> list[str]:
    """One warning per translation whose source was cut (Translation.cut_from), naming
    `name` and the sentence's `unit` number ('line' for one sentence a line, 'sentence'
    for a document's sentences), 1-based."""
    limit = limits.SENTENCE_TOKENS
    return [f"{name}, {unit} {i}: the sentence has {tr.cut_from:,} tokens, more than the "
            f"limit of {limit.value():,} {limit.what}; only its first {len(tr.source_tokens):,} "
            f"tokens were translated: split the sentence, or {limit.how_to_raise()}"
            for i, tr in enumerate(translations, start=1) if tr.cut_from]


def detokenize(tokens: list[str], preprocessor: Any, vocab: Any) -> str:
    """Tokens -> text: the subword vocabulary's detokenize when it has one, else the
    preprocessor's (Moses); then the run's text convention undone (Preprocessor.restore)."""
    if hasattr(vocab, "detokenize"):  # subword pieces -> text
        return preprocessor.restore(vocab.detokenize(tokens))
    return preprocessor.detokenize(tokens)


def pad_batch(seqs: list[list[int]], device: torch.device | str = "cpu") -> tuple[Tensor, Tensor]:
    """-> ids batch x max_len (PAD-padded, at least one column), lens batch."""
    width = max(1, max((len(s) for s in seqs), default=1))
    ids = torch.full((len(seqs), width), PAD, dtype=torch.long)
    for b, s in enumerate(seqs):
        ids[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return ids.to(device), torch.tensor([len(s) for s in seqs], dtype=torch.long, device=device)


def _device(model: Seq2Seq) -> torch.device:
    param = next(model.parameters(), None)
    return torch.device("cpu") if param is None else param.device


def _search(
    model: Seq2Seq, ids: list[list[int]], beam: int, search_opts: dict[str, Any],
    extra: dict[str, Tensor], shortlist: Shortlist | None = None,
) -> list[Hypothesis]:
    """Decode one batch of source ids; with a shortlist, over its candidates for this
    batch's source words only."""
    src, lens = pad_batch(ids, _device(model))
    extra = {k: v.to(src.device) for k, v in extra.items()}
    if shortlist is not None:
        search_opts = {**search_opts, "out_vocab": shortlist.candidates(src)}
    if beam == 1:
        return greedy(model, src, lens, **search_opts, **extra)
    return [hyps[0] for hyps in beam_search(model, src, lens, beam=beam, **search_opts, **extra)]


def _finish(
    text: str, src_toks: list[str], hyp: Hypothesis | None, tgt_vocab: Any, tgt_pre: Any,
    unk_replace: bool, dictionary: dict[str, str] | None, cut_from: int = 0,
) -> Translation:
    if hyp is None:  # empty input: nothing to translate
        return Translation(text, [], [], [], "", 0.0, 0.0, np.zeros((1, 0), dtype=np.float32))
    tokens = list(tgt_vocab.decode(hyp.tokens))
    report = None
    if unk_replace:
        tokens, report = replace_unknowns(hyp.tokens, tokens, src_toks, hyp.attention, dictionary)
    return Translation(
        source=text, source_tokens=src_toks, target_ids=list(hyp.tokens), target_tokens=tokens,
        text=detokenize(tokens, tgt_pre, tgt_vocab), score=hyp.score, log_prob=hyp.log_prob,
        attention=hyp.attention, positions=hyp.positions, unk_report=report, gates=hyp.gates,
        cut_from=cut_from,
    )


def _checkpoint(ctx: JobContext | None) -> None:
    if ctx is not None:
        ctx.wait_if_paused()
        ctx.check_cancelled()


#: hypotheses one batch decodes: HYPOTHESES_PER_BATCH // beam sentences. A greedy step
#: over 32 sentences is bound by reading the softmax layer's weights (15 MB for the bench
#: model), which a batch of 160 shares five times as widely: 592 against 382 sentences/s
#: on 2 CPU cores; beam 5's 32 sentences (160 rows) were already its best
#: (docs/benchmarks.md)
HYPOTHESES_PER_BATCH = 160


def sentences_per_batch(beam: int) -> int:
    """beam: the beam size (1 = greedy) -> sentences per batch, at least 1."""
    return max(1, HYPOTHESES_PER_BATCH // max(1, beam))


def translate_sentences(
    models: Seq2Seq | Sequence[Seq2Seq], src_vocab: Any, tgt_vocab: Any, src_preprocessor: Any,
    tgt_preprocessor: Any, sentences: list[str], beam: int = 5, batch_size: int | None = None,
    unk_replace: bool = False, dictionary: dict[str, str] | None = None,
    ctx: JobContext | None = None, length_penalty: float = 0.0, length_norm: bool = False,
    max_len_ratio: float = 2.0, max_len_abs: int = 200, shortlist: Shortlist | None = None,
    onmt_style: bool = False,
) -> list[Translation]:
    """Translate independent sentences; results in input order, decoded longest first
    in batches of `batch_size` sentences (default: sentences_per_batch(beam));
    `onmt_style`: OpenNMT-py's beam (core.infer.beam.beam_search). With
    `shortlist`, each batch is decoded over its lexical shortlist (core.infer.shortlist).

    Emits 'progress' (done, total) after each batch and 'translation'
    (index, translation) per sentence; raises core.jobs.JobCancelled when cancelled.
    """
    model = as_model(models)
    batch_size = batch_size or sentences_per_batch(beam)
    search_opts: dict[str, Any] = dict(max_len_ratio=max_len_ratio, max_len_abs=max_len_abs)
    if beam > 1:
        search_opts.update(length_penalty=length_penalty, length_norm=length_norm,
                           onmt_style=onmt_style)
    toks = [source_tokens(s, src_preprocessor, src_vocab) for s in sentences]
    cut = cut_long(toks)
    ids = [list(src_vocab.encode(t)) for t in toks]
    # longest first, so padding is small and memory peaks early
    order = sorted(range(len(sentences)), key=lambda i: -len(ids[i]))
    results: list[Translation | None] = [None] * len(sentences)
    done = 0
    for start in range(0, len(order), max(1, batch_size)):
        _checkpoint(ctx)
        chunk = [i for i in order[start : start + batch_size]]
        todo = [i for i in chunk if ids[i]]
        hyps = dict(zip(todo, _search(model, [ids[i] for i in todo], beam, search_opts, {},
                                           shortlist),
                        strict=True)) if todo else {}
        for i in chunk:
            results[i] = _finish(sentences[i], toks[i], hyps.get(i), tgt_vocab,
                                 tgt_preprocessor, unk_replace, dictionary, cut.get(i, 0))
            if ctx is not None:
                ctx.emit("translation", index=i, translation=results[i])
        done += len(chunk)
        if ctx is not None:
            ctx.progress(done, len(sentences), f"translated {done}/{len(sentences)} sentences")
    return [r for r in results if r is not None]


def build_context(
    previous: list[list[int]], k: int, start_id: int,
    following: list[list[int]] | None = None, f: int = 0,
) -> list[int]:
    """The context ids of a sentence (core.data.context.sentence_context): its last `k`
    predecessors' ids (oldest first) joined with the '</s>' break, or [start_id] at a
    document start; with f > 0, then a break and the first `f` of `following` (the
    sentences after it, in order), or [start_id] at a document end."""
    return sentence_context(previous, following or [], k, f, start_id)


def translate_documents(
    models: Seq2Seq | Sequence[Seq2Seq], src_vocab: Any, tgt_vocab: Any, src_preprocessor: Any,
    tgt_preprocessor: Any, documents: list[list[str]], beam: int = 5,
    batch_size: int | None = None, ctx_sentences: int = 1, target_context: bool = False,
    unk_replace: bool = False, dictionary: dict[str, str] | None = None,
    ctx: JobContext | None = None, length_penalty: float = 0.0, length_norm: bool = False,
    max_len_ratio: float = 2.0, max_len_abs: int = 200, ctx_following: int = 0,
    shortlist: Shortlist | None = None,
) -> list[list[Translation]]:
    """Translate documents in order, giving each sentence the previous `ctx_sentences`
    sentences of its document as `ctx`/`ctx_lens` (source side; or, with
    `target_context`, the model's own previous translations, which only makes sense
    with a joint vocabulary: context ids are embedded as source ids), then the next
    `ctx_following` source sentences of its document (build_context). `target_context`
    with `ctx_following` > 0 is a ConfigError: the following sentences have no
    translation yet, and source ids mixed into a target-side context would be misread
    (core.infer.target_context maps every context id from target to source ids).
    Sentence i of every document goes in one batch, so context is always ready when it
    is needed. Batches of `batch_size` sentences (default: sentences_per_batch(beam)).

    Emits 'progress' (sentences done, total) after each batch and 'translation'
    (document, index, translation) per sentence; raises JobCancelled when cancelled.
    """
    if target_context and ctx_following > 0:
        raise ConfigError(
            f"this model also reads the {ctx_following} following sentence(s) as context, "
            "which have no translation yet when a sentence is translated: target-side "
            "context (the model's own previous translations) cannot serve it; translate "
            "with source-side context")
    model = as_model(models)
    batch_size = batch_size or sentences_per_batch(beam)
    search_opts: dict[str, Any] = dict(max_len_ratio=max_len_ratio, max_len_abs=max_len_abs)
    if beam > 1:
        search_opts.update(length_penalty=length_penalty, length_norm=length_norm)
    start_id = src_vocab.encode([CONTEXT_START])[0]
    toks = [[source_tokens(s, src_preprocessor, src_vocab) for s in doc] for doc in documents]
    cut = [cut_long(doc) for doc in toks]
    ids = [[list(src_vocab.encode(t)) for t in doc] for doc in toks]
    results: list[list[Translation]] = [[] for _ in documents]
    history: list[list[list[int]]] = [[] for _ in documents]  # own translations per document
    total = sum(len(d) for d in documents)
    done = 0
    # (document, position) units in position-major order, cut into rounds: with the
    # model's own translations as context, position i of every document waits for
    # position i - 1 (one round per position); with source context everything is known
    # up front, so one round holds all sentences and a long document fills whole batches.
    longest = max((len(d) for d in documents), default=0)
    units = [[(d, pos) for d in range(len(documents)) if pos < len(documents[d])]
             for pos in range(longest)]
    rounds = units if target_context else [[u for round_ in units for u in round_]]
    for round_ in rounds:
        for start in range(0, len(round_), max(1, batch_size)):
            _checkpoint(ctx)
            chunk = round_[start : start + batch_size]
            todo = [(d, pos) for d, pos in chunk if ids[d][pos]]
            hyps: dict[tuple[int, int], Hypothesis] = {}
            if todo:
                contexts = [build_context(history[d] if target_context else ids[d][:pos],
                                          ctx_sentences, start_id,
                                          ids[d][pos + 1:pos + 1 + ctx_following],
                                          ctx_following) for d, pos in todo]
                c_ids, c_lens = pad_batch(contexts)
                found = _search(model, [ids[d][pos] for d, pos in todo], beam, search_opts,
                                {"ctx": c_ids, "ctx_lens": c_lens}, shortlist)
                hyps = dict(zip(todo, found, strict=True))
            for d, pos in chunk:
                tr = _finish(documents[d][pos], toks[d][pos], hyps.get((d, pos)), tgt_vocab,
                             tgt_preprocessor, unk_replace, dictionary, cut[d].get(pos, 0))
                results[d].append(tr)
                history[d].append(tr.target_ids)
                if ctx is not None:
                    ctx.emit("translation", document=d, index=pos, translation=tr)
            done += len(chunk)
            if ctx is not None:
                ctx.progress(done, total, f"translated {done}/{total} sentences")
    return results


def translate_document(
    models: Seq2Seq | Sequence[Seq2Seq], src_vocab: Any, tgt_vocab: Any, src_preprocessor: Any,
    tgt_preprocessor: Any, sentences: list[str], **options: Any,
) -> list[Translation]:
    """One document's sentences, in order, with context (see translate_documents)."""
    return translate_documents(
        models, src_vocab, tgt_vocab, src_preprocessor, tgt_preprocessor, [sentences], **options
    )[0]

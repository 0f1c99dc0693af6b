"""n-best lists of a sentence-level run or ensemble (translate --n-best): Moses-style
lines, or TranslationRecords for JSON lines, one per hypothesis, best first."""
from __future__ import annotations

from typing import TYPE_CHECKING

from core import limits
from core.errors import ConfigError
from core.formats.records import TranslationRecord

if TYPE_CHECKING:  # annotations only: importing the session would load torch
    from core.infer.session import TranslationSession


def n_best_lines(session: TranslationSession, sentences: list[str], beam: int, n_best: int,
                 batch_size: int | None = None) -> list[str]:
    """Moses-style n-best lines 'i ||| translation ||| score' (i 0-based) of a
    sentence-level run or ensemble (see n_best_lists)."""
    return [f"{i} ||| {text} ||| {score:.4f}"
            for i, hyps in enumerate(n_best_lists(session, sentences, beam, n_best, batch_size))
            for text, score in hyps]


def n_best_records(session: TranslationSession, sentences: list[str], beam: int, n_best: int,
                   batch_size: int | None = None) -> list[TranslationRecord]:
    """The n-best lists as TranslationRecords (for JSON lines): one per hypothesis,
    best first; id = the sentence's number (1-based, as to_record's), meta['rank'] =
    the hypothesis's (1 = best), score = its log-probability."""
    return [TranslationRecord(source=src, translation=text, id=str(i + 1), score=score,
                              meta={"rank": rank})
            for i, (src, hyps) in enumerate(zip(sentences, n_best_lists(
                session, sentences, beam, n_best, batch_size), strict=True))
            for rank, (text, score) in enumerate(hyps, start=1)]


def n_best_lists(session: TranslationSession, sentences: list[str], beam: int, n_best: int,
                 batch_size: int | None = None) -> list[list[tuple[str, float]]]:
    """Per sentence, its up to `n_best` best (detokenised translation, log-probability;
    for runs imported from OpenNMT-py its score, as onmt_translate reports it: search's
    onmt_style), best first (none for an empty sentence), of a sentence-level run or ensemble,
    `batch_size` sentences at a time (default:
    core.infer.translate.sentences_per_batch(beam))."""
    from core.infer.beam import beam_search  # lazy: a top-level import would load numpy, torch

    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
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
    device, out = session.device, []
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
                found = beam_search(model, src, lens, beam=beam, n_best=n_best,
                                    length_penalty=session.length_penalty,
                                    onmt_style=session.onmt_style, **shortlist)
        hyps = dict(zip(keep, found, strict=True))
        for k in range(len(chunk)):
            out.append([(detokenize(list(tgt_vocab.decode(h.tokens)), tgt_pre, tgt_vocab),
                         float(h.score)) for h in hyps.get(k, [])])
    return out

"""AER of a model's attention on a gold set: force-decode every gold (source, target)
pair with a TranslationSession, read word alignments off the attention, score them.

    preds = attention_alignments(session, gold)                  # argmax, one link per word
    both = symmetrized_attention(session, reverse_session, gold) # src->tgt + tgt->src
    print(aer_table({"attention": preds, "sym": both}, gold).to_markdown())

Gold sentences are already tokenised, so they are NOT tokenised again: for a word
vocabulary each gold token is one model token (only the preprocessor's normalisation,
e.g. lowercasing, is applied to it); for a subword vocabulary each gold token is split
into pieces on its own and the piece-level attention is summed back to words
(core.evaluate.extract.aggregate_subwords). The EOS row is dropped: it is no word.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from core.data.context import CONTEXT_START, sentence_context
from core.data.vocab import SubwordVocab
from core.evaluate.aer import PERCENT_FORMAT, corpus_aer
from core.evaluate.alignment import Alignment
from core.evaluate.extract import aggregate_subwords, argmax_alignment, threshold_alignment
from core.evaluate.report import Table
from core.evaluate.symmetrize import symmetrize_corpus
from core.goldsets import GoldSet
from core.infer.forced import score_targets
from core.infer.translate import as_model, pad_batch
from core.jobs import JobContext

METHODS = ("argmax", "threshold")


def model_tokens(words: Sequence[str], pre: Any, vocab: Any) -> tuple[list[str], list[int]]:
    """Gold words -> the model's tokens and, per token, the index of its word."""
    tokens: list[str] = []
    word_ids: list[int] = []
    for w, word in enumerate(words):
        norm = pre.normalize(word) or word
        if isinstance(vocab, SubwordVocab):
            pieces = vocab.tokenize(norm) or [norm]
        else:
            pieces = [norm]
        tokens += pieces
        word_ids += [w] * len(pieces)
    return tokens, word_ids


def word_attention(session, src_words: list[list[str]], tgt_words: list[list[str]],
                   batch_size: int = 32, ctx: JobContext | None = None) -> list[np.ndarray]:
    """Forced-decoding attention of each (source, target) pair of words, mapped back to
    words: one tgt_words x src_words matrix per pair (EOS row dropped)."""
    first = session.first
    src_vocab, tgt_vocab = first.src_vocab, first.tgt_vocab
    model = as_model(session.models)
    device = next(session.models[0].parameters()).device
    subword = isinstance(src_vocab, SubwordVocab) or isinstance(tgt_vocab, SubwordVocab)
    out: list[np.ndarray] = []
    n = len(src_words)
    for start in range(0, n, batch_size):
        if ctx is not None:
            ctx.wait_if_paused()
            ctx.check_cancelled()
        stop = min(n, start + batch_size)
        src_side = [model_tokens(s, first.src_pre, src_vocab) for s in src_words[start:stop]]
        tgt_side = [model_tokens(t, first.tgt_pre, tgt_vocab) for t in tgt_words[start:stop]]
        # an empty source cannot be encoded: give it one UNK, and no links come out
        src_ids = [list(src_vocab.encode(toks)) or [1] for toks, _ in src_side]
        tgt_ids = [list(tgt_vocab.encode(toks)) for toks, _ in tgt_side]
        src, src_lens = pad_batch(src_ids, device)  # batch x S, batch
        extra = {}
        if session.is_context_model:  # gold pairs have no document: the edge markers
            edges = sentence_context([], [], session.context_sentences,
                                     session.context_following,
                                     src_vocab.encode([CONTEXT_START])[0])
            extra["ctx"], extra["ctx_lens"] = pad_batch([edges] * len(src_ids), device)
        results = score_targets(model, src, src_lens, tgt_ids, **extra)
        for (s_toks, s_wid), (t_toks, t_wid), res in zip(src_side, tgt_side, results,
                                                          strict=True):
            attn = np.asarray(res.attention, dtype=np.float64)[:-1]  # tgt x src, EOS dropped
            if not s_toks or not t_toks:
                out.append(np.zeros((len(set(t_wid)), len(set(s_wid)))))
            elif subword:
                out.append(aggregate_subwords(attn, s_wid, t_wid, mode="sum"))
            else:
                out.append(attn)
        if ctx is not None:
            ctx.progress(stop, n, f"force-decoded {stop}/{n} gold pairs")
    return out


def alignments_from_attention(matrices: Sequence[np.ndarray], method: str = "argmax",
                              threshold: float = 0.3) -> list[Alignment]:
    """Word alignments from tgt x src attention matrices."""
    if method == "argmax":
        return [argmax_alignment(m) for m in matrices]
    if method == "threshold":
        return [threshold_alignment(m, threshold) for m in matrices]
    raise ValueError(f"unknown alignment method {method!r}: use one of {METHODS}")


def attention_alignments(session, gold: GoldSet, method: str = "argmax",
                         threshold: float = 0.3, ctx: JobContext | None = None
                         ) -> list[Alignment]:
    """(src, tgt) alignments of the gold sentences read off the session's forced
    attention: 'argmax' links every target word to the source word it attends to most;
    'threshold' keeps every cell >= `threshold`."""
    matrices = word_attention(session, gold.src_tokens, gold.tgt_tokens, ctx=ctx)
    return alignments_from_attention(matrices, method, threshold)


def reverse_gold(gold: GoldSet) -> GoldSet:
    """The gold set seen from the other side (target -> source)."""
    return GoldSet(gold.name, gold.tgt_tokens, gold.src_tokens,
                   [a.swapped() for a in gold.alignments], gold.tgt_lang, gold.src_lang)


def symmetrized_attention(session, reverse_session, gold: GoldSet,
                          heuristic: str = "grow-diag-final-and", method: str = "argmax",
                          threshold: float = 0.3, ctx: JobContext | None = None
                          ) -> tuple[list[Alignment], list[Alignment], list[Alignment]]:
    """Attention alignments of a src->tgt session and of a tgt->src session (on the
    reversed gold pairs, turned back to (src, tgt)), and their symmetrisation.
    Returns (forward, reverse, symmetrized)."""
    fwd = attention_alignments(session, gold, method, threshold, ctx)
    rev = [a.swapped() for a in attention_alignments(reverse_session, reverse_gold(gold),
                                                     method, threshold, ctx)]
    return fwd, rev, symmetrize_corpus(fwd, rev, heuristic)


def aer_table(systems: Mapping[str, Sequence[Alignment]], gold: GoldSet,
              title: str = "") -> Table:
    """AER, precision and recall (in %) of each system's alignments against `gold`."""
    rows = []
    for name, preds in systems.items():
        c = corpus_aer(list(preds), gold.alignments)
        rows.append([name, round(100 * c.aer, 2), round(100 * c.precision, 2),
                     round(100 * c.recall, 2), c.n_pred])
    title = title or f"Alignment error rate on gold set {gold.name!r} ({len(gold)} sentences)"
    notes = [f"Gold: {gold.n_sure} sure links, {gold.n_possible} possible (sure included). "
             "AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|); lower is better."]
    return Table(["system", "AER %", "precision %", "recall %", "links"], rows, title, notes,
                 formats=dict.fromkeys(("AER %", "precision %", "recall %"), PERCENT_FORMAT))


def run_baseline_alignments(ws, run_ref: int | str, src_words: Sequence[list[str]],
                            tgt_words: Sequence[list[str]],
                            heuristic: str = "grow-diag-final-and") -> list[Alignment]:
    """The statistical baseline beside a run's attention: eflomal trained on the run's
    training split, tokenised with the run's own preprocessing, with the given (gold)
    sentences appended as Luong et al. did; both directions symmetrised by `heuristic`.
    Returns one Alignment per given sentence pair."""
    from core.config import RunConfig
    from core.errors import ConfigError
    from core.evaluate.baseline import align_with_training
    from core.train.artifacts import load_text_side
    from core.train.run import load_split_corpora

    info = ws.get_run(run_ref)
    text = load_text_side(ws.run_dir(info.id))
    if info.corpus_id is None or text is None:
        raise ConfigError(f"run {info.name!r} has no corpus or vocabularies to train the baseline on")
    _, _, src_pre, tgt_pre = text
    seed = RunConfig.from_dict(info.config).train.seed
    _, parts = load_split_corpora(ws, info.corpus_id, seed)
    train_src, train_tgt = [], []
    for pair in parts["train"].pairs:
        s, t = src_pre.tokenize(pair.src), tgt_pre.tokenize(pair.tgt)
        if s and t:
            train_src.append(s)
            train_tgt.append(t)
    gold_al, _ = align_with_training(train_src, train_tgt, list(src_words), list(tgt_words))
    return gold_al.symmetrized(heuristic)

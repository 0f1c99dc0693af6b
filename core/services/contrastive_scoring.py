"""Forced scoring for whole sets, on the one pipeline (core.infer.scoring.ForcedScorer):
the score function of a contrastive set (core.evaluate.contrastive.ScoreFn).
The test-set perplexity with document context is core.services.evaluation's
`forced_perplexity`."""
from __future__ import annotations

from typing import Any


def contrastive_score_fn(session: Any):
    """ScoreFn(sources, contexts, targets) -> log-probabilities, for a session (its
    ensemble when it has several runs); a context model sees each example's context
    sentences (core.evaluate.contrastive.make_score_fn)."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.evaluate.contrastive import make_score_fn

    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.infer.translate import as_model

    f = session.first
    return make_score_fn(as_model(session.models), f.src_vocab, f.tgt_vocab, f.src_pre,
                         f.tgt_pre, k_context=session.context_sentences,
                         k_following=session.context_following,
                         ctx_side=session.context_side)

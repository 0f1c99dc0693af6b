"""A run's lexical shortlist (core.infer.shortlist), for both fronts: built once from the
run's training split and stored with the run as `shortlist.npz`.

Building it aligns the training split on the model's own tokens with eflomal
(grow-diag-final-and), the same links guided alignment uses: they are stored in the
corpus's folder (core.train.guidance.link_file) and reused by any run with the same
training tokens, so a guided run's shortlist costs no second alignment when its
training pairs are the same ones.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.config import RunConfig
from core.errors import ConfigError, StoreError
from core.evaluate.baseline import stored_or_aligned_links
from core.infer.shortlist import LexicalCounts, Shortlist, count_links
from core.safepath import inside
from core.services.corpora import load_split_corpora
from core.train import guidance
from core.workspace.paths import BUNDLED_MARK
from core.workspace.store import Workspace

LEXICON_FILE = "shortlist.npz"


def lexicon_path(ws: Workspace, run_id: int) -> Path:
    """Where run `run_id`'s lexicon (LexicalCounts) is stored; StoreError when a link
    there leads out of the run folder (core.safepath.inside)."""
    return inside(ws.run_dir(run_id), LEXICON_FILE, "the run's shortlist", StoreError)


def unavailable(ws: Workspace, run_id: int) -> str | None:
    """Why run `run_id` can have no shortlist (a sentence for the user), or None."""
    info = ws.get_run(run_id)
    if (ws.run_dir(info.id) / BUNDLED_MARK).exists():
        return (f"run {info.name!r} was installed from a bundle and trained on a corpus that "
                "is not in this workspace, so its shortlist cannot be built here")
    if info.corpus_id is None:
        return f"run {info.name!r} has no corpus to build its shortlist from"
    return None


def build_lexicon(ws: Workspace, run_ref: int | str,
                  log: Callable[[str], None] = lambda _m: None) -> Path:
    """Count the aligned word pairs of run `run_ref`'s training split and store them with
    the run; returns the file. ConfigError for a run without a corpus or vocabularies."""
    # lazy: a top-level import would load sacremoses, sentencepiece
    from core.data.dataset import text_to_tokens

    # lazy: a top-level import would load sacremoses, sentencepiece
    from core.train.artifacts import load_text_side

    info = ws.get_run(run_ref)
    run_dir = ws.run_dir(info.id)
    why = unavailable(ws, info.id)
    if why:
        raise ConfigError(f"{why}; translate without the shortlist")
    side = load_text_side(run_dir)
    if side is None:
        raise ConfigError(f"run {info.name!r} has no vocabularies yet: a shortlist is built "
                          "from a trained run's training split")
    src_vocab, tgt_vocab, src_pre, tgt_pre = side
    config = RunConfig.from_dict(info.config)
    _, parts = load_split_corpora(ws, info.corpus_id, config.train.seed)
    longest = config.data.max_len if config.data.max_len > 0 else float("inf")
    src_ids, tgt_ids = [], []
    # the pairs the run trained on (core.data.dataset: non-empty, at most data.max_len
    # tokens a side), so a guided run's stored links are these very pairs' links
    for pair in parts["train"].pairs:
        s = src_vocab.encode(text_to_tokens(pair.src, src_pre, src_vocab))
        t = tgt_vocab.encode(text_to_tokens(pair.tgt, tgt_pre, tgt_vocab))
        if s and t and len(s) <= longest and len(t) <= longest:
            src_ids.append(s)
            tgt_ids.append(t)
    src_lines = guidance.token_lines(src_ids, src_vocab)
    tgt_lines = guidance.token_lines(tgt_ids, tgt_vocab)
    links = stored_or_aligned_links(ws.corpus_dir(info.corpus_id), src_lines, tgt_lines,
                                    lambda m: log(f"shortlist: {m}"))
    counts = count_links(src_ids, tgt_ids, links, len(src_vocab), len(tgt_vocab))
    path = counts.save(lexicon_path(ws, info.id))
    log(f"shortlist: {len(counts.src):,} word pairs from {len(src_ids):,} training pairs "
        f"stored in {path}")
    return path


def load_shortlist(ws: Workspace, run_ref: int | str, per_word: int = 50, frequent: int = 100,
                   log: Callable[[str], None] = lambda _m: None) -> Shortlist:
    """Run `run_ref`'s shortlist, its lexicon built first when the run has none."""
    # lazy: a top-level import would load sacremoses, sentencepiece
    from core.train.artifacts import load_text_side

    info = ws.get_run(run_ref)
    path = lexicon_path(ws, info.id)
    if not path.is_file():
        build_lexicon(ws, info.id, log)
    counts = LexicalCounts.load(path)
    side = load_text_side(ws.run_dir(info.id))
    if side is not None and not counts.fits(len(side[0]), len(side[1])):
        log(f"shortlist: {path} was made for other vocabularies; rebuilding it")
        counts = LexicalCounts.load(build_lexicon(ws, info.id, log))
    return Shortlist(counts, per_word, frequent)

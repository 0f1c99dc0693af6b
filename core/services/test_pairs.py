"""What an evaluation scores: the systems (each run alone, or an ensemble) as sessions,
and the test pairs (the run corpus's stored split, or line-parallel files of the user's),
for `evaluate` and the Evaluation screen's job alike."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.config import RunConfig
from core.data.corpus import SentencePair
from core.data.textio import CONVERT_TO_UTF8, read_lines
from core.errors import ConfigError, CorpusError
from core.services.corpora import SPLIT_NAMES
from core.services.translation import open_session
from core.workspace.store import Workspace


def open_systems(ws: Workspace, runs: Sequence[str | int], ensemble: Sequence[str | int] = (),
                 which: str = "best", device: str = "cpu"
                 ) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """Each run alone, plus the ensemble of the first run with `ensemble` runs:
    ({system name: session}, {system name: run ids})."""
    groups: list[list[str | int]] = [[r] for r in runs]
    if ensemble:
        groups = [g for g in groups if len(runs) > 1] + [[runs[0], *ensemble]]
    sessions, run_ids = {}, {}
    for group in groups:
        infos = [ws.get_run(r) for r in group]
        name = "+".join(i.name for i in infos)
        sessions[name] = open_session(ws, [i.id for i in infos], which, device)
        run_ids[name] = [i.id for i in infos]
    return sessions, run_ids


def evaluation_pairs(ws: Workspace, run_info, split: str | None = None, src: str | Path | None = None,
               ref: str | Path | None = None, max_sentences: int = 0,
               instead: str = "evaluate on test files of your own"
               ) -> tuple[list, str, str, str]:
    """The pairs to score -> (pairs, test name, src_lang, tgt_lang): the run corpus's
    stored `split` (default test; name 'corpus:split'), or line-parallel `src`/`ref`
    files (languages ''). `max_sentences` > 0 keeps a prefix (name '...[:N]').
    `instead`: what the error for an empty split advises first."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.services.training import load_split_corpora

    if src or ref:
        if not (src and ref) or split:
            raise ConfigError("give --src and --ref together, or --test SPLIT")
        sources, _ = read_lines(Path(src), False, CONVERT_TO_UTF8)
        refs, _ = read_lines(Path(ref), False, CONVERT_TO_UTF8)
        if len(sources) != len(refs):
            raise CorpusError(ref, None, f"{len(refs)} references for {len(sources)} sources "
                              f"in {src}: the files must be line-parallel")
        pairs = [SentencePair(s, r, None, k)
                 for k, (s, r) in enumerate(zip(sources, refs, strict=True), 1)]
        name, src_lang, tgt_lang = Path(src).name, "", ""
    else:
        split = split or "test"
        if run_info.corpus_id is None:
            raise ConfigError(f"run {run_info.name!r} has no corpus: give --src and --ref")
        config = RunConfig.from_dict(run_info.config, source=f"run {run_info.name}")
        corpus, parts = load_split_corpora(ws, run_info.corpus_id, config.train.seed)
        if split not in parts:
            raise ConfigError(f"--test {split!r}: the corpus split has {', '.join(parts)}")
        pairs = parts[split].pairs
        cname = ws.get_corpus(run_info.corpus_id).name
        if not pairs:
            ratios = ws.load_split(run_info.corpus_id).ratios
            shares = ",".join(f"{r:g}" for r in ratios)
            why = (f"gives the {split} set no share" if ratios[SPLIT_NAMES.index(split)] <= 0
                   else f"leaves the {split} set empty (too few pairs or documents)")
            raise ConfigError(
                f"corpus {cname!r} has no {split} pairs: its split (ratios {shares}) {why}; "
                f"{instead}, or import the corpus again under a new "
                "name, split it with a "
                f"{split} share and train on that")
        name = f"{cname}:{split}"
        src_lang, tgt_lang = corpus.src_lang, corpus.tgt_lang
    if max_sentences > 0 and len(pairs) > max_sentences:
        pairs, name = pairs[:max_sentences], f"{name}[:{max_sentences}]"
    return list(pairs), name, src_lang, tgt_lang


def run_test_pairs(ws: Workspace, run_id: int, limit: int = 0
                   ) -> tuple[list[tuple[str, str]], tuple[str, str], str]:
    """(source, reference) of run `run_id`'s corpus's test split (the split training
    used; the first `limit` pairs, 0 = all), the corpus's (source, target) languages and
    the split's name ('corpus:test'): the Attention screen's "Test split" pairs."""
    pairs, name, src_lang, tgt_lang = evaluation_pairs(ws, ws.get_run(run_id), "test",
                                                       max_sentences=limit)
    # the name without evaluation_pairs' '[:N]' (a corpus's own name may hold '[:')
    return [(p.src, p.tgt) for p in pairs], (src_lang, tgt_lang), name.removesuffix(f"[:{limit}]")

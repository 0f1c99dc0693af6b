"""Contrastive evaluation: a ContraPro-style folder, a DiscEvalMT set or a Voita-style
JSON set read (`contrastive_examples`), every system's accuracy by forced scoring
(`contrastive_and_store`, through `contrastive_score_fn`), a gated context model's gate
at watched source words (`gates_and_store`), each stored as a workspace evaluation, and
their tables."""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from core.evaluate.gates import contrastive_gate_profile, watched_words
from core.evaluate.report import Table
from core.jobs import JobContext
from core.services.language_pairs import UNKNOWN_LANGS, check_one_pair
from core.workspace.store import Workspace

#: how Voita et al. (2019) join the sentences of a JSON contrastive set
EOS_SEPARATOR = "_eos"
#: a folder named after a language pair (two-letter codes): 'en-fr', 'de-en'
_PAIR_NAME = re.compile(r"([a-z]{2})-([a-z]{2})")


def _joined_with_eos(path: Path) -> bool:
    """Whether the file holds '_eos' as a word (its own token, not part of one)."""

    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return False  # read_json_set reports the problem
    return re.search(r"(?<!\w)_eos(?!\w)", text) is not None


def contrastive_examples(path: Path, separator: str | None = None, k: int = 1,
                         log=None) -> list:
    """The examples of a ContraPro-style folder, a DiscEvalMT set (one JSON object of
    blocks, core.evaluate.discevalmt) or a Voita-style JSON set. For a JSON set without
    `separator`, '_eos'-joined sentences (Voita et al.) are detected and split (said
    through `log`); separator '' splits nothing."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.evaluate.contrastive import read_json_set, read_pronoun_set

    if path.is_dir():
        if separator is not None:
            raise ConfigError("--separator splits the joined sentences of a JSON set; a "
                              f"ContraPro-style folder ({path}) keeps its context sentences "
                              "on their own lines: drop --separator")
        return read_pronoun_set(path, k=k)
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.evaluate.discevalmt import is_discevalmt, read_discevalmt

    if is_discevalmt(path):
        if separator:
            raise ConfigError(f"{path.name} is a DiscEvalMT set ([previous, current] lists): "
                              "drop --separator")
        if log:
            log(f"{path.name}: DiscEvalMT layout (blocks of src [previous, current] and "
                "correct / semi-correct / incorrect variants); accuracy per type")
        return read_discevalmt(path)
    if separator is None and _joined_with_eos(path):
        separator = EOS_SEPARATOR
        if log:
            log(f"{path.name}: sentences are joined with '{EOS_SEPARATOR}' (Voita et al.): "
                f"splitting on it, the leading sentences are the context (--separator '' "
                "turns this off, --separator TEXT picks another)")
    return read_json_set(path, separator=separator or None)


def contrastive_languages(path: Path) -> tuple[str, str]:
    """(source, target) languages a contrastive set tells, '' where it does not: the
    name of its folder (a ContraPro-style folder itself, or the folder a JSON file is
    in) when that is two language codes ('en-fr', as resources/demo/en-fr/); else French
    targets for a ContraPro-style folder, whose reader tests il/elle/ils/elles."""
    folder = path if path.is_dir() else path.parent
    named = _PAIR_NAME.fullmatch(folder.name.lower())
    if named:
        return named[1], named[2]
    return ("", "fr") if path.is_dir() else ("", "")


def check_contrastive_pair(ws: Workspace, runs: Sequence[int | str], path: Path) -> None:
    """ConfigError unless every run translates the first run's pair (language_pairs.
    check_one_pair) and that pair is the set's, on each side the set tells
    (contrastive_languages; runs whose languages are not known pass)."""
    pair = check_one_pair(ws, runs, what="one contrastive set tests one language pair")
    told = contrastive_languages(path)
    if any(t and p not in UNKNOWN_LANGS and t != p for t, p in zip(told, pair, strict=True)):
        shown = "->".join(t or "?" for t in told)
        raise ConfigError(
            f"{path}: the contrastive set is {shown}, but run {ws.get_run(runs[0]).name!r} "
            f"translates {pair[0]}->{pair[1]}: score it with runs of the set's pair")


def contrastive_side(session: Any) -> str:
    """Which context core.evaluate.contrastive.contrastive_accuracy gives `session`'s
    score function: 'tgt' for a run trained on the previous target sentence, else 'src'."""
    return "tgt" if session.context_side == "target" else "src"


def contrastive_score_fn(session: Any):
    """ScoreFn(sources, contexts, targets) -> log-probabilities, for a session (its
    ensemble when it has several runs), on the one forced pipeline; a context model sees
    each example's context sentences (core.evaluate.contrastive.make_score_fn)."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.evaluate.contrastive import make_score_fn

    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.infer.translate import as_model

    f = session.first
    return make_score_fn(as_model(session.models), f.src_vocab, f.tgt_vocab, f.src_pre,
                         f.tgt_pre, k_context=session.context_sentences,
                         k_following=session.context_following,
                         ctx_side=session.context_side)


def contrastive_and_store(ws: Workspace, sessions: dict[str, Any], run_ids: dict[str, list[int]],
                          path: Path, examples: Sequence, ctx: JobContext | None = None,
                          log=None) -> dict[str, Any]:
    """Contrastive accuracy of every system on `examples` (from contrastive_examples),
    each stored as an evaluation 'contrastive:<file name>'. Returns {system: report}."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.evaluate.contrastive import contrastive_accuracy

    check_contrastive_pair(ws, list(dict.fromkeys(i for ids in run_ids.values() for i in ids)),
                           path)
    reports = {}
    for name, session in sessions.items():
        if log:
            log(f"scoring {len(examples)} contrastive examples with {name} "
                f"(context sentences: {session.context_sentences})")
        # a target-side model sees each example's previous target sentence(s)
        side = contrastive_side(session)
        if side == "tgt" and examples and not any(ex.context_tgt for ex in examples):
            raise ConfigError(
                f"{path}: the set gives no target-side context (e.g. no .context.trg file), "
                f"but {name!r} reads the previous target sentence as its context; use a set "
                "with target context, or a source-side context model")
        report = contrastive_accuracy(contrastive_score_fn(session), examples, ctx=ctx,
                                      context_side=side)
        ws.add_evaluation(run_ids[name], f"contrastive:{path.name}",
                          {"contrastive_accuracy": 100 * report.accuracy,
                           "examples": report.overall.total,
                           "by_pronoun": {k: 100 * g.accuracy
                                          for k, g in report.by_phenomenon.items()}})
        reports[name] = report
    return reports


def gates_and_store(ws: Workspace, sessions: dict[str, Any], run_ids: dict[str, list[int]], path: Path,
                    examples: Sequence, words: Sequence[str] = (),
                    ctx: JobContext | None = None, log=None) -> dict[str, Any]:
    """Where each gated system's gate opens on the contrastive `examples`: the
    GateProfile at `words` (none given: the source language's watched words) against
    every other source word, stored as an evaluation 'gates:<file name>'. Systems
    without gates are left out (and said so). Returns {system: GateProfile}."""
    # lazy: a top-level import would load numpy, sacremoses, sentencepiece, torch
    from core.infer.scoring import ForcedScorer

    profiles = {}
    for name, session in sessions.items():
        watched = tuple(words) or watched_words(session.first.src_pre.lang)
        if not watched:
            raise ConfigError(f"no default words to watch for source language "
                              f"{session.first.src_pre.lang!r}: name them, --gates WORD ...")
        side = contrastive_side(session)
        profile = contrastive_gate_profile(ForcedScorer.for_session(session), examples,
                                           watched, side, ctx=ctx)
        if profile is None:
            if log:
                log(f"{name}: no gates (not a gated context model); left out of the gate table")
            continue
        ws.add_evaluation(run_ids[name], f"gates:{path.name}",
                          {k: v for k, v in profile.metrics().items() if v is not None})
        profiles[name] = profile
    return profiles


def contrastive_tables(reports: dict[str, Any], title: str) -> list:
    """The summary (one row per system, accuracy overall and per phenomenon) and each
    system's own table."""
    phenomena = sorted({k for r in reports.values() for k in r.by_phenomenon})
    rows = [[name, r.overall.total, r.overall.correct, r.overall.ties,
             round(100 * r.accuracy, 2),
             *[round(100 * r.by_phenomenon[k].accuracy, 2) if k in r.by_phenomenon else None
               for k in phenomena]]
            for name, r in reports.items()]
    summary = Table(["system", "examples", "correct", "ties", "accuracy %",
                     *[f"{k} %" for k in phenomena]], rows, title,
                    notes=["An example is correct when the correct translation scores "
                           "strictly higher than every contrastive one; ties count as wrong."])
    return [summary, *[r.to_table(f"{title} ({name})") for name, r in reports.items()]]

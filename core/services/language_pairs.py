"""Which language pair a run translates, and the checks that keep a run with data and
runs of its own pair: a ConfigError of one line naming the runs, the corpus and their
pairs otherwise. A run or pair whose languages are not known ('' or 'xx') passes.

    src, tgt = run_languages(ws, run_info)            # its corpus's, else its preprocess.json's
    other_pair(ws, run_info, ("en", "fr"))            # its pair when known and not en->fr
    check_one_pair(ws, ["a", "b"])                    # `evaluate`: the runs share a pair
    check_base_pair(ws, base, corpus, what, fix)      # a stage-2 run's base, a head's corpus
    check_guide_runs(ws, spec, ["fwd", "rev"], corpus)  # train.guide_runs: pair, reverse
    same_pair(("en", "fr"), ("xx", "xx")); check_baseline_pair(pairs, names)  # Compare
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from core.errors import ConfigError, StoreError
from core.safepath import inside
from core.workspace.store import Workspace

#: what run_languages gives for a language not known: nothing, or 'xx' (an imported
#: model that does not say its languages, core.services.onmt_import / marian_import)
UNKNOWN_LANGS = ("", "xx")


def run_languages(ws: Workspace, run_info) -> tuple[str, str]:
    """(source language, target language) run `run_info` translates: its corpus's, else
    those its preprocessing was saved with; '' where unknown. Cheap (no vocabulary is
    read): the Attention and Translate screens ask it for every run."""
    if run_info.corpus_id is not None:
        try:
            corpus = ws.get_corpus(run_info.corpus_id)
            return corpus.src_lang, corpus.tgt_lang
        except StoreError:  # the corpus was deleted
            pass
    return saved_languages(ws.run_dir(run_info.id)) or ("", "")


def saved_languages(run_dir: Path) -> tuple[str, str] | None:
    """(source, target) languages a run's preprocess.json (core.train.artifacts.PREPROCESS)
    was saved with; None when it has none, it is a link out of the run, or it cannot be
    read (a damaged run says so when it is loaded, not here)."""
    try:
        path = inside(run_dir, "preprocess.json", "the run's file", StoreError, bare=True)
        raw = json.loads(path.read_text(encoding="utf-8"))
        return str(raw["src"]["lang"]), str(raw["tgt"]["lang"])
    except (OSError, ValueError, KeyError, TypeError, StoreError):
        return None


def pair_text(pair: Sequence[str]) -> str:
    """('en', 'fr') -> 'en->fr'."""
    return f"{pair[0]}->{pair[1]}"


def other_pair(ws: Workspace, run_info, want: Sequence[str]) -> tuple[str, str] | None:
    """Run `run_info`'s (source, target) languages when they and `want` are known and
    differ, else None: a run or a pair whose languages are not known ('', or 'xx' as an
    imported model that does not say them) passes."""
    have = run_languages(ws, run_info)
    known = all(lang not in UNKNOWN_LANGS for lang in (*have, *want))
    return have if known and have != tuple(want) else None


def check_one_pair(ws: Workspace, runs: Sequence[str | int], ensemble: Sequence[str | int] = (),
                   what: str = "the table compares systems on one test set") -> tuple[str, str]:
    """The pair of the first run whose languages are known (else the first run's);
    ConfigError when another run (or an `ensemble` run) translates another pair (runs
    whose languages are not known pass, wherever they stand in the list)."""
    given = [*(("--run", r) for r in runs), *(("--ensemble", r) for r in ensemble)]
    infos = [(option, ws.get_run(ref)) for option, ref in given]
    langs = {info.id: run_languages(ws, info) for _, info in infos}
    known = [info for _, info in infos if not any(x in UNKNOWN_LANGS for x in langs[info.id])]
    first = known[0] if known else infos[0][1]
    pair = langs[first.id]
    for option, info in infos:
        if info in known and langs[info.id] != pair:
            raise ConfigError(
                f"{option} {info.name!r} translates {pair_text(langs[info.id])}, but --run "
                f"{first.name!r} translates {pair_text(pair)}: {what}; evaluate runs of "
                "each language pair in a call of their own")
    return pair


def check_base_pair(ws: Workspace, base, corpus, what: str, fix: str) -> None:
    """ConfigError '<what> <base run> translates X, but corpus C is Y: <fix>' when run
    `base` translates another pair than `corpus`."""
    pair = (corpus.src_lang, corpus.tgt_lang)
    have = other_pair(ws, base, pair)
    if have:
        raise ConfigError(f"{what} {base.name!r} translates {pair_text(have)}, but corpus "
                          f"{corpus.name!r} is {pair_text(pair)}: {fix}")


def check_guide_runs(ws: Workspace, spec: str, names: Sequence[str], corpus) -> None:
    """ConfigError unless train.guide_runs = `spec` (its run `names`) are runs of the
    workspace, the first translating `corpus`'s pair and the second the reverse."""
    pair = (corpus.src_lang, corpus.tgt_lang)
    for name, want in zip(names, (pair, pair[::-1]), strict=False):
        try:
            info = ws.get_run(name)
        except StoreError as exc:
            raise ConfigError(f"train.guide_runs (--guide-runs): {exc} Name a trained run of "
                              "this workspace.") from None
        have = other_pair(ws, info, want)
        if have:
            role = "first" if want == pair else "second (reverse)"
            raise ConfigError(
                f"train.guide_runs (--guide-runs) = {spec!r}: run {name!r} translates "
                f"{pair_text(have)}, but corpus {corpus.name!r} is {pair_text(pair)}, so the "
                f"{role} guide run must translate {pair_text(want)}; give 'RUN' or "
                f"'RUN,REVERSE', RUN translating {pair_text(pair)} and REVERSE "
                f"{pair_text(pair[::-1])}")


def same_pair(a: Sequence[str], b: Sequence[str]) -> bool:
    """True when language pairs a and b = (source, target) are the same (case aside), or
    a language of either is not known ('', or 'xx': an imported model that names none)."""
    a, b = [x.strip().lower() for x in a], [x.strip().lower() for x in b]
    return any(x in UNKNOWN_LANGS for x in a + b) or a == b


def check_baseline_pair(pairs: tuple[Sequence[str], Sequence[str]], names: tuple[str, str]
                        ) -> None:
    """ConfigError when the baseline (names[1], translating pairs[1] = (source, target))
    translates another language pair than the model it is compared with (names[0],
    pairs[0]): it would read the text as another language."""
    if not same_pair(*pairs):
        (src, tgt), (b_src, b_tgt) = pairs
        raise ConfigError(f"baseline {names[1]!r} translates {b_src} -> {b_tgt}, {names[0]!r} "
                          f"{src} -> {tgt}: choose a baseline run of {src} -> {tgt}")

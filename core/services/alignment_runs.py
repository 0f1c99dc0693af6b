"""Word alignment for both fronts: attention AER on a gold set (every reading) and the
eflomal statistical baseline beside it (the `align` command, the Attention screen).

    text = baseline_training_text(ws, run_info, src_pre, tgt_pre)   # the run's train split
    systems = eflomal_systems(gold, *text, "grow-diag-final-and")     # fwd, rev, symmetrised

The baseline is trained, as Luong et al. (2015) did with the Berkeley aligner, on the
training text with the gold sentences appended, tokenised with the run's own
preprocessing so that it sees the same tokens as the model and the gold.
"""
from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.config import RunConfig
from core.data.readers import check_same_length
from core.data.textio import CONVERT_TO_UTF8, read_lines
from core.errors import ConfigError, OutputError
from core.evaluate.aer import corpus_aer
from core.evaluate.alignment import Alignment, AlignmentCorpus, write_pharaoh
from core.evaluate.baseline import align_with_training
from core.evaluate.readings import READINGS, default_reading  # noqa: F401 (re-exported)
from core.services.corpora import load_split_corpora
from core.services.language_pairs import other_pair, pair_text, run_languages
from core.workspace.store import Workspace

if TYPE_CHECKING:  # annotations only: importing the session would load torch
    from core.infer.session import TranslationSession

#: a decoder layer and one of its heads (None: the mean of its heads), 0-based: where a
#: Transformer-family run's attention is read instead of its averaged last layer
Layer = tuple[int, int | None]


def baseline_training_text(ws: Workspace, run_info, src_pre, tgt_pre, corpus: str | None = None,
                           src_file: str | Path | None = None,
                           tgt_file: str | Path | None = None
                           ) -> tuple[list[list[str]], list[list[str]]]:
    """Tokenised sentence pairs eflomal trains on: line-parallel `src_file`/`tgt_file`,
    else workspace `corpus`, else the run's training split; pairs with an empty side
    are left out. Files that are not line-parallel are a CorpusError naming both and
    their line counts (as `corpus import` says it)."""
    if src_file or tgt_file:
        if not (src_file and tgt_file):
            raise ConfigError("give --baseline-src and --baseline-tgt together")
        src, _ = read_lines(Path(src_file), advice=CONVERT_TO_UTF8)
        tgt, _ = read_lines(Path(tgt_file), advice=CONVERT_TO_UTF8)
        check_same_length(Path(src_file), Path(tgt_file), src, tgt)
        pairs = list(zip(src, tgt, strict=True))
    elif corpus:
        pairs = baseline_corpus_pairs(ws, run_info, corpus)
    else:
        if run_info.corpus_id is None:
            raise ConfigError(f"run {run_info.name!r} has no corpus: give --baseline-corpus "
                              "or --baseline-src/--baseline-tgt")
        seed = RunConfig.from_dict(run_info.config).train.seed
        _, parts = load_split_corpora(ws, run_info.corpus_id, seed)
        pairs = [(p.src, p.tgt) for p in parts["train"].pairs]
    src_tok, tgt_tok = [], []
    for s, t in pairs:
        a, b = src_pre.tokenize(s), tgt_pre.tokenize(t)
        if a and b:
            src_tok.append(a)
            tgt_tok.append(b)
    return src_tok, tgt_tok


def baseline_corpus_pairs(ws: Workspace, run_info, corpus: int | str) -> list[tuple[str, str]]:
    """The (source, target) sentences of workspace `corpus` in run `run_info`'s direction
    (`align --baseline-corpus`): as stored for a corpus of the run's pair, swapped for
    one of the reversed pair, so eflomal always aligns the run's source to its target;
    ConfigError for a corpus of another pair (unknown languages pass)."""
    info = ws.get_corpus(corpus)
    pair, run_pair = (info.src_lang, info.tgt_lang), run_languages(ws, run_info)
    stored = ws.load_corpus(info.id).pairs
    if other_pair(ws, run_info, pair) is None:
        return [(p.src, p.tgt) for p in stored]
    if pair == run_pair[::-1]:
        return [(p.tgt, p.src) for p in stored]
    raise ConfigError(
        f"--baseline-corpus {info.name!r} is {pair_text(pair)}, but run {run_info.name!r} "
        f"translates {pair_text(run_pair)}: the baseline aligns the run's own languages; name "
        f"a corpus of {pair_text(run_pair)} (or {pair_text(run_pair[::-1])}), or give "
        "--baseline-src/--baseline-tgt")


def check_reverse_direction(ws: Workspace, run_info, reverse_info) -> None:
    """ConfigError unless `reverse_info`'s run translates the other way round from
    `run_info`'s (tgt->src), as `align --reverse-run` needs; runs whose languages are
    not known pass."""
    src, tgt = run_languages(ws, run_info)
    if other_pair(ws, reverse_info, (tgt, src)) is None:
        return
    rev_src, rev_tgt = run_languages(ws, reverse_info)
    raise ConfigError(
        f"--reverse-run {reverse_info.name!r} translates {rev_src}->{rev_tgt}, but --run "
        f"{run_info.name!r} translates {src}->{tgt}: the reverse run must translate "
        f"{tgt}->{src}; give a run trained on a corpus imported with --src-lang {tgt} "
        f"--tgt-lang {src}, or leave out --reverse-run")


def check_out_dir(out_dir: str | Path) -> Path:
    """Create folder `out_dir` (if needed) and make sure a file can be written in it,
    before any alignment is computed; OutputError saying why not."""
    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{folder}: is a file, not a folder; give --out-dir a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".align-probe.", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except (FileExistsError, NotADirectoryError):
        raise OutputError(f"{folder}: cannot be created (a part of its path is a file); "
                          "give --out-dir a folder you can write to") from None
    except OSError as exc:
        raise OutputError(f"{folder}: cannot be written ({exc.strerror or exc}); give "
                          "--out-dir a folder you can write to") from None
    return folder


def eflomal_systems(gold, train_src: Sequence[list[str]], train_tgt: Sequence[list[str]],
                    heuristic: str = "grow-diag-final-and") -> dict[str, list[Alignment]]:
    """eflomal's alignments of the gold sentences (appended to the training text): both
    directions and their symmetrisation, as AER table systems."""
    gold_al, _ = align_with_training(train_src, train_tgt, gold.src_tokens, gold.tgt_tokens)
    return {"eflomal fwd": gold_al.forward, "eflomal rev": gold_al.reverse,
            f"eflomal {heuristic}": gold_al.symmetrized(heuristic)}


#: eflomal trained on fewer pairs than this (besides the gold's) is no fair baseline for a
#: run trained on a real corpus (a bundled run's training corpus is not shipped: the
#: demo's en-fr corpora hold no training pairs, the es-en one about 400)
MIN_BASELINE_PAIRS = 1000


def baseline_note(training_pairs: int) -> str:
    """What the eflomal row says of its training data: how many pairs, and a warning
    below MIN_BASELINE_PAIRS."""
    note = f"trained on {training_pairs:,} pairs + the gold's"
    if training_pairs < MIN_BASELINE_PAIRS:
        note += (f": too few for a fair baseline (under {MIN_BASELINE_PAIRS:,}); align a "
                 "corpus of the pair with `align --baseline-corpus`")
    return note


def run_baseline_alignments(ws: Workspace, run_ref: int | str, src_words: Sequence[list[str]],
                            tgt_words: Sequence[list[str]],
                            heuristic: str = "grow-diag-final-and") -> tuple[list[Alignment], int]:
    """The baseline beside a run's attention (the Attention screen): eflomal on the run's
    training split with the given sentences appended, symmetrised by `heuristic`; ->
    (one Alignment per given sentence pair, the training pairs eflomal learned from
    besides them)."""
    # lazy: a top-level import would load sacremoses, sentencepiece, torch
    from core.train.artifacts import load_text_side

    info = ws.get_run(run_ref)
    text = load_text_side(ws.run_dir(info.id))
    if info.corpus_id is None or text is None:
        raise ConfigError(f"run {info.name!r} has no corpus or vocabularies to train the "
                          "baseline on")
    _, _, src_pre, tgt_pre = text
    train_src, train_tgt = baseline_training_text(ws, info, src_pre, tgt_pre)
    gold = AlignmentCorpus(src_tokens=list(src_words), tgt_tokens=list(tgt_words))
    links = eflomal_systems(gold, train_src, train_tgt, heuristic)[f"eflomal {heuristic}"]
    return links, len(train_src)


def attention_systems(session: TranslationSession,
                      name: str, gold, readings: Sequence[str], no_sink: bool,
                      method: str = "argmax", threshold: float = 0.0,
                      layer: Layer | None = None) -> dict[str, list[Alignment]]:
    """The run's attention alignments of the gold sentences (forced decoding,
    attention_aer.score_gold), one system per reading (and per reading without the
    sink, with `no_sink`); with `layer` = (layer, head or None), 0-based, read from that
    decoder layer or head of a Transformer-family run (attention_aer.at_layer)."""
    # lazy: a top-level import would load sacremoses, sentencepiece, torch
    from core.evaluate.attention_aer import score_gold

    variants = [(r, sink) for r in readings for sink in ((False, True) if no_sink else (False,))]
    scores = score_gold(_forced(session, gold.src_tokens, gold.tgt_tokens, layer),
                        gold.alignments, variants, method, threshold)
    return {system_name(name, reading, sink, layer): row.links
            for (reading, sink), row in scores.readings.items()}


def _forced(session: TranslationSession, src_words, tgt_words, layer: Layer | None):
    """force_gold's pairs, read from `layer` (attention_aer.at_layer) when given."""
    # lazy: a top-level import would load sacremoses, sentencepiece, torch
    from core.evaluate.attention_aer import at_layer, force_gold

    forced = force_gold(session, src_words, tgt_words)
    return forced if layer is None else (at_layer(p, *layer) for p in forced)


def symmetrized_systems(session: TranslationSession, name: str, reverse, reverse_name: str, gold,
                        heuristic: str, method: str = "argmax", threshold: float = 0.0,
                        reading: str | None = None, no_sink: bool = False,
                        layer: Layer | None = None) -> dict[str, list[Alignment]]:
    """A src->tgt run's and a tgt->src run's attention alignments and their
    symmetrisation by `heuristic` (grow-diag-final-and, intersection, ...), by
    attention_aer.score_gold (as the Attention screen's "symmetrise with" row); each run
    is read at `reading`, or at its own default reading when None; the src->tgt run
    from `layer` when given (attention_systems), named in its row and in the
    symmetrised row."""
    # lazy: a top-level import would load sacremoses, sentencepiece, torch
    from core.evaluate.attention_aer import force_gold, score_gold

    fwd_reading = reading or default_reading(session.first.config)
    rev_reading = reading or default_reading(reverse.first.config)
    for config, r, run in ((session.first.config, fwd_reading, name),
                           (reverse.first.config, rev_reading, reverse_name)):
        if r == "head" and not config.model.alignment_head:
            raise ConfigError(f"--reading head: run {run!r} has no alignment head "
                              "(model.alignment_head); leave out --reading to read each run "
                              "at its own default")
    back = force_gold(reverse, gold.tgt_tokens, gold.src_tokens)  # the run's reversed pairs
    scores = score_gold(_forced(session, gold.src_tokens, gold.tgt_tokens, layer),
                        gold.alignments, [(fwd_reading, no_sink)], method, threshold,
                        (back, (rev_reading, no_sink)), heuristic)
    tail = ", no sink" if no_sink else ""
    rev_what = "alignment head" if rev_reading == "head" else "attention"
    what = "alignment heads" if fwd_reading == rev_reading == "head" else "attention"
    return {system_name(name, fwd_reading, no_sink, layer):
            scores.readings[(fwd_reading, no_sink)].links,
            f"{reverse_name} {rev_what} (rev, {rev_reading}{tail})": scores.reverse.links,
            f"{what}{_layer_words(layer)} {heuristic} ({fwd_reading} + {rev_reading}{tail})":
                scores.symmetrized.links}


def remember_best_reading(ws: Workspace, run_id: int, name: str, systems: dict[str, list], gold
                          ) -> tuple[str, dict[str, float]] | None:
    """Of the readings measured in `systems` (attention_systems' names for run `name`,
    with the sink kept), store the one with the lowest AER on `gold` as run `run_id`'s
    default (config.alignment_reading). -> (that reading, AER per reading), or None when
    no reading of the run was measured."""
    aers = {r: corpus_aer(systems[system_name(name, r, False)], gold.alignments).aer
            for r in READINGS if system_name(name, r, False) in systems}
    if not aers:
        return None
    best = min(aers, key=lambda r: (aers[r], READINGS.index(r)))
    store_reading(ws, run_id, best)
    return best, aers


def store_reading(ws: Workspace, run_id: int, reading: str) -> None:
    """Make `reading` run `run_id`'s default (config.alignment_reading), on the run's
    config as it is now."""
    info = ws.get_run(run_id)
    config = RunConfig.from_dict({**info.config, "alignment_reading": reading},
                                 source=f"run {info.name}")
    ws.update_run(run_id, config=config.to_dict())


def forget_reading(ws: Workspace, run_id: int) -> str:
    """Drop run `run_id`'s remembered reading (config.alignment_reading), so its
    default is its family's again. -> the reading dropped ('' when none was stored)."""
    info = ws.get_run(run_id)
    config = RunConfig.from_dict(info.config, source=f"run {info.name}")
    dropped, config.alignment_reading = config.alignment_reading, ""
    if dropped:
        ws.update_run(run_id, config=config.to_dict())
    return dropped


def reading_list(asked: Sequence[str] | None, config=None) -> list[str]:
    """Asked readings -> readings in a fixed order, without repeats ('all' = every one);
    none asked: the run's default (default_reading; 'predict' without a config)."""
    asked = list(asked or [default_reading(config) if config is not None else "predict"])
    has_head = config is not None and config.model.alignment_head
    if "all" in asked:
        return [r for r in READINGS if r != "head" or has_head]
    if "head" in asked and config is not None and not has_head:
        raise ConfigError("--reading head needs a run with an alignment head "
                          "(model.alignment_head = true); this run has none")
    return [r for r in READINGS if r in asked]


def system_name(run: str, reading: str, no_sink: bool, layer: Layer | None = None) -> str:
    """'RUN attention', 'RUN attention (shift)', 'RUN attention (sum, no sink)', 'RUN
    alignment head (no sink)', 'RUN attention layer 1 head 2 (shift)' (`layer`
    0-based)."""
    notes = [r for r in (None if reading in ("predict", "head") else reading,
                         "no sink" if no_sink else None) if r]
    what = ("alignment head" if reading == "head" else "attention") + _layer_words(layer)
    return f"{run} {what}" + (f" ({', '.join(notes)})" if notes else "")


def _layer_words(layer: Layer | None) -> str:
    """' layer 1 head 2', ' layer 3' (`layer` 0-based) or '' for None: the part of a
    system's name that tells which decoder layer or head it was read from."""
    if layer is None:
        return ""
    return f" layer {layer[0] + 1}" + ("" if layer[1] is None else f" head {layer[1] + 1}")


def file_name(system: str) -> str:
    """A system's Pharaoh file name: 'RUN attention (shift)' -> 'RUN_attention_shift.pharaoh'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", system).strip("_") + ".pharaoh"


def write_alignments(out_dir: str | Path, systems: dict[str, list]) -> list[Path]:
    """Each system's alignments as out_dir/<file_name(system)>."""
    return [write_pharaoh(Path(out_dir) / file_name(name), al) for name, al in systems.items()]

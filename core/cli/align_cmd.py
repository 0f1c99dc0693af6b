"""`align`: alignment error rate of attention (and of eflomal) on a gold set.

    align --run RUN [--reverse-run RUN] (--gold-set NAME | --gold-src F --gold-tgt F
          --gold-links F [--format pharaoh|talp|wpt] [--one-based] [--swap]
          [--gold-set NAME to store it]) [--method argmax|threshold] [--threshold 0.3]
          [--baseline eflomal] [--baseline-corpus NAME | --baseline-src F --baseline-tgt F]
          [--symmetrize grow-diag-final-and] [--reading predict|shift|sum|all ...]
          [--layer N [--head H]] [--no-sink] [--remember] [--out-dir D]
    align --run RUN --forget
    align --run RUN --choose-by-anchors [--pairs 2000]


Prints one AER table with the attention variants (each reading of the attention,
core.evaluate.readings; forward, reverse and their
symmetrisation when --reverse-run is given) and the eflomal baseline side by side,
and writes each system's alignment as a Pharaoh file to --out-dir. With --remember the
reading with the lowest AER becomes the run's default (config.alignment_reading), used
from then on by `align`, `evaluate` and the Attention screen; --forget drops it again (the
run's family reading is its default then). --choose-by-anchors chooses without gold: the
reading that links most words spelled the same on both sides of training pairs (names,
numbers) to their twin becomes the run's default (core/services/reading_anchors.py).
--layer N [--head H] reads a Transformer-family run's attention from one decoder layer
(the mean of its heads) or one head, as the Attention screen's "Layer / head" box shows
it, instead of the averaged last layer.

Before a model is loaded, the options are checked (--threshold in (0, 1] for --method
threshold, --symmetrize one of core.evaluate.symmetrize.HEURISTICS, a --reverse-run that
translates tgt->src), the gold files read (line-parallel, not empty) and --out-dir made
and probed; each problem is one ConfigError / CorpusError / OutputError line. A run of
the gold set's reversed language pair (an fr->en run, an en->fr gold set) reads the gold
from the other side (attention_aer.gold_for_run: the table, AER and Pharaoh files are in
the run's orientation; AER is the same either way round); a run of another pair is a
ConfigError.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.cli.translate_cmd import add_int8_arg, apply_int8
from core.config import RunConfig
from core.errors import ConfigError
from core.evaluate.goldsets import GoldSet, import_gold_set, load_gold_set, read_gold_files
from core.evaluate.readings import READINGS
from core.evaluate.symmetrize import HEURISTICS
from core.families import family_traits
from core.services import alignment_runs as alignment
from core.textsafe import printable
from core.workspace.store import Workspace


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `align` command (attention and baseline AER on gold alignments) to `sub`."""
    p = sub.add_parser("align", help="AER of attention and of the eflomal baseline on gold "
                       "alignments")
    p.add_argument("--run", required=True, metavar="RUN", help="src->tgt run (name or id)")
    p.add_argument("--reverse-run", metavar="RUN",
                   help="a tgt->src run: its attention is symmetrised with --run's")
    p.add_argument("--checkpoint", default="best", metavar="WHICH")
    p.add_argument("--device", default="cpu")
    add_int8_arg(p)
    p.add_argument("--gold-set", metavar="NAME",
                   help="a stored gold set; with --gold-src/--gold-tgt/--gold-links the files "
                   "are imported under this name")
    p.add_argument("--gold-src", metavar="FILE", help="tokenised source sentences")
    p.add_argument("--gold-tgt", metavar="FILE", help="tokenised target sentences")
    p.add_argument("--gold-links", metavar="FILE", help="gold links")
    p.add_argument("--format", choices=("pharaoh", "talp", "wpt"), default="pharaoh",
                   help="gold link format (default pharaoh)")
    p.add_argument("--one-based", action="store_true", help="Pharaoh indices start at 1")
    p.add_argument("--swap", action="store_true",
                   help="the links are written target index first (e.g. English first)")
    p.add_argument("--method", choices=("argmax", "threshold"), default="argmax")
    p.add_argument("--threshold", type=float, default=0.3,
                   help="--method threshold links every cell with at least this attention "
                   "weight, above 0 and at most 1 (default 0.3)")
    p.add_argument("--reading", action="append", choices=(*READINGS, "all"),
                   help="where a target word's attention is read (repeatable): 'predict' at "
                   "the step predicting it, 'shift' one step later when it is the decoder's "
                   "input (Shift-Att), 'sum' both, 'previous' one step earlier (input-feeding "
                   "Luong models attend ahead), 'head' the alignment head of a run that has "
                   "one (model.alignment_head); 'all' = every one the run has (default: the "
                   "run's own, see experiments/RESULTS.md D)")
    p.add_argument("--layer", type=int, metavar="N",
                   help="a Transformer-family --run: read its attention from decoder layer N "
                   "(1 = the first; the mean of its heads) instead of the averaged last layer; "
                   "the Attention screen's 'Layer / head' box, over the whole gold set")
    p.add_argument("--head", type=int, metavar="H",
                   help="with --layer: read head H of that layer alone (1 = the first)")
    p.add_argument("--no-sink", action="store_true",
                   help="also report each reading without the final-punctuation sink "
                   "(non-punctuation target words never link to a final full stop)")
    p.add_argument("--remember", action="store_true",
                   help="make the reading with the lowest AER here (every reading unless "
                   "--reading narrows them) this run's default reading")
    p.add_argument("--forget", action="store_true",
                   help="drop the reading --remember stored for this run (its family's "
                   "reading is the default again) and exit; needs no gold set")
    p.add_argument("--choose-by-anchors", action="store_true",
                   help="no gold needed: read the run's attention on training pairs at every "
                   "reading and make the one that links most anchor words (spelled the same "
                   "on both sides, once each: names, numbers) to their twin its default")
    p.add_argument("--pairs", type=int, default=2000,
                   help="training pairs --choose-by-anchors reads (default 2000)")
    p.add_argument("--baseline", choices=("eflomal", "none"), default="none",
                   help="also align with the eflomal statistical aligner")
    p.add_argument("--baseline-corpus", metavar="NAME",
                   help="workspace corpus eflomal trains on (default: the run's corpus, "
                   "train split): of the run's language pair, or of the reverse pair (read "
                   "the other way round)")
    p.add_argument("--baseline-src", metavar="FILE", help="raw source text eflomal trains on")
    p.add_argument("--baseline-tgt", metavar="FILE", help="raw target text eflomal trains on")
    p.add_argument("--symmetrize", default="grow-diag-final-and", choices=HEURISTICS,
                   help="heuristic for both-direction alignments (default grow-diag-final-and)")
    p.add_argument("--out-dir", metavar="DIR", help="write <system>.pharaoh files here")
    p.set_defaults(func=run)


def _gold(ws: Workspace, args: argparse.Namespace, src_lang: str, tgt_lang: str):
    files = (args.gold_src, args.gold_tgt, args.gold_links)
    if any(files):
        if not all(files):
            raise ConfigError("give --gold-src, --gold-tgt and --gold-links together")
        if args.gold_set:
            return import_gold_set(ws, args.gold_set, *files, fmt=args.format,
                                   one_based=args.one_based, swap=args.swap,
                                   src_lang=src_lang, tgt_lang=tgt_lang)
        src, tgt, links = read_gold_files(*files, args.format, args.one_based, args.swap)
        return GoldSet(Path(args.gold_links).stem, src, tgt, links, src_lang, tgt_lang)
    if not args.gold_set:
        raise ConfigError("give --gold-set NAME or the gold files (--gold-src, --gold-tgt, "
                          "--gold-links)")
    return load_gold_set(ws, args.gold_set)


def run(args: argparse.Namespace) -> int:
    """Print the AER table of the run's attention (every reading asked for, or both
    directions symmetrised) and eflomal's on the gold set; write Pharaoh files."""
    # lazy: a top-level import would load sacremoses, sentencepiece, torch
    from core.evaluate.attention_aer import aer_table, gold_for_run

    # imported when called: tests patch the name where it is defined
    from core.services.translation import open_session
    from core.train.device import check_device  # lazy: a top-level import would load torch

    check_device(args.device)
    with Workspace.open(args.workspace, create=False) as ws:
        info = ws.get_run(args.run)
        if args.choose_by_anchors:
            return _choose_by_anchors(ws, info, args)
        if args.forget:
            if args.remember:
                raise ConfigError("give --forget or --remember, not both")

            dropped = alignment.forget_reading(ws, info.id)
            now = alignment.default_reading(RunConfig.from_dict(ws.get_run(info.id).config))
            print(f"run {printable(info.name)}: " + (
                f"the remembered reading '{dropped}' is dropped" if dropped
                else "no reading was remembered") + "; it reads its attention at "
                f"'{now}' by default",
                file=sys.stderr)
            return 0
        # every option, the gold set and the output folder are checked before a model
        # is loaded or anything aligned
        if args.remember and args.reverse_run:
            raise ConfigError("--remember chooses one run's reading: leave out --reverse-run")
        if args.remember and not args.reading:
            args.reading = ["all"]  # choosing means comparing every reading
        asked = args.reading or []
        if args.reverse_run and (len(asked) > 1 or "all" in asked):
            raise ConfigError("with --reverse-run give one --reading, or none: each "
                              "run is then read at its own default")
        if args.method == "threshold" and not 0 < args.threshold <= 1:
            raise ConfigError(f"--threshold {args.threshold:g}: --method threshold keeps "
                              "attention weights at or above it, so give a value above 0 and "
                              "at most 1 (e.g. 0.3)")
        layer = _layer_choice(info, args)
        reverse_info = ws.get_run(args.reverse_run) if args.reverse_run else None
        if reverse_info is not None:
            alignment.check_reverse_direction(ws, info, reverse_info)
        if args.out_dir:
            alignment.check_out_dir(args.out_dir)
        langs = alignment.run_languages(ws, info)
        # a run of the reversed pair reads the gold set from the other side
        gold = gold_for_run(_gold(ws, args, *langs), langs)
        session = open_session(ws, [info.id], args.checkpoint, args.device)
        train_src = train_tgt = None
        if args.baseline == "eflomal":
            # the run's own preprocessing (pretokenized, lowercase ...), so the baseline
            # sees the same tokens as the model and the gold
            train_src, train_tgt = alignment.baseline_training_text(
                ws, info, session.first.src_pre, session.first.tgt_pre, args.baseline_corpus,
                args.baseline_src, args.baseline_tgt)
        apply_int8([session], args)  # after the checks: an error stays the one line
        if reverse_info is not None:
            reverse = open_session(ws, [reverse_info.id], args.checkpoint, args.device)
            apply_int8([reverse], args)
            systems = alignment.symmetrized_systems(
                session, info.name, reverse, reverse_info.name, gold,
                args.symmetrize, args.method, args.threshold,
                asked[0] if asked else None, args.no_sink, layer)
        else:
            systems = alignment.attention_systems(
                session, info.name, gold, alignment.reading_list(args.reading, session.first.config),
                args.no_sink, args.method, args.threshold, layer)
        if train_src is not None:
            print(f"eflomal: aligning {len(train_src)} training pairs + {len(gold)} gold "
                  "pairs", file=sys.stderr)
            if len(train_src) < alignment.MIN_BASELINE_PAIRS:
                print(f"note: eflomal {alignment.baseline_note(len(train_src))}",
                      file=sys.stderr)
            systems.update(alignment.eflomal_systems(gold, train_src, train_tgt, args.symmetrize))
        print(aer_table(systems, gold).to_markdown())
        if args.remember:
            remembered = alignment.remember_best_reading(ws, info.id, info.name, systems, gold)
            if remembered is None:
                raise ConfigError("--remember found no reading of the run to compare")
            best, aers = remembered
            measured = ", ".join(f"{r} {100 * a:.1f}%" for r, a in aers.items())
            print(f"run {printable(info.name)} now reads its attention at '{best}' by default "
                  f"(AER on gold set '{printable(gold.name)}': {measured})", file=sys.stderr)
        if args.out_dir:
            for path in alignment.write_alignments(args.out_dir, systems):
                print(f"wrote {path}", file=sys.stderr)
    return 0


def _layer_choice(info, args: argparse.Namespace) -> tuple[int, int | None] | None:
    """--layer / --head as a 0-based (layer, head or None), checked against the run's
    decoder before a model is loaded (ConfigError naming what to do); None without
    --layer."""
    if args.layer is None:
        if args.head is not None:
            raise ConfigError("--head H reads one head of a decoder layer: give --layer N too")
        return None
    model = RunConfig.from_dict(info.config).model
    if not family_traits(model.family).layered:
        raise ConfigError(f"--layer: run {info.name!r} ({model.family}) has one attention, no "
                          "decoder layers to choose among; leave out --layer and --head")
    if args.remember or "head" in (args.reading or []):
        raise ConfigError("--layer reads one decoder layer's attention: leave out --remember "
                          "(it stores a reading of the run's averaged attention) and --reading "
                          "head")
    if not 1 <= args.layer <= model.dec_layers:
        raise ConfigError(f"--layer {args.layer}: run {info.name!r} has decoder layers 1 to "
                          f"{model.dec_layers}")
    if args.head is not None and not 1 <= args.head <= model.heads:
        raise ConfigError(f"--head {args.head}: the layers of run {info.name!r} have heads 1 "
                          f"to {model.heads}")
    return args.layer - 1, None if args.head is None else args.head - 1


def _choose_by_anchors(ws: Workspace, info, args: argparse.Namespace) -> int:
    """Print each reading's share of anchor words linked to their twin and store the best
    as the run's reading."""
    # imported when called: tests patch the name where it is defined
    from core.services.reading_anchors import choose_by_anchors

    if args.remember or args.forget or args.reading or args.reverse_run or any(
            (args.gold_set, args.gold_src, args.gold_tgt, args.gold_links)):
        raise ConfigError("--choose-by-anchors reads no gold, compares every reading of one "
                          "run: leave out --remember, --forget, --reading, --reverse-run and "
                          "the gold set")
    if args.no_sink or args.out_dir or args.baseline != "none" or args.method != "argmax":
        raise ConfigError("--choose-by-anchors reads argmax links without the sink and "
                          "writes no alignments: leave out --no-sink, --method, --baseline "
                          "and --out-dir")
    print(f"reading the attention of {printable(info.name)} on up to {args.pairs:,} of its "
          "training pairs", file=sys.stderr)
    best, table, total = choose_by_anchors(ws, info.id, args.pairs, args.checkpoint, args.device)
    print(f"| reading | anchors linked to their twin (of {total:,}) |")
    print("| --- | ---: |")
    for reading, share in table.items():
        print(f"| {reading} | {100 * share:.1f} % |")
    print(f"run {printable(info.name)} now reads its attention at '{best}' by default",
          file=sys.stderr)
    return 0

"""`demo`: the whole pipeline on the bundled demo corpus, headless (`make demo`).

    demo [--workspace DIR] [--quick]

Creates (or opens) a demo workspace, imports the demo corpus with its documents and
the demo gold set, trains a small model (preset `demo`; --quick: a few steps),
translates the test split, scores it (BLEU/chrF/TER, BLEU by length), computes the
AER of the model's attention on the gold set beside eflomal's, exports translations
(TMX, XLIFF, JSON lines), alignments (Pharaoh) and an HTML report into
<workspace>/exports/<run>/ (demo, demo-2, ...), and prints a summary with the numbers and the paths
(the work is core.tooling.demo_pipeline's).
"""
from __future__ import annotations

import argparse
import sys

from core import limits


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `demo` command (the whole pipeline on the bundled demo corpus) to `sub`."""
    p = sub.add_parser("demo", help="run the whole pipeline on the bundled demo corpus")
    p.add_argument("--workspace", dest="demo_workspace", metavar="DIR", default=None,
                   help="workspace to use (default: a new folder under the user data folder)")
    p.add_argument("--quick", action="store_true", help="train only a few steps (for tests)")
    p.add_argument("--beam", type=int, default=5, help="beam size for the test split")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo pipeline (core.tooling.demo_pipeline) and print its summary."""
    # imported when called: tests patch the name where it is defined
    from core.cli.progress import ProgressPrinter

    # lazy: a top-level import would load numpy
    from core.tooling.demo_pipeline import fresh_demo_dir, run_demo

    # before the workspace is made, the corpus imported, a model trained
    limits.check_beam(args.beam)
    root = args.demo_workspace or args.workspace or fresh_demo_dir()
    summary = run_demo(root, quick=args.quick, beam=args.beam,
                       log=lambda m: print(m, file=sys.stderr),
                       listeners=[ProgressPrinter(stream=sys.stderr, quiet=args.quick)])
    print("\n".join(summary.lines()))
    return 0

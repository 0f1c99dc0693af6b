"""The one entry point of `python main.py` and the `nmt-workbench` console script.

No arguments (or `gui`) opens the desktop workbench; anything else is the CLI.
"""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        argv = ["gui"]
    from core.cli import run_cli

    return run_cli(argv)

"""`gui`: open the desktop workbench (the default with no arguments)."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gui", help="open the desktop workbench (default)")
    p.add_argument("--demo", action="store_true", help="open the bundled demo workspace")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.main_window import launch  # Qt is imported only here

    return launch(workspace=args.workspace, demo=args.demo)

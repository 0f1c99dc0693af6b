"""The one entry point (`python main.py`, the `nmt-workbench` console script).

No command, or `gui [--demo]`, opens the desktop workbench (app/); any other command
is the command line (core.cli). The choice lives here, outside core/, so that core/
never imports the Qt front.
"""
from __future__ import annotations

import argparse
import sys


def split_workspace(argv: list[str]) -> tuple[str | None, list[str]]:
    """Leading `--workspace DIR` / `--workspace=DIR` -> (DIR, the rest)."""
    workspace, rest = None, list(argv)
    while rest and rest[0].startswith("--workspace"):
        head = rest.pop(0)
        if "=" in head:
            workspace = head.split("=", 1)[1]
        elif rest:
            workspace = rest.pop(0)
        else:
            return None, argv  # let the CLI's parser report the missing value
    return workspace, rest


def main(argv: list[str] | None = None) -> int:
    from core.allocator import keep_freed_memory

    keep_freed_memory()  # before any tensor: freed tensor memory is reused, not refaulted
    argv = list(sys.argv[1:] if argv is None else argv)
    workspace, rest = split_workspace(argv)
    if not rest or rest[0] == "gui":
        parser = argparse.ArgumentParser(prog="nmt-workbench [--workspace DIR] gui",
                                         description="Open the desktop workbench.")
        parser.add_argument("--demo", action="store_true",
                            help="open the bundled demo workspace")
        parser.add_argument("--workspace", metavar="DIR", default=None,
                            help="workspace folder (as before the command)")
        args = parser.parse_args(rest[1:])
        from app.main_window import launch  # Qt is imported only here

        return launch(workspace=args.workspace or workspace, demo=args.demo)
    from core.cli import run_cli

    return run_cli(argv)


if __name__ == "__main__":
    sys.exit(main())

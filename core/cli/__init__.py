"""Command line over the same core functions the GUI uses.

Each sub-command group lives in its own module exposing `register(subparsers)`; the
parser it adds sets `func(args) -> int`. User errors (WorkbenchError) are printed as
one clear line on stderr with exit status 2, and so is a full disk wherever it strikes;
programming errors keep their traceback.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sqlite3
import sys

from core import diskspace
from core.errors import WorkbenchError
from core.textsafe import printable
from core.workspace.database import database_error
from core.workspace.paths import DB_NAME, resolve_workspace_dir

SIGPIPE = 13  # the exit status of a tool stopped by a closed pipe is 128 + SIGPIPE

# Order is the order of `--help`.
COMMAND_MODULES = [
    "corpus", "runs", "train", "translate", "evaluate", "align", "bench", "demo", "device_check",
    "workspace",
]


def build_parser() -> argparse.ArgumentParser:
    """The `nmt-workbench` argument parser: --workspace plus every command module's
    subcommands (COMMAND_MODULES, each registering itself)."""
    parser = argparse.ArgumentParser(
        prog="nmt-workbench",
        description="NMT Attention Workbench: train, inspect and use attention-based NMT. "
        "Run without arguments to open the desktop workbench.",
        epilog="gui [--demo]: open the desktop workbench (the default with no command; "
        "main.py chooses between the workbench and this command line).",
    )
    parser.add_argument(
        "--workspace", metavar="DIR", default=None,
        help="workspace folder (default: the per-user data folder)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"core.cli.{name}_cmd").register(sub)
    _workspace_after_the_command(parser)
    return parser


def _workspace_after_the_command(parser: argparse.ArgumentParser) -> None:
    """Every command also takes --workspace after its name (`translate --workspace D`),
    as users type it; given there, it overrides one given before. (SUPPRESS: left out,
    the value from before the command, or None, stays.)"""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for command in set(action.choices.values()):
            has_subcommands = any(isinstance(a, argparse._SubParsersAction)
                                  for a in command._actions)
            if has_subcommands:
                _workspace_after_the_command(command)
            elif "--workspace" not in command._option_string_actions:
                command.add_argument("--workspace", metavar="DIR", default=argparse.SUPPRESS,
                                     help="workspace folder (as before the command)")


def run_cli(argv: list[str]) -> int:
    """Parse `argv` and run the chosen command; returns the exit status: the command's, 1
    (help printed) without a command, 2 after a WorkbenchError (one line on stderr), 130
    on Ctrl-C or an SQLite error (what it means: core.workspace.database.database_error),
    141 (128 + SIGPIPE) without a word when stdout's reader has gone."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a reader that has gone (`| head`) shows here, not at exit
        return status
    except BrokenPipeError:  # stdout closed by its reader: stop quietly, as Unix tools do
        _drop_stdout()
        return 128 + SIGPIPE
    except WorkbenchError as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)  # one line, no escapes
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except sqlite3.Error as exc:  # the database failed where no store call said why
        db = resolve_workspace_dir(getattr(args, "workspace", None)) / DB_NAME
        print(f"error: {printable(str(database_error(db, exc)))}", file=sys.stderr)
        return 2
    except Exception as exc:  # a full disk where no writer said so: still one clear line
        if not diskspace.is_full(exc):
            raise
        where = getattr(exc, "filename", None) or args.workspace or "."
        print(f"error: {printable(str(diskspace.disk_full(where, cleaned=False)))}", file=sys.stderr)
        return 2


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what is still
    buffered for a closed pipe says nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test's capture): nothing to flush
        pass

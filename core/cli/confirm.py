"""Renaming and deleting from the command line (`corpus rename / delete`, `runs rename /
delete`): the two actions' arguments, and a deletion's confirmation: what goes is printed,
then confirmed on a terminal or by --yes."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from core.errors import ConfigError
from core.textsafe import printable


def add_rename_and_delete(cmds: argparse._SubParsersAction, what: str,
                          rename: Callable[[argparse.Namespace], int],
                          delete: Callable[[argparse.Namespace], int],
                          rename_help: str, delete_help: str) -> None:
    """Add the actions `rename OLD NEW` and `delete NAME|ID [--yes]` to a command's
    actions `cmds`; `what` ("corpus", "run") is the attribute holding OLD / NAME."""
    ren = cmds.add_parser("rename", help=rename_help)
    ren.add_argument(what, metavar="OLD", help=f"the {what}'s name (or id)")
    ren.add_argument("new_name", metavar="NEW", help="its new name")
    ren.set_defaults(func=rename)
    dele = cmds.add_parser("delete", help=delete_help)
    dele.add_argument(what, metavar="NAME|ID")
    dele.add_argument("--yes", action="store_true",
                      help="delete without asking (needed when stdin is not a terminal)")
    dele.set_defaults(func=delete)


def confirm_deletion(what: str, name: str, text: str, yes: bool,
                     stdin: Any = None) -> bool:
    """Print `text` (what deleting the `what` called `name` removes) and return whether to
    go on: True with `yes`; else ask on a terminal (y/yes goes on); ConfigError when
    stdin is not a terminal, saying to pass --yes."""
    stdin = sys.stdin if stdin is None else stdin
    for line in text.split("\n"):
        print(printable(line))
    if yes:
        return True
    if not (stdin is not None and stdin.isatty()):
        raise ConfigError(f"{what} {name!r} not deleted: stdin is not a terminal to confirm "
                          f"on; pass --yes to delete it")
    print(f"Delete the {what} {name!r}? [y/N] ", end="", flush=True)
    answer = stdin.readline()
    if answer.strip().lower() in ("y", "yes"):
        return True
    if not answer:
        print()
    print("nothing was deleted")
    return False


def refuse(error: type[Exception], text: str) -> None:
    """Raise `error` with the refusal `text` on one line."""
    raise error(" ".join(text.split()))

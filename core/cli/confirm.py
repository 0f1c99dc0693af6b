"""Deleting from the command line: what goes is printed, then confirmed on a terminal or
by --yes (`corpus delete`, `runs delete`)."""
from __future__ import annotations

import sys
from typing import Any

from core.errors import ConfigError
from core.textsafe import printable


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

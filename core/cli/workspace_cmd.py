"""`workspace`: check the workspace's database, or rebuild it from the folders.

    workspace check
    workspace rebuild [--force]

`check` opens the workspace (the checks every command makes: core.workspace.health)
and runs SQLite's full PRAGMA integrity_check. `rebuild` moves a damaged, emptied or
lost database aside and indexes corpora/<id>/ and runs/<id>/ into a new one
(core.services.workspace_rebuild); a healthy database is rebuilt only with --force.
"""
from __future__ import annotations

import argparse

from core.errors import StoreError
from core.services.workspace_rebuild import rebuild_workspace
from core.textsafe import printable
from core.workspace.health import damaged
from core.workspace.store import Workspace


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `workspace` command with its actions check and rebuild to `sub`."""
    p = sub.add_parser("workspace", help="check the workspace database, or rebuild it from "
                       "the corpus and run folders")
    cmds = p.add_subparsers(dest="workspace_command", metavar="ACTION", required=True)
    check = cmds.add_parser("check", help="check the workspace database (SQLite's integrity "
                            "check and the workbench's own)")
    check.set_defaults(func=run_check)
    rebuild = cmds.add_parser(
        "rebuild", help="move a damaged or emptied database aside and index the corpora/ and "
        "runs/ folders into a new one")
    rebuild.add_argument("--force", action="store_true",
                         help="rebuild a healthy database too (its training curves, "
                         "evaluations and translation records are not rebuilt)")
    rebuild.set_defaults(func=run_rebuild)


def run_check(args: argparse.Namespace) -> int:
    """`workspace check`: 0 and 'ok' when the database is sound; StoreError (exit 2)
    saying what is wrong and how to recover otherwise."""
    with Workspace.open(args.workspace, create=False) as ws:
        result = ws.integrity_check()
        if result != "ok":
            raise damaged(ws.db_path, f"PRAGMA integrity_check: {' '.join(result.split())}")
        runs, corpora = len(ws.list_runs()), len(ws.list_corpora())
    print(f"{ws.db_path}: ok ({corpora} corpora, {runs} runs)")
    return 0


def run_rebuild(args: argparse.Namespace) -> int:
    """`workspace rebuild`: print where the old database went, what was indexed and
    what was left out; returns 0."""
    report = rebuild_workspace(args.workspace, force=args.force)
    for path in report.moved_to:
        print(f"kept the old database file as {path}")
    if not report.corpora and not report.runs:
        raise StoreError(f"{report.root}: no corpus or run folder could be indexed; the new "
                         "database is empty (the old one is kept, see above).")
    for line in report.corpora:
        print(f"corpus {printable(line)}")
    for line in report.runs:
        print(f"run {printable(line)}")
    for line in report.skipped:
        print(f"left out: {printable(line)}")
    for line in report.notes:
        print(f"note: {printable(line)}")
    print(f"rebuilt {report.root / 'workspace.sqlite'}: {len(report.corpora)} corpora, "
          f"{len(report.runs)} runs")
    return 0

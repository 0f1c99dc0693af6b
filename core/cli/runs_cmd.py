"""`runs`: list the workspace's runs, rename them, delete them (as the Training screen does).

    runs list [--corpus NAME|ID] [--status S] [--json]
    runs rename OLD NEW
    runs delete NAME|ID [--yes]
    runs import PATH [--name NAME]   an outside model as a run (core.services.model_import)
    runs average RUN CKPT CKPT ... [--out NAME] [--replace]
                                     the mean of checkpoints of a run (core.train.averaging)

`runs delete` prints what goes (core.services.manage, the text of the GUI's dialog), then
asks on a terminal; without a terminal it needs --yes. A run that is training is refused.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
from typing import Any

from core.cli.confirm import add_rename_and_delete, confirm_deletion, refuse
from core.cli.corpus_cmd import format_table
from core.errors import ConfigError, TrainingError
from core.families import FAMILIES, family_traits
from core.services.manage import delete_run, run_deletion
from core.textsafe import cell, printable
from core.workspace.runs import RUN_STATUSES
from core.workspace.store import Workspace


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `runs` command with its actions list, rename and delete to `sub`."""
    p = sub.add_parser("runs", help="list, rename and delete training runs")
    cmds = p.add_subparsers(dest="runs_command", metavar="ACTION", required=True)

    lst = cmds.add_parser("list", help="list the runs with their status, steps and best "
                          "dev perplexity")
    lst.add_argument("--corpus", metavar="NAME|ID", default=None,
                     help="only the runs trained on this corpus")
    lst.add_argument("--status", choices=RUN_STATUSES, default=None,
                     help="only the runs with this status")
    lst.add_argument("--json", action="store_true",
                     help="one JSON object per run and line instead of a table")
    lst.set_defaults(func=run_list)

    add_rename_and_delete(cmds, "run", run_rename, run_delete, "give a run a new, unused name",
                          "delete a run: its checkpoints, curves, evaluations and folder")

    from core.services.model_import import KINDS, NOT_YET  # loads torch: not for every command
    imp = cmds.add_parser(
        "import", help="make a model trained elsewhere a run of the workspace",
        description="Import a model trained elsewhere as a finished run, with its "
        "vocabularies and a provenance record (where it came from, its files' SHA-256). "
        "The kind is told from the files. Read: " + "; ".join(KINDS) + ". " + NOT_YET
        + " Nothing is downloaded: point at files on disk.")
    imp.add_argument("path", metavar="PATH",
                     help="the model's folder (Marian) or .pt file (OpenNMT-py)")
    imp.add_argument("--name", default=None,
                     help="the run's name (default: the folder's or file's name)")
    imp.add_argument("--src-lang", default=None,
                     help="the model's source language code, e.g. es (an OpenNMT-py "
                     "checkpoint names none; gold sets and corpora are matched by it)")
    imp.add_argument("--tgt-lang", default=None, help="the model's target language code")
    imp.set_defaults(func=run_import)

    avg = cmds.add_parser(
        "average", help="write the mean of several checkpoints of a run as a new checkpoint",
        description="Average the weights of several checkpoints of one run into a new "
        "checkpoint file of the run, to translate, align and evaluate with "
        "(--checkpoint NAME); it holds no optimiser state, so training does not resume from it.")
    avg.add_argument("run", metavar="RUN", help="run name or id")
    avg.add_argument("checkpoints", metavar="CKPT", nargs="+",
                     help="checkpoint file names of the run (best-00001000.pt, last, best)")
    avg.add_argument("--out", default="averaged.pt", help="the new file's name (default averaged.pt)")
    avg.add_argument("--replace", action="store_true", help="replace a file of that name")
    avg.set_defaults(func=run_average)


def _open(args: argparse.Namespace) -> Workspace:
    return Workspace.open(args.workspace)


def run_rows(ws: Workspace, corpus: str | None, status: str | None) -> list[dict[str, Any]]:
    """The runs (of `corpus`, with `status` when given) as plain dicts: id, name, family,
    attention, corpus, status, steps, best_dev_ppl (None when never validated), device,
    created (epoch seconds), error."""
    corpus_id = None if corpus is None else ws.corpus_id(corpus)
    names = {c.id: c.name for c in ws.list_corpora()}
    runs = ws.list_runs(corpus_id=corpus_id, status=status)
    best = ws.best_dev_ppl([r.id for r in runs]) if runs else {}
    rows = []
    for run in runs:
        attention = run.config.get("model", {}).get("attention", "")
        if run.family in FAMILIES and family_traits(run.family).transformer:
            attention = "multi-head"  # as the Training screen shows it
        ppl = best.get(run.id)
        rows.append({
            "id": run.id, "name": run.name, "family": run.family, "attention": attention,
            "corpus": names.get(run.corpus_id) if run.corpus_id is not None else None,
            "status": run.status, "steps": run.steps,
            "best_dev_ppl": ppl if ppl is not None and math.isfinite(ppl) else None,
            "device": run.device, "created": run.created, "error": run.error,
        })
    return rows


def run_list(args: argparse.Namespace) -> int:
    """`runs list`: print the runs as a table (or JSON lines with --json); returns 0."""
    with _open(args) as ws:
        rows = run_rows(ws, args.corpus, args.status)
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return 0
    if not rows:
        print("no matching runs" if args.corpus or args.status else
              "no runs yet; start one with `train --preset NAME --corpus CORPUS`")
        return 0

    table = [("id", "name", "family", "attention", "corpus", "status", "steps",
              "best dev ppl", "created")]
    for r in rows:
        created = dt.datetime.fromtimestamp(r["created"]).strftime("%Y-%m-%d %H:%M")
        ppl = "-" if r["best_dev_ppl"] is None else f"{r['best_dev_ppl']:.2f}"
        table.append((str(r["id"]), cell(r["name"]), printable(r["family"] or "-"),
                      printable(str(r["attention"] or "-")), cell(r["corpus"] or "-"),
                      r["status"], str(r["steps"]), ppl, created))
    print(format_table(table))
    return 0


def run_import(args: argparse.Namespace) -> int:
    """`runs import`: the model at PATH made a finished run; returns 0."""
    from core.services.alignment_runs import run_languages  # loads torch, as below
    from core.services.model_import import import_model  # loads torch: not for every command

    if (args.src_lang is None) != (args.tgt_lang is None):
        raise ConfigError("give both --src-lang and --tgt-lang, or neither")
    languages = (args.src_lang, args.tgt_lang) if args.src_lang is not None else None
    with _open(args) as ws:
        run = ws.get_run(import_model(ws, args.path, args.name, languages))
        src, tgt = run_languages(ws, run)
    print(f"imported {args.path} as run {run.id} {printable(run.name)!r} ({run.family}), "
          f"{src} -> {tgt}")
    if "xx" in (src, tgt):
        print("note: the model does not say its languages: import it again with --src-lang "
              "and --tgt-lang to score it on gold sets of its pair")
    return 0


def run_average(args: argparse.Namespace) -> int:
    """`runs average`: the mean of the run's checkpoints written as a new one; returns 0."""
    from core.train.artifacts import pick_checkpoint  # loads torch: not for every command
    from core.train.averaging import average_checkpoints  # loads torch: not for every command

    with _open(args) as ws:
        run = ws.get_run(args.run)
        run_dir = ws.run_dir(run.id)
        names = [pick_checkpoint(run_dir, which).name for which in args.checkpoints]
        path = average_checkpoints(run_dir, names, args.out, replace=args.replace)
    print(f"run {run.id} {printable(run.name)!r}: {path.name} = the mean of {', '.join(names)}; "
          f"use it with --checkpoint {path.name}")
    return 0


def run_rename(args: argparse.Namespace) -> int:
    """`runs rename`: give run OLD the name NEW (the store refuses a taken or bad name);
    returns 0."""
    with _open(args) as ws:
        run = ws.get_run(args.run)
        ws.update_run(run.id, name=args.new_name)
        new = ws.get_run(run.id).name
    print(f"renamed run {run.id} {run.name!r} to {new!r}")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    """`runs delete`: print what goes, confirm (or --yes) and delete the run; refused
    (exit 2) while it trains; returns 0 when deleted, 1 when the answer was no."""
    with _open(args) as ws:
        run = ws.get_run(args.run)
        allowed, text = run_deletion(ws, run.id, training=False)
        if not allowed:
            refuse(TrainingError, text)
        if not confirm_deletion("run", run.name, text, args.yes):
            return 1
        delete_run(ws, run.id)
    print(f"deleted run {run.id} {run.name!r}")
    return 0


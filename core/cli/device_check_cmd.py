"""`device-check`: every path a device must carry, run once on the demo corpus (the work
is core.tooling.device_check's; `make gpu-check` runs it with --device cuda).

    device-check [--device cuda] [--steps 200] [--tiny] [--workdir DIR]

Prints one line per path (ok with what it measured, or FAIL with the error) and exits
with status 1 when any path failed.
"""
from __future__ import annotations

import argparse
import sys

from core.cli import run_cli
from core.errors import ConfigError
from core.tooling.device_check import run_device_check


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `device-check` command to `sub`."""
    p = sub.add_parser("device-check", help="run every training and inference path once "
                       "on a device (e.g. a GPU) and say which work")
    p.add_argument("--device", default="cuda", help="cuda | cuda:N | cpu (default cuda)")
    p.add_argument("--steps", type=int, default=200,
                   help="training steps of each run (default 200)")
    p.add_argument("--tiny", action="store_true",
                   help="shrink every model (a quick check of the paths, not of the speed)")
    p.add_argument("--workdir", metavar="DIR",
                   help="keep the workspace and outputs here (default: a temporary folder)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the checks; 0 when every path is ok, 1 otherwise."""
    from core.train.device import pick_device  # lazy: a top-level import would load torch

    if args.steps < 2:
        raise ConfigError("--steps must be 2 or more (each run validates half-way)")
    pick_device(args.device)  # a missing GPU is one clear line, before any work
    results = run_device_check(args.device, args.steps, sys.stdout, run_cli, tiny=args.tiny,
                               workdir=args.workdir)
    return 0 if all(r.ok for r in results) else 1

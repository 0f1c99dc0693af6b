"""Markdown table of a workspace's runs: steps, wall time, dev perplexity (best and last),
dev greedy BLEU (200-sentence sample) at the last validation, and the key config.

    python experiments/runs_table.py WORKSPACE [--prefix A-]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.workspace.store import Workspace  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace")
    ap.add_argument("--prefix", default="")
    args = ap.parse_args()
    print("| run | family / attention | steps | wall s | best dev ppl | last dev ppl "
          "| dev BLEU (greedy, 200) | status |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    with Workspace.open(args.workspace, create=False) as ws:
        for r in ws.list_runs():
            if not r.name.startswith(args.prefix):
                continue
            m = r.config["model"]
            kind = m["family"]
            if kind in ("luong", "rnnsearch"):
                kind += f" {m['attention']} {m['score']}"
            elif kind == "context_transformer":
                kind += f" {m['strategy']}"
            curves = ws.curves(r.id, "valid")
            ppl = curves.get("dev_ppl", ([], []))[1]
            bleu = curves.get("dev_bleu", ([], []))[1]
            wall = (r.finished - r.started) if r.finished and r.started else r.elapsed_s
            print(f"| {r.name} | {kind} | {r.steps} | {wall:.0f} | "
                  f"{min(ppl) if ppl else float('nan'):.2f} | {ppl[-1] if ppl else float('nan'):.2f} | "
                  f"{bleu[-1] if bleu else float('nan'):.2f} | {r.status} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

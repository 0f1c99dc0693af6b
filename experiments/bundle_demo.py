"""Bundle the Tatoeba reference runs as the demo workspace's runs (issue 20): int8 weights
of each run's best checkpoint, with its stored scores in meta.json.

    python experiments/bundle_demo.py [--workspace /tmp/ref-ws] [--out resources/demo/models]

Reads the evaluations that experiments/ref_tatoeba_eval.sh stored (test split and the
459 demo pairs, beam 5) and writes one folder per run (core.services.demo.bundle_run).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.services.demo import bundle_run  # noqa: E402
from core.store import Workspace  # noqa: E402

RUNS = {"ref-tatoeba-luong": "tatoeba-luong", "ref-tatoeba-rnnsearch": "tatoeba-rnnsearch",
        "ref-tatoeba-guided": "tatoeba-luong-guided"}


def scores(ws, run_id: int) -> dict:
    """The latest single-run evaluations on the test split and on the demo pairs."""
    out = {}
    for e in ws.evaluations(run_id):
        if e.run_ids != [run_id]:
            continue
        if e.test_name.endswith(":test"):
            out["test_bleu"] = round(e.metrics["bleu"], 2)
            out["test_chrf"] = round(e.metrics["chrf"], 2)
            out["test_signature"] = e.metrics.get("bleu_signature")
            out["test_sentences"] = e.metrics["sentences"]
        elif e.test_name == "demo.es":
            out["demo_bleu"] = round(e.metrics["bleu"], 2)
            out["demo_sentences"] = e.metrics["sentences"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", default="/tmp/ref-ws")
    ap.add_argument("--out", default="resources/demo/models")
    args = ap.parse_args()
    with Workspace.open(args.workspace, create=False) as ws:
        for run, name in RUNS.items():
            info = ws.get_run(run)
            extra = {"trained_on_pairs": "Tatoeba es-en (manythings.org/anki 2018-05-13, "
                     "CC-BY 2.0 FR), 114,206 training pairs; not bundled",
                     "source_run": run, **scores(ws, info.id)}
            meta = bundle_run(ws, info.id, Path(args.out) / name, which="best",
                              weights="int8", extra=extra, name=name)
            size = sum(f.stat().st_size for f in (Path(args.out) / name).iterdir())
            print(f"{name}: step {meta['step']}, dev ppl {meta['best_dev_ppl']}, "
                  f"{size / 2**20:.1f} MiB, {extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

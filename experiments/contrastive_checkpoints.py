"""Choose a context run's checkpoint by what it is for: contrastive pronoun accuracy on
the DEV documents' examples (experiments/prep_context_docs.py writes them to
OUT_DIR/contrastive-dev), never on the held-out set. Dev perplexity, which picks 'best',
stays flat for thousands of updates while the pronoun accuracy keeps moving
(experiments/RESULTS.md, H), so it chooses among near-ties.

    python experiments/contrastive_checkpoints.py WORKSPACE RUN DEV_SET_DIR CKPT ... \
           [--report FILE.md]

CKPT: checkpoint file names inside the run's folder (best-*.pt, last.pt, or copies of
earlier last.pt files put there). Prints one row per checkpoint (its step, correct
examples, accuracy) and the chosen one: the highest accuracy, the earlier step on a tie.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.atomic import write_text_atomic  # noqa: E402
from core.evaluate.contrastive import contrastive_accuracy, read_pronoun_set  # noqa: E402
from core.services.contrastive_eval import contrastive_score_fn, contrastive_side  # noqa: E402
from core.services.translation import open_session  # noqa: E402
from core.workspace.store import Workspace  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace")
    ap.add_argument("run")
    ap.add_argument("dev_set")
    ap.add_argument("checkpoints", nargs="+")
    ap.add_argument("--report", default=None)
    args = ap.parse_args()
    examples = read_pronoun_set(args.dev_set, k=1)
    rows = []
    with Workspace.open(args.workspace, create=False) as ws:
        for name in args.checkpoints:
            session = open_session(ws, [args.run], which=name)
            side = contrastive_side(session)
            report = contrastive_accuracy(contrastive_score_fn(session), examples, context_side=side)
            step = session.first.step
            rows.append((name, step, report.overall.correct, report.overall.total,
                         100 * report.overall.accuracy))
            print(f"{name}: step {step}, {rows[-1][2]} / {rows[-1][3]} = {rows[-1][4]:.2f} %",
                  flush=True)
    chosen = max(rows, key=lambda r: (r[2], -r[1]))
    lines = [f"Contrastive accuracy of {args.run} on {args.dev_set} ({len(examples)} examples)", "",
             "| checkpoint | step | correct | accuracy |", "| --- | --- | --- | --- |"]
    lines += [f"| {n} | {s} | {c} / {t} | {a:.2f} |" for n, s, c, t, a in sorted(rows, key=lambda r: r[1])]
    lines += ["", f"chosen: {chosen[0]} (step {chosen[1]}, {chosen[4]:.2f} %)"]
    print("\n".join(lines))
    if args.report:
        write_text_atomic(Path(args.report), "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

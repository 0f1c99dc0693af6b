"""Experiment G (Issue 18 item 3): does a context model use the previous sentence for
the pronoun? Contrastive accuracy per pronoun with the real previous sentence and with
another film's (the context ablation), split by what the previous TARGET sentence says
about the antecedent's gender, and the mean gate per pronoun of gated models.

    python experiments/contrastive_by_context.py WORKSPACE SET_DIR OTHER_DIR --run R ...
           [--report FILE.md] [--limit N]

SET_DIR / OTHER_DIR: the held-out set and its copy with other films' previous sentences
(experiments/prep_context_docs.py). The split by the previous target sentence is a
heuristic, not coreference: 'agrees' when it holds a gender marker of the correct
pronoun's gender and none of the other (singular pronouns: la/une/cette/elle against
le/un/ce/cet/il; plural ones: elles against ils, since les/des/ces carry no gender),
'conflicts' when it holds only markers of the other gender, 'silent' otherwise.
A model that reads the context should gain on 'agrees' and lose on 'conflicts'.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.evaluate.contrastive import contrastive_accuracy, read_pronoun_set  # noqa: E402
from core.evaluate.gates import OTHER, PUNCTUATION, WATCHED, GateStats  # noqa: E402
from core.evaluate.report import Table  # noqa: E402
from core.services.contrastive_eval import contrastive_score_fn, contrastive_side, gates_and_store  # noqa: E402
from core.services.eval_scores import write_report  # noqa: E402
from core.services.translation import open_session  # noqa: E402
from core.workspace.store import Workspace  # noqa: E402

MARKERS = {
    ("singular", "f"): {"la", "une", "cette", "elle"},
    ("singular", "m"): {"le", "un", "ce", "cet", "il"},
    ("plural", "f"): {"elles"},
    ("plural", "m"): {"ils"},
}
GATE_COLUMNS = ["watched words", "other words", "punctuation", "it", "they", "elle/elles examples",
                "il/ils examples"]
PRONOUN = {"il": ("singular", "m"), "elle": ("singular", "f"),
           "ils": ("plural", "m"), "elles": ("plural", "f")}


def context_cue(pronoun: str, previous_target: str) -> str:
    """'agrees', 'conflicts' or 'silent' (see the module docstring)."""
    number, gender = PRONOUN[pronoun]
    other = "m" if gender == "f" else "f"
    words = set(previous_target.lower().replace("'", "' ").split())
    same, diff = bool(words & MARKERS[(number, gender)]), bool(words & MARKERS[(number, other)])
    return "agrees" if same and not diff else "conflicts" if diff and not same else "silent"


def _merge(profile, phenomena):
    """GateStats of the watched words over the examples of these phenomena."""
    parts = [profile.by_phenomenon[p] for p in phenomena if p in profile.by_phenomenon]
    total = sum(s.count for s in parts)
    return GateStats(total, sum(s.total for s in parts))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace")
    ap.add_argument("set_dir")
    ap.add_argument("other_dir")
    ap.add_argument("--run", action="append", required=True,
                    help="a run, or RUN@CHECKPOINT for a checkpoint file of the run other than its best")
    ap.add_argument("--report")
    ap.add_argument("--limit", type=int, default=0, help="only the first N examples (a quick check)")
    args = ap.parse_args()
    examples = read_pronoun_set(args.set_dir, k=1)
    other = read_pronoun_set(args.other_dir, k=1)
    if args.limit:
        examples, other = examples[:args.limit], other[:args.limit]
    cues = [context_cue(ex.phenomenon, " ".join(ex.context_tgt)) for ex in examples]
    groups = {"all": list(range(len(examples)))}
    for p in sorted(PRONOUN):
        groups[p] = [i for i, ex in enumerate(examples) if ex.phenomenon == p]
    for c in ("agrees", "conflicts", "silent"):
        groups[f"previous target {c}"] = [i for i, cue in enumerate(cues) if cue == c]

    columns, margins, gate_rows = ["examples"], {}, []
    with Workspace.open(args.workspace, create=False) as ws:
        for ref in args.run:
            ref, _, which = ref.partition("@")  # RUN@CHECKPOINT: that checkpoint, not 'best'
            session = open_session(ws, [ref], which or "best", "cpu")
            name = ws.get_run(ref).name + (f"@{which}" if which else "")
            side = contrastive_side(session)
            for label, exs in (("", examples), (" other ctx", other)):
                if label and not session.context_sentences:
                    continue  # a sentence-level model ignores the context
                report = contrastive_accuracy(contrastive_score_fn(session), exs, context_side=side)
                margins[name + label] = report.margins
                columns.append(name + label)
                print(f"{name}{label}: {100 * report.accuracy:.2f} %", file=sys.stderr)
            profiles = gates_and_store(ws, {name: session}, {name: ws.get_run(ref).id},
                                       Path(args.set_dir), examples)
            for prof_name, p in profiles.items():
                gate_rows.append([prof_name] + [None if s is None or s.count == 0 else round(s.mean, 3) for s in (
                    p.by_class.get(WATCHED), p.by_class.get(OTHER), p.by_class.get(PUNCTUATION),
                    p.by_word.get("it"), p.by_word.get("they"), _merge(p, ("elle", "elles")),
                    _merge(p, ("il", "ils")))])
    rows = []
    for g, idx in groups.items():
        row = [g, len(idx)]
        for col in columns[1:]:
            right = sum(margins[col][i] > 0 for i in idx)
            row.append(round(100 * right / len(idx), 2) if idx else None)
        rows.append(row)
    tables = [Table(["group"] + columns, rows,
                    "Contrastive accuracy (%) by pronoun and by what the previous target "
                    "sentence says about the gender",
                    ["'other ctx': every example's previous sentence taken from another film.",
                     "agrees / conflicts / silent: gender markers of the previous target "
                     "sentence (heuristic, experiments/contrastive_by_context.py)."])]
    if gate_rows:
        tables.append(Table(["system", *GATE_COLUMNS], gate_rows, "Mean gate lambda on the held-out set "
                            "(1 = the source word kept its own representation)"))
    for t in tables:
        print(t.to_markdown())
    if args.report:
        write_report(args.report, tables, tables[0].title)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Document-level BLEU (thesis Table 5.5 layout) of several runs on a prefix of the
stored test split's documents: `evaluate --doc-level` on a CPU budget.

    python experiments/doc_bleu.py WORKSPACE --run A --run B ... [--max-sentences 400]
           [--beam 5] [--report FILE.md] [--group PREFIX ...] [--hyps DIR] [--split dev]

Each test document is cut to its first --max-sentences sentences (in document order,
so every kept sentence has its real previous sentence as context); otherwise the same
calls as `evaluate --doc-level`: TranslationSession.translate_documents and
core.evaluate.doclevel.document_bleu. The first --run is the baseline of the deltas.
--group PREFIX scores the documents whose id starts with PREFIX as a separate table
(e.g. `--group hansard --group subs`: the held-out sitting and the subtitle documents),
and only the documents of some group are translated;
--split dev scores the dev split's documents instead of the test split's (to choose
among a run's checkpoints without the test set);
--hyps DIR writes each system's hypotheses, one sentence per line in document order.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.atomic import write_text_atomic  # noqa: E402
from core.config import RunConfig  # noqa: E402
from core.evaluate.doclevel import document_bleu  # noqa: E402
from core.services.doc_eval import system_info  # noqa: E402
from core.services.eval_scores import write_report  # noqa: E402
from core.services.training import load_split_corpora  # noqa: E402
from core.services.translation import open_session  # noqa: E402
from core.workspace.store import Workspace  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace")
    ap.add_argument("--run", action="append", required=True,
                    help="a run, or RUN@CHECKPOINT for a checkpoint file of the run other than its best")
    ap.add_argument("--max-sentences", type=int, default=400)
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--report")
    ap.add_argument("--group", action="append", default=[])
    ap.add_argument("--hyps")
    ap.add_argument("--split", choices=("test", "dev"), default="test")
    ap.add_argument("--length-penalty", type=float, default=None,
                    help="GNMT's alpha for the beam (default: each run's own, "
                    "config.length_penalty; 0: the plain log-probability)")
    args = ap.parse_args()
    with Workspace.open(args.workspace, create=False) as ws:
        first = ws.get_run(args.run[0])
        seed = RunConfig.from_dict(first.config).train.seed
        _, parts = load_split_corpora(ws, first.corpus_id, seed)
        groups: dict[str, list] = {}
        for p in parts[args.split].pairs:
            if not args.group or any(str(p.doc_id).startswith(g) for g in args.group):
                groups.setdefault(p.doc_id, []).append(p)
        documents = [[(p.src, p.tgt) for p in g[:args.max_sentences]] for g in groups.values()]
        doc_ids = list(groups)
        sizes = {d: len(g) for d, g in groups.items()}
        print(f"{args.split} documents: {len(sizes)}, sentences kept "
              f"{sum(min(n, args.max_sentences) for n in sizes.values())} of {sum(sizes.values())}",
              file=sys.stderr)
        systems, infos = {}, {}
        for ref in args.run:
            ref, _, which = ref.partition("@")  # RUN@CHECKPOINT: that checkpoint, not 'best'
            session = open_session(ws, [ref], which or "best", "cpu")
            name = ws.get_run(ref).name + (f"@{which}" if which else "")
            t0 = time.time()
            out = session.translate_documents([[s for s, _ in d] for d in documents],
                                              beam=args.beam, **({} if args.length_penalty is None
                                                                 else {"length_penalty": args.length_penalty}))
            print(f"{name}: translated in {time.time() - t0:.0f} s", file=sys.stderr)
            systems[name] = [[t.text for t in doc] for doc in out]
            infos[name] = system_info(session)
            if args.hyps:
                Path(args.hyps).mkdir(parents=True, exist_ok=True)
                write_text_atomic(Path(args.hyps) / f"{name}.txt",
                                  "\n".join(h for doc in systems[name] for h in doc) + "\n")
        tables = []
        for prefix in args.group or [""]:
            keep = [i for i, d in enumerate(doc_ids) if str(d).startswith(prefix)]
            result = document_bleu([documents[i] for i in keep],
                                   {n: [docs[i] for i in keep] for n, docs in systems.items()},
                                   info=infos)
            label = f"documents '{prefix}*' ({len(keep)}), " if prefix else ""
            tables.append(result.to_table(
                f"Document-level BLEU, {label}first {args.max_sentences} sentences of "
                f"each {args.split} document (beam {args.beam})"))
            print(tables[-1].to_markdown())
        if args.report:
            write_report(args.report, tables, tables[0].title)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""BLEU and decoding time of a run over the whole vocabulary and over lexical shortlists
(issue 17: the shortlist's cost in BLEU, measured on a trained run and its own test split).

    python experiments/shortlist_eval.py --workspace WS --run RUN [--max 1000] [--beam 5]
        [--shortlist 50,100 --shortlist 20,100 ...] [--threads 2] [--amp] [--rounds 2]

The same sentences (the run corpus's stored test split, first --max) are translated
in alternating rounds: full vocabulary, then each shortlist. Prints sacreBLEU (with its
signature), seconds, sentences/s, the mean number of candidate words per batch and how
many outputs differ from the full-vocabulary ones.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from core.evaluate.metrics import corpus_bleu  # noqa: E402
from core.infer.shortlist import parse_spec  # noqa: E402
from core.services.shortlist_store import load_shortlist  # noqa: E402
from core.services.test_pairs import evaluation_pairs  # noqa: E402
from core.services.translation import open_session  # noqa: E402
from core.train.device import machine_summary  # noqa: E402
from core.workspace.store import Workspace  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--max", type=int, default=1000)
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--shortlist", action="append", default=[])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--amp", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with Workspace.open(args.workspace, create=False) as ws:
        info = ws.get_run(args.run)
        pairs, test_name, _, _ = evaluation_pairs(ws, info, "test", max_sentences=args.max)
        session = open_session(ws, [info.id])
        session.amp = args.amp
        lists = {"full vocabulary": None}
        for spec in args.shortlist or ["50,100"]:
            lists[f"shortlist {spec}"] = load_shortlist(ws, info.id, *parse_spec(spec),
                                                        log=lambda m: print(m, file=sys.stderr))
    sources, refs = [p.src for p in pairs], [p.tgt for p in pairs]
    print(f"# {machine_summary()}; {args.threads} threads; {'bf16' if args.amp else 'fp32'}")
    print(f"# {args.run} on {test_name}: {len(pairs)} sentences, beam {args.beam}, batches of 32")
    outputs: dict[str, list[str]] = {}
    times: dict[str, list[float]] = {name: [] for name in lists}
    words: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, sl in lists.items():
            session.shortlist = sl
            if sl is not None:
                from core.infer.translate import pad_batch, source_tokens

                src_vocab, _, src_pre, _ = session.text_side()
                ids = [src_vocab.encode(source_tokens(s, src_pre, src_vocab)) for s in sources]
                order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
                sizes = [len(sl.candidates(pad_batch([ids[i] for i in order[k:k + 32]])[0]))
                         for k in range(0, len(order), 32)]
                words[name] = sum(sizes) / len(sizes)
            start = time.perf_counter()
            outputs[name] = [t.text for t in session.translate(sources, beam=args.beam)]
            times[name].append(time.perf_counter() - start)
    full = outputs["full vocabulary"]
    print("| decoding | BLEU | differ from full | candidates per batch | seconds (rounds) | sent/s (best) |")
    print("| --- | --- | --- | --- | --- | --- |")
    signature = ""
    for name in lists:
        score = corpus_bleu(outputs[name], refs)
        signature = score.signature
        differ = sum(a != b for a, b in zip(outputs[name], full, strict=True))
        cands = f"{words[name]:,.0f}" if name in words else f"{len(session.first.tgt_vocab):,}"
        secs = " / ".join(f"{t:.1f}" for t in times[name])
        print(f"| {name} | {score.score:.2f} | {differ} | {cands} | {secs} | "
              f"{len(sources) / min(times[name]):.1f} |")
    print(f"\nsacreBLEU {signature}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Bundle the reference runs as the demo workspace's runs (issues 20 and 45): int8 weights
of each run's best checkpoint, with its stored scores in meta.json.

    python experiments/bundle_demo.py --pair es-en [--workspace /tmp/ref-ws]
    python experiments/bundle_demo.py --pair en-fr [--workspace /work/enfr/ws]
        [--out resources/demo/models]

es-en: the Tatoeba runs; reads the evaluations experiments/ref_tatoeba_eval.sh stored
(test split and the 459 demo pairs, beam 5). en-fr: the Hansards alignment showcase (the
guided Luong runs' alignment-head runs, both directions); reads the test-split evaluations
experiments/ref_hansards_eval.sh stored and measures the AER of each run's own reading on
the bundled WPT-03 trial gold (resources/demo/wpt03). Writes one folder per run
(core.services.demo.bundle_run), then stores the sentencepiece models the bundles share
once (share_bundle_files).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.services.demo import bundle_run, share_bundle_files  # noqa: E402
from core.store import Workspace  # noqa: E402

TATOEBA = {"ref-tatoeba-luong": "tatoeba-luong", "ref-tatoeba-rnnsearch": "tatoeba-rnnsearch",
           "ref-tatoeba-guided": "tatoeba-luong-guided"}
HANSARDS = {"ref-hansards-demo-head": "hansards-luong-guided-head",
            "ref-hansards-demo-head-fren": "hansards-luong-guided-head-fr-en"}
TRAINED_ON = {
    "es-en": "Tatoeba es-en (manythings.org/anki 2018-05-13, CC-BY 2.0 FR), 114,206 "
             "training pairs; not bundled",
    "en-fr": "Canadian Hansards, ISI release, first 100 sittings (Germann 2001), 254,593 "
             "training pairs of at most 50 pieces; lowercased and tokenised; not bundled",
}


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


def wpt03_aer(ws, run_id: int) -> dict:
    """AER (%) of the run's own reading on the WPT-03 trial gold (its source side first)."""
    from core.config import RunConfig
    from core.evaluate.aer import corpus_aer
    from core.evaluate.attention_aer import reading_alignments, reverse_gold
    from core.goldsets import read_gold_files
    from core.evaluate.alignment import AlignmentCorpus
    from core.infer.session import TranslationSession
    from core.services.alignment import default_reading
    from core.services.demo import WPT03_DIR

    src, tgt, links = read_gold_files(WPT03_DIR / "trial.en", WPT03_DIR / "trial.fr",
                                      WPT03_DIR / "trial.talp", fmt="talp")
    gold = AlignmentCorpus("wpt03-trial", src, tgt, links, "en", "fr")
    info = ws.get_run(run_id)
    if ws.get_corpus(info.corpus_id).src_lang == "fr":
        gold = reverse_gold(gold)
    reading = default_reading(RunConfig.from_dict(info.config))
    session = TranslationSession.open(ws, [run_id])
    found = reading_alignments(session, gold, [(reading, False)])[(reading, False)]
    return {"wpt03_reading": reading,
            "wpt03_aer": round(100 * corpus_aer(found, gold.alignments).aer, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", choices=sorted(TRAINED_ON), default="es-en")
    ap.add_argument("--workspace", default=None)
    ap.add_argument("--out", default="resources/demo/models")
    args = ap.parse_args()
    runs = TATOEBA if args.pair == "es-en" else HANSARDS
    workspace = args.workspace or ("/tmp/ref-ws" if args.pair == "es-en" else "/work/enfr/ws")
    with Workspace.open(workspace, create=False) as ws:
        for run, name in runs.items():
            info = ws.get_run(run)
            extra = {"trained_on_pairs": TRAINED_ON[args.pair], "source_run": run,
                     **scores(ws, info.id)}
            if args.pair == "en-fr":
                extra.update(wpt03_aer(ws, info.id))
            # the Hansards runs read and write ordinary text (core.data.conventions)
            meta = bundle_run(ws, info.id, Path(args.out) / name, which="best",
                              weights="int8", extra=extra, name=name,
                              convention="hansards" if args.pair == "en-fr" else None)
            size = sum(f.stat().st_size for f in (Path(args.out) / name).iterdir())
            print(f"{name}: step {meta['step']}, dev ppl {meta['best_dev_ppl']}, "
                  f"{size / 2**20:.1f} MiB, {extra}")
    saved = share_bundle_files(Path(args.out))
    print(f"shared sentencepiece models: {saved / 2**20:.1f} MiB saved")
    return 0


if __name__ == "__main__":
    sys.exit(main())

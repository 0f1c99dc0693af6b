"""Bundle the reference runs as the demo workspace's runs (issues 20 and 45): int8 weights
of each run's best checkpoint, with its stored scores in meta.json.

    python experiments/bundle_demo.py --pair es-en [--workspace /tmp/ref-ws]
    python experiments/bundle_demo.py --pair en-fr [--workspace /work/enfr/ws]
        [--out resources/demo/models]

es-en: the Tatoeba runs; reads the evaluations experiments/ref_tatoeba_eval.sh stored
(test split and the 459 demo pairs, beam 5). en-fr: the Hansards alignment showcase (the
guided Luong runs' alignment-head runs, both directions, and the unsupervised contrast
run with its aligner-free head); reads the test-split evaluations
experiments/ref_hansards_eval.sh stored.
en-fr-context: the sentence Transformer and the target-context model trained over it.
For both English-French pairs it then measures each bundle as a user meets it, installed
in a fresh demo workspace (score_in_demo). Writes one folder per run
(core.services.demo_bundle.bundle_run), then stores once the sentencepiece models the
bundles share (share_bundle_files) and the stage-1 weights of the two-stage runs
(share_stage1_weights).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.services.demo_bundle import (  # noqa: E402
    bundle_run,
    share_bundle_files,
    share_stage1_weights,
)
from core.workspace.store import Workspace  # noqa: E402

TATOEBA = {"ref-tatoeba-luong": "tatoeba-luong", "ref-tatoeba-rnnsearch": "tatoeba-rnnsearch",
           "ref-tatoeba-guided": "tatoeba-luong-guided"}
HANSARDS = {"ref-hansards-demo-head": "hansards-luong-guided-head",
            "ref-hansards-demo-head-fren": "hansards-luong-guided-head-fr-en",
            "ref-hansards-demo-luong-selfhead3": "hansards-luong-selfhead"}
# G-tgt-long: the stage 2 trained over the resumed G-sentence (demo_enfr.sh longer)
CONTEXT = {"G-sentence": "hansards-subs-transformer",
           "G-tgt-long": "hansards-subs-context-target"}
RUNS = {"es-en": TATOEBA, "en-fr": HANSARDS, "en-fr-context": CONTEXT}
#: a run bundled at another checkpoint than its best by dev perplexity: G-tgt-long's
#: update 29,500, kept by train.keep_every and chosen by its contrastive accuracy on the
#: dev documents (experiments/contrastive_checkpoints.py; RESULTS H, third session)
CHECKPOINT = {"G-tgt-long": "step-00029500.pt"}
TRAINED_ON = {
    "es-en": "Tatoeba es-en (manythings.org/anki 2018-05-13, CC-BY 2.0 FR), 114,206 "
             "training pairs; not bundled",
    "en-fr": "Canadian Hansards, ISI release, first 100 sittings (Germann 2001), 254,593 "
             "training pairs of at most 50 pieces; lowercased and tokenised; not bundled",
    "en-fr-context": "20 Canadian Hansards sittings (ISI release, Germann 2001) and 9,825 "
                     "subtitle mini-documents cut from the contrastive pronoun set's "
                     "training blocks (OpenSubtitles2018 via Lopes et al. 2020, MIT), "
                     "88,264 pairs; lowercased and tokenised; not bundled "
                     "(experiments/prep_context_docs.py)",
}


def _on_test_split(test_name: str) -> bool:
    """'corpus:test', or its first N sentences 'corpus:test[:N]'."""
    return test_name.endswith(":test") or ":test[:" in test_name


def scores(ws, run_id: int) -> dict:
    """The latest single-run evaluations on the test split and on the demo pairs; for an
    alignment-head run without its own, those of the run it was trained over (the head
    leaves the translation as it was)."""
    out = {}
    evaluations = ws.evaluations(run_id)
    init_from = ws.get_run(run_id).config.get("train", {}).get("init_from")
    if init_from and not any(_on_test_split(e.test_name) for e in evaluations):
        evaluations = ws.evaluations(ws.get_run(init_from).id)
        run_id = ws.get_run(init_from).id
    for e in evaluations:
        if e.run_ids != [run_id]:
            continue
        if _on_test_split(e.test_name):
            out["test_bleu"] = round(e.metrics["bleu"], 2)
            out["test_chrf"] = round(e.metrics["chrf"], 2)
            out["test_signature"] = e.metrics.get("bleu_signature")
            out["test_sentences"] = e.metrics["sentences"]
        elif e.test_name == "demo.es":
            out["demo_bleu"] = round(e.metrics["bleu"], 2)
            out["demo_sentences"] = e.metrics["sentences"]
    return out


def score_in_demo(out: Path, names: list[str]) -> dict[str, dict]:
    """Scores of the bundles `names` as a user meets them: installed into a fresh demo
    workspace (int8 weights, the bundle's text convention), on the team's English-French
    documents (cased references; the context runs translate each document in order, with
    context) and contrastive pronoun set, and the AER of each run's own reading on the
    WPT-03 trial gold. -> {name: scores} (also written into each bundle's meta.json)."""
    import json
    import tempfile

    from core.atomic import write_text_atomic
    from core.cli import run_cli
    from core.config import RunConfig
    from core.evaluate.aer import corpus_aer
    from core.evaluate.attention_aer import reading_alignments, reverse_gold
    from core.evaluate.goldsets import load_gold_set
    from core.services.alignment_runs import default_reading
    from core.services.demo import BUNDLE_META, DEMO_DIR, WPT03_GOLD, ensure_demo_workspace
    from core.services.translation import open_session

    found: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bundle-scores-") as tmp:
        root = str(ensure_demo_workspace(Path(tmp) / "demo", models_dir=out))
        contrastive = DEMO_DIR / "en-fr" / "contrastive.json"
        for name in names:
            # the commands a user types, on the installed bundle
            evaluate = ["--workspace", root, "evaluate", "--run", name, "--beam", "5"]
            assert run_cli(evaluate + ["--test", "test"]) == 0
            with Workspace.open(root) as ws:
                info = ws.get_run(name)
                english_source = ws.get_corpus(info.corpus_id).src_lang == "en"
                context = RunConfig.from_dict(info.config).model.family not in (
                    "luong", "rnnsearch", "transformer", "encdec")
            if context:
                assert run_cli(evaluate + ["--doc-level"]) == 0
            if english_source:
                assert run_cli(evaluate + ["--contrastive", str(contrastive)]) == 0
            with Workspace.open(root) as ws:
                scores: dict = {}
                for e in ws.evaluations(info.id):
                    if e.test_name.endswith(":test"):
                        scores["demo_bleu"] = round(e.metrics["bleu"], 2)
                        scores["demo_chrf"] = round(e.metrics["chrf"], 2)
                        scores["demo_sentences"] = e.metrics["sentences"]
                    elif e.test_name.endswith(":documents"):
                        scores["demo_doc_bleu"] = round(e.metrics["doc_bleu"], 2)
                    elif e.test_name.startswith("contrastive:"):
                        scores["demo_contrastive_accuracy"] = round(
                            e.metrics["contrastive_accuracy"], 2)
                        scores["demo_contrastive_by_pronoun"] = {
                            k: round(v, 2) for k, v in e.metrics["by_pronoun"].items()}
                config = RunConfig.from_dict(info.config)
                session = open_session(ws, [info.id])
                gold = load_gold_set(ws, WPT03_GOLD)
                if config.model.family in ("luong", "rnnsearch"):
                    oriented = gold if english_source else reverse_gold(gold)
                    reading = default_reading(config)
                    links = reading_alignments(session, oriented, [(reading, False)])
                    scores["wpt03_reading"] = reading
                    scores["wpt03_aer"] = round(
                        100 * corpus_aer(links[(reading, False)], oriented.alignments).aer, 2)
            found[name] = scores
            meta_path = out / name / BUNDLE_META
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            meta.update(scores)
            write_text_atomic(meta_path, json.dumps(meta, indent=2))
            print(f"{name} in the demo workspace: {scores}")
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", choices=sorted(TRAINED_ON), default="es-en")
    ap.add_argument("--workspace", default=None)
    ap.add_argument("--out", default="resources/demo/models")
    args = ap.parse_args()
    runs = RUNS[args.pair]
    workspace = args.workspace or {"es-en": "/tmp/ref-ws", "en-fr": "/work/enfr/ws",
                                   "en-fr-context": "/work/enfr/ws-g"}[args.pair]
    with Workspace.open(workspace, create=False) as ws:
        for run, name in runs.items():
            info = ws.get_run(run)
            extra = {"trained_on_pairs": TRAINED_ON[args.pair], "source_run": run,
                     **scores(ws, info.id)}
            # the Hansards runs read and write ordinary text (core.data.conventions)
            meta = bundle_run(ws, info.id, Path(args.out) / name, which=CHECKPOINT.get(run, "best"),
                              weights="int8", extra=extra, name=name,
                              convention=None if args.pair == "es-en" else "hansards")
            size = sum(f.stat().st_size for f in (Path(args.out) / name).iterdir())
            print(f"{name}: step {meta['step']}, dev ppl {meta['best_dev_ppl']}, "
                  f"{size / 2**20:.1f} MiB, {extra}")
    saved = share_bundle_files(Path(args.out))
    print(f"shared sentencepiece models: {saved / 2**20:.1f} MiB saved")
    saved = share_stage1_weights(Path(args.out))
    print(f"stage-1 weights shared by two-stage runs: {saved / 2**20:.1f} MiB saved")
    if args.pair != "es-en":
        score_in_demo(Path(args.out), list(runs.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

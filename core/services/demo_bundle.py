"""The demo's bundles: a trained run written as a folder the demo workspace installs.

    bundle_run(ws, run, dest)    (python -m core.services.demo_bundle bundle-run WS RUN DEST)
        Writes a trained run (any corpus) as a bundle: a model-only checkpoint with
        int8 weights, the vocabularies, the preprocessors, curves.json and meta.json
        (see resources/demo/models/README.md for the shipped reference runs).
        share_bundle_files(models_dir) then stores the sentencepiece models that
        several bundles hold once, in models_dir/shared/.

    build_demo_bundle(out_dir)   (python -m core.services.demo_bundle build-bundle OUT_DIR)
        Trains the three toy models on the demo corpus's train split (the tests' toy
        runs, tests/fixtures/toy-models).

Installing a bundle into the demo workspace is core.services.demo's (install_bundled_run).
"""
from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from core.atomic import write_bytes_atomic, write_text_atomic
from core.infer.session import TranslationSession
from core.jobs import JobContext
from core.services.bundle_weights import share_base_weights
from core.services.demo import (
    BUNDLE_CURVES,
    BUNDLE_META,
    BUNDLE_MODELS,
    MODELS_DIR,
    SHARED_DIR_NAME,
    SRC_LANG,
    TGT_LANG,
    bundled_models,
    demo_config,
    import_demo_corpus,
)
from core.services.training import create_run, load_split_corpora, train_run
from core.train import artifacts
from core.train import checkpoint as ckpt
from core.train.compact import SCALES_KEY, compact_state
from core.workspace.store import Workspace

#: training of the bundled models: longer than the `demo` preset, and the LAST
#: checkpoint is kept. On 370 training pairs dev perplexity is lowest after a few
#: hundred updates, long before the attention has learnt the word correspondences of
#: the training sentences (the gold set's sentences are among them), which is what
#: the bundled runs are for: showing attention.
BUNDLE_TRAIN: dict[str, Any] = dict(epochs=80, valid_every=120, device="cpu", threads=1)


def share_bundle_files(models_dir: Path = MODELS_DIR) -> int:
    """Store every bundle's sentencepiece models once, in `models_dir/shared/` under a
    name made of their content's hash, and name them in the bundle's meta
    (`shared_files`): runs trained on the same corpus (both directions included) have
    byte-identical ones. Idempotent; returns how many bytes it saved."""
    shared_dir = models_dir / SHARED_DIR_NAME
    saved = 0
    for bundle in bundled_models(models_dir):
        meta = json.loads((bundle / BUNDLE_META).read_text(encoding="utf-8"))
        shared = dict(meta.get("shared_files", {}))
        for f in sorted(bundle.glob("*.model")):
            data = f.read_bytes()
            stored = f"{hashlib.sha256(data).hexdigest()[:16]}.model"
            if (shared_dir / stored).exists():
                saved += len(data)
            else:
                shared_dir.mkdir(parents=True, exist_ok=True)
                write_bytes_atomic(shared_dir / stored, data)
            shared[f.name] = stored
            f.unlink()
        if shared != meta.get("shared_files", {}):
            meta["shared_files"] = shared
            write_text_atomic(bundle / BUNDLE_META, json.dumps(meta, indent=2))
    return saved


def share_stage1_weights(models_dir: Path = MODELS_DIR) -> int:
    """Store once the weights a two-stage bundle holds alike with its stage-1 run's bundle
    (the bundle whose `source_run` is the run's train.init_from): see
    core.services.bundle_weights. Idempotent; returns how many bytes it saved."""
    bundles = {b: json.loads((b / BUNDLE_META).read_text(encoding="utf-8"))
               for b in bundled_models(models_dir)}
    by_source = {m.get("source_run"): b for b, m in bundles.items() if m.get("source_run")}
    saved = 0
    for bundle, meta in bundles.items():
        init_from = meta["config"].get("train", {}).get("init_from")
        base = by_source.get(init_from) if init_from else None
        if base is not None and base != bundle:
            saved += share_base_weights(bundle, meta, base, bundles[base])
    return saved


def strip_checkpoint(src: Path, dst: Path, dev_ppl: float | None = None,
                     weights: str = "fp16") -> Path:
    """A model-only copy of a checkpoint: model, config, position and the best list
    pointing at `dst` itself (no optimiser, schedule or RNG state). Weights are stored
    compact (core.train.compact: fp16 halves them, int8 per row quarters them);
    load_model expands them back to float32."""
    state = ckpt.load_checkpoint(src)
    best = [e for e in (state.get("best") or []) if e[2] == src.name]
    ppl = dev_ppl if dev_ppl is not None else float(best[0][0]) if best else float("nan")
    tensors, scales = compact_state(state["model"], weights)
    slim = {"model": tensors, "config": state["config"], "position": state["position"],
            "best": [[ppl, int(state["position"]["step"]), dst.name]]}
    if scales:
        slim[SCALES_KEY] = scales
    return ckpt.save_checkpoint(dst, slim)


#: training curves of a bundle keep at most this many points per metric
CURVE_POINTS = 1000


def thin_curves(curves: dict[str, tuple[list[int], list[float]]], points: int = CURVE_POINTS
                ) -> dict[str, tuple[list[int], list[float]]]:
    """Every k-th point of each curve (and always its last) so that none has more than
    `points`: a 9,000-step run's per-step losses would be most of a bundle's size."""
    out = {}
    for name, (steps, values) in curves.items():
        k = max(1, -(-len(steps) // points))
        keep = list(range(0, len(steps), k))
        if steps and keep[-1] != len(steps) - 1:
            keep.append(len(steps) - 1)
        out[name] = ([steps[i] for i in keep], [values[i] for i in keep])
    return out


def curves_json(curves: dict[str, Any]) -> str:
    """A bundle's curves.json text: every value at 6 significant digits (a plot needs no
    more; float32 values printed as doubles took a third of the file), no spaces: the
    bundled runs share the repository's 45 MB with their weights."""
    rounded = {kind: {metric: [list(steps), [float(f"{v:.6g}") for v in values]]
                      for metric, (steps, values) in by_metric.items()}
               for kind, by_metric in curves.items()}
    return json.dumps(rounded, separators=(",", ":"))


def bundle_run(ws: Workspace, run_ref: int | str, dest: str | Path, which: str = "best",
               weights: str = "int8", dev_ppl: float | None = None,
               elapsed_s: float | None = None, extra: dict[str, Any] | None = None,
               name: str | None = None, convention: str | None = None) -> dict[str, Any]:
    """Write one trained run of `ws` as a demo bundle folder `dest` (replaced): its
    `which` checkpoint model-only in `weights` (core.train.compact), vocabularies and
    preprocessing, curves.json and meta.json (+ `extra`, e.g. test scores), installed
    as run `name` (default: the run's own). `convention` (core.data.conventions, e.g.
    "hansards" for a run trained on the tokenised Hansards release) goes into the
    bundle's preprocessing, so that the installed run reads and writes ordinary text.
    The bundle installs into any demo workspace (install_bundled_run), whatever corpus
    it was trained on. Returns the meta."""
    info = ws.get_run(run_ref)
    run_dir = ws.run_dir(info.id)
    source = artifacts.pick_checkpoint(run_dir, which)
    dest = Path(dest)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    step = int(artifacts.ckpt.load_checkpoint(source)["position"]["step"])
    ckpt_name = f"best-{step:08d}.pt"
    if dev_ppl is None:
        valid = ws.curves(info.id, "valid").get("dev_ppl", ([], []))
        dev_ppl = next((float(v) for s, v in zip(*valid, strict=True) if s == step), None)
    strip_checkpoint(source, dest / ckpt_name, dev_ppl, weights=weights)
    for f in run_dir.iterdir():  # vocabularies (+ their sentencepiece models), preprocess
        if f.is_file() and (f.name.endswith((".vocab", ".model"))
                            or f.name == artifacts.PREPROCESS):
            shutil.copy2(f, dest / f.name)
    if convention is not None:
        pre = json.loads((dest / artifacts.PREPROCESS).read_text(encoding="utf-8"))
        for side in ("src", "tgt"):
            pre[side]["convention"] = convention
        write_text_atomic(dest / artifacts.PREPROCESS, json.dumps(pre, indent=2))
    curves = {"train": thin_curves(ws.curves(info.id, "train")),
              "valid": ws.curves(info.id, "valid")}
    write_text_atomic(dest / BUNDLE_CURVES, curves_json(curves))
    corpus = ws.get_corpus(info.corpus_id) if info.corpus_id is not None else None
    config = dict(info.config, name=name or info.name)
    meta = {"name": name or info.name, "config": config, "step": step, "checkpoint": ckpt_name,
            "best_dev_ppl": dev_ppl, "weights": weights,
            "elapsed_s": round(float(elapsed_s if elapsed_s is not None else info.elapsed_s or 0), 1),
            "device": "cpu", "trained_on": corpus.name if corpus else None,
            "src_lang": corpus.src_lang if corpus else SRC_LANG,
            "tgt_lang": corpus.tgt_lang if corpus else TGT_LANG,
            "built": time.strftime("%Y-%m-%d"), "convention": convention, **(extra or {})}
    write_text_atomic(dest / BUNDLE_META, json.dumps(meta, indent=2))
    return meta


def build_demo_bundle(out_dir: str | Path, names: list[str] | None = None,
                      max_steps: int = 0, log=print) -> list[dict[str, Any]]:
    """Train the toy models (BUNDLE_MODELS) on the demo corpus's train split (the split
    the demo workspace stores) and write each into `out_dir/<name>/`; the tests' toy runs
    (tests/fixtures/toy-models) were built so. Returns their meta."""
    out_dir = Path(out_dir)
    metas = []
    with tempfile.TemporaryDirectory(prefix="nmt-demo-bundle-") as tmp, \
            Workspace.open(Path(tmp) / "ws") as ws:
        corpus_id = import_demo_corpus(ws)
        for name, model in BUNDLE_MODELS:
            if names and name not in names:
                continue
            config = demo_config(name, model, **dict(BUNDLE_TRAIN, max_steps=max_steps))
            run_id = create_run(ws, corpus_id, config, name)
            started = time.perf_counter()
            result = train_run(ws, run_id, JobContext())
            elapsed = time.perf_counter() - started
            dev_ppls = ws.curves(run_id, "valid").get("dev_ppl", ([], []))[1]
            last_ppl = float(dev_ppls[-1]) if dev_ppls else None
            dest = out_dir / name
            meta = bundle_run(ws, run_id, dest, which="last", weights="fp16",
                              dev_ppl=last_ppl, elapsed_s=elapsed)
            # dev BLEU of the saved model, greedy, on the whole dev split
            loaded = artifacts.load_model(dest, "best")
            session = TranslationSession.from_loaded([loaded], [name])
            _, parts = load_split_corpora(ws, corpus_id, config.train.seed)
            dev = parts["dev"]
            # lazy: a top-level import would load sacrebleu
            from core.evaluate.metrics import corpus_bleu

            hyps = [t.text for t in session.translate([p.src for p in dev.pairs], beam=1)]
            dev_bleu = corpus_bleu(hyps, [p.tgt for p in dev.pairs]).score
            meta.update({"lowest_dev_ppl": result.best_dev_ppl,
                         "dev_bleu_greedy": round(dev_bleu, 2),
                         "train_pairs": len(parts["train"]), "dev_pairs": len(dev)})
            write_text_atomic(dest / BUNDLE_META, json.dumps(meta, indent=2))
            log(f"{name}: {loaded.step} steps in {elapsed:.0f} s, dev ppl {last_ppl:.2f} "
                f"(lowest {result.best_dev_ppl:.2f}), dev BLEU (greedy) {dev_bleu:.2f} -> {dest}")
            metas.append(meta)
    return metas


def main(argv: list[str]) -> int:
    """`python -m core.services.demo_bundle build-bundle OUT_DIR [--max-steps N]` or `bundle-run
    WORKSPACE RUN OUT_DIR ...`: returns 0, or 1 after printing the usage."""
    if argv[:1] == ["bundle-run"] and len(argv) >= 4:
        def option(flag: str, default: str | None) -> str | None:
            return argv[argv.index(flag) + 1] if flag in argv else default

        with Workspace.open(argv[1], create=False) as ws:
            meta = bundle_run(ws, argv[2], argv[3], which=option("--which", "best"),
                              weights=option("--weights", "int8"), name=option("--name", None))
        print(f"{meta['name']}: step {meta['step']}, {meta['weights']} -> {argv[3]}")
        return 0
    if not argv or argv[0] != "build-bundle":
        print("usage: python -m core.services.demo_bundle build-bundle OUT_DIR [--max-steps N]\n"
              "       python -m core.services.demo_bundle bundle-run WORKSPACE RUN OUT_DIR "
              "[--weights int8|fp16] [--which best|last|FILE] [--name NAME]")
        return 1
    args = argv[1:]
    max_steps = 0
    if "--max-steps" in args:
        k = args.index("--max-steps")
        max_steps = int(args[k + 1])
        del args[k:k + 2]
    if not args:
        print("usage: python -m core.services.demo_bundle build-bundle OUT_DIR [--max-steps N]")
        return 1
    build_demo_bundle(Path(args[0]), max_steps=max_steps)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

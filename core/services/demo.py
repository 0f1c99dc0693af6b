"""The bundled demo: its workspace (what `make run` opens) and its pretrained runs.

    ensure_demo_workspace(path=None) -> Path
        The demo workspace (default: <user data dir>/demo-workspace), created or
        completed when needed: the corpora of DEMO_CORPORA ('demo' es -> en, our own
        en-fr documents in both directions), the gold sets of DEMO_GOLDS ('demo-gold',
        the WPT-03 trial gold 'wpt03-trial'), and the pretrained runs of
        resources/demo/models/ installed as finished runs with their learning curves,
        each attached to its language pair's corpus. Fast and idempotent when complete.

    bundle_run(ws, run, dest)    (python -m core.services.demo bundle-run WS RUN DEST)
        Writes a trained run (any corpus) as a bundle: a model-only checkpoint with
        int8 weights, the vocabularies, the preprocessors, curves.json and meta.json
        (see resources/demo/models/README.md for the shipped reference runs).
        share_bundle_files(models_dir) then stores the sentencepiece models that
        several bundles hold once, in models_dir/shared/.

    build_demo_bundle(out_dir)   (python -m core.services.demo build-bundle OUT_DIR)
        Trains the three toy models on the demo corpus's train split (the tests' toy
        runs, tests/fixtures/toy-models).

Everything here needs only the repository's resources: no network, no ../shared.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from core.atomic import write_bytes_atomic, write_text_atomic
from core.config import RunConfig, load_preset
from core.data.readers import read_corpus
from core.errors import StoreError
from core.evaluate.goldsets import import_gold_set, list_gold_sets, load_gold_set
from core.infer.session import TranslationSession
from core.jobs import JobContext
from core.services.training import create_run, ensure_split, load_split_corpora, train_run
from core.train import artifacts
from core.train import checkpoint as ckpt
from core.train.compact import SCALES_KEY, compact_state
from core.workspace.paths import APP_NAME, BUNDLED_MARK  # noqa: F401 (re-exported)
from core.workspace.store import Workspace

DEMO_DIR = Path(__file__).resolve().parents[2] / "resources" / "demo"
MODELS_DIR = DEMO_DIR / "models"
#: sentencepiece models that several bundles hold, stored once (share_bundle_files)
SHARED_DIR_NAME = "shared"
DEMO_CORPUS, DEMO_GOLD = "demo", "demo-gold"
SRC_LANG, TGT_LANG = "es", "en"
EN_FR_DIR, WPT03_DIR = DEMO_DIR / "en-fr", DEMO_DIR / "wpt03"
WPT03_GOLD = "wpt03-trial"
BUNDLE_META, BUNDLE_CURVES = "meta.json", "curves.json"


@dataclass(frozen=True)
class DemoCorpus:
    """A corpus of the demo workspace: its files (source, target, docids) and languages.
    A bundled run is attached to the demo corpus of its own language pair."""
    name: str
    src_lang: str
    tgt_lang: str
    files: tuple[Path, Path, Path]
    #: documents to evaluate on, never trained on: their stored split is all test, so the
    #: Evaluation screen scores whole documents (document-level BLEU) on them
    test_only: bool = False

    def available(self) -> bool:
        """Whether its three files are in this checkout."""
        return all(f.is_file() for f in self.files)


@dataclass(frozen=True)
class DemoGold:
    """A gold set of the demo workspace: sentence files, links, their format."""
    name: str
    src_lang: str
    tgt_lang: str
    files: tuple[Path, Path, Path]
    fmt: str

    def available(self) -> bool:
        """Whether its three files are in this checkout."""
        return all(f.is_file() for f in self.files)


#: the demo corpora, by language pair: our own es -> en stories, and our own English
#: documents with French references, in both directions (the fr -> en runs' corpus)
DEMO_CORPORA: tuple[DemoCorpus, ...] = (
    DemoCorpus(DEMO_CORPUS, "es", "en",
               (DEMO_DIR / "demo.es", DEMO_DIR / "demo.en", DEMO_DIR / "demo.docids")),
    DemoCorpus("demo-en-fr", "en", "fr",
               (EN_FR_DIR / "demo.en", EN_FR_DIR / "demo.fr", EN_FR_DIR / "demo.docids"),
               test_only=True),
    DemoCorpus("demo-fr-en", "fr", "en",
               (EN_FR_DIR / "demo.fr", EN_FR_DIR / "demo.en", EN_FR_DIR / "demo.docids"),
               test_only=True),
)
#: the demo gold sets: our own es-en links, and the WPT-03 en-fr trial gold (Mihalcea &
#: Pedersen 2003, gold by Och & Ney; no restriction), English first, 1-based TALP links
DEMO_GOLDS: tuple[DemoGold, ...] = (
    DemoGold(DEMO_GOLD, "es", "en", (DEMO_DIR / "gold.es", DEMO_DIR / "gold.en",
                                     DEMO_DIR / "gold.links"), "pharaoh"),
    DemoGold(WPT03_GOLD, "en", "fr", (WPT03_DIR / "trial.en", WPT03_DIR / "trial.fr",
                                      WPT03_DIR / "trial.talp"), "talp"),
)


def demo_corpus_for(src_lang: str, tgt_lang: str) -> DemoCorpus:
    """The demo corpus of a language pair (StoreError when the demo has none)."""
    for c in DEMO_CORPORA:
        if (c.src_lang, c.tgt_lang) == (src_lang, tgt_lang):
            return c
    raise StoreError(f"the demo has no corpus {src_lang} -> {tgt_lang}; its pairs: "
                     + ", ".join(f"{c.src_lang} -> {c.tgt_lang}" for c in DEMO_CORPORA))


#: the bundled models: (run name, overrides of the `demo` preset's [model] table)
BUNDLE_MODELS: list[tuple[str, dict[str, Any]]] = [
    ("demo-luong-global", dict(family="luong", attention="global", score="general",
                               input_feeding=True)),
    ("demo-luong-local-p", dict(family="luong", attention="local-p", score="general",
                                input_feeding=True, window=5)),
    ("demo-rnnsearch", dict(family="rnnsearch", cell="gru", attention="global",
                            score="additive", input_feeding=False)),
]


#: training of the bundled models: longer than the `demo` preset, and the LAST
#: checkpoint is kept. On 370 training pairs dev perplexity is lowest after a few
#: hundred updates, long before the attention has learnt the word correspondences of
#: the training sentences (the gold set's sentences are among them), which is what
#: the bundled runs are for: showing attention.
BUNDLE_TRAIN: dict[str, Any] = dict(epochs=80, valid_every=120, device="cpu", threads=1)


def default_demo_dir() -> Path:
    """The demo workspace folder in the per-user data folder."""
    return Path(user_data_dir(APP_NAME)) / "demo-workspace"


# --------------------------------------------------------------------- corpus + gold


def read_demo_corpus(demo: DemoCorpus = DEMO_CORPORA[0]):
    """A bundled corpus (default: the 459 es-en pairs in 28 documents) as a core.data
    Corpus."""
    return read_corpus("parallel", list(demo.files), demo.src_lang, demo.tgt_lang,
                       name=demo.name)


def import_demo_corpus(ws: Workspace, name: str | None = None, same_only: bool = False,
                       demo: DemoCorpus = DEMO_CORPORA[0]) -> int:
    """Add the bundled corpus `demo` as `name` (default: its own) unless the workspace has
    it; returns its id. same_only (the `demo` command, run in any workspace): StoreError
    when the workspace's corpus `name` is another corpus, whose runs and scores would not
    be the demo's. The GUI's own demo workspace keeps the corpus it has (one an earlier
    version bundled)."""
    name = name or demo.name
    if any(c.name == name for c in ws.list_corpora()):
        if not same_only:
            return ws.corpus_id(name)
        have, bundled = ws.load_corpus(name), read_demo_corpus(demo)
        same = (have.src_lang, have.tgt_lang) == (bundled.src_lang, bundled.tgt_lang) and [
            (p.src, p.tgt, p.doc_id) for p in have.pairs] == [
            (p.src, p.tgt, p.doc_id) for p in bundled.pairs]
        if not same:
            raise StoreError(
                f"{ws.root}: the corpus named {name!r} here is not the bundled demo corpus "
                f"({have.src_lang} -> {have.tgt_lang}, {len(have)} pairs; the demo's is "
                f"{bundled.src_lang} -> {bundled.tgt_lang}, {len(bundled)} pairs); run the "
                "demo in another workspace (--workspace DIR, or none for a fresh one)")
        return ws.corpus_id(name)
    sources = [str(f) for f in demo.files]
    return ws.add_corpus(read_demo_corpus(demo), name=name, format="parallel",
                         options={"docids_path": sources[2]}, sources=sources)


def import_demo_gold(ws: Workspace, name: str | None = None, gold: DemoGold = DEMO_GOLDS[0]):
    """Add a bundled gold set (default: the demo gold, Spanish first, 0-based Pharaoh)
    as `name` (default: its own) unless present."""
    name = name or gold.name
    if name in list_gold_sets(ws):
        return load_gold_set(ws, name)
    src, tgt, links = gold.files
    return import_gold_set(ws, name, src, tgt, links, fmt=gold.fmt,
                           src_lang=gold.src_lang, tgt_lang=gold.tgt_lang)


def demo_config(name: str, model_overrides: dict[str, Any] | None = None,
                **train_overrides: Any) -> RunConfig:
    """The `demo` preset with a run name and optional [model]/[train] overrides."""
    raw = load_preset("demo").to_dict()
    raw["name"] = name
    raw["model"].update(model_overrides or {})
    raw["train"].update(train_overrides)
    return RunConfig.from_dict(raw, source=f"demo run {name}")


# --------------------------------------------------------------------- the workspace


def bundled_models(models_dir: Path = MODELS_DIR) -> list[Path]:
    """Folders of the bundled runs (each with meta.json): the es -> en runs first (in
    BUNDLE_MODELS order, then by name), then the other pairs' by name."""
    if not models_dir.is_dir():
        return []
    names = [n for n, _ in BUNDLE_MODELS]

    def order(p: Path) -> tuple:
        meta = json.loads((p / BUNDLE_META).read_text(encoding="utf-8"))
        return (bundle_pair(meta) != (SRC_LANG, TGT_LANG),
                names.index(p.name) if p.name in names else 99, p.name)

    return sorted((p for p in models_dir.iterdir() if (p / BUNDLE_META).exists()), key=order)


def _run_complete(ws: Workspace, name: str) -> bool:
    runs = [r for r in ws.list_runs() if r.name == name]
    if not runs or runs[0].status != "finished":
        return False
    folder = ws.run_dir(runs[0].id)
    return (folder / artifacts.SRC_VOCAB).exists() and any(folder.glob("best-*.pt"))


def install_bundled_run(ws: Workspace, bundle: Path, corpus_id: int) -> int:
    """Install one bundled model as a finished run (files, run row, curves, checkpoint
    row); a half-installed run of the same name is replaced."""
    meta = json.loads((bundle / BUNDLE_META).read_text(encoding="utf-8"))
    name = meta["name"]
    for old in [r for r in ws.list_runs() if r.name == name]:
        ws.delete_run(old.id)
    run_id = ws.create_run(name, meta["config"], corpus_id)
    folder = ws.run_dir(run_id)
    for name_in_run, f in bundle_files(bundle, meta).items():
        shutil.copy2(f, folder / name_in_run)
    (folder / BUNDLED_MARK).write_text(
        f"installed from the bundle {bundle.name}; trained on a corpus outside this "
        "workspace (see its README)\n", encoding="utf-8")
    curves = json.loads((bundle / BUNDLE_CURVES).read_text(encoding="utf-8"))
    for kind in ("train", "valid"):
        by_step: dict[int, dict[str, float]] = {}
        for metric, (steps, values) in curves.get(kind, {}).items():
            for s, v in zip(steps, values, strict=True):
                by_step.setdefault(int(s), {})[metric] = float(v)
        for step in sorted(by_step):
            ws.log_metrics(run_id, step, kind, by_step[step])
    ws.add_checkpoint(run_id, meta["step"], folder / meta["checkpoint"], "best",
                      meta.get("best_dev_ppl"))
    # the status last: a run that shows 'finished' has everything
    ws.update_run(run_id, status="finished", steps=meta["step"], device=meta.get("device", "cpu"),
                  elapsed_s=float(meta.get("elapsed_s", 0.0)))
    return run_id


def bundle_pair(meta: dict[str, Any]) -> tuple[str, str]:
    """A bundle's language pair (bundles made before pairs were recorded are es -> en)."""
    return meta.get("src_lang", SRC_LANG), meta.get("tgt_lang", TGT_LANG)


def bundle_files(bundle: Path, meta: dict[str, Any]) -> dict[str, Path]:
    """The files an installed run gets, by their name in the run folder: the bundle's own
    (not its meta, curves or README) and the shared sentencepiece models it names."""
    files = {f.name: f for f in sorted(bundle.iterdir())
             if f.is_file() and f.name not in (BUNDLE_META, BUNDLE_CURVES, "README.md")}
    for name_in_run, shared in meta.get("shared_files", {}).items():
        files[name_in_run] = bundle.parent / SHARED_DIR_NAME / shared
    return files


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


def _available_corpora() -> list[DemoCorpus]:
    return [c for c in DEMO_CORPORA if c.available()]


def populate_demo_workspace(ws: Workspace, models_dir: Path = MODELS_DIR) -> None:
    """Add what is missing: the corpora (each bundled run is attached to its pair's),
    the es -> en corpus's split, the gold sets, the bundled runs."""
    corpus_ids = {(c.src_lang, c.tgt_lang): import_demo_corpus(ws, demo=c)
                  for c in _available_corpora()}
    # the split the toy bundles used
    ensure_split(ws, corpus_ids[(SRC_LANG, TGT_LANG)], load_preset("demo").train.seed)
    for c in _available_corpora():
        corpus_id = corpus_ids[(c.src_lang, c.tgt_lang)]
        if c.test_only and ws.load_split(corpus_id) is None:
            n = ws.get_corpus(corpus_id).n_pairs
            ws.save_split(corpus_id, 0, (0.0, 0.0, 1.0),
                          {"train": [], "dev": [], "test": list(range(n))})
    for gold in DEMO_GOLDS:
        if gold.available():
            import_demo_gold(ws, gold=gold)
    for bundle in bundled_models(models_dir):
        meta = json.loads((bundle / BUNDLE_META).read_text(encoding="utf-8"))
        if not _run_complete(ws, meta["name"]):
            pair = bundle_pair(meta)
            corpus_id = corpus_ids.get(pair)
            if corpus_id is None:
                raise StoreError(f"{bundle}: a {pair[0]} -> {pair[1]} run, and the demo "
                                 f"has no corpus of that pair ({demo_corpus_for(*pair)})")
            install_bundled_run(ws, bundle, corpus_id)


def demo_workspace_complete(ws: Workspace, models_dir: Path = MODELS_DIR) -> bool:
    """True when `ws` holds every bundled corpus and gold set and a complete run of every
    bundled model."""
    have = {c.name for c in ws.list_corpora()}
    if any(c.name not in have for c in _available_corpora()):
        return False
    golds = list_gold_sets(ws)
    if any(g.available() and g.name not in golds for g in DEMO_GOLDS):
        return False
    for bundle in bundled_models(models_dir):
        name = json.loads((bundle / BUNDLE_META).read_text(encoding="utf-8"))["name"]
        if not _run_complete(ws, name):
            return False
    return True


def ensure_demo_workspace(path: str | Path | None = None, models_dir: Path = MODELS_DIR) -> Path:
    """The demo workspace folder, created or completed when something is missing."""
    root = Path(path).expanduser() if path is not None else default_demo_dir()
    with Workspace.open(root, allow_nonempty=True) as ws:
        if not demo_workspace_complete(ws, models_dir):
            populate_demo_workspace(ws, models_dir)
        mark_bundled_runs(ws, models_dir)
        return ws.root


def mark_bundled_runs(ws: Workspace, models_dir: Path = MODELS_DIR) -> int:
    """Write BUNDLED_MARK into the folder of every installed bundled run that lacks it (a
    demo workspace made before the mark existed): the run of a bundle's name whose
    folder holds the bundle's checkpoint. Returns how many were marked."""
    marked = 0
    for bundle in bundled_models(models_dir):
        meta = json.loads((bundle / BUNDLE_META).read_text(encoding="utf-8"))
        for run in (r for r in ws.list_runs() if r.name == meta["name"]):
            folder = ws.run_dir(run.id)
            if (folder / meta["checkpoint"]).exists() and not (folder / BUNDLED_MARK).exists():
                (folder / BUNDLED_MARK).write_text(
                    f"installed from the bundle {bundle.name}; trained on a corpus outside "
                    "this workspace (see its README)\n", encoding="utf-8")
                marked += 1
    return marked


# --------------------------------------------------------------------- the bundle


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
    """`python -m core.services.demo build-bundle OUT_DIR [--max-steps N]` or `bundle-run
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
        print("usage: python -m core.services.demo build-bundle OUT_DIR [--max-steps N]\n"
              "       python -m core.services.demo bundle-run WORKSPACE RUN OUT_DIR "
              "[--weights int8|fp16] [--which best|last|FILE] [--name NAME]")
        return 1
    args = argv[1:]
    max_steps = 0
    if "--max-steps" in args:
        k = args.index("--max-steps")
        max_steps = int(args[k + 1])
        del args[k:k + 2]
    if not args:
        print("usage: python -m core.services.demo build-bundle OUT_DIR [--max-steps N]")
        return 1
    build_demo_bundle(Path(args[0]), max_steps=max_steps)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The bundled demo workspace (what `make run` opens): its corpora, gold sets and runs.

    ensure_demo_workspace(path=None) -> Path
        The demo workspace (default: <user data dir>/demo-workspace), created or
        completed when needed: the corpora of DEMO_CORPORA ('demo' es -> en, our own
        en-fr documents in both directions), the gold sets of DEMO_GOLDS ('demo-gold',
        the WPT-03 trial gold 'wpt03-trial'), and the pretrained runs of
        resources/demo/models/ installed as finished runs with their learning curves,
        each attached to its language pair's corpus. Fast and idempotent when complete.
        An installed run with no length penalty of its own takes its bundle's
        (adopt_bundled_length_penalties: a workspace made before bundles stated one).

What makes those bundles (bundle_run, share_bundle_files, build_demo_bundle) is
core.services.demo_bundle's. Everything here needs only the repository's resources: no
network, no ../shared.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from core.config import RunConfig, load_preset
from core.data.readers import read_corpus
from core.errors import StoreError
from core.evaluate.goldsets import import_gold_set, list_gold_sets, load_gold_set
from core.services.bundle_weights import BASE_KEY, bundle_checkpoint_state
from core.services.training import ensure_split
from core.train import artifacts
from core.train import checkpoint as ckpt
from core.workspace.info import RunInfo
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
        if name_in_run == meta["checkpoint"] and meta.get(BASE_KEY):
            # weights shared with its stage-1 run's bundle: installed whole
            ckpt.save_checkpoint(folder / name_in_run, bundle_checkpoint_state(bundle, meta))
        else:
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
        adopt_bundled_length_penalties(ws, models_dir)
        return ws.root


def installed_bundled_runs(ws: Workspace, models_dir: Path = MODELS_DIR
                           ) -> Iterator[tuple[Path, dict[str, Any], RunInfo]]:
    """(bundle folder, its meta.json, run) of every installed bundled run: the run of a
    bundle's name whose folder holds the bundle's checkpoint."""
    runs = ws.list_runs()
    for bundle in bundled_models(models_dir):
        meta = json.loads((bundle / BUNDLE_META).read_text(encoding="utf-8"))
        for run in runs:
            if run.name == meta["name"] and (ws.run_dir(run.id) / meta["checkpoint"]).exists():
                yield bundle, meta, run


def mark_bundled_runs(ws: Workspace, models_dir: Path = MODELS_DIR) -> int:
    """Write BUNDLED_MARK into the folder of every installed bundled run that lacks it (a
    demo workspace made before the mark existed). Returns how many were marked."""
    marked = 0
    for bundle, _meta, run in installed_bundled_runs(ws, models_dir):
        mark = ws.run_dir(run.id) / BUNDLED_MARK
        if not mark.exists():
            mark.write_text(f"installed from the bundle {bundle.name}; trained on a corpus "
                            "outside this workspace (see its README)\n", encoding="utf-8")
            marked += 1
    return marked


def adopt_bundled_length_penalties(ws: Workspace, models_dir: Path = MODELS_DIR) -> int:
    """Give every installed bundled run the length penalty its bundle's config states,
    where the run's stored config has none (a demo workspace installed before the bundles
    carried one: it would translate with alpha 0). A run's own alpha is kept: tuning or
    any config rewrite stores the key. Returns how many runs were given one."""
    adopted = 0
    for _bundle, meta, run in installed_bundled_runs(ws, models_dir):
        alpha = meta["config"].get("length_penalty")
        if alpha and "length_penalty" not in run.config:
            ws.update_run(run.id, config={**run.config, "length_penalty": float(alpha)})
            adopted += 1
    return adopted

"""The demo: `demo --quick` end to end, and the demo workspace `make run` opens with the
bundled pretrained runs (resources/demo/models/)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from defusedxml import ElementTree

from core.services.demo import (
    BUNDLE_CURVES,
    BUNDLE_META,
    DEMO_CORPUS,
    DEMO_GOLD,
    MODELS_DIR,
    bundled_models,
    ensure_demo_workspace,
)
from core.workspace.store import Workspace


def test_demo_quick_runs_the_pipeline_and_writes_valid_exports(tmp_path):
    from core.tooling.demo_pipeline import run_demo

    summary = run_demo(tmp_path / "ws", quick=True, beam=1, log=lambda m: None)
    n = summary.test_sentences
    assert n > 20 and summary.steps == 6
    for key in ("bleu", "chrf", "ter", "tokenized_bleu"):
        assert 0.0 <= summary.metrics[key] <= 100.0
    assert sum(summary.metrics["bucket_sizes"].values()) == n
    assert set(summary.aer) == {"demo attention", "eflomal fwd", "eflomal rev",
                                "eflomal grow-diag-final-and"}
    assert all(0.0 <= v <= 100.0 for v in summary.aer.values())
    # eflomal trained on the demo corpus aligns its gold set far better than chance
    assert summary.aer["eflomal grow-diag-final-and"] < 40.0

    out = summary.workspace / "exports" / "demo"
    tmx = ElementTree.parse(out / "test-translations.tmx").getroot()
    units = tmx.findall(".//tu")
    assert len(units) == n
    assert {tuv.get("{http://www.w3.org/XML/1998/namespace}lang") for tuv in
            units[0].findall("tuv")} == {"es", "en"}
    ElementTree.parse(out / "test-translations.xlf")
    records = [json.loads(x) for x in (out / "test-translations.jsonl").read_text(
        encoding="utf-8").splitlines()]
    assert len(records) == n
    for r in records:
        assert len(r["attention"]) == len(r["target_tokens"])
        assert all(len(row) == len(r["source_tokens"]) for row in r["attention"])
    gold_lines = (out / "alignments" / "eflomal_grow-diag-final-and.pharaoh").read_text(
        encoding="utf-8").splitlines()
    assert len(gold_lines) == 56
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Alignment error rate" in html and "BLEU by source length" in html
    with Workspace.open(summary.workspace) as ws:
        evals = ws.evaluations()
        assert len(evals) == 1 and evals[0].metrics["bleu"] == summary.metrics["bleu"]


def _snapshot(ws: Workspace) -> dict:
    runs = ws.list_runs()
    return {
        "corpora": [(c.id, c.name, c.n_pairs) for c in ws.list_corpora()],
        "runs": [(r.id, r.name, r.status, r.steps) for r in runs],
        "metrics": [len(ws.metrics(r.id)) for r in runs],
        "checkpoints": [[(c.path, c.kind) for c in ws.checkpoints(r.id)] for r in runs],
        "files": sorted((str(p.relative_to(ws.root)), p.stat().st_mtime_ns)
                        for p in ws.root.rglob("*") if p.is_file() and "sqlite" not in p.name),
    }


#: the 359-pair toy runs (tests/fixtures/toy-models/README.md): small, fast, word-level
TOY_MODELS = Path(__file__).resolve().parents[1] / "fixtures" / "toy-models"


def test_ensure_demo_workspace_installs_bundled_runs_once(tmp_path):
    from core.evaluate.goldsets import load_gold_set
    from core.infer.session import TranslationSession

    root = ensure_demo_workspace(tmp_path / "demo", models_dir=TOY_MODELS)
    with Workspace.open(root) as ws:
        corpus = ws.get_corpus(DEMO_CORPUS)
        assert (corpus.src_lang, corpus.tgt_lang, corpus.n_pairs) == ("es", "en", 459)
        assert corpus.n_documents == 28
        assert len(load_gold_set(ws, DEMO_GOLD)) >= 40
        assert ws.load_split(DEMO_CORPUS) is not None
        names = [json.loads((b / BUNDLE_META).read_text())["name"]
                 for b in bundled_models(TOY_MODELS)]
        runs = {r.name: r for r in ws.list_runs()}
        assert set(runs) == set(names) and len(names) == 3
        for bundle in bundled_models(TOY_MODELS):
            meta = json.loads((bundle / BUNDLE_META).read_text())
            info = runs[meta["name"]]
            assert info.status == "finished" and info.steps == meta["step"]
            stored = json.loads((bundle / BUNDLE_CURVES).read_text())
            curves = ws.curves(info.id, "train")
            assert curves["loss"][0] == stored["train"]["loss"][0]
            assert ws.curves(info.id, "valid")["dev_ppl"][1] == pytest.approx(
                stored["valid"]["dev_ppl"][1])
        session = TranslationSession.open(ws, [runs[names[0]].id])
        tr = session.translate(["Compré una mesa nueva para la cocina."], beam=2)[0]
        assert tr.source_tokens == "Compré una mesa nueva para la cocina .".split()
        assert tr.attention.shape == (len(tr.target_ids) + 1, 8)
        assert np.allclose(tr.attention.sum(axis=1), 1.0, atol=1e-4)
        before = _snapshot(ws)
    assert ensure_demo_workspace(root, models_dir=TOY_MODELS) == root
    with Workspace.open(root) as ws:
        assert _snapshot(ws) == before


@pytest.mark.parametrize("folder, limit_mib", [(MODELS_DIR, 34), (TOY_MODELS, 8)],
                         ids=["demo", "toy"])
def test_bundle_is_small_and_model_only(folder, limit_mib):
    """The shipped runs stay small (about 32 MiB of int8 weights for the demo's seven runs,
    their sentencepiece models stored once in shared/) and hold no optimiser, schedule or
    RNG state."""
    from core.train.checkpoint import load_checkpoint
    from core.train.compact import SCALES_KEY

    files = [p for p in folder.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < limit_mib * 2**20
    for bundle in bundled_models(folder):
        meta = json.loads((bundle / BUNDLE_META).read_text())
        state = load_checkpoint(bundle / meta["checkpoint"])
        assert set(state) - {SCALES_KEY} == {"model", "config", "position", "best"}
        assert state["best"][0][2] == meta["checkpoint"]

def test_a_run_bundled_in_int8_installs_into_the_demo_workspace(tmp_path):
    """bundle_run writes a trained run (any corpus) as a bundle folder with int8 weights;
    the demo workspace installs it as a finished run that translates like the original."""
    from core.infer.session import TranslationSession
    from core.jobs import JobContext
    from core.services.demo import demo_config, import_demo_corpus
    from core.services.demo_bundle import bundle_run
    from core.services.training import create_run, train_run
    from core.train import artifacts
    from core.train.checkpoint import load_checkpoint
    from core.train.compact import SCALES_KEY

    with Workspace.open(tmp_path / "train-ws") as ws:
        corpus_id = import_demo_corpus(ws, name="elsewhere")
        config = demo_config("real", dict(emb_size=64, hidden_size=128), max_steps=30,
                             valid_every=15, device="cpu")
        config.data.dev_sample = 2
        run_id = create_run(ws, corpus_id, config, "real")
        train_run(ws, run_id, JobContext())
        meta = bundle_run(ws, run_id, tmp_path / "models" / "real", which="last",
                          extra={"test_bleu": 1.5})
        bundle_run(ws, run_id, tmp_path / "conventions" / "real", which="last",
                   convention="hansards")
        original = TranslationSession.from_loaded(
            [artifacts.load_model(ws.run_dir(run_id), "last")], ["fp32"])
        trained_curves = ws.curves(run_id, "valid")
    assert meta["weights"] == "int8" and meta["trained_on"] == "elsewhere"
    assert meta["step"] == 30 and meta["test_bleu"] == 1.5
    state = load_checkpoint(tmp_path / "models" / "real" / meta["checkpoint"])
    assert len(state[SCALES_KEY]) >= 4  # embeddings, softmax layer, LSTM matrices
    assert all(state["model"][k].dtype == torch.int8 for k in state[SCALES_KEY])
    root = ensure_demo_workspace(tmp_path / "demo", models_dir=tmp_path / "models")
    with Workspace.open(root) as ws:
        runs = {r.name: r for r in ws.list_runs()}
        assert runs["real"].status == "finished" and runs["real"].steps == 30
        assert ws.curves(runs["real"].id, "valid")["dev_ppl"][0] == [15, 30]
        # the curves at 6 significant digits, in a file with no spaces
        installed_ppl = ws.curves(runs["real"].id, "valid")["dev_ppl"][1]
        trained_ppl = trained_curves["dev_ppl"][1]
        assert installed_ppl == [float(f"{v:.6g}") for v in trained_ppl]
        assert installed_ppl == pytest.approx(trained_ppl, rel=1e-6)
        text = (tmp_path / "models" / "real" / "curves.json").read_text(encoding="utf-8")
        assert " " not in text and json.loads(text)["valid"]["dev_ppl"][1] == installed_ppl
        installed = TranslationSession.open(ws, [runs["real"].id])
        sentences = ["La casa es verde.", "Mi hermana vive en Madrid."]
        a = original.translate(sentences, beam=1)
        b = installed.translate(sentences, beam=1)
        assert [x.text for x in a] == [x.text for x in b]
    # a run bundled with a text convention reads and writes through it
    loaded = artifacts.load_model(tmp_path / "conventions" / "real", "best")
    assert loaded.src_pre.convention == loaded.tgt_pre.convention == "hansards"
    assert loaded.tgt_pre.restore("i think the member ' s point .") == \
        "I think the member's point."  # the toy run's target is English


@pytest.mark.skipif(not bundled_models(), reason="resources/demo/models/ holds no bundled runs")
def test_the_shipped_runs_translate_and_align(tmp_path):
    """The demo's real runs (Tatoeba, int8 weights): each translates the demo corpus's test
    pairs (our own sentences, never trained on; greedy BLEU about 24-29 when bundled) and
    aligns the demo gold with its own reading (AER about 47-49 %, the guided run about
    24 %); broken weights give BLEU near 0 and AER near 90 %."""
    from core.config import RunConfig
    from core.evaluate.aer import corpus_aer
    from core.evaluate.attention_aer import reading_alignments
    from core.evaluate.goldsets import load_gold_set
    from core.evaluate.metrics import corpus_bleu
    from core.infer.session import TranslationSession
    from core.services.alignment_runs import default_reading
    from core.services.corpora import load_split_corpora

    root = ensure_demo_workspace(tmp_path / "demo")
    with Workspace.open(root) as ws:
        gold = load_gold_set(ws, DEMO_GOLD)
        _, parts = load_split_corpora(ws, ws.corpus_id(DEMO_CORPUS), 1234)
        test = parts["test"].pairs
        runs = {r.name: r for r in ws.list_runs()}
        assert {"tatoeba-luong", "tatoeba-rnnsearch", "tatoeba-luong-guided"} <= set(runs)
        for name in ("tatoeba-luong", "tatoeba-rnnsearch", "tatoeba-luong-guided"):
            run = runs[name]
            assert run.status == "finished"
            session = TranslationSession.open(ws, [run.id])
            hyps = [t.text for t in session.translate([p.src for p in test], beam=1)]
            assert corpus_bleu(hyps, [p.tgt for p in test]).score > 15, name
            reading = default_reading(RunConfig.from_dict(run.config))
            found = reading_alignments(session, gold, [(reading, False)])[(reading, False)]
            aer = corpus_aer(found, gold.alignments).aer
            assert aer < (0.35 if name == "tatoeba-luong-guided" else 0.60), (name, aer)


def test_demo_refuses_a_workspace_whose_demo_corpus_is_another(tmp_path, capsys):
    from core.cli import run_cli
    from core.services.demo import DEMO_DIR

    ws_dir = str(tmp_path / "ws")
    assert run_cli(["--workspace", ws_dir, "corpus", "import", str(DEMO_DIR / "demo.en"),
                    str(DEMO_DIR / "demo.es"), "--src-lang", "en", "--tgt-lang", "es",
                    "--name", "demo"]) == 0  # the user's own en -> es corpus
    capsys.readouterr()
    assert run_cli(["demo", "--quick", "--workspace", ws_dir]) == 2
    err = capsys.readouterr().err
    assert "the corpus named 'demo' here is not the bundled demo corpus (en -> es" in err
    assert "another workspace" in err and err.count("error:") == 1
    with Workspace.open(ws_dir) as ws:
        assert ws.list_runs() == [] and [c.src_lang for c in ws.list_corpora()] == ["en"]
        assert not (ws.exports_dir / "demo").exists()


def test_the_guis_demo_workspace_keeps_the_demo_corpus_it_has(tmp_path):
    """Only the `demo` command refuses another corpus named 'demo'; the GUI's own demo
    workspace (populate_demo_workspace) keeps the corpus an earlier version stored."""
    from core.data.readers import read_parallel
    from core.errors import StoreError
    from core.services.demo import DEMO_DIR, import_demo_corpus

    older = read_parallel(DEMO_DIR / "demo.es", DEMO_DIR / "demo.en", "es", "en", name="demo")
    older.pairs = older.pairs[:300]  # as if an earlier demo corpus had fewer sentences
    with Workspace.open(tmp_path / "ws", create=True) as ws:
        kept = ws.add_corpus(older, "demo", format="parallel")
        assert import_demo_corpus(ws) == kept
        with pytest.raises(StoreError, match="not the bundled demo corpus"):
            import_demo_corpus(ws, same_only=True)
        assert len(ws.load_corpus("demo")) == 300 and len(ws.list_corpora()) == 1


def test_bundles_share_their_sentencepiece_models_and_install_from_them(tmp_path):
    """share_bundle_files stores byte-identical sentencepiece models once (the shipped
    runs' vocabularies would otherwise be most of the bundle after the weights); an
    installed run gets them back under its own names and translates as before."""
    import shutil

    from core.infer.session import TranslationSession
    from core.services.demo import SHARED_DIR_NAME
    from core.services.demo_bundle import share_bundle_files

    # two bundles with the same (made-up) piece model, written as bundle_run copies it
    models = tmp_path / "models"
    shutil.copytree(TOY_MODELS, models)
    bundles = bundled_models(models)
    for b in bundles[:2]:
        (b / "src.model").write_bytes(b"piece model " * 1000)
    before = sum(p.stat().st_size for p in models.rglob("*") if p.is_file())
    assert share_bundle_files(models) == 12_000  # the second copy
    assert share_bundle_files(models) == 0  # idempotent: nothing left to move
    after = sum(p.stat().st_size for p in models.rglob("*") if p.is_file())
    assert before - after > 11_000
    shared = list((models / SHARED_DIR_NAME).iterdir())
    assert len(shared) == 1 and shared[0].read_bytes() == b"piece model " * 1000
    for b in bundles[:2]:
        meta = json.loads((b / BUNDLE_META).read_text())
        assert meta["shared_files"] == {"src.model": shared[0].name}
        assert not (b / "src.model").exists()

    root = ensure_demo_workspace(tmp_path / "demo", models_dir=models)
    with Workspace.open(root) as ws:
        for b in bundles[:2]:
            run = ws.get_run(json.loads((b / BUNDLE_META).read_text())["name"])
            assert (ws.run_dir(run.id) / "src.model").read_bytes() == b"piece model " * 1000
        # a run without shared files translates as the fixture it came from
        name = json.loads((bundles[2] / BUNDLE_META).read_text())["name"]
        installed = TranslationSession.open(ws, [ws.get_run(name).id])
        from core.train import artifacts
        original = TranslationSession.from_loaded([artifacts.load_model(
            TOY_MODELS / bundles[2].name, "best")], ["fixture"])
        text = ["Compré una mesa nueva para la cocina."]
        assert [t.text for t in installed.translate(text, beam=2)] == \
            [t.text for t in original.translate(text, beam=2)]


def test_the_demo_workspace_holds_the_wpt03_trial_gold(tmp_path):
    """The WPT-03 en-fr trial gold (37 Hansards pairs; Mihalcea & Pedersen 2003, gold by
    Och & Ney) is a gold set of the demo workspace, English first, its sure and possible
    links as published (338 sure; 1,784 possible, the sure ones included)."""
    from core.evaluate.goldsets import load_gold_set
    from core.services.demo import WPT03_GOLD

    root = ensure_demo_workspace(tmp_path / "demo", models_dir=TOY_MODELS)
    with Workspace.open(root) as ws:
        gold = load_gold_set(ws, WPT03_GOLD)
        assert len(gold) == 37 and (gold.src_lang, gold.tgt_lang) == ("en", "fr")
        assert (gold.n_sure, gold.n_possible) == (338, 1784)
        # and the team's en-fr documents, in both directions, all for testing
        for name, src in (("demo-en-fr", "en"), ("demo-fr-en", "fr")):
            corpus = ws.get_corpus(name)
            assert corpus.src_lang == src and corpus.n_pairs == 90
            split = ws.load_split(name)
            assert split.assignment["test"] == list(range(90)) and not split.assignment["train"]
        assert gold.src_tokens[1] == "the commissionners went on :".split()
        assert len(gold.tgt_tokens[1]) > 3
        # TALP is 1-based: its first link, 1-1, joins the first words, a sure link
        assert (0, 0) in gold.alignments[0].sure


def test_every_tracked_file_together_stays_under_45_mb():
    """Issue 45: the repository a user clones (demo runs, screenshots, fixtures
    included) stays under 45 MB."""
    import subprocess

    repo = Path(__file__).resolve().parents[2]
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True,
                                check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    total = sum((repo / f).stat().st_size for f in listed if f and (repo / f).is_file())
    assert 10 * 2**20 < total < 45 * 10**6, total


def _english_french_bundles() -> list[dict]:
    return [m for m in (json.loads((b / BUNDLE_META).read_text()) for b in bundled_models())
            if {m.get("src_lang"), m.get("tgt_lang")} == {"en", "fr"}]


@pytest.mark.skipif(not bundled_models(), reason="resources/demo/models/ holds no bundled runs")
def test_the_shipped_english_french_runs_translate_our_documents_and_align_as_recorded(tmp_path):
    """The demo's English-French runs (Hansards, int8, the hansards text convention): each
    translates the team's documents (never trained on) into cased, contracted text at
    about the BLEU recorded in its meta.json (greedy on the first 40 sentences here), and
    the recurrent ones align the WPT-03 trial gold at their recorded AER (within 0.5
    points). Broken weights or a lost convention give BLEU near 0 and 'de le' in the
    output."""
    from core.config import RunConfig
    from core.evaluate.aer import corpus_aer
    from core.evaluate.attention_aer import reading_alignments, reverse_gold
    from core.evaluate.goldsets import load_gold_set
    from core.evaluate.metrics import corpus_bleu
    from core.infer.session import TranslationSession
    from core.services.alignment_runs import default_reading
    from core.services.demo import WPT03_GOLD

    metas = _english_french_bundles()
    assert len(metas) >= 2, "the demo ships English-French runs (issue 45)"
    root = ensure_demo_workspace(tmp_path / "demo")
    with Workspace.open(root) as ws:
        gold = load_gold_set(ws, WPT03_GOLD)
        for meta in metas:
            run = ws.get_run(meta["name"])
            english = meta["src_lang"] == "en"
            pairs = ws.load_corpus("demo-en-fr" if english else "demo-fr-en").pairs[:40]
            session = TranslationSession.open(ws, [run.id])
            hyps = [t.text for t in session.translate([p.src for p in pairs], beam=1)]
            bleu = corpus_bleu(hyps, [p.tgt for p in pairs]).score
            assert bleu > max(3.0, 0.5 * meta["demo_bleu"]), (meta["name"], bleu)
            assert all(h[:1].isupper() or not h[:1].isalpha() for h in hyps), meta["name"]
            if english:  # French written as a person writes it
                joined = " ".join(hyps)
                assert " de le " not in joined and " à le " not in joined, meta["name"]
            if "wpt03_aer" in meta:
                config = RunConfig.from_dict(run.config)
                oriented = gold if english else reverse_gold(gold)
                reading = default_reading(config)
                found = reading_alignments(session, oriented, [(reading, False)])
                aer = 100 * corpus_aer(found[(reading, False)], oriented.alignments).aer
                assert reading == meta["wpt03_reading"]
                assert abs(aer - meta["wpt03_aer"]) <= 0.5, (meta["name"], aer)


def test_an_older_demo_workspace_adopts_the_bundles_length_penalties(tmp_path):
    """A demo workspace installed from bundles without a length penalty, opened with
    bundles that now state one (the same checkpoints): each run whose config has none
    takes its bundle's, so it translates as the bundle's scores were measured; a run
    tuned since (its own key, here 0.5) keeps its own."""
    import shutil

    from core.infer.session import TranslationSession

    models = tmp_path / "models"
    shutil.copytree(TOY_MODELS, models)
    bundles = bundled_models(models)
    metas = [json.loads((b / BUNDLE_META).read_text()) for b in bundles]
    assert all("length_penalty" not in m["config"] for m in metas)  # bundles of before
    root = ensure_demo_workspace(tmp_path / "demo", models_dir=models)
    with Workspace.open(root) as ws:
        tuned = ws.get_run(metas[1]["name"])
        ws.update_run(tuned.id, config={**tuned.config, "length_penalty": 0.5})
    for b, m in zip(bundles, metas, strict=True):  # the bundles as shipped now
        m["config"]["length_penalty"] = 1.5
        (b / BUNDLE_META).write_text(json.dumps(m))
    assert ensure_demo_workspace(root, models_dir=models) == root
    with Workspace.open(root) as ws:
        alphas = [ws.get_run(m["name"]).config.get("length_penalty") for m in metas]
        assert alphas == [1.5, 0.5, 1.5]
        assert TranslationSession.open(ws, [metas[0]["name"]]).length_penalty == 1.5
        before = _snapshot(ws)
    assert ensure_demo_workspace(root, models_dir=models) == root
    with Workspace.open(root) as ws:
        assert _snapshot(ws) == before

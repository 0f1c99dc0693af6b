"""A run is never paired with data of another language pair: `evaluate` (several runs,
--contrastive), two-stage stage 2, train.guide_runs, an alignment head over an imported
run, `align --baseline-corpus` and `workspace rebuild` each refuse (or, for a reversed
corpus, turn round) what does not fit. The runs here are queued rows with no weights:
every check happens before a model loads."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.cli import run_cli
from core.config import ModelConfig, RunConfig
from core.data.preprocess import Preprocessor
from core.data.readers import read_parallel
from core.data.vocab import SPECIALS, Vocab
from core.errors import ConfigError
from core.services import contrastive_eval
from core.services.alignment_runs import baseline_training_text
from core.services.language_pairs import check_one_pair
from core.services.training import alignment_head_config, create_run
from core.train.artifacts import save_artifacts
from core.workspace.store import Workspace
from tests.core.tiny_runs import tiny_run_config

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"
EN_FR = DEMO / "en-fr"
CONTRASTIVE = EN_FR / "contrastive.json"


def add_runs(ws: Workspace, corpus: str, *names: str, family: str = "luong") -> None:
    raw = tiny_run_config().to_dict()
    raw["model"]["family"] = family
    for name in names:
        ws.create_run(name, raw, corpus)


@pytest.fixture
def pairs(workspace):
    """The demo workspace ('demo', es->en) with corpora 'en-fr' (the en-fr demo
    documents) and 'en-es' (the demo reversed), and queued runs 'es-en' and 'es-en-2',
    'en-fr', 'en-es' on them, and a transformer 'tf-es-en'."""
    workspace.add_corpus(read_parallel(EN_FR / "demo.en", EN_FR / "demo.fr", "en", "fr",
                                       docids_path=EN_FR / "demo.docids"), name="en-fr",
                         format="parallel")
    workspace.add_corpus(read_parallel(DEMO / "demo.en", DEMO / "demo.es", "en", "es"),
                         name="en-es", format="parallel")
    add_runs(workspace, "demo", "es-en", "es-en-2")
    add_runs(workspace, "en-fr", "en-fr")
    add_runs(workspace, "en-es", "en-es")
    add_runs(workspace, "demo", "tf-es-en", family="transformer")
    return workspace


def cli(ws: Workspace, *argv: str) -> int:
    return run_cli(["--workspace", str(ws.root), *argv])


# ------------------------------------------------------------------ evaluate


@pytest.mark.parametrize("mode", [[], ["--doc-level"], ["--src", "SRC", "--ref", "SRC"],
                                  ["--ensemble", "en-fr"]])
def test_evaluate_refuses_runs_of_another_pair_than_the_first(pairs, capsys, mode):
    second = [] if "--ensemble" in mode else ["--run", "en-fr"]
    argv = [str(DEMO / "demo.es") if a == "SRC" else a for a in mode]
    assert cli(pairs, "evaluate", "--run", "es-en", *second, "--max-sentences", "3",
               "--beam", "1", *argv) != 0
    err = capsys.readouterr().err
    option = "--ensemble" if "--ensemble" in mode else "--run"
    assert (f"{option} 'en-fr' translates en->fr, but --run 'es-en' translates "
            "es->en: the table compares systems on one test set") in err
    assert err.count("\n") == 1 and pairs.evaluations() == []


def test_runs_of_one_pair_pass_and_give_it(pairs):
    assert check_one_pair(pairs, ["es-en", "es-en-2"]) == ("es", "en")
    assert check_one_pair(pairs, ["en-fr"]) == ("en", "fr")


def test_contrastive_refuses_runs_of_another_pair_and_a_set_of_another_pair(pairs, capsys):
    assert cli(pairs, "evaluate", "--run", "en-fr", "--run", "es-en",
               "--contrastive", str(CONTRASTIVE)) != 0
    assert ("--run 'es-en' translates es->en, but --run 'en-fr' translates en->fr: "
            "one contrastive set tests one language pair") in capsys.readouterr().err
    assert cli(pairs, "evaluate", "--run", "es-en", "--contrastive", str(CONTRASTIVE)) != 0
    assert (f"{CONTRASTIVE}: the contrastive set is en->fr, but run 'es-en' translates "
            "es->en") in capsys.readouterr().err
    contrastive_eval.check_contrastive_pair(pairs, ["en-fr"], CONTRASTIVE)  # fits
    ids = {n: [pairs.run_id(n)] for n in ("en-fr", "es-en")}
    with pytest.raises(ConfigError, match="the contrastive set is en->fr, but run 'es-en'"):
        contrastive_eval.contrastive_and_store(pairs, {"es-en": None}, {"es-en": ids["es-en"]},
                                               CONTRASTIVE, [])
    assert pairs.evaluations() == []


def test_the_languages_a_contrastive_set_tells(tmp_path):
    (tmp_path / "de-en").mkdir()
    (tmp_path / "set").mkdir()
    assert contrastive_eval.contrastive_languages(CONTRASTIVE) == ("en", "fr")
    assert contrastive_eval.contrastive_languages(tmp_path / "de-en") == ("de", "en")
    assert contrastive_eval.contrastive_languages(tmp_path / "set") == ("", "fr")  # ContraPro
    assert contrastive_eval.contrastive_languages(tmp_path / "set.json") == ("", "")


# ------------------------------------------------------------------ training


def stage2_config() -> RunConfig:
    config = tiny_run_config(stage=2, init_from="tf-es-en")
    config.model = ModelConfig(family="context_transformer", strategy="ts", d_model=16,
                               ff_size=32, heads=2, enc_layers=1, dec_layers=1, ctx_layers=1,
                               dropout=0.0)
    return config


def test_stage_two_refuses_a_stage_one_run_of_another_pair(pairs):
    with pytest.raises(ConfigError) as err:
        create_run(pairs, "en-fr", stage2_config(), "stage2")
    assert str(err.value).startswith(
        "train.init_from (--init-from) = 'tf-es-en': run 'tf-es-en' translates es->en, but "
        "corpus 'en-fr' is en->fr: a stage-2 run keeps its base run's vocabularies")
    assert [r.name for r in pairs.list_runs()][-1] == "tf-es-en"  # no row for the refused run
    assert pairs.get_run(create_run(pairs, "demo", stage2_config(), "stage2")).corpus_id == 1


@pytest.mark.parametrize("guides, wrong, want", [
    ("en-fr", "en-fr", "the first guide run must translate es->en"),
    ("es-en,es-en-2", "es-en-2", "the second (reverse) guide run must translate en->es")])
def test_guide_runs_must_translate_the_corpus_pair_and_its_reverse(pairs, guides, wrong, want):
    config = tiny_run_config(guided_alignment=1.0, guide_runs=guides)
    with pytest.raises(ConfigError) as err:
        create_run(pairs, "demo", config, "guided")
    assert f"run {wrong!r} translates" in str(err.value) and want in str(err.value)
    assert "corpus 'demo' is es->en" in str(err.value)


def test_guide_runs_of_the_pair_and_its_reverse_are_accepted_and_unknown_ones_refused(pairs):
    config = tiny_run_config(guided_alignment=1.0, guide_runs="es-en,en-es")
    assert pairs.get_run(create_run(pairs, "demo", config, "guided")).name == "guided"
    config.train.guide_runs = "es-en,nobody"
    with pytest.raises(ConfigError, match=r"train.guide_runs \(--guide-runs\): .*nobody"):
        create_run(pairs, "demo", config, "guided-2")


def imported_run(ws: Workspace, src: str, tgt: str, name: str = "imported") -> str:
    """A run with no corpus whose preprocess.json says src -> tgt (as `runs import`)."""
    add_runs(ws, None, name)
    vocab = Vocab([*SPECIALS, "a"])
    save_artifacts(ws.run_dir(ws.run_id(name)), vocab, vocab, Preprocessor(src),
                   Preprocessor(tgt))
    return name


def test_alignment_head_on_a_corpus_of_another_pair_is_refused(pairs):
    run = imported_run(pairs, "en", "fr")
    with pytest.raises(ConfigError) as err:
        alignment_head_config(pairs, run, corpus="demo")
    assert str(err.value).startswith("run 'imported' translates en->fr, but corpus 'demo' is "
                                     "es->en: its head learns the links of the pair")
    corpus_id, config = alignment_head_config(pairs, run, corpus="en-fr")
    assert (corpus_id, config.train.init_from) == (pairs.corpus_id("en-fr"), "imported")
    unsaid = imported_run(pairs, "xx", "xx", "unsaid")  # a model that names no languages
    assert alignment_head_config(pairs, unsaid, corpus="demo")[0] == 1


# ------------------------------------------------------------------ align, rebuild


def test_baseline_corpus_of_the_reversed_pair_is_turned_round(pairs):
    es, en = Preprocessor("es"), Preprocessor("en")
    run = pairs.get_run("es-en")
    own_src, own_tgt = baseline_training_text(pairs, run, es, en, corpus="demo")
    src, tgt = baseline_training_text(pairs, run, es, en, corpus="en-es")
    assert (src[0], tgt[0]) == (own_src[0], own_tgt[0])
    assert src[0] == es.tokenize((DEMO / "demo.es").read_text().splitlines()[0])
    with pytest.raises(ConfigError, match="--baseline-corpus 'en-fr' is en->fr, but run "
                       "'es-en' translates es->en"):
        baseline_training_text(pairs, run, es, en, corpus="en-fr")


def test_rebuild_gives_a_run_the_only_corpus_only_when_its_languages_fit(pairs):
    from core.services.workspace_rebuild import rebuild_workspace

    pairs.add_corpus(read_parallel(EN_FR / "demo.en", EN_FR / "demo.fr", "en", "fr"),
                     name="old-en-fr", format="parallel")
    add_runs(pairs, "old-en-fr", "old")
    vocab = Vocab([*SPECIALS, "a"])
    for name, langs in (("es-en", ("es", "en")), ("en-fr", ("en", "fr")), ("old", ("en", "fr"))):
        save_artifacts(pairs.run_dir(pairs.run_id(name)), vocab, vocab,
                       *(Preprocessor(lang) for lang in langs))
    root = pairs.root
    pairs.close()
    for cid in (1, 3, 4):  # only 'en-fr' (id 2, en->fr) is left
        shutil.rmtree(root / "corpora" / str(cid))
    (root / "workspace.sqlite").write_bytes(b"")
    report = rebuild_workspace(root)
    with Workspace.open(root) as ws:
        kept = {r.name: r.corpus_id for r in ws.list_runs()}
    assert kept["en-fr"] == 2  # its own corpus, by id
    assert kept["old"] == 2  # its corpus is gone; the only one is of its pair
    assert kept["es-en"] is None and kept["tf-es-en"] is None  # es->en; no languages
    notes = [n.split(": ", 1)[1] for n in report.notes if "/runs/" in n]
    assert notes.count("its corpus is not in the workspace, and the only corpus, 'en-fr', is "
                       "en->fr while the run is es->en; it keeps its checkpoints and "
                       "translates, but cannot be resumed or evaluated on a corpus split") == 1
    assert sum("while the run is of languages not known (no preprocess.json)" in n
               for n in notes) == 3  # es-en-2, en-es, tf-es-en


def test_a_run_of_unknown_languages_first_does_not_open_the_table_to_every_pair(pairs):
    """check_one_pair compares with the first run whose languages are known, wherever a
    run of unknown languages ('xx': an imported model) stands in the list."""
    unsaid = imported_run(pairs, "xx", "xx", "unsaid")
    assert check_one_pair(pairs, [unsaid, "es-en", "es-en-2"]) == ("es", "en")
    for order in ([unsaid, "es-en", "en-fr"], ["es-en", unsaid, "en-fr"]):
        with pytest.raises(ConfigError, match="--run 'en-fr' translates en->fr, but --run "
                                              "'es-en' translates es->en"):
            check_one_pair(pairs, order)


def test_a_damaged_preprocess_json_makes_the_languages_unknown_not_an_error(pairs):
    from core.services.language_pairs import run_languages

    name = imported_run(pairs, "en", "fr", "damaged")
    folder = pairs.run_dir(pairs.run_id(name))
    assert run_languages(pairs, pairs.get_run(name)) == ("en", "fr")
    (folder / "preprocess.json").write_text('{"src": ', encoding="utf-8")
    assert run_languages(pairs, pairs.get_run(name)) == ("", "")


def test_same_pair_takes_xx_as_not_known():
    from core.services.language_pairs import same_pair

    assert same_pair(("en", "fr"), ("xx", "xx")) and same_pair(("xx", "en"), ("en", "fr"))
    assert same_pair(("EN", "fr"), ("en", "FR")) and not same_pair(("en", "fr"), ("es", "en"))

"""Both fronts evaluate through core.services.eval_scores: the GUI's evaluation job and
the CLI's `evaluate --test test` store the same metrics under the same keys and test
name, for a sentence-level run and for a context model (whose test pairs are translated
document by document on both fronts)."""
from __future__ import annotations

import numpy as np
import pytest

from core.cli import run_cli
from core.jobs import JobContext
from core.services.eval_scores import METRIC_KEYS, evaluate_runs
from core.services.translation import SessionCache
from core.workspace.store import Workspace
from tests.app.conftest import job_result
from tests.core.tiny_runs import tiny_transformer_config


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    from core.services.demo import import_demo_corpus
    from core.services.training import create_run, train_run

    root = tmp_path_factory.mktemp("fronts") / "ws"
    with Workspace.open(root) as ws:
        corpus_id = import_demo_corpus(ws)
        for name, family in (("ctx", "context_transformer"), ("sent", "transformer")):
            config = tiny_transformer_config(name, family, 30, joint=True)
            run_id = create_run(ws, corpus_id, config)
            assert train_run(ws, run_id, JobContext()).status == "finished"
    return root


@pytest.mark.parametrize("run", ["sent", "ctx"])
def test_gui_job_and_cli_store_identical_evaluations(two_runs, run, capsys):
    assert run_cli(["--workspace", str(two_runs), "evaluate", "--run", run, "--test", "test",
                    "--beam", "2"]) == 0
    capsys.readouterr()
    with Workspace.open(two_runs) as ws:
        run_id = ws.run_id(run)
        [eval_id] = evaluate_runs(ws, SessionCache(), [run_id], 2, None, JobContext())
        cli, gui = ws.evaluations(run_id)[-2:]
        assert gui.id == eval_id
        n_test = len(ws.load_split("demo").assignment["test"])
    assert cli.test_name == gui.test_name == "demo:test"
    assert set(cli.metrics) == set(gui.metrics) == set(METRIC_KEYS)
    assert cli.metrics == gui.metrics  # the same numbers, not only the same keys
    assert cli.metrics["sentences"] == n_test
    assert cli.metrics["best_dev_ppl"] > 1 and cli.metrics["perplexity"] > 1


def test_the_context_model_is_evaluated_document_by_document(two_runs, monkeypatch):
    """A context model's test pairs reach translate_documents grouped by document (the
    GUI once passed the whole split as one document)."""
    from core.infer.session import TranslationSession

    seen = []
    original = TranslationSession.translate_documents

    def spy(self, documents, **kw):
        seen.append([len(d) for d in documents])
        return original(self, documents, **kw)

    monkeypatch.setattr(TranslationSession, "translate_documents", spy)
    with Workspace.open(two_runs) as ws:
        evaluate_runs(ws, SessionCache(), [ws.run_id("ctx")], 1, None, JobContext())
        corpus = ws.load_corpus("demo")
        test = ws.load_split("demo").assignment["test"]
        docs = {corpus.pairs[i].doc_id for i in test}
    assert len(seen) == 1 and len(seen[0]) == len(docs) > 1
    assert sum(seen[0]) == len(test)


def test_a_tmx_gives_the_same_pairs_to_corpus_import_and_to_open_document(tmp_path):
    """One TMX parser: a file with region tags, a highlighted word, a formatting code, a
    pretty-printed segment and a unit lacking a language reads the same through corpus
    import (core.data.readers) and the Translate screen's "Open document", which also
    keeps the unit lacking a language to translate it."""
    from core.data.readers import read_corpus
    from core.formats.tmx_records import read_tmx
    from core.services.translation_jobs import read_document_job

    p = tmp_path / "mem.tmx"
    p.write_text("""<?xml version="1.0"?>
<tmx version="1.4"><header srclang="es-ES" datatype="plaintext" segtype="sentence"
 adminlang="en" creationtool="t" creationtoolversion="1" o-tmf="x"/><body>
<tu tuid="a"><tuv xml:lang="es-ES"><seg>La casa <hi>verde</hi>.</seg></tuv>
 <tuv xml:lang="en-GB"><seg>The <bpt i="1">&lt;b&gt;</bpt>green<ept i="1">&lt;/b&gt;</ept> house.</seg></tuv></tu>
<tu tuid="b"><tuv xml:lang="es-ES"><seg>Solo español.</seg></tuv></tu>
<tu tuid="c"><tuv xml:lang="ES-es"><seg>Mi hermana
      vive en Madrid.</seg></tuv><tuv xml:lang="en-gb"><seg>My sister lives in Madrid.</seg></tuv></tu>
</body></tmx>
""", encoding="utf-8")
    corpus = read_corpus("tmx", [str(p)], "es", "en")
    records = read_tmx(p, "es", "en")
    assert [(q.src, q.tgt) for q in corpus.pairs] == [
        ("La casa verde.", "The green house."), ("Mi hermana vive en Madrid.", "My sister lives in Madrid.")]
    assert [" ".join(r.source.split()) for r in records] == [q.src for q in corpus.pairs]
    assert [" ".join(r.translation.split()) for r in records] == [q.tgt for q in corpus.pairs]
    assert [r.id for r in records] == ["a", "c"]
    # the same parser; a document to translate also keeps the unit not translated yet
    # ("b", no English side), which a training pair cannot be
    document = read_document_job(p, "es", JobContext())
    assert [" ".join(s.split()) for s in document.sentences] == [
        "La casa verde.", "Solo español.", "Mi hermana vive en Madrid."]
    assert document.ids == ["a", "b", "c"]
    assert [q.line for q in corpus.pairs] == [4, 7]


TWO_PARAGRAPHS = ("Compré una mesa nueva. Es muy bonita.\n\n"
                  "La trajeron el lunes. Tiene cuatro sillas.\n")


def _translate_on_screen(qtbot, root, run: str, doc, out, errors) -> list[tuple[str, str]]:
    """Open `doc` in the Translate screen, translate it with `run` (beam 2), export to
    `out`; -> the workspace's recorded translations of the run (document, file name)."""
    from app import workers
    from app.panels.translate import TranslatePanel
    from tests.app.conftest import shown_panel

    screen = shown_panel(qtbot, TranslatePanel, root, 1200)
    panel = next(screen)
    try:
        run_id = panel.workspace.run_id(run)
        panel.models.set_checked([run_id])
        panel.beam.setValue(2)
        panel.open_document(doc)
        qtbot.waitUntil(lambda: len(panel.sources()) == 4, timeout=10000)
        job = panel.translate()
        # the state changes before the result reaches the screen: wait for the result
        qtbot.waitUntil(lambda: job.done and len(panel.translations) == 4, timeout=30000)
        assert job.state == workers.FINISHED, errors
        assert job_result(qtbot, panel.export(out)) == [out]
        return [(t.document, t.path.name) for t in panel.workspace.translations(run_id)]
    finally:
        next(screen, None)


@pytest.mark.parametrize("run", ["sent", "ctx"])
def test_translate_screen_and_cli_write_identical_records(two_runs, run, qtbot, tmp_path,
                                                          errors):
    """A two-paragraph document translated and exported as JSON lines from the Translate
    screen and from `translate --document`: the same records (text, log-probability,
    tokens, attention, gates), both exports recorded in the workspace. The context
    model reads the whole file as one document on both fronts (the CLI once restarted
    the context at every paragraph)."""
    from core.formats.jsonl import read_jsonl

    doc = tmp_path / "letter.txt"
    doc.write_text(TWO_PARAGRAPHS, encoding="utf-8")
    cli_out, gui_out = tmp_path / "cli.jsonl", tmp_path / "gui.jsonl"
    assert run_cli(["--workspace", str(two_runs), "translate", "--run", run, "--beam", "2",
                    "--document", "--input", str(doc), "--output", str(cli_out)]) == 0
    recorded = _translate_on_screen(qtbot, two_runs, run, doc, gui_out, errors)
    cli, gui = read_jsonl(cli_out), read_jsonl(gui_out)
    assert len(cli) == len(gui) == 4
    for a, b in zip(cli, gui, strict=True):
        assert (a.source, a.translation, a.source_tokens, a.target_tokens) == \
               (b.source, b.translation, b.source_tokens, b.target_tokens)
        assert a.score == pytest.approx(b.score, abs=1e-5) and a.score < 0
        np.testing.assert_allclose(a.attention, b.attention, atol=1e-5)
        assert a.meta.keys() == b.meta.keys()
        assert ("gates" in a.meta) == (run == "ctx")
    assert ("letter.txt", "cli.jsonl") in recorded and ("letter.txt", "gui.jsonl") in recorded


def test_an_edited_target_is_exported_as_text_only(tmp_path):
    """The screen's export keeps a model's tokens, score and attention only for rows whose
    target is still the model's text."""
    from core.infer.translate import Translation
    from core.services.translation import table_records

    tr = Translation("Hola mundo .", ["Hola", "mundo", "."], [7, 8], ["hello", "world"],
                     "hello world", score=-0.9, log_prob=-1.25,
                     attention=np.array([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0, 0, 1.0]]))
    same, edited, untranslated = table_records(
        ["Hola mundo .", "Hola mundo .", "Adiós ."], [tr.text, "Hi world", "Bye ."], [tr, tr])
    assert same.target_tokens == list(tr.target_tokens) and same.attention is not None
    assert same.score == -1.25 and same.attention == [[0.9, 0.1, 0.0], [0.2, 0.7, 0.1]]
    assert (edited.translation, edited.attention, edited.score) == ("Hi world", None, None)
    assert edited.meta == {"edited": True}
    assert (untranslated.translation, untranslated.id, untranslated.score) == ("Bye .", "3", None)

"""Results of a job that the user has since made stale (another document opened, other
pairs listed, another corpus chosen) never reach the screen: they would be shown beside
sentences they are not the translation or the attention of, and exported so; a stale
corpus load that fails opens no dialog. Results that are still right stay: a new run in
the lists (the runs refreshed after training) keeps the Attention screen's results, while
other pairs clear its heatmaps and tables together."""
from __future__ import annotations

import threading

from app import workers
from app.main_window import MainWindow
from tests.app.conftest import job_result, shown_panel, start_run


def _window(qtbot, root) -> MainWindow:
    window = MainWindow(root)
    qtbot.addWidget(window)
    return window


def _held(monkeypatch, module, name):
    """Make `module.name` wait, in its job's thread, until the returned event is set."""
    release, entered = threading.Event(), threading.Event()
    real = getattr(module, name)

    def held(*args, **kwargs):
        entered.set()
        assert release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, held)
    return release, entered


def test_a_translation_never_lands_in_a_document_opened_meanwhile(qtbot, trained_ws, errors,
                                                                   monkeypatch):
    """Translate document A, open document B before A's translation ends: B's rows keep
    empty targets (A's translations are not B's), nothing is exported as B's translation,
    and B can be translated at once."""
    from core.services import translation

    window = _window(qtbot, trained_ws)
    panel = window.translate
    glob = next(r.id for r in window.workspace.list_runs() if r.name == "glob")
    panel.models.set_checked([glob])
    panel.set_sentences(["La casa es verde.", "Mi hermana vive en Madrid."])
    release, entered = _held(monkeypatch, translation, "translate")
    job = panel.translate()
    assert entered.wait(30)
    panel.set_sentences(["El perro come.", "Hola.", "Adiós."])  # what opening B does
    release.set()
    qtbot.waitUntil(lambda: job.done, timeout=30000)
    assert panel.sources() == ["El perro come.", "Hola.", "Adiós."]
    assert panel.targets() == ["", "", ""]
    assert panel.translations == [] and panel.translated_by == []
    assert panel.translate_button.isEnabled()
    assert errors == []
    window.close()


def test_attention_of_pairs_listed_before_never_shows_for_the_new_pairs(qtbot, trained_ws,
                                                                         errors, monkeypatch):
    """Compute attention on the gold set, switch to the test split before it ends: the
    old job's views (keyed by the old pairs' indices) are not taken for the new pairs."""
    from core.services import attention_set
    from tests.app.conftest import wait_for_pairs

    window = _window(qtbot, trained_ws)
    panel = window.attention
    ids = [r.id for r in window.workspace.list_runs()]
    panel.models.set_checked(ids[:1])
    panel.pair_source.setCurrentText("Gold set")
    wait_for_pairs(qtbot, panel)
    # the gold pairs are forced in batches (attention_set.run_views): hold that
    release, entered = _held(monkeypatch, attention_set, "force_gold")
    job = panel.compute()
    assert entered.wait(30)
    panel.pair_source.setCurrentText("Test split")
    wait_for_pairs(qtbot, panel)
    test_pairs = list(panel.pairs)
    release.set()
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    assert panel.pairs == test_pairs
    assert panel.views == {}
    assert panel.run_button.isEnabled()
    assert errors == []
    window.close()


def test_another_workspace_is_not_opened_under_a_running_job(qtbot, demo_ws, tmp_path, tiny,
                                                             errors, monkeypatch):
    """Opening a workspace closes the current one: a run training in it lost its
    database mid-way and failed ('the workspace is closed'). While a job of the workspace
    runs, the other workspace is refused with the reason; the run trains to its end."""
    from app.panels import training

    window = _window(qtbot, demo_ws)
    panel = window.training
    panel.set_config(tiny("busy", 4))
    panel.corpus.setCurrentIndex(panel.corpus.findData(1))
    release, entered = _held(monkeypatch, training, "train_run")
    job = start_run(qtbot, panel)
    assert entered.wait(30)
    before = window.workspace
    assert window.open_workspace(tmp_path / "other") is False
    assert window.workspace is before and window.training.workspace is before
    assert not (tmp_path / "other").exists()
    assert len(errors) == 1 and errors[0][0] == "Cannot open workspace"
    assert "Train 1: busy" in errors[0][1] and "cancel" in errors[0][1]
    release.set()
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    assert job.state == workers.FINISHED, errors
    assert window.workspace.get_run(1).status == "finished"
    # the screens read the new run's pairs and scores in jobs of their own: once those end
    qtbot.waitUntil(lambda: window.jobs.active() in ([], [window.warm_up_job]), timeout=30000)
    assert window.open_workspace(tmp_path / "other") is True  # nothing runs now
    window.close()


def test_a_translation_exports_after_its_run_was_deleted(qtbot, tmp_path, trained_ws, errors,
                                                          monkeypatch):
    """Translate with a run, delete the run (Training screen), export the translation: the
    file is written with the run's corpus languages (kept from when it translated); no
    record goes under the deleted run. Before, the export raised StoreError out of the
    slot: no file, no dialog, the user's edited translation could not be saved."""
    import shutil

    from app.panels import manage
    from core.formats.tmx_records import read_tmx

    root = tmp_path / "ws"
    shutil.copytree(trained_ws, root)
    window = _window(qtbot, root)
    panel = window.translate
    locp = window.workspace.get_run("locp").id
    recorded = window.workspace.translations()  # earlier tests' exports in the shared runs
    panel.models.set_checked([locp])
    panel.set_sentences(["La casa es verde.", "Hola."])
    job = panel.translate()
    qtbot.waitUntil(lambda: job.done, timeout=30000)
    assert job.state == workers.FINISHED, errors
    panel.table.item(0, 1).setText("The house is green.")  # the user's edit
    monkeypatch.setattr(manage, "confirm", lambda *a: True)
    training = window.training
    training.runs_table.selectRow(next(r for r in range(training.runs_table.rowCount())
                                       if training.runs_table.item(r, 0).text() == "2: locp"))
    training.delete_action.trigger()
    assert [r.name for r in window.workspace.list_runs()] == ["glob"]
    assert panel.targets()[0] == "The house is green."
    written = job_result(qtbot, panel.export(tmp_path / "out.tmx"))
    assert errors == []
    assert written == [tmp_path / "out.tmx"]
    records = read_tmx(written[0])
    assert [r.translation for r in records][0] == "The house is green."
    text = written[0].read_text(encoding="utf-8")
    assert 'srclang="es"' in text and 'xml:lang="en"' in text
    assert window.workspace.translations() == recorded
    window.close()


def test_translations_of_the_previous_workspace_leave_with_it(qtbot, tmp_path, trained_ws,
                                                               errors):
    """Translate (compared with a baseline), open another workspace whose runs have the
    same ids: the translations, comparison and their runs were kept, so an export was
    recorded under the new workspace's unrelated run 1. Now they are cleared (the
    document's sentences stay) and the export is recorded under no run."""
    import shutil

    other = tmp_path / "other"
    shutil.copytree(trained_ws, other)
    window = _window(qtbot, trained_ws)
    panel = window.translate
    runs = {r.name: r.id for r in window.workspace.list_runs()}
    panel.models.set_checked([runs["glob"]])
    panel.compare.enabled.setChecked(True)
    panel.compare.baseline.setCurrentIndex(panel.compare.baseline.findData(runs["locp"]))
    panel.set_sentences(["La casa es verde.", "Hola."])
    job = panel.translate()
    qtbot.waitUntil(lambda: job.done, timeout=30000)
    assert job.state == workers.FINISHED, errors
    assert panel.comparison is not None and panel.translated_by == [runs["glob"]]
    assert panel.targets()[0] == panel.translations[0].text != ""
    assert window.open_workspace(other) is True
    assert panel.sources() == ["La casa es verde.", "Hola."]
    assert panel.targets() == ["", ""]
    assert panel.translations == [] and panel.translated_by == []
    assert panel.comparison is None and panel.table.columnCount() == 2
    assert panel.heatmap.matrix.size == 0
    recorded = window.workspace.translations()
    assert job_result(qtbot, panel.export(tmp_path / "out.tmx")) == [tmp_path / "out.tmx"]
    assert window.workspace.translations() == recorded
    assert errors == []
    window.close()


def test_a_pair_with_markup_characters_is_shown_as_written(qtbot, trained_ws, errors):
    """The pair above the heatmaps is rich text: a source or target holding '<' or '&'
    (code, maths, '<unk>' in a test split) lost words or took the markup as formatting."""
    from PySide6.QtGui import QTextDocument

    from app.panels.attention import AttentionPanel
    from tests.app.conftest import shown_panel

    panel = next(shown_panel(qtbot, AttentionPanel, trained_ws, 1400, 900))
    panel.models.set_checked([])  # nothing to compute: only the pair is shown
    panel.src_edit.setText("si a <b y c> d, <unk> & fin")
    panel.tgt_edit.setText("if a <b and c> d, <i>x</i> & end")
    panel.add_typed_pair()
    doc = QTextDocument()
    doc.setHtml(panel.pair_label.text())
    assert doc.toPlainText().split("\n") == ["1. si a <b y c> d, <unk> & fin",
                                             "if a <b and c> d, <i>x</i> & end"]
    assert errors == []
    panel.jobs.shutdown()
    panel.workspace.close()


def test_a_new_run_keeps_the_results_shown(glob_attention):
    panel = glob_attention
    rows = panel.corpus_table.rowCount()
    shown = panel.heatmaps[0].matrix.copy()
    aer = panel.corpus_table.item(0, 2).text()
    assert rows == 1 and panel.aer_table.rowCount() == 1
    panel.refresh()  # what the main window does when a training run ends
    assert panel.corpus_table.rowCount() == rows and panel.corpus_table.item(0, 2).text() == aer
    assert panel.aer_table.rowCount() == 1
    assert panel.heatmaps[0].matrix.shape == shown.shape
    # other pairs: no result of the old ones stays, heatmaps included
    panel.pair_source.setCurrentText("Test split")
    assert panel.corpus_table.rowCount() == 0 and panel.aer_table.rowCount() == 0
    assert panel.heatmaps[0].matrix.size == 0


def test_a_stale_corpus_load_neither_shows_nor_complains(qtbot, copied_ws, errors, monkeypatch):
    """Choosing another corpus (or deleting the one being read) while its load job runs:
    the late result is not shown over the newer choice, and its failure opens no dialog."""
    import threading

    from app.panels import corpora

    release = threading.Event()
    real = corpora.load_job
    held = {"id": None}

    def gated(workspace, corpus_id, ctx):
        if corpus_id == held["id"]:  # this corpus reads slowly, then finds it was deleted
            release.wait(20)
            raise KeyError(f"no corpus with id {corpus_id}")
        return real(workspace, corpus_id, ctx)

    monkeypatch.setattr(corpora, "load_job", gated)
    panel = next(shown_panel(qtbot, corpora.CorporaPanel, copied_ws, 1400, 900))
    ids = [panel.corpus_list.item(i).data(0x0100) for i in range(panel.corpus_list.count())]
    qtbot.waitUntil(lambda: panel.corpus is not None, timeout=10000)
    assert panel.corpus.name == "demo"
    held["id"] = ids[1]  # spare
    panel.corpus_list.setCurrentRow(1)
    slow = panel.jobs.jobs[-1]
    panel.corpus_list.setCurrentRow(0)  # demo again, while spare is still being read
    qtbot.waitUntil(lambda: panel.jobs.jobs[-1].done, timeout=10000)
    release.set()
    qtbot.waitUntil(lambda: slow.done, timeout=10000)
    qtbot.wait(50)
    assert panel.corpus.name == "demo" and panel.stats_label.text().startswith("<table")
    assert errors == []
    panel.jobs.shutdown()
    panel.workspace.close()

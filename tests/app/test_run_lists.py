"""The screens' lists of runs: a cancelled run that saved a checkpoint is listed (marked
cancelled) and translates, one that saved none is not listed; the Attention screen shows
exactly the checked runs (unchecking one removes it from heatmaps, pair list and tables,
checking one computes it); a run has one colour in every screen (curves, swatches, heatmap
titles); the Translate screen checks the runs last translated with after a restart."""
from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import QRectF, QSettings, Qt
from PySide6.QtGui import QColor

from app import workers
from app.panels.attention import AttentionPanel
from app.panels.translate import TranslatePanel
from core.workspace.store import Workspace
from tests.app.conftest import shown_panel, wait_for_pairs
from tests.app.pictures import colour_count


@pytest.fixture
def cancelled_ws(tmp_path, trained_ws):
    """A copy of the trained workspace where 'locp' was cancelled (its checkpoints kept)
    and a run 'never' was cancelled before saving any."""
    import shutil

    from core.workspace.store import Workspace
    from tests.app.conftest import tiny_config

    root = tmp_path / "ws"
    shutil.copytree(trained_ws, root)
    with Workspace.open(root) as ws:
        ids = {r.name: r.id for r in ws.list_runs()}
        ws.update_run(ids["locp"], status="cancelled")
        never = ws.create_run("never", tiny_config("never", 10).to_dict(), 1)
        ws.update_run(never, status="cancelled")
    return root


@pytest.mark.parametrize("panel_class", [TranslatePanel, AttentionPanel])
def test_cancelled_run_with_a_checkpoint_is_listed_and_marked(qtbot, cancelled_ws,
                                                              panel_class):
    panel = next(shown_panel(qtbot, panel_class, cancelled_ws, 1400, 900))
    rows = [panel.models.item(i).text() for i in range(panel.models.count())]
    assert [r.split("  ")[0] for r in rows] == ["1: glob", "2: locp"]  # not 'never'
    assert "cancelled" in rows[1] and "cancelled" not in rows[0]
    panel.jobs.shutdown()
    panel.workspace.close()


def test_a_cancelled_run_with_a_checkpoint_translates(qtbot, cancelled_ws, errors):
    panel = next(shown_panel(qtbot, TranslatePanel, cancelled_ws, 1400, 900))
    locp = next(r.id for r in panel.workspace.list_runs() if r.name == "locp")
    panel.models.set_checked([locp])
    panel.set_sentences(["Hola.", "La casa verde."])
    job = panel.translate()
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    assert job.state == workers.FINISHED, errors
    # the run's checkpoint was loaded: both sentences have a translation and attention
    assert len(panel.translations) == 2
    assert panel.heatmap.matrix.shape[1] == len(panel.translations[0].source_tokens)
    panel.jobs.shutdown()
    panel.workspace.close()


@pytest.fixture
def attention(qtbot, trained_ws):
    yield from shown_panel(qtbot, AttentionPanel, trained_ws, 1400, 900)


def _titles(panel) -> list[str]:
    return [h.plot.titleLabel.text for h in panel.heatmaps if h.isVisibleTo(panel)]


def _model_column(table) -> list[str]:
    return [table.item(r, 0).text() for r in range(table.rowCount())]


def test_attention_screen_follows_the_checked_models(qtbot, attention, errors):
    panel = attention
    ids = {r.name: r.id for r in panel.workspace.list_runs()}
    panel.models.set_checked([ids["glob"], ids["locp"]])
    panel.pair_source.setCurrentText("Gold set")
    wait_for_pairs(qtbot, panel)
    job = panel.compute()
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    assert job.state == workers.FINISHED, errors
    panel.pair_list.setCurrentRow(0)
    assert any("locp" in t for t in _titles(panel))
    first = panel.pair_list.item(0)
    assert " / " in first.text()  # [AER glob / AER locp]
    shown = first.text().split("[", 1)[1].split("]")[0].split(" / ")
    assert first.toolTip().endswith(f"AER %: glob {shown[0]}, locp {shown[1]}")  # which is which

    panel.models.item(panel.models.run_ids().index(ids["locp"])).setCheckState(
        Qt.CheckState.Unchecked)
    for row in (0, 3):  # at once, and after choosing another pair
        panel.pair_list.setCurrentRow(row)
        titles = _titles(panel)
        assert any("glob" in t for t in titles) and not any("locp" in t for t in titles)
        item = panel.pair_list.item(row).text()
        assert item.split(". ", 1)[1].startswith("[") and " / " not in item.split("]")[0]
        assert [m.split(": ")[1] for m in _model_column(panel.corpus_table)] == ["glob"]
        assert [m.split(": ")[1] for m in _model_column(panel.aer_table)] == ["glob"]

    # checking a model that was not computed computes it, and the screen shows it
    panel.models.item(panel.models.run_ids().index(ids["locp"])).setCheckState(
        Qt.CheckState.Checked)
    qtbot.waitUntil(lambda: panel.job.done and any("locp" in t for t in _titles(panel)),
                    timeout=60000)
    assert [m.split(": ")[1] for m in _model_column(panel.corpus_table)] == ["glob", "locp"]


def test_a_run_has_one_colour_in_every_screen(qtbot, trained_ws, errors):
    from app.main_window import MainWindow
    from app.widgets.run_colours import run_colour

    window = MainWindow(trained_ws)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    ids = {r.name: r.id for r in window.workspace.list_runs()}
    label = {name: f"{rid}: {name}" for name, rid in ids.items()}
    # the first-listed run is not always the first colour: colours follow the run, so
    # showing locp alone in one screen gives it the same colour as beside glob elsewhere
    training = window.training
    training.runs_table.selectRow(1)  # locp only
    training._flush_points()
    assert training.ppl_plot.colour_of(label["locp"]) == run_colour(ids["locp"])
    evaluation = window.evaluation
    evaluation.table.selectAll()
    for name in ids:
        assert evaluation.curves.colour_of(label[name]) == run_colour(ids[name])
    assert run_colour(ids["glob"]) != run_colour(ids["locp"])
    # the Attention screen: the pickers' swatches and the heatmap titles
    attention = window.attention
    for row in range(attention.models.count()):
        rid = attention.models.run_ids()[row]
        icon = attention.models.item(row).icon().pixmap(12, 12).toImage()
        assert icon.pixelColor(6, 6).name().lower() == run_colour(rid).lower()
    attention.models.set_checked([ids["locp"], ids["glob"]])
    attention.pair_source.setCurrentText("Gold set")
    wait_for_pairs(qtbot, attention)
    job = attention.compute()
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    window.tabs.setCurrentWidget(attention)
    # the heatmaps are drawn (titled and laid out) after the job ends
    qtbot.waitUntil(lambda: all("AER" in h.plot.titleLabel.text
                                and h.plot.titleLabel.sceneBoundingRect().height() > 0
                                for h in attention.heatmaps[:2]), timeout=10000)
    qtbot.wait(50)
    for h in attention.heatmaps[:2]:
        title = h.plot.titleLabel
        rid = int(title.text.split(":")[0])
        image = window.grab(window.rect()).toImage()
        rect = window.mapFromGlobal(h.graphics.mapToGlobal(
            h.graphics.mapFromScene(title.sceneBoundingRect()).boundingRect().topLeft()))
        size = title.sceneBoundingRect().size().toSize()
        colour = QColor(run_colour(rid))
        assert colour_count(image, QRectF(rect.x(), rect.y(), size.width(), size.height()),
                      colour) > 10, title.text
    window.close()


def test_the_runs_last_translated_with_are_checked_after_a_restart(qtbot, trained_ws,
                                                                   tmp_path, errors):
    root = tmp_path / "ws"
    shutil.copytree(trained_ws, root)
    ws = Workspace.open(root)
    glob, locp = ws.run_id("glob"), ws.run_id("locp")
    # the newest run was cancelled after 176 steps; it has a last checkpoint
    stopped = ws.create_run("stopped", ws.get_run(glob).config, ws.get_run(glob).corpus_id)
    ws.update_run(stopped, status="cancelled", steps=176)
    shutil.copy(ws.run_dir(glob) / "last.pt", ws.run_dir(stopped) / "last.pt")
    first = TranslatePanel(workers.JobManager())
    qtbot.addWidget(first)
    first.set_workspace(ws)
    assert first.models.checked() == [locp]  # the newest finished, not the cancelled one
    first.models.set_checked([glob])
    first.set_sentences(["hola ."])
    job = first.translate()
    qtbot.waitUntil(lambda: job.done, timeout=30000)
    assert first.translated_by == [glob] and not errors
    # the workbench restarts: a new screen on the same workspace
    again = TranslatePanel(workers.JobManager())
    qtbot.addWidget(again)
    again.set_workspace(ws)
    assert again.models.checked() == [glob]
    assert QSettings().value("translate/last_runs")  # kept in the settings
    ws.delete_run(glob)  # the remembered run is gone: the newest finished one again
    again.models.set_checked([])
    again.refresh()
    assert again.models.checked() == [locp]
    first.jobs.shutdown()
    ws.close()

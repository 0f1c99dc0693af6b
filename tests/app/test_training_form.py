"""The Training screen's form and run list at work: Start, Queue and Cancel stay in view in a
1280 x 720 window (the form scrolls instead), a long corpus name is shown whole, a new form
starts from global attention and describes the chosen preset, the time budget is set and
shown again, and the Device column says "cpu" or "cuda:0" however the run recorded it
(the recorded text in its tooltip)."""
from __future__ import annotations

import pytest

from tests.app.conftest import shown_panel

LONG_NAME = "Europarl v7 German-English, cleaned and deduplicated, 2024 release"


@pytest.fixture
def form_ws(demo_ws, tiny):
    """The demo workspace plus a corpus with a long name and three runs that recorded
    their device the ways a workspace holds them."""
    from core.data.readers import read_parallel
    from core.workspace.store import Workspace
    from tests.app.conftest import DEMO

    with Workspace.open(demo_ws) as ws:
        corpus = read_parallel(DEMO / "demo.es", DEMO / "demo.en", "es", "en", name=LONG_NAME)
        ws.add_corpus(corpus, LONG_NAME, format="parallel")
        for name, device in (("a", "CPU, 2 threads"), ("b", "NVIDIA H100 80GB HBM3 (cuda:0)"),
                             ("c", "cpu")):
            run = ws.create_run(name, tiny(name, 5).to_dict(), 1)
            ws.update_run(run, status="finished", device=device)
    return demo_ws


@pytest.fixture
def small_window(qtbot, form_ws):
    from app.main_window import MainWindow

    window = MainWindow(form_ws)
    qtbot.addWidget(window)
    window.resize(1280, 720)
    window.show()
    window.tabs.setCurrentWidget(window.training)
    qtbot.waitExposed(window)
    qtbot.wait(50)
    yield window
    window.close()


def _fully_visible(widget) -> bool:
    """The widget is drawn whole: nothing of it is scrolled away or clipped."""
    return widget.isVisible() and widget.visibleRegion().boundingRect() == widget.rect()


def test_start_and_queue_stay_visible_at_1280x720(qtbot, small_window):
    # no screen makes the window wider than 1280 (the Attention screen with four
    # heatmaps side by side neither)
    for tab in small_window.panels.values():
        small_window.tabs.setCurrentWidget(tab)
        qtbot.wait(10)
        assert (small_window.width(), small_window.height()) == (1280, 720), tab
    small_window.attention._layout_heatmaps(4)
    qtbot.wait(10)
    assert small_window.width() == 1280
    small_window.tabs.setCurrentWidget(small_window.training)
    qtbot.wait(10)
    panel = small_window.training
    for button in (panel.start_button, panel.queue_button, panel.cancel_button):
        assert _fully_visible(button), button.text()
        bottom = button.mapTo(small_window, button.rect().bottomLeft()).y()
        assert bottom <= small_window.height()
    # the form scrolls instead (it is taller than what is left)
    assert panel.form_scroll.verticalScrollBar().maximum() > 0


def test_corpus_box_shows_the_whole_name(small_window):
    panel = small_window.training
    panel.corpus.setCurrentIndex(panel.corpus.findData(2))
    text = panel.corpus.currentText()
    assert text.startswith(LONG_NAME)
    needed = panel.corpus.fontMetrics().horizontalAdvance(text)
    assert panel.corpus.width() >= needed + 16  # text plus the arrow
    assert _fully_visible(panel.corpus)
    assert panel.form_scroll.horizontalScrollBar().maximum() == 0  # not scrolled away


def test_custom_starts_from_global_attention_and_presets_are_described(qtbot, form_ws):
    from app.panels.training import TrainingPanel
    from core.config import load_preset

    panel = next(shown_panel(qtbot, TrainingPanel, form_ws, 1400, 900))
    assert panel.preset.currentText() == "(custom)"
    assert panel.attention.currentText() == "global" and panel.family.currentText() == "luong"
    assert panel.config().model.attention == "global"
    panel.preset.setCurrentText("demo")
    assert panel.preset_note.text() == load_preset("demo").description
    assert panel.preset_note.isVisible()
    assert panel.preset_note.geometry().top() >= panel.preset.geometry().bottom()
    panel.jobs.shutdown()
    panel.workspace.close()


def test_the_form_sets_and_shows_a_time_budget(qtbot, form_ws):
    from app.panels.training import TrainingPanel

    panel = next(shown_panel(qtbot, TrainingPanel, form_ws, 1400, 900))
    assert panel.config().train.max_minutes == 0.0
    panel.max_minutes.setValue(90.5)
    cfg = panel.config()
    assert cfg.train.max_minutes == 90.5
    cfg.train.max_minutes = 12.0
    panel.set_config(cfg)  # e.g. a stored run's config shown again
    assert panel.max_minutes.value() == 12.0 and panel.config().train.max_minutes == 12.0
    panel.jobs.shutdown()
    panel.workspace.close()


def test_device_column_says_the_same_kind_of_thing(qtbot, form_ws):
    from app.panels.training import TrainingPanel
    from app.panels.training_runs import RUN_COLUMNS

    panel = next(shown_panel(qtbot, TrainingPanel, form_ws, 1400, 900))
    col = RUN_COLUMNS.index("Device")
    cells = [panel.runs_table.item(r, col) for r in range(panel.runs_table.rowCount())]
    assert [c.text() for c in cells] == ["cpu", "cuda:0", "cpu"]
    assert [c.toolTip() for c in cells] == ["CPU, 2 threads", "NVIDIA H100 80GB HBM3 (cuda:0)", ""]
    panel.jobs.shutdown()
    panel.workspace.close()

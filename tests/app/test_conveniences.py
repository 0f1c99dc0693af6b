"""Issue #19 items 8-15: what a finished desktop tool offers, seen in the rendered widgets."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage

from app.widgets.gate_strip import GateStrip
from app.widgets.heatmap import AttentionHeatmap
from app.widgets.heatmap_legend import GOLD, POSITION, PREDICTED
from tests.app.conftest import job_result, shown_panel, wait_for_pairs


def _near(c: QColor, ref: QColor, tol: int = 40) -> bool:
    return abs(c.red() - ref.red()) + abs(c.green() - ref.green()) + abs(c.blue() - ref.blue()) < tol


def _count(image: QImage, rect: QRectF, ref: QColor) -> int:
    r = rect.toAlignedRect().intersected(image.rect())
    return sum(1 for x in range(r.left(), r.right()) for y in range(r.top(), r.bottom())
               if _near(image.pixelColor(x, y), ref))


# --- 11. legends: the gold squares, the red dots and the band are named ---------------------
def test_legend_names_the_overlays_on_screen_and_in_the_export(qtbot, tmp_path):
    h = AttentionHeatmap()
    qtbot.addWidget(h)
    h.resize(560, 460)
    h.show()
    qtbot.waitExposed(h)
    src, tgt = ["la", "casa", "verde", "."], ["the", "green", "house", ".", "</s>"]
    h.set_matrix(np.full((5, 4), 0.1), src, tgt)
    assert h.legend.labels() == []  # nothing drawn, nothing explained
    h.set_gold({(0, 0), (3, 3)}, {(0, 0), (1, 2)})
    h.set_predicted({(0, 0), (2, 1)})
    h.set_positions(np.array([0.0, 1.0, 2.0, 3.0, 3.0]), window=1)
    qtbot.wait(50)
    assert h.legend.labels() == ["gold link: sure", "gold link: possible", "extracted alignment",
                                 "predicted position p_t", "window p_t \u00b1 D"]
    # drawn under the heatmap: its glyphs in the overlay colours, in the window ...
    legend_rect = h.graphics.mapFromScene(h.legend.sceneBoundingRect()).boundingRect()
    plot_rect = h.graphics.mapFromScene(h.plot.sceneBoundingRect()).boundingRect()
    assert legend_rect.top() >= plot_rect.bottom() - 1 and legend_rect.height() >= 16
    screen = h.graphics.grab().toImage()
    for colour in (GOLD, PREDICTED, POSITION):
        assert _count(screen, QRectF(legend_rect), colour) > 3, colour.name()
    # ... and in the exported figure (PNG at 96 dpi: scene pixels = image pixels)
    path = h.export(tmp_path / "fig.png", dpi=96)
    exported = QImage(str(path))
    figure = h.graphics.ci.sceneBoundingRect()
    in_export = h.legend.sceneBoundingRect().translated(-figure.left(), -figure.top())
    for colour in (GOLD, PREDICTED, POSITION):
        assert _count(exported, in_export, colour) > 3, colour.name()
    # a context model's gate strip sits between the heatmap and the key
    strip = GateStrip(h)
    strip.set_gates(np.array([1.0, 0.5, 0.2, 0.9]), src)
    qtbot.wait(50)
    assert strip.plot.scene() is h.graphics.scene()
    assert h.legend.sceneBoundingRect().top() >= strip.plot.sceneBoundingRect().bottom() - 1
    # unchecking an overlay removes its entry
    h.set_predicted(set())
    assert "extracted alignment" not in h.legend.labels()


# --- 13. the training form ------------------------------------------------------------------
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


# --- 14. evaluation: headers that say what they are, one AER convention, one-file report ------
@pytest.fixture
def scored_ws(demo_ws, tiny):
    from core.workspace.store import Workspace

    with Workspace.open(demo_ws) as ws:
        run = ws.create_run("scored", tiny("scored", 5).to_dict(), 1)
        ws.update_run(run, status="finished", device="cpu")
        ws.add_evaluation(run, "test", {"bleu": 12.345, "chrf": 40.0, "ter": 80.5,
                                        "perplexity": 35.5, "best_dev_ppl": 31.25,
                                        "aer": 0.70312, "sentences": 46})
    return demo_ws


def test_headers_aer_in_percent_and_a_self_contained_report(qtbot, scored_ws, tmp_path):
    from app.panels.evaluation import METRIC_KEYS, OPTIONAL_KEYS, EvaluationPanel
    from core.evaluate.aer import percent_text
    from core.workspace.store import Workspace

    panel = next(shown_panel(qtbot, EvaluationPanel, scored_ws, 1600, 900))
    optional = [2 + METRIC_KEYS.index(k) for k in OPTIONAL_KEYS]
    assert all(panel.table.isColumnHidden(c) for c in optional)  # nothing fills them yet
    with Workspace.open(scored_ws) as ws:  # a contrastive evaluation and its gates
        run = ws.list_runs()[0].id
        ws.add_evaluation(run, "contrastive:pron.json", {"contrastive_accuracy": 62.5,
                                                         "examples": 8})
        ws.add_evaluation(run, "gates:pron.json", {"mean_gate watched words": 0.41234,
                                                   "mean_gate other words": 0.9})
    panel.refresh()
    header = panel.table.horizontalHeader()
    texts = [panel.table.horizontalHeaderItem(c).text() for c in range(panel.table.columnCount())]
    assert texts == ["Run", "Test set", "BLEU (test)", "chrF (test)", "TER (test)",
                     "test perplexity", "best dev perplexity", "AER % (gold set)",
                     "contrastive %", "gate: watched / other", "test sentences"]
    for c, text in enumerate(texts):  # each header is drawn whole, with an explanation
        assert header.sectionSize(c) >= header.fontMetrics().horizontalAdvance(text)
        assert panel.table.horizontalHeaderItem(c).toolTip()
    by_test = {panel.table.item(r, 1).text(): {t: panel.table.item(r, c).text()
                                                for c, t in enumerate(texts)}
               for r in range(panel.table.rowCount())}
    cells = by_test["test"]
    assert cells["AER % (gold set)"] == "70.3" == percent_text(0.70312)
    assert cells["best dev perplexity"] == "31.25" and cells["test perplexity"] == "35.5"
    assert by_test["contrastive:pron.json"]["contrastive %"] == "62.5"
    assert by_test["gates:pron.json"]["gate: watched / other"] == "0.412 / 0.900"
    assert not any(panel.table.isColumnHidden(c) for c in range(len(texts)))
    assert by_test["gates:pron.json"]["BLEU (test)"] == "–"
    # the HTML report: the same numbers, one file with its figures inside
    folder = tmp_path / "out"
    folder.mkdir()
    report = job_result(qtbot, panel.write_report(folder / "report.html"))
    assert [p.name for p in folder.iterdir()] == ["report.html"]
    html = report.read_text(encoding="utf-8")
    assert "<th>AER % (gold set)</th>" in html and "<td>70.3</td>" in html
    assert html.count('src="data:image/png;base64,') == 3
    panel.jobs.shutdown()
    panel.workspace.close()


def test_cli_tables_use_the_same_aer_convention(demo_ws):
    """`align` and `demo` print aer_table: AER, precision and recall in %, one decimal."""
    from core.evaluate.attention_aer import aer_table
    from core.evaluate.goldsets import load_gold_set
    from core.workspace.store import Workspace

    with Workspace.open(demo_ws) as ws:
        gold = load_gold_set(ws, "demo-gold")
    table = aer_table({"gold itself": gold.alignments}, gold)
    assert "| gold itself | 0.0 | 100.0 | 100.0 |" in table.to_markdown()
    assert "<td>0.0</td><td>100.0</td><td>100.0</td>" in table.to_html()


# --- 12. dialogs and the window remember -----------------------------------------------------
def test_window_size_splitters_and_tab_come_back(qtbot, demo_ws):
    from app.main_window import MainWindow

    first = MainWindow(demo_ws)
    qtbot.addWidget(first)
    first.resize(1000, 650)
    first.show()
    qtbot.waitExposed(first)
    first.tabs.setCurrentWidget(first.attention)
    splitter = first._splitters()["Attention/1"]
    splitter.setSizes([500, sum(splitter.sizes()) - 500])
    qtbot.wait(20)
    sizes = splitter.sizes()
    first.close()

    second = MainWindow(demo_ws)
    qtbot.addWidget(second)
    second.show()
    qtbot.waitExposed(second)
    # the height comes back (a new window is 1400 x 900); the width is clamped to the
    # test's offscreen screen, 800 pixels wide, so is the window's minimum either way
    assert second.height() == 650
    assert second.tabs.currentWidget() is second.attention
    assert second._splitters()["Attention/1"].sizes() == sizes
    second.close()


def test_import_dialog_offers_the_last_language_pair(qtbot, tmp_path):
    from app.panels.import_dialog import ImportDialog

    first = ImportDialog(("parallel",), languages=("de", "en"))  # the newest corpus: de-en
    qtbot.addWidget(first)
    assert (first.src_lang.text(), first.tgt_lang.text()) == ("de", "en")
    first.src_lang.setText("es")
    first.tgt_lang.setText("en")
    for picker, name in zip(first.pickers, ("a.es", "a.en"), strict=False):
        (tmp_path / name).write_text("hola\n", encoding="utf-8")
        picker.edit.setText(str(tmp_path / name))
    first.accept()
    second = ImportDialog(("parallel",), languages=("de", "en"))
    qtbot.addWidget(second)
    assert (second.src_lang.text(), second.tgt_lang.text()) == ("es", "en")


def test_file_dialogs_open_in_the_last_folder_for_their_purpose(qtbot, tmp_path,
                                                                monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    from app import file_dialogs

    opened: list[str] = []
    docs, figs = tmp_path / "docs", tmp_path / "figs"
    docs.mkdir()
    figs.mkdir()
    answers = iter([(str(docs / "a.txt"), ""), (str(docs / "b.txt"), "")])
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda parent, title, start, *a: (opened.append(start),
                                                                       next(answers))[1]))
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda parent, title, start, *a: (opened.append(start),
                                                                       (str(figs / "f.svg"), ""))[1]))
    file_dialogs.ask_open_path(None, "Open document", "documents")
    file_dialogs.ask_save_path(None, "Export figure", "figures", "fig.png", "SVG (*.svg)")
    file_dialogs.ask_open_path(None, "Open document", "documents")
    file_dialogs.ask_save_path(None, "Export figure", "figures", "fig.png", "SVG (*.svg)")
    import os

    assert opened[0] != os.getcwd() and opened[0] == str(__import__("pathlib").Path.home())
    assert opened[2] == str(docs)  # documents: where the last document was
    assert opened[3] == str(figs / "fig.png")  # figures: their own last folder


# --- 15. About and keyboard shortcuts ----------------------------------------------------------
@pytest.fixture
def window(qtbot, demo_ws):
    from app.main_window import MainWindow

    w = MainWindow(demo_ws)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def test_about_names_the_versions_and_the_device(window, monkeypatch):
    from importlib import metadata

    import PySide6
    import torch
    from PySide6.QtCore import qVersion
    from PySide6.QtWidgets import QMessageBox

    from app.main_window import device_description

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "about",
                        staticmethod(lambda parent, title, text: shown.append(text)))
    about = next(a for m in window.menuBar().actions() if m.menu() is not None
                 for a in m.menu().actions() if a.text() == "&About")
    about.trigger()
    (text,) = shown
    for value in (metadata.version("nmt-workbench"), torch.__version__, qVersion(),
                  PySide6.__version__, device_description()):
        assert f"<b>{value}</b>" in text


def test_main_actions_have_shortcuts_listed_in_the_menus(qtbot, window, monkeypatch):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    in_menus = {a.text().replace("&", ""): a.shortcut().toString()
                for m in window.menuBar().actions() if m.menu() is not None
                for a in m.menu().actions()}
    expected = {"Open workspace…": "Ctrl+O", "Import corpus…": "Ctrl+I",
                "Start training": "Ctrl+Return", "Translate": "Ctrl+T",
                "Export figure…": "Ctrl+E", "Compute attention": "Ctrl+R",
                "Open document to translate…": "Ctrl+Shift+O"}
    assert {k: in_menus.get(k) for k in expected} == expected
    keys = [k for k in in_menus.values() if k]
    assert len(keys) == len(set(keys))  # no shortcut is bound twice (Qt would fire neither)
    listed: list[str] = []
    monkeypatch.setattr(QMessageBox, "information",
                        staticmethod(lambda parent, title, text: listed.append(text)))
    window._show_shortcuts()
    for keys in expected.values():
        assert f"<b>{keys}</b>" in listed[0]
    # a menu shortcut works from any screen: Ctrl+T shows the Translate screen
    window.tabs.setCurrentWidget(window.corpora)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=2000)
    qtbot.keyClick(window, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.translate


# --- 10. one colour per run, everywhere ------------------------------------------------------
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
        assert _count(image, QRectF(rect.x(), rect.y(), size.width(), size.height()),
                      colour) > 10, title.text
    window.close()


# --- 8. translate typed text --------------------------------------------------------------------
def test_typed_text_is_translated_with_its_attention(qtbot, trained_ws, errors):
    from app import workers
    from app.panels.translate import TranslatePanel

    panel = next(shown_panel(qtbot, TranslatePanel, trained_ws, 1400, 900))
    assert not panel.typed_button.isEnabled()  # nothing typed yet
    assert panel.typed.isVisible() and panel.typed_button.isVisible()
    panel.typed.setPlainText("La casa verde. Hola.\n\nEl gato.")
    assert panel.typed_button.isEnabled()
    panel.typed_button.click()
    job = panel.job
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    assert job.state == workers.FINISHED, errors
    assert panel.sources() == ["La casa verde.", "Hola.", "El gato."]
    assert len(panel.translations) == 3
    assert [panel.table.item(r, 1).text() for r in range(3)] == [t.text for t in panel.translations]
    # the selected sentence's attention, over its own words
    assert panel.heatmap.src_tokens == list(panel.translations[0].source_tokens)
    assert panel.heatmap.matrix.shape == (len(panel.translations[0].target_tokens) + 1,
                                          len(panel.translations[0].source_tokens))
    panel.jobs.shutdown()
    panel.workspace.close()


# --- 9. rename and delete corpora and runs ----------------------------------------------------
@pytest.fixture
def copied_ws(tmp_path, trained_ws):
    """A copy of the trained workspace (corpus 'demo', runs 1: glob, 2: locp) plus an
    unused corpus 'spare'."""
    import shutil

    from core.data.readers import read_parallel
    from core.workspace.store import Workspace
    from tests.app.conftest import DEMO

    root = tmp_path / "ws"
    shutil.copytree(trained_ws, root)
    with Workspace.open(root) as ws:
        ws.add_corpus(read_parallel(DEMO / "gold.es", DEMO / "gold.en", "es", "en",
                                    name="spare"), "spare", format="parallel")
    return root


@pytest.fixture
def dialogs(monkeypatch):
    """The manage dialogs replaced: answers to give, texts shown."""
    from app.panels import manage

    seen: dict[str, list[str]] = {"confirm": [], "refuse": []}
    answers = {"confirm": True, "name": None}
    monkeypatch.setattr(manage, "confirm", lambda parent, title, text: (
        seen["confirm"].append(text), answers["confirm"])[1])
    monkeypatch.setattr(manage, "refuse", lambda parent, title, text: seen["refuse"].append(text))
    monkeypatch.setattr(manage, "ask_name", lambda parent, title, current: answers["name"])
    return seen, answers


def _table_names(panel) -> list[str]:
    return [panel.runs_table.item(r, 0).text() for r in range(panel.runs_table.rowCount())]


def test_delete_a_run_names_what_goes_and_touches_nothing_else(qtbot, copied_ws,
                                                               dialogs):
    from app.panels.training import TrainingPanel

    seen, answers = dialogs
    panel = next(shown_panel(qtbot, TrainingPanel, copied_ws, 1400, 900))
    ws = panel.workspace
    glob, locp = ws.get_run("glob"), ws.get_run("locp")
    glob_files = sorted(p.name for p in glob.path.iterdir())
    panel.runs_table.selectRow(1)
    answers["confirm"] = False  # Cancel: nothing goes
    panel.delete_action.trigger()
    assert "locp" in seen["confirm"][0] and locp.path.is_dir()
    answers["confirm"] = True
    panel.delete_action.trigger()
    text = seen["confirm"][1]
    assert "\u201clocp\u201d" in text and "checkpoints" in text and "corpus and the other runs stay" in text
    assert _table_names(panel) == ["1: glob"]
    assert not locp.path.exists()
    assert sorted(p.name for p in glob.path.iterdir()) == glob_files
    assert [c.name for c in ws.list_corpora()] == ["demo", "spare"]
    panel.jobs.shutdown()
    ws.close()


def test_a_training_run_is_not_deleted(qtbot, copied_ws, dialogs):
    from app.panels.training import TrainingPanel

    seen, _ = dialogs
    panel = next(shown_panel(qtbot, TrainingPanel, copied_ws, 1400, 900))
    ws = panel.workspace
    ws.update_run("glob", status="running")
    panel.refresh()
    panel.runs_table.selectRow(0)
    panel.delete_action.trigger()
    assert seen["confirm"] == [] and "is training" in seen["refuse"][0]
    assert "Cancel it first" in seen["refuse"][0]
    assert _table_names(panel) == ["1: glob", "2: locp"] and ws.get_run("glob").path.is_dir()
    panel.jobs.shutdown()
    ws.close()


def test_rename_a_run_and_a_corpus(qtbot, copied_ws, dialogs, errors):
    from app.panels.corpora import CorporaPanel
    from app.panels.training import TrainingPanel

    _, answers = dialogs
    panel = next(shown_panel(qtbot, TrainingPanel, copied_ws, 1400, 900))
    panel.runs_table.selectRow(0)
    answers["name"] = "locp"  # taken: refused with the store's reason
    panel.rename_action.trigger()
    assert errors and "already exists" in errors[0][1]
    answers["name"] = "global-general"
    panel.rename_action.trigger()
    assert _table_names(panel) == ["1: global-general", "2: locp"]
    panel.jobs.shutdown()
    panel.workspace.close()

    corpora = next(shown_panel(qtbot, CorporaPanel, copied_ws, 1400, 900))
    corpora.corpus_list.setCurrentRow(1)
    answers["name"] = "spare pairs"
    corpora.rename_action.trigger()
    assert corpora.corpus_list.item(1).text().startswith("spare pairs\n")
    assert corpora.workspace.get_run(2).corpus_id == 1  # the runs keep their corpus
    corpora.jobs.shutdown()
    corpora.workspace.close()


def test_delete_a_corpus_only_when_no_run_uses_it(qtbot, copied_ws, dialogs):
    from app.panels.corpora import CorporaPanel

    seen, _ = dialogs
    panel = next(shown_panel(qtbot, CorporaPanel, copied_ws, 1400, 900))
    ws = panel.workspace
    panel.corpus_list.setCurrentRow(0)  # demo: used by both runs
    panel.delete_action.trigger()
    assert seen["confirm"] == []
    assert "used by 2 runs (1: glob, 2: locp)" in seen["refuse"][0]
    assert panel.corpus_list.count() == 2
    panel.corpus_list.setCurrentRow(1)  # spare: no run
    panel.delete_action.trigger()
    assert "\u201cspare\u201d" in seen["confirm"][0] and "No run uses it" in seen["confirm"][0]
    assert [panel.corpus_list.item(i).text().split("\n")[0]
            for i in range(panel.corpus_list.count())] == ["demo"]
    assert [r.name for r in ws.list_runs()] == ["glob", "locp"]
    panel.jobs.shutdown()
    ws.close()


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

"""Issue #19's faults 1-7, each seen where the user sees it: the file written, the
window's geometry, the pixels of the rendered widget, the picker's rows."""
from __future__ import annotations

import logging
import threading
import xml.etree.ElementTree as ET

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QFileDialog

from app import workers
from app.panels.attention import AttentionPanel
from app.panels.translate import TranslatePanel
from app.widgets.curves import CurvesPlot
from app.widgets.heatmap import AttentionHeatmap
from tests.app.conftest import export_chosen, shown_panel, wait_for_pairs


def _heatmap(qtbot, src, tgt, matrix=None, size=(520, 420)) -> AttentionHeatmap:
    h = AttentionHeatmap()
    qtbot.addWidget(h)
    h.resize(*size)
    h.show()
    qtbot.waitExposed(h)
    h.set_matrix(np.zeros((len(tgt), len(src))) if matrix is None else matrix, src, tgt)
    return h


def _pixel(h: AttentionHeatmap, image, x: float, y: float) -> QColor:
    """The colour drawn at view coordinates (x = source, y = target) of the heatmap."""
    scene = h.plot.getViewBox().mapViewToScene(QPointF(x, y))
    point = h.graphics.mapFromScene(scene)
    return image.pixelColor(point.x(), point.y())


# --- 1. figure export as SVG / PDF: the chosen filter decides the suffix -------------------
@pytest.fixture
def save_dialog(monkeypatch):
    """Replace the save dialog by the user's answers: (typed name, chosen filter); records
    the folder each dialog opened in."""
    answers: list[tuple[str, str]] = []
    opened_in: list[str] = []

    def fake(parent, caption, start, filters, selected="", *args):
        opened_in.append(start)
        return answers.pop(0)

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake))
    monkeypatch.setattr("app.panels.figures.QInputDialog.getInt",
                        staticmethod(lambda *a, **k: (96, True)))
    return answers, opened_in


def test_export_follows_the_chosen_filter(qtbot, tmp_path, save_dialog, errors):
    from app.panels.figures import export_dialog

    answers, opened_in = save_dialog
    h = _heatmap(qtbot, ["a", "b"], ["x", "y"])
    answers += [(str(tmp_path / "typed"), "SVG (*.svg)"),              # no suffix: SVG
                (str(tmp_path / "attention.png"), "PDF (*.pdf)"),     # the default's: PDF
                (str(tmp_path / "named.pdf"), "SVG (*.svg)"),         # the typed name wins
                (str(tmp_path / "plain"), "PNG image (*.png)")]
    written = [export_dialog(h, h.export, "attention") for _ in range(4)]
    assert errors == []
    assert written == [tmp_path / "typed.svg", tmp_path / "attention.pdf",
                       tmp_path / "named.pdf", tmp_path / "plain.png"]
    assert ET.fromstring((tmp_path / "typed.svg").read_bytes()).tag.endswith("svg")
    assert (tmp_path / "attention.pdf").read_bytes()[:5] == b"%PDF-"
    assert (tmp_path / "named.pdf").read_bytes()[:5] == b"%PDF-"
    assert (tmp_path / "plain.png").read_bytes()[:4] == b"\x89PNG"
    assert not (tmp_path / "attention.png").exists()
    # the next dialog for figures opens where the last figure went (item 12)
    assert opened_in[-1].startswith(str(tmp_path))


def test_translation_export_follows_the_chosen_filter(qtbot, tmp_path, save_dialog,
                                                      errors):
    answers, _ = save_dialog
    jobs = workers.JobManager()
    panel = TranslatePanel(jobs)
    qtbot.addWidget(panel)
    panel.set_sentences(["Hola."], ["Hello."])
    answers.append((str(tmp_path / "doc"), "XLIFF 1.2 (*.xlf *.xliff)"))
    export_chosen(qtbot, panel)
    assert errors == []
    assert b"<xliff" in (tmp_path / "doc.xlf").read_bytes()
    jobs.shutdown()


# --- 2. a long status message never widens the window --------------------------------------
def test_long_failure_message_elides_and_window_keeps_its_size(qtbot, trained_ws,
                                                               monkeypatch, errors,
                                                               caplog):
    from app.main_window import MainWindow
    from core.errors import CheckpointError

    window = MainWindow(trained_ws)
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    window.tabs.setCurrentWidget(window.translate)
    panel = window.translate
    message = "cannot load " + "/a/very/long/folder/name" * 60 + "/last.pt: corrupt file"

    def failing(*args, **kwargs):
        raise CheckpointError(message)

    monkeypatch.setattr("app.panels.translate.translate_job", failing)
    panel.set_sentences(["Hola."])
    caplog.set_level(logging.INFO, logger="app.jobs")
    job = panel.translate()
    qtbot.waitUntil(lambda: job.done, timeout=10000)
    qtbot.wait(50)  # layouts settle
    assert panel.status.text() == f"Failed: {message}"
    assert window.width() == 1400  # the window did not grow to fit the message
    label_right = panel.status.mapTo(window, panel.status.rect().topRight()).x()
    assert label_right <= window.width()
    assert panel.status.toolTip() == f"Failed: {message}"
    shown = panel.status.shown_text()
    assert shown.startswith("Failed: cannot load") and shown.endswith("\u2026")
    assert message in caplog.text  # and in the job log
    # a job with a long name (a corpus named at length) in the status bar: same
    gate = threading.Event()
    long_job = window.jobs.submit(lambda ctx: gate.wait(5), name="Import " + "corpus " * 80)
    qtbot.waitUntil(lambda: "Import corpus" in window.jobs_label.text(), timeout=5000)
    qtbot.wait(50)
    assert window.width() == 1400
    assert window.jobs_label.mapTo(window, window.jobs_label.rect().topRight()).x() <= 1400
    assert "Import " + "corpus " * 80 in window.jobs_label.toolTip()  # elided, whole here
    gate.set()
    qtbot.waitUntil(lambda: long_job.done, timeout=5000)
    window.close()


# --- 3. the Attention screen follows the checked models ----------------------------------
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
    assert " / " in panel.pair_list.item(0).text()  # [AER glob / AER locp]

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


# --- 4. every token label is drawn, a long first word too ----------------------------------
def test_long_first_source_word_has_its_label(qtbot):
    src = ["Internationalisierungsbestrebungen", "a", "b", "c"]
    tgt = ["Donaudampfschifffahrtsgesellschaftskapitän", "x", "y"]
    h = _heatmap(qtbot, src, tgt)
    qtbot.wait(50)
    image = h.graphics.grab().toImage()

    def dark_pixels(axis, index) -> int:
        """Text-coloured pixels in the axis band of token `index`."""
        vb = h.plot.getViewBox()
        if axis is h.x_axis:
            a = h.graphics.mapFromScene(vb.mapViewToScene(QPointF(index + 0.1, 0)))
            b = h.graphics.mapFromScene(vb.mapViewToScene(QPointF(index + 0.9, 0)))
            rect = h.graphics.mapFromScene(axis.sceneBoundingRect()).boundingRect()
            xs, ys = range(a.x(), b.x()), range(rect.top(), rect.bottom())
        else:
            a = h.graphics.mapFromScene(vb.mapViewToScene(QPointF(0, index + 0.1)))
            b = h.graphics.mapFromScene(vb.mapViewToScene(QPointF(0, index + 0.9)))
            rect = h.graphics.mapFromScene(axis.sceneBoundingRect()).boundingRect()
            xs, ys = range(rect.left(), rect.right()), range(a.y(), b.y())
        return sum(1 for x in xs for y in ys if image.pixelColor(x, y).value() < 110)

    for i in range(len(src)):
        assert dark_pixels(h.x_axis, i) > 5, f"source label {i} not drawn"
    for i in range(len(tgt)):
        assert dark_pixels(h.y_axis, i) > 5, f"target label {i} not drawn"
    # a long word is elided on the axis; the hover readout names it in full
    assert h.x_axis.height() <= h.x_axis.MAX_LABEL + 14
    assert h.y_axis.width() <= h.y_axis.MAX_LABEL + 14
    assert "Internationalisierungsbestrebungen" in h.describe(0, 0)
    assert "Donaudampfschifffahrtsgesellschaftskapitän" in h.describe(0, 0)


# --- 5. local-p's band and p_t line sit on their cells ------------------------------------
def test_window_band_and_p_t_cover_their_rows(qtbot):
    src = [f"s{i}" for i in range(6)]
    h = _heatmap(qtbot, src, ["t0", "t1", "t2"], size=(600, 420))
    # p_t: row 0 -> 0.3 (window cells 0-1), row 1 -> 2.6 (cells 2-4), row 2 -> 4.0 (3-5)
    h.set_positions(np.array([0.3, 2.6, 4.0]), window=1)
    qtbot.wait(50)
    image = h.graphics.grab().toImage()

    def tinted(x: float, y: float) -> bool:
        c = _pixel(h, image, x, y)
        return c.green() - c.red() > 8  # the green band (or line) over the white matrix

    # each row's band covers the row's whole height and exactly its window's cells
    assert tinted(1.9, 0.08) and tinted(0.1, 0.92)      # row 0: cells 0-1, top to bottom
    assert not tinted(2.2, 0.5)                          # cell 2 is outside row 0's window
    assert tinted(4.8, 1.5) and tinted(2.2, 1.08)        # row 1: cells 2-4
    assert not tinted(1.8, 1.5) and not tinted(5.5, 1.5)
    assert tinted(5.8, 2.92) and not tinted(2.8, 2.5)    # row 2: cells 3-5, bottom edge
    # the p_t line crosses each row at p_t + 0.5, over the whole row
    for t, p in enumerate((0.3, 2.6, 4.0)):
        c = _pixel(h, image, p + 0.5, t + 0.08)
        assert c.green() > 100 and c.red() < 120, (t, c.getRgb())


# --- 6. a cancelled run with a checkpoint stays usable --------------------------------------
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


# --- 7. a dev curve with one point is visible ---------------------------------------------
def test_single_point_series_is_drawn(qtbot):
    plot = CurvesPlot("Dev perplexity", "perplexity", log_y=True)
    qtbot.addWidget(plot)
    plot.resize(400, 300)
    plot.show()
    qtbot.waitExposed(plot)
    plot.add_points("1: tiny", "dev_ppl", [15], [42.0])
    qtbot.wait(50)
    colour = QColor(plot.colour_of("1: tiny"))
    image = plot.plot_widget.grab().toImage()
    view = plot.plot.getViewBox()
    centre = plot.plot_widget.mapFromScene(view.mapViewToScene(QPointF(15, np.log10(42.0))))
    near = [image.pixelColor(centre.x() + dx, centre.y() + dy)
            for dx in range(-2, 3) for dy in range(-2, 3)]
    assert any(abs(c.red() - colour.red()) + abs(c.green() - colour.green())
               + abs(c.blue() - colour.blue()) < 40 for c in near)



def test_a_long_title_never_widens_a_heatmap_past_its_place(qtbot):
    """A model name and AER in the title used to set the plot's minimum width: in a
    322-pixel heatmap the scene grew to 422 pixels and its last column, colour bar and key
    were cut off. Now everything drawn lies inside the visible view."""
    from app.widgets.heatmap import AttentionHeatmap

    h = AttentionHeatmap()
    qtbot.addWidget(h)
    h.resize(322, 470)
    h.show()
    h.set_title("1: tatoeba-luong-guided-alignment · layer 2 (mean of heads) · AER 83.3 %")
    src = "La trajeron el lunes por la mañana .".split()
    h.set_matrix(np.random.default_rng(0).random((8, 8)), src,
                 "They brought it on Monday morning . </s>".split())
    h.set_gold({(7, 6)}, {(1, 2)})
    qtbot.waitUntil(lambda: h.graphics.ci.geometry().width() <= h.graphics.viewport().width(),
                    timeout=3000)
    view = h.graphics.viewport().width()
    assert h.colorbar.sceneBoundingRect().right() <= view + 1
    assert h.legend.sceneBoundingRect().right() <= view + 1
    vb = h.plot.getViewBox()
    last_column = vb.mapViewToScene(pg.Point(8.0, 0.0)).x()  # the right edge of '.'
    assert last_column <= vb.sceneBoundingRect().right() + 1 <= view + 1
    assert h.plot.titleLabel.text.count("<br>") == 2  # one line per ' · ' part

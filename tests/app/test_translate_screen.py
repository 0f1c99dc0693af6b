"""The Translate screen's sentences and status lines: typed text is translated with each
sentence's attention over its own words; another document clears the last sentence's note
and the progress; a long status or failure message is elided (whole in its tooltip and
the job log) and widens neither the model list nor the window, nor does a long job name
in the status bar; editing a compared target updates its mark, its highlighted words and
the "only differing" filter."""
from __future__ import annotations

import logging
import threading

import numpy as np
import pytest

from app import workers
from app.panels.translate import TranslatePanel
from app.panels.translate_compare import BASELINE, DIFFERS, MARK, TARGET
from app.widgets.diff_view import RICH_ROLE
from core.infer.translate import Translation
from core.services.translation import Comparison
from tests.app.conftest import shown_panel


def fake(source: str, text: str, log_prob: float = -1.5) -> Translation:
    """A Translation as a model gives it (one attention row per output token + EOS)."""
    src, tgt = source.split(), text.split()
    attention = np.full((len(tgt) + 1, len(src)), 1.0 / len(src), dtype=np.float32)
    return Translation(source, src, list(range(len(tgt))), tgt, text, score=log_prob,
                       log_prob=log_prob, attention=attention)


@pytest.fixture
def panel(qtbot):
    p = TranslatePanel(workers.JobManager())
    qtbot.addWidget(p)
    p.resize(1280, 700)
    p.show()
    qtbot.waitExposed(p)
    return p


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


def test_another_document_clears_the_sentence_note_and_the_progress(panel):
    sources = [f"frase {k} ." for k in range(9)]
    panel.set_sentences(sources)
    panel.progress.setRange(0, 9)
    panel.progress.setValue(9)
    panel.show_translations([fake(s, f"sentence {k} .") for k, s in enumerate(sources)])
    panel.show_attention(8)
    assert panel.note.text().startswith("sentence 9: log p = -1.50")
    assert panel.progress.text() == "100%"
    panel.set_sentences(["otra frase ."])  # what opening another document does
    assert "log p" not in panel.note.text()
    assert panel.progress.text() != "100%" and panel.progress.value() < 9


def test_a_long_status_does_not_squeeze_the_model_list(panel, qtbot):
    panel.status.setText("ok")
    qtbot.wait(20)
    width = panel.models.width()
    panel.status.setText("Exported to " + "/a/very/long/folder/name" * 12 + "/translation.tmx")
    panel.layout().activate()
    qtbot.wait(20)
    assert panel.models.width() == width
    assert panel.status.toolTip().endswith("translation.tmx")  # the whole text, on hover


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


def test_editing_a_compared_target_updates_its_mark_and_the_filter(panel):
    sources = ["la casa .", "el perro ."]
    main = [fake(sources[0], "the house ."), fake(sources[1], "the dog .")]
    base = [fake(sources[0], "the home ."), fake(sources[1], "the dog .")]
    panel.set_sentences(sources)
    panel.show_comparison(Comparison(main, base, "ctx", "sent"))
    table = panel.table
    assert [table.item(r, MARK).text() for r in range(2)] == [DIFFERS, ""]
    table.item(0, TARGET).setText("the home .")  # the user's edit, as the editor sets it
    table.item(1, TARGET).setText("a dog .")
    assert [table.item(r, MARK).text() for r in range(2)] == ["", DIFFERS]
    assert table.item(1, TARGET).data(RICH_ROLE)[0] == "a dog ."  # highlights follow
    assert "<b" in table.item(1, TARGET).data(RICH_ROLE)[1]
    assert "<b" in table.item(1, BASELINE).data(RICH_ROLE)[1]
    panel.compare.only_differing.setChecked(True)
    assert [table.isRowHidden(r) for r in range(2)] == [True, False]


def test_compared_runs_long_names_are_cut_in_the_middle_and_whole_in_tooltips(panel):
    """Two demo runs' names in the comparison's headers: clipped at both ends before
    ('sards-subs-context-target (edita'), now elided in the middle so that the start and
    '(editable)' stay, and whole in the headers' tooltips."""
    from PySide6.QtCore import Qt

    from app.panels.translate_compare import set_comparison_columns

    set_comparison_columns(panel.table, True, "hansards-subs-context-target",
                           "hansards-subs-transformer")
    header = panel.table.horizontalHeader()
    assert header.textElideMode() == Qt.TextElideMode.ElideMiddle
    assert panel.table.horizontalHeaderItem(TARGET).toolTip() == \
        "hansards-subs-context-target (editable)"
    assert panel.table.horizontalHeaderItem(BASELINE).toolTip() == \
        "Baseline: hansards-subs-transformer"

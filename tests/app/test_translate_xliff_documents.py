"""An XLIFF of several documents on the Translate screen: each <file> is translated on
its own (a context model's context never crosses into the next document), and the
export keeps one <file> per document under its original name."""
from __future__ import annotations

from app.panels.translate import TranslatePanel
from core.formats.xliff import read_xliff
from core.services import translation
from tests.app.conftest import export_chosen, shown_panel

PACKAGE = """<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
 <file original="library.txt" source-language="es" target-language="en" datatype="plaintext">
  <body><trans-unit id="1"><source>La casa es verde.</source></trans-unit>
   <trans-unit id="2"><source>Es muy bonita.</source></trans-unit></body></file>
 <file original="ferry.txt" source-language="es" target-language="en" datatype="plaintext">
  <body><trans-unit id="1"><source>Dijo que vendría el lunes.</source></trans-unit></body></file>
</xliff>
"""


def test_each_file_of_an_xliff_is_translated_and_exported_apart(qtbot, trained_ws, tmp_path,
                                                                 monkeypatch):
    source = tmp_path / "package.xlf"
    source.write_text(PACKAGE, encoding="utf-8")
    calls, translate = [], translation.translate
    monkeypatch.setattr(translation, "translate", lambda session, sentences, **kw: (
        calls.append(list(sentences)) or translate(session, sentences, **kw)))
    panel = next(shown_panel(qtbot, TranslatePanel, trained_ws, 1200))
    panel.models.set_checked([panel.workspace.run_id("glob")])
    job = panel.open_document(source)
    qtbot.waitUntil(lambda: job.done, timeout=10000)
    job = panel.translate()
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    assert calls == [["La casa es verde.", "Es muy bonita."], ["Dijo que vendría el lunes."]]
    out = tmp_path / "package_en.xlf"
    monkeypatch.setattr("app.panels.translate_output.ask_save_path", lambda *a, **k: str(out))
    export_chosen(qtbot, panel)
    back = read_xliff(out)
    assert [(r.doc_id, r.id, r.source) for r in back] == [
        ("library.txt", "1", "La casa es verde."), ("library.txt", "2", "Es muy bonita."),
        ("ferry.txt", "1", "Dijo que vendría el lunes.")]
    assert [r.translation for r in back] == panel.targets()
    panel.jobs.shutdown()
    panel.workspace.close()


def test_a_comparison_of_an_xliff_translates_each_file_apart(qtbot, trained_ws, tmp_path,
                                                             monkeypatch):
    """Compare with baseline on the same package: both runs translate each <file> on its
    own, and the rows hold each sentence's own translations."""
    source = tmp_path / "package.xlf"
    source.write_text(PACKAGE, encoding="utf-8")
    calls, translate = [], translation.translate
    monkeypatch.setattr(translation, "translate", lambda session, sentences, **kw: (
        calls.append((session.names[0], list(sentences))) or translate(session, sentences, **kw)))
    panel = next(shown_panel(qtbot, TranslatePanel, trained_ws, 1200))
    panel.models.set_checked([panel.workspace.run_id("glob")])
    job = panel.open_document(source)
    qtbot.waitUntil(lambda: job.done, timeout=10000)
    panel.compare.enabled.setChecked(True)
    panel.compare.baseline.setCurrentIndex(
        panel.compare.baseline.findData(panel.workspace.run_id("locp")))
    assert panel.compare.wanted() == panel.workspace.run_id("locp")
    job = panel.translate()
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    first, second = ["La casa es verde.", "Es muy bonita."], ["Dijo que vendría el lunes."]
    assert calls == [("glob", first), ("glob", second), ("locp", first), ("locp", second)]
    alone = translate(panel.sessions.get(panel.workspace, [panel.workspace.run_id("glob")]),
                      second)
    assert panel.targets()[2] == alone[0].text
    panel.jobs.shutdown()
    panel.workspace.close()


def test_an_xliff_in_another_language_is_not_translated_and_the_screen_says_why(
        qtbot, trained_ws, tmp_path):
    """A German XLIFF with a Spanish -> English run checked: nothing is translated, and
    the status line names the file's language, the run's and what to do."""
    source = tmp_path / "brief.xlf"
    source.write_text(PACKAGE.replace('source-language="es"', 'source-language="de"'),
                      encoding="utf-8")
    panel = next(shown_panel(qtbot, TranslatePanel, trained_ws, 1200))
    panel.models.set_checked([panel.workspace.run_id("glob")])
    job = panel.open_document(source)
    qtbot.waitUntil(lambda: job.done, timeout=10000)
    assert panel.translate() is None
    assert panel.status.toolTip().startswith("Not translated: brief.xlf says its source text "
                                             "is in 'de', but run 'glob' translates from 'es'") \
        or panel.status.text().startswith("Not translated: brief.xlf says its source text "
                                          "is in 'de', but run 'glob' translates from 'es'")
    assert panel.targets() == ["", "", ""]
    panel.jobs.shutdown()
    panel.workspace.close()

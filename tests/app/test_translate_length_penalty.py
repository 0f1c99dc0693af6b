"""The Translate screen's length penalty box: "run's" (each run's own alpha) by default,
a value the user sets for one translation otherwise; the job decodes with it and the
decoding record and log say it."""
from __future__ import annotations

from app.panels.translate import TranslatePanel
from core.services.demo import ensure_demo_workspace
from tests.app.conftest import shown_panel
from tests.core.demo_sessions import sentences

SOURCES = sentences("es", 20)


def translate_with(qtbot, panel, alpha: float):
    panel.options.length_penalty.setValue(alpha)
    panel.set_sentences(SOURCES)
    job = panel.translate()
    qtbot.waitUntil(lambda: job.done, timeout=60000)
    return panel.targets(), panel.decoding


def test_the_length_penalty_box_sets_the_jobs_alpha(qtbot, tmp_path):
    root = ensure_demo_workspace(tmp_path / "demo")
    panel = next(shown_panel(qtbot, TranslatePanel, root, 1400))
    glob = panel.workspace.run_id("tatoeba-luong")
    panel.models.set_checked([glob])
    assert panel.options.length_penalty.text() == "run's"
    own, decoding = translate_with(qtbot, panel, -0.1)
    assert decoding["length_penalty"] == 0.0  # the Tatoeba runs ship with alpha 0
    longer, decoding = translate_with(qtbot, panel, 3.0)
    assert decoding["length_penalty"] == 3.0 and decoding["beam"] == 5
    session = panel.sessions.get(panel.workspace, [glob])
    assert session.length_penalty == 0.0  # the shared session keeps the run's own
    assert longer == [t.text for t in session.translate(SOURCES, beam=5, length_penalty=3.0)]
    assert own == [t.text for t in session.translate(SOURCES, beam=5)]
    assert sum(len(t.split()) for t in longer) > sum(len(t.split()) for t in own)
    panel.jobs.shutdown()
    panel.workspace.close()

"""Issue 48 item 7 on the Attention screen: "Read at: alignment head" over a run without
one says so (title, notes in full), and a new run (the runs refreshed after training)
keeps the computed results, or clears heatmaps and tables together."""
from __future__ import annotations

import pytest


@pytest.fixture
def computed(glob_on_gold):
    """The Attention screen with run 'glob' computed on the demo gold set, pair 1 shown."""
    return glob_on_gold[1]


def test_alignment_head_reading_without_a_head_says_what_is_shown(computed):
    panel = computed
    panel.reading.setCurrentIndex(panel.reading.findData("head"))
    title = panel.heatmaps[0].plot.titleLabel.text
    assert "no alignment head" in title and "predicting step" in title
    note = panel.aer_table.item(0, 4)
    assert note.text().startswith("no alignment head: predicting step shown")
    assert note.toolTip() == note.text()  # the whole note, however narrow the column
    whole_set = panel.corpus_table.item(0, 5)
    assert whole_set.text().startswith("no alignment head")
    assert whole_set.toolTip() == whole_set.text()


def test_a_new_run_keeps_the_results_shown(computed):
    panel = computed
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

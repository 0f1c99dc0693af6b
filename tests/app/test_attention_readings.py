"""The Attention screen's reading selector (core.evaluate.readings): the heatmap shows the
attention read one step later (no EOS row), its AER follows; a subword run's view is in
the gold's words; "alignment head" over a run without one says so in the title and in
both tables' notes, whole in their tooltips. (The whole-set table and `align --reading` are one computation,
core.evaluate.attention_aer.score_gold: tests/core/test_attention_view.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from core.evaluate.alignment import Alignment
from core.evaluate.goldsets import load_gold_set
from core.evaluate.readings import read_attention
from core.infer.session import TranslationSession
from core.services.attention_view import PairView, select_reading


def test_select_reading_moves_rows_links_and_aer():
    # 3 target tokens + EOS over 3 source tokens: each row attends to the previous word
    full = np.array([[0.8, 0.1, 0.1], [0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    view = PairView(1, "m", full.astype(np.float32), ["a", "b", "."], ["x", "y", "z"])
    gold = Alignment({(0, 0), (1, 1), (2, 2)})
    view.predicted = {(0, 0), (0, 1), (1, 2)}
    view.aer = 0.5  # as pair_view would have set it (tokens match the gold)
    shifted = select_reading(view, gold, "shift")
    assert shifted.matrix.shape == (3, 3) and shifted.row_labels == ["x", "y", "z"]
    assert np.allclose(shifted.matrix, full[1:])
    assert shifted.predicted == {(0, 0), (1, 1), (2, 2)} and shifted.aer == 0.0
    assert view.row_labels == ["x", "y", "z", "</s>"]  # the original keeps its EOS row
    assert select_reading(view, gold) is view
    # no sink: the final '.' is no candidate for the words x, y, z
    nosink = select_reading(view, gold, "predict", no_sink=True)
    assert nosink.matrix.shape == (4, 3) and nosink.matrix[:3, 2].max() == 0.0


def test_head_reading_shows_the_alignment_head_or_says_there_is_none():
    full = np.array([[0.8, 0.1, 0.1], [0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    head = np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.3, 0.3, 0.4]])
    gold = Alignment({(0, 0), (1, 1), (2, 2)})
    view = PairView(1, "m", full.astype(np.float32), ["a", "b", "."], ["x", "y", "z"],
                    alignment=head.astype(np.float32))
    view.predicted, view.aer = {(0, 0), (0, 1), (1, 2)}, 0.5
    shown = select_reading(view, gold, "head")
    assert np.allclose(shown.matrix, head) and shown.row_labels == ["x", "y", "z", "</s>"]
    assert shown.predicted == {(0, 0), (1, 1), (2, 2)} and shown.aer == 0.0
    plain = PairView(2, "p", full.astype(np.float32), ["a", "b", "."], ["x", "y", "z"])
    plain.predicted, plain.aer = view.predicted, 0.5
    fallback = select_reading(plain, gold, "head")
    assert np.allclose(fallback.matrix, full) and fallback.aer == 0.5
    assert fallback.note == "no alignment head: predicting step shown"
    # a note of its own comes after it: the cell is cut at its end
    subword = PairView(3, "s", full.astype(np.float32), ["a", "b", "."], ["x", "y", "z"],
                       note="subword attention summed to the gold words")
    assert select_reading(subword, gold, "head").note.startswith("no alignment head")


def test_screen_shift_reading_matches_the_core(glob_on_gold):
    window, panel = glob_on_gold
    ws = window.workspace
    glob = ws.run_id("glob")
    heat = panel.heatmaps[0]
    gold = load_gold_set(ws, "demo-gold")
    pair = gold.src_tokens[panel.order[0]], gold.tgt_tokens[panel.order[0]]
    forced = TranslationSession.open(ws, [glob]).force(" ".join(pair[0]), " ".join(pair[1]))
    # by default each run is read its own best way: one step earlier for a Luong run
    assert panel.reading.currentData() == "default"
    assert np.allclose(heat.image.image, read_attention(forced.attention, "previous"),
                       atol=1e-5)
    panel.reading.setCurrentIndex(panel.reading.findData("predict"))
    predict_rows = heat.image.image.shape
    assert predict_rows == forced.attention.shape  # with the EOS row
    panel.reading.setCurrentIndex(panel.reading.findData("shift"))
    assert heat.image.image.shape == (predict_rows[0] - 1, predict_rows[1])
    assert np.allclose(heat.image.image, forced.attention[1:], atol=1e-5)


def test_subword_runs_are_shown_and_scored_in_the_gold_words(tmp_path):
    """A sentencepiece run on a gold pair: the view is in the gold's words (pieces summed
    back, as `align` does), so the gold squares fall on their cells; its links at each
    reading are the ones `align` and the screen's whole-set table counted before they
    shared core.evaluate.attention_aer.score_gold."""
    from core.evaluate.aer import sentence_aer
    from core.services.attention_view import PairInput, pair_view
    from core.services.demo import DEMO_GOLD, bundled_models, ensure_demo_workspace
    from core.workspace.store import Workspace

    if not bundled_models():
        pytest.skip("resources/demo/models/ holds no bundled runs")
    root = ensure_demo_workspace(tmp_path / "demo")
    with Workspace.open(root) as ws:
        run = next(r for r in ws.list_runs() if r.name == "tatoeba-rnnsearch")
        session = TranslationSession.open(ws, [run.id])
        gold = load_gold_set(ws, DEMO_GOLD)
    k = 3
    pair = PairInput(" ".join(gold.src_tokens[k]), " ".join(gold.tgt_tokens[k]),
                     gold.alignments[k], gold.src_tokens[k], gold.tgt_tokens[k])
    view = pair_view(session, run.id, "rnn", pair, forced=True)
    assert view.src_tokens == gold.src_tokens[k] and view.tgt_tokens == gold.tgt_tokens[k]
    assert view.matrix.shape == (len(gold.tgt_tokens[k]), len(gold.src_tokens[k]))
    assert view.row_labels == gold.tgt_tokens[k]  # no EOS row at the word level
    measured = {"predict": {(1, 0), (1, 1), (1, 2), (3, 3), (3, 4), (7, 5), (7, 6)},
                "shift": {(1, 0), (1, 1), (3, 2), (3, 3), (7, 4), (7, 5), (7, 6)},
                "previous": {(1, 0), (1, 1), (1, 2), (1, 3), (3, 4), (3, 5), (7, 6)}}
    for reading, links in measured.items():
        shown = select_reading(view, gold.alignments[k], reading)
        assert shown.matrix.shape == view.matrix.shape and shown.row_labels == view.row_labels
        assert shown.predicted == links, reading
        assert shown.aer == pytest.approx(sentence_aer(links, gold.alignments[k]).aer)


def test_alignment_head_reading_without_a_head_says_what_is_shown(glob_attention):
    panel = glob_attention
    panel.reading.setCurrentIndex(panel.reading.findData("head"))
    title = panel.heatmaps[0].plot.titleLabel.text
    assert "no alignment head" in title and "predicting step" in title
    note = panel.aer_table.item(0, 4)
    assert note.text().startswith("no alignment head: predicting step shown")
    assert note.toolTip() == note.text()  # the whole note, however narrow the column
    whole_set = panel.corpus_table.item(0, 5)
    assert whole_set.text().startswith("no alignment head")
    assert whole_set.toolTip() == whole_set.text()

"""Attention screen, "Layer / head" selector: a Transformer run's heatmap can show the
averaged attention, one decoder layer (mean of its heads) or one head, exactly the
forced-decoding arrays; the pair's AER follows the matrix shown, and the whole-set table
adds a row for the layer or head shown beside the averaged attention's; an RNN run gets
no selector; under free decoding the selector is disabled."""
from __future__ import annotations

import numpy as np
import pytest

from app.panels.attention import AttentionPanel
from app.panels.attention_layers import FREE_TIP
from core.evaluate.aer import corpus_aer, sentence_aer
from core.evaluate.extract import argmax_alignment
from core.evaluate.goldsets import load_gold_set
from core.infer.session import TranslationSession
from core.services.attention_set import corpus_aer_rows
from core.services.attention_view import PairInput, pair_view
from tests.app.conftest import compute_on_gold, shown_panel

LAYERS, HEADS = 2, 2


def tiny_transformer(name: str, steps: int):
    from core.config import load_preset

    cfg = load_preset("transformer-cpu")
    cfg.name = name
    m = cfg.model
    m.d_model, m.ff_size, m.heads, m.enc_layers, m.dec_layers = 16, 32, HEADS, 1, LAYERS
    m.dropout = 0.0
    cfg.data.vocab, cfg.data.batch_tokens, cfg.data.batch_size, cfg.data.dev_sample = "word", 0, 32, 5
    cfg.train.max_steps, cfg.train.valid_every, cfg.train.device = steps, steps, "cpu"
    cfg.train.lr, cfg.train.label_smoothing = 0.003, 0.0
    return cfg


@pytest.fixture(scope="module")
def layers_ws(tmp_path_factory):
    """A demo workspace with a tiny Transformer 'tf' and a tiny RNN 'rnn' (20 steps each)."""
    from core.jobs import JobContext
    from core.services.training import create_run, train_run
    from tests.app.conftest import make_demo_workspace, tiny_config

    root = tmp_path_factory.mktemp("layers") / "ws"
    ws = make_demo_workspace(root)
    for cfg in (tiny_transformer("tf", 20), tiny_config("rnn", 20)):
        run_id = create_run(ws, "demo", cfg)
        assert train_run(ws, run_id, JobContext()).status == "finished"
    ws.close()
    return root


@pytest.fixture
def panel(qtbot, layers_ws):
    yield from shown_panel(qtbot, AttentionPanel, layers_ws, 1400)


def run_ids(panel) -> dict[str, int]:
    return {r.name: r.id for r in panel.workspace.list_runs()}


def test_layer_head_selector_shows_that_matrix_and_its_aer(qtbot, panel, errors):
    ids = run_ids(panel)
    compute_on_gold(qtbot, panel, [ids["tf"], ids["rnn"]], errors)
    panel.pair_list.setCurrentRow(2)
    index = panel.order[2]
    gold = load_gold_set(panel.workspace, "demo-gold")
    g = gold.alignments[index]
    forced = TranslationSession.open(panel.workspace, [ids["tf"]]).force(
        " ".join(gold.src_tokens[index]), " ".join(gold.tgt_tokens[index]))
    la = forced.layer_attention
    assert la.shape == (LAYERS, HEADS, len(forced.target_ids) + 1, len(forced.source_tokens))

    tf_box, rnn_box = panel.layer_boxes[:2]
    assert tf_box.isVisibleTo(panel) and tf_box.isEnabled()
    assert tf_box.count() == 1 + LAYERS * (1 + HEADS)
    assert not rnn_box.isVisibleTo(panel)  # an RNN has one attention: no selector
    heat = panel.heatmaps[0]
    assert np.allclose(heat.image.image, forced.attention, atol=1e-6)  # average by default
    corpus_before = [[panel.corpus_table.item(r, c).text() for c in range(5)]
                     for r in range(panel.corpus_table.rowCount())]
    rnn_image = np.array(panel.heatmaps[1].image.image)

    # layer 1, head 2 from the selector's own list
    tf_box.setCurrentIndex(tf_box.findText("layer 1 · head 2"))
    # the screen forces the gold pairs in batches, as `align` does: the pair forced alone
    # here agrees to float32 rounding
    assert np.allclose(heat.image.image, la[0, 1], atol=1e-6)
    layer = panel.views[(index, ids["tf"])].layers[0, 1]
    assert np.array_equal(heat.image.image, layer) and np.array_equal(heat.matrix, layer)
    predicted = argmax_alignment(layer, drop_eos=True)
    assert {(round(x - 0.5), round(y - 0.5))
            for x, y in zip(*heat.predicted_item.getData(), strict=True)} == set(predicted.sure)
    expected = sentence_aer(predicted, g).aer
    assert float(panel.aer_table.item(0, 1).text()) == pytest.approx(100 * expected, abs=0.05)
    assert "layer 1 · head 2" in panel.aer_table.item(0, 0).text()
    assert np.array_equal(panel.heatmaps[1].image.image, rnn_image)  # the other model stays

    # layer 2 (mean of heads), then back to the average
    panel.set_layer(0, 1)
    assert np.allclose(heat.image.image, la[1].mean(0), atol=1e-7)
    panel.set_layer(0)
    assert np.allclose(heat.image.image, forced.attention, atol=1e-6)
    assert float(panel.aer_table.item(0, 1).text()) == pytest.approx(
        100 * sentence_aer(argmax_alignment(forced.attention, drop_eos=True), g).aer, abs=0.05)

    # the choice stays while navigating; the whole-set table keeps the averaged
    # attention's rows and adds one for the head shown, over every gold pair
    panel.set_layer(0, 0, 1)
    panel.step(1)
    nxt = panel.views[(panel.current, ids["tf"])]
    assert np.array_equal(heat.image.image, nxt.layers[0, 1])
    corpus_after = [[panel.corpus_table.item(r, c).text() for c in range(5)]
                    for r in range(panel.corpus_table.rowCount())]
    assert len(corpus_before) == 2 and len(corpus_after) == 3
    assert corpus_after[0] == corpus_before[0] and corpus_after[2] == corpus_before[1]
    assert corpus_after[1][0] == f"layer 1 · head 2 of {ids['tf']}: tf"
    every = sorted(i for i, r in panel.views if r == ids["tf"])
    head_links = [argmax_alignment(panel.views[(i, ids["tf"])].layers[0, 1], drop_eos=True)
                  for i in every]
    head_aer = corpus_aer(head_links, [gold.alignments[i] for i in every]).aer
    assert float(corpus_after[1][2]) == pytest.approx(100 * head_aer, abs=0.05)
    assert corpus_after[1][1] == str(len(every))
    runs = [(r, f"{r}: {panel.names[r]}") for r in (ids["tf"], ids["rnn"])]
    rows = corpus_aer_rows(panel.views, gold.alignments, runs)
    assert float(corpus_after[0][2]) == pytest.approx(100 * rows[0][2], abs=0.05)
    assert np.allclose(panel.views[(index, ids["tf"])].matrix, forced.attention, atol=1e-6)
    panel.set_layer(0)  # back to the average: the extra row goes
    assert panel.corpus_table.rowCount() == 2


def test_free_decoding_disables_the_selector(panel):
    ids = run_ids(panel)
    session = TranslationSession.open(panel.workspace, [ids["tf"]])
    pair = PairInput("la casa es verde .", "the house is green .")
    free = pair_view(session, ids["tf"], "tf", pair, forced=False)
    assert free.layers is None and free.layered
    forced = pair_view(session, ids["tf"], "tf", pair, forced=True)
    assert forced.layers is not None and forced.layers.shape[:2] == (LAYERS, HEADS)
    rnn = pair_view(TranslationSession.open(panel.workspace, [ids["rnn"]]), ids["rnn"], "rnn",
                    pair, forced=True)
    assert rnn.layers is None and not rnn.layered

    panel.show_views([forced, rnn])
    panel.set_layer(0, 1, 0)
    assert np.array_equal(panel.heatmaps[0].image.image, forced.layers[1, 0])
    panel.show_views([free, rnn])  # free decoding: only the average
    box = panel.layer_boxes[0]
    assert box.isVisibleTo(panel) and not box.isEnabled() and box.toolTip() == FREE_TIP
    assert box.count() == 1 and panel.shown[0] is free
    assert np.allclose(panel.heatmaps[0].image.image, free.matrix)
    assert not panel.layer_boxes[1].isVisibleTo(panel)

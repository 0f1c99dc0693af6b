"""`align --layer N [--head H]`: a Transformer-family run's attention read from one
decoder layer or one head over the whole gold set (core.evaluate.attention_aer.at_layer),
as the Attention screen's "Layer / head" box shows it pair by pair."""
from __future__ import annotations

import re

import numpy as np
import pytest

from core.cli import run_cli
from core.evaluate.attention_aer import GoldForcing, at_layer
from core.infer.forced import ForcedResult
from core.services.demo import WPT03_GOLD, ensure_demo_workspace

RUN = "hansards-subs-transformer"


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory):
    return ensure_demo_workspace(tmp_path_factory.mktemp("layers") / "demo")


def aer_rows(out: str) -> dict[str, float]:
    """{system: AER %} of align's table."""
    rows = re.findall(r"^\| (.+?) \| ([0-9.]+) \|", out, flags=re.MULTILINE)
    return {name: float(aer) for name, aer in rows}


def test_at_layer_reads_one_layers_mean_or_one_head():
    rng = np.random.default_rng(0)
    layers = rng.random((3, 4, 6, 5))  # layers x heads x (T + 1) x S
    pair = GoldForcing(ForcedResult(0.0, [], layers[-1].mean(axis=0), layer_attention=layers),
                       list("abcde"), list("vwxyz"), list(range(5)), list(range(5)), False)
    assert np.allclose(at_layer(pair, 1).result.attention, layers[1].mean(axis=0))
    one = at_layer(pair, 0, 2)
    assert np.array_equal(one.result.attention, layers[0, 2])
    assert one.word_rows("shift").shape == (5, 5)
    assert np.array_equal(one.word_rows("shift"), layers[0, 2][1:])
    assert np.array_equal(pair.result.attention, layers[-1].mean(axis=0))  # left as it was
    with pytest.raises(ValueError, match="3 decoder layers of 4 heads"):
        at_layer(pair, 3)
    with pytest.raises(ValueError, match="3 decoder layers of 4 heads"):
        at_layer(pair, 0, 4)
    recurrent = GoldForcing(ForcedResult(0.0, [], layers[0, 0]), [], [], [], [], False)
    with pytest.raises(ValueError, match="one attention"):
        at_layer(recurrent, 0)


def test_one_head_of_the_shipped_transformer_aligns_the_trial_gold_far_better(demo_root,
                                                                              capsys):
    """The shipped sentence Transformer's first layer, second head, read one step later
    (Shift-Att), aligns the WPT-03 trial gold at 33.8 % AER where its averaged last
    layer reads 50.0 % (measured 2026-11-29; experiments/RESULTS.md, section H)."""
    base = ["--workspace", str(demo_root), "align", "--run", RUN, "--gold-set", WPT03_GOLD]
    assert run_cli(base) == 0
    averaged = aer_rows(capsys.readouterr().out)[f"{RUN} attention"]
    assert run_cli([*base, "--layer", "1", "--head", "2", "--reading", "shift",
                    "--reading", "predict", "--no-sink"]) == 0
    rows = aer_rows(capsys.readouterr().out)
    assert abs(averaged - 50.0) <= 0.5
    assert abs(rows[f"{RUN} attention layer 1 head 2 (shift, no sink)"] - 33.8) <= 0.5
    assert rows[f"{RUN} attention layer 1 head 2"] > 70  # the same head at predict
    assert run_cli([*base, "--layer", "2", "--no-sink"]) == 0  # the layer's mean of heads
    layer_two = aer_rows(capsys.readouterr().out)[f"{RUN} attention layer 2 (no sink)"]
    assert abs(layer_two - 40.2) <= 0.5


@pytest.mark.parametrize(("args", "message"), [
    (["--head", "2"], "--head H reads one head of a decoder layer: give --layer N too"),
    (["--layer", "4"], f"--layer 4: run '{RUN}' has decoder layers 1 to 3"),
    (["--layer", "1", "--head", "9"], f"--head 9: the layers of run '{RUN}' have heads 1 to 4"),
    (["--layer", "1", "--remember"], "leave out --remember"),
])
def test_layer_options_are_checked_before_any_model_loads(demo_root, capsys, monkeypatch,
                                                          args, message):
    def refuse(*_a, **_k):
        raise AssertionError("the error must come before a model is loaded")

    monkeypatch.setattr("core.services.translation.open_session", refuse)
    assert run_cli(["--workspace", str(demo_root), "align", "--run", RUN, "--gold-set",
                    WPT03_GOLD, *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_a_recurrent_run_has_no_layers_to_choose(demo_root, capsys, monkeypatch):
    monkeypatch.setattr("core.services.translation.open_session",
                        lambda *_a, **_k: pytest.fail("no model may load"))
    assert run_cli(["--workspace", str(demo_root), "align", "--run",
                    "hansards-luong-guided-head", "--gold-set", WPT03_GOLD,
                    "--layer", "1"]) == 2
    assert "(luong) has one attention, no decoder layers to choose among" in \
        capsys.readouterr().err


def test_the_screen_reads_a_subword_transformers_head_in_words_as_align_does(demo_root):
    """On a word-level gold set the subword Transformer's views are in the gold's words;
    the screen's "Layer / head" choice sums that head's pieces to words (its forced pair
    read at the layer), and the whole-set table's extra row is align --layer's 33.8 %."""
    from core.jobs import JobContext
    from core.services.attention_set import attention_views, corpus_aer_rows, gold_pairs
    from core.services.attention_view import present_view
    from core.services.translation import SessionCache
    from core.workspace.store import Workspace

    with Workspace.open(demo_root, create=False) as ws:
        run_id = ws.get_run(RUN).id
        pairs = list(enumerate(gold_pairs(ws, WPT03_GOLD)))
        views = attention_views(ws, SessionCache(), [(run_id, RUN)], pairs, True, JobContext())
    golds = [pair.gold for _, pair in pairs]
    view = views[(0, run_id)]
    assert view.in_words and view.layers is not None and view.layers.shape[:2] == (3, 4)
    shown = present_view(view, golds[0], ("shift", True), (0, 1))
    expected = at_layer(view.forced, 0, 1).links("shift", True)[1]
    assert shown.predicted == expected.sure and shown.selection == (0, 1)
    assert shown.matrix.shape == (len(view.tgt_tokens), len(view.src_tokens))  # words
    assert shown.predicted != present_view(view, golds[0], ("shift", True)).predicted

    rows = corpus_aer_rows(views, golds, [(run_id, RUN)], {run_id: ("shift", True)}, None,
                           {run_id: (0, 1)})
    assert [r[0] for r in rows] == [RUN, f"layer 1 · head 2 of {RUN}"]
    assert rows[1][1] == len(golds) == 37
    assert abs(100 * rows[1][2] - 33.8) <= 0.05  # align --layer 1 --head 2's figure
    assert abs(100 * rows[0][2] - 66.2) <= 0.5  # the averaged last layer, read at shift


def test_the_symmetrised_row_of_one_head_names_that_head(demo_root, capsys, tmp_path):
    """With --reverse-run, the row symmetrised from one head says so (its --out-dir file,
    like the forward row's, is not the averaged attention's; the reverse run's is): on
    the WPT-03 trial gold layer 1 head 2 at its predicting step, grow-diag-final-and with
    the fr -> en run's alignment head, 48.2 % (the Attention screen's row for that head:
    48.21 %), the averaged attention's 28.3 %."""
    base = ["--workspace", str(demo_root), "align", "--run", RUN, "--gold-set", WPT03_GOLD,
            "--reverse-run", "hansards-luong-guided-head-fr-en"]
    assert run_cli([*base, "--out-dir", str(tmp_path / "avg")]) == 0
    averaged = aer_rows(capsys.readouterr().out)
    assert run_cli([*base, "--layer", "1", "--head", "2", "--out-dir",
                    str(tmp_path / "head")]) == 0
    rows = aer_rows(capsys.readouterr().out)
    assert abs(averaged["attention grow-diag-final-and (predict + head)"] - 28.3) <= 0.1
    assert abs(rows["attention layer 1 head 2 grow-diag-final-and (predict + head)"]
               - 48.2) <= 0.1
    avg_files = {p.name for p in (tmp_path / "avg").iterdir()}
    head_files = {p.name for p in (tmp_path / "head").iterdir()}
    assert len(head_files) == len(avg_files) == 3 and len(avg_files & head_files) == 1

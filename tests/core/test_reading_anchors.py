"""The gold-free reading choice (core/services/reading_anchors.py, align
--choose-by-anchors): anchor words, their hits, the reading that recovers a known shift of
the attention, and the stored choice from the command line."""
from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
import torch

from core.cli import run_cli
from core.config import RunConfig
from core.evaluate.attention_aer import reading_alignments
from core.evaluate.goldsets import GoldSet
from core.evaluate.readings import ATTENTION_READINGS
from core.infer.session import TranslationSession
from core.services import attention_links, reading_anchors
from core.services.alignment_runs import default_reading
from core.train.artifacts import load_model
from core.workspace.store import Workspace
from tests.core.conftest import train_tiny_demo_run


def test_anchors_are_tokens_spelled_alike_once_on_each_side():
    src = ["Ottawa", "le", "3", ",", "le", "Canada", "Canada"]
    tgt = ["the", "3", "ottawa", ",", "the", "Canada"]
    # 'ottawa' and '3' (case folded); ',' is punctuation; 'Canada' is twice in the
    # source; 'the'/'le' are not spelled alike
    assert reading_anchors.anchors(src, tgt) == {2: 0, 1: 2}


def test_anchor_hits_count_links_to_the_twin():
    src = [["a1", "x", "b2"], ["c3", "y"]]
    tgt = [["b2", "z", "a1"], ["w", "c3"]]
    links = [[(2, 0), (1, 1), (1, 2)], [(1, 0), (0, 1)]]  # (source, target)
    # anchors: b2 (t0 -> s2) linked, a1 (t2 -> s0) not, c3 (t1 -> s0) linked
    assert reading_anchors.anchor_hits(links, src, tgt) == (2, 3)


class _AheadModel(torch.nn.Module):
    """Forced decoding whose attention, while predicting target word t, looks at source
    word t + 1: an input-feeding run that attends one word ahead, on a copy task."""

    family = "luong"

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))

    def forward(self, src, src_lens, tgt_in, out_vocab=None):
        batch, steps, width = src.size(0), tgt_in.size(1), src.size(1)
        attention = torch.zeros(batch, steps, width)
        for b in range(batch):
            n = int(src_lens[b])
            for t in range(steps):
                attention[b, t, min(t + 1, n - 1)] = 1.0
        return SimpleNamespace(attention=attention, alignment=None)


def test_the_anchors_choose_the_reading_that_undoes_a_shift():
    words = [f"w{i}" for i in range(12)]
    vocab = SimpleNamespace(encode=lambda toks: [4 + words.index(w) for w in toks])
    loaded = SimpleNamespace(model=_AheadModel(), src_vocab=vocab, tgt_vocab=vocab,
                             config=RunConfig())
    lines = [words[: n] for n in range(3, 12)] * 3  # copies: every word is an anchor
    table, total = reading_anchors.reading_anchor_table(loaded, lines, lines)
    assert total == 3 * sum(range(3, 12))
    # read one step earlier, target word t is linked to source word t: every anchor but
    # the first word (its row is the first step's, which looks at word 1)
    assert table["previous"] == pytest.approx(3 * sum(n - 1 for n in range(3, 12)) / total)
    # at the predicting step and one step later only the last word (clipped to itself)
    assert table["predict"] == table["shift"] == pytest.approx(27 / total)
    assert reading_anchors.best_reading(table) == "previous"


def _tiny_pairs(ws, pairs: int):
    """(run info, loaded model, source lines, target lines) of the tiny run's first
    `pairs` sampled training pairs."""
    info = ws.get_run("tiny")
    loaded = load_model(ws.run_dir(info.id), "best", run_config=info.config)
    src, tgt = reading_anchors.training_token_pairs(ws, info.id, loaded, pairs)
    return info, loaded, src, tgt


def test_one_pass_gives_the_links_align_reads_at_every_reading(tmp_path):
    root = train_tiny_demo_run(tmp_path / "ws", steps=8, dev_sample=0)
    with Workspace.open(root) as ws:
        info, loaded, src, tgt = _tiny_pairs(ws, 30)
        assert len(src) == len(tgt) == 30
        links = attention_links.links_by_reading(loaded, src, tgt, ATTENTION_READINGS)
        session = TranslationSession.open(ws, ["tiny"])
        gold = GoldSet("train", src, tgt, [None] * len(src), "es", "en")
        found = reading_alignments(session, gold, [(r, True) for r in ATTENTION_READINGS])
        for reading in ATTENTION_READINGS:
            assert links[reading] == [sorted(a.sure) for a in found[reading, True]]
        assert links["predict"] != links["shift"]


def test_choose_by_anchors_stores_the_best_reading(tmp_path, capsys, monkeypatch):
    root = train_tiny_demo_run(tmp_path / "ws", steps=8, dev_sample=0)
    # the demo corpus shares few spellings between Spanish and English
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny", "--choose-by-anchors",
                    "--pairs", "40"]) == 2
    assert re.search(r"only \d+ anchor words .* in 40 training pairs, fewer than 100; raise "
                     "--pairs, or choose the reading on gold links with align --remember",
                     capsys.readouterr().err)
    with Workspace.open(root) as ws:
        assert ws.get_run("tiny").config["alignment_reading"] == ""  # nothing stored
    monkeypatch.setattr(reading_anchors, "MIN_ANCHORS", 1)
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny",
                    "--choose-by-anchors", "--pairs", "300"]) == 0
    printed = capsys.readouterr().out
    with Workspace.open(root) as ws:
        info, loaded, src, tgt = _tiny_pairs(ws, 300)
        links = attention_links.links_by_reading(loaded, src, tgt, ATTENTION_READINGS)
        shares = {}
        for reading in ATTENTION_READINGS:
            hits, total = reading_anchors.anchor_hits(links[reading], src, tgt)
            shares[reading] = hits / total
            assert f"| {reading} | {100 * hits / total:.1f} % |" in printed
        assert f"(of {total:,})" in printed
        chosen = RunConfig.from_dict(info.config)
        assert chosen.alignment_reading == reading_anchors.best_reading(shares)
        assert default_reading(chosen) == chosen.alignment_reading


def test_choose_by_anchors_refuses_gold_and_a_second_run(tmp_path, capsys):
    root = train_tiny_demo_run(tmp_path / "ws", steps=4, dev_sample=0)
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny", "--choose-by-anchors",
                    "--reverse-run", "tiny"]) == 2
    assert "leave out --remember, --forget, --reading, --reverse-run" in capsys.readouterr().err
    # --forget is not done on the way out
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny", "--choose-by-anchors",
                    "--forget"]) == 2
    assert "leave out --remember, --forget" in capsys.readouterr().err
    for extra in (["--no-sink"], ["--out-dir", "x"], ["--baseline", "eflomal"]):
        assert run_cli(["--workspace", str(root), "align", "--run", "tiny",
                        "--choose-by-anchors", *extra]) == 2
        assert "leave out --no-sink, --method, --baseline and --out-dir" in \
            capsys.readouterr().err
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny", "--choose-by-anchors",
                    "--pairs", "0"]) == 2
    assert "positive number of training pairs" in capsys.readouterr().err
    with Workspace.open(root) as ws:
        info = ws.get_run("tiny")
        config = {**info.config, "model": {**info.config["model"], "alignment_head": True}}
        ws.update_run(info.id, config=config)
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny", "--choose-by-anchors"]) == 2
    assert "has an alignment head, trained to align" in capsys.readouterr().err


def test_stored_guide_links_follow_the_runs_reading(tmp_path):
    root = train_tiny_demo_run(tmp_path / "ws", steps=8, dev_sample=0)
    with Workspace.open(root) as ws:
        info, loaded, src, tgt = _tiny_pairs(ws, 20)
        corpus = ws.get_corpus(info.corpus_id).path
        logs: list[str] = []
        first = attention_links.attention_guide_links(ws, corpus, src, tgt, ["tiny"],
                                                      log=logs.append)
        other = "shift" if default_reading(loaded.config) != "shift" else "predict"
        ws.update_run(info.id, config={**info.config, "alignment_reading": other})
        second = attention_links.attention_guide_links(ws, corpus, src, tgt, ["tiny"],
                                                       log=logs.append)
        assert [m.split(" ")[0] for m in logs] == ["reading", "reading"]  # not reused
        assert second != first


def test_the_bundled_subword_runs_get_their_pieces_and_the_gold_s_readings(tmp_path):
    """The demo's sentencepiece runs read the training pairs in their own pieces (almost
    no <unk>, where Moses words would be mostly unknown), and the anchors pick what the
    demo gold picks (experiments/RESULTS.md, section E, sixth session)."""
    from core.data.vocab import UNK
    from core.services.demo import bundled_models, ensure_demo_workspace

    if not bundled_models():
        pytest.skip("resources/demo/models/ holds no bundled runs")
    root = ensure_demo_workspace(tmp_path / "demo")
    with Workspace.open(root) as ws:
        run = ws.get_run("tatoeba-luong")
        loaded = load_model(ws.run_dir(run.id), "best", run_config=run.config)
        src, tgt = reading_anchors.training_token_pairs(ws, run.id, loaded, 100)
        ids = [i for line in src for i in loaded.src_vocab.encode(line)]
        assert sum(i == UNK for i in ids) < 0.02 * len(ids)
        chosen = {name: reading_anchors.choose_by_anchors(ws, name)[0]
                  for name in ("tatoeba-luong", "tatoeba-luong-guided", "tatoeba-rnnsearch")}
        assert chosen == {"tatoeba-luong": "previous", "tatoeba-luong-guided": "predict",
                          "tatoeba-rnnsearch": "predict"}
        assert RunConfig.from_dict(ws.get_run("tatoeba-luong").config).alignment_reading == \
            "previous"

"""Guided alignment (train.guided_alignment, core/train/guidance.py): the guide tensor,
the loss's value, that training follows whatever links it is given, and that eflomal's
links of a training split are computed once per tokenisation and stored in the corpus."""
from __future__ import annotations

import math

import pytest
import torch

from core.config import RunConfig, TrainConfig
from core.data.batching import BatchPlan, guide_tensor
from core.errors import ConfigError
from core.jobs import RecordingContext
from core.models.registry import build_model
from core.train import guidance
from core.train.loop import train_model
from tests.core.reversal import guided_reversal_train_data
from tests.core.tiny_runs import tiny_sampled_config


def test_guide_rows_are_uniform_over_the_linked_source_tokens():
    # pair 0: target token 0 <- source 1; target token 1 <- sources 0 and 2; EOS unlinked
    guide = guide_tensor([[(1, 0), (0, 1), (2, 1)], [(0, 0)]], src_width=3, tgt_width=3)
    assert guide.shape == (2, 3, 3)
    assert guide[0].tolist() == [[0, 1, 0], [0.5, 0, 0.5], [0, 0, 0]]
    assert guide[1].tolist() == [[1, 0, 0], [0, 0, 0], [0, 0, 0]]


def test_batches_carry_the_guide_of_their_own_pairs():
    src, tgt = [[5, 6], [7, 8, 9]], [[5], [6, 7]]
    links = [[(1, 0)], [(2, 0), (0, 1)]]
    plan = BatchPlan(src, tgt, batch_size=2, shuffle=False, links=links)
    batch = plan.collate([1, 0])  # the order of the indices, not of the split
    assert batch.guide.shape == (2, 3, 3)  # tgt_out = y + EOS: widths 3 x 3
    assert batch.guide[0, 0].tolist() == [0, 0, 1] and batch.guide[0, 1].tolist() == [1, 0, 0]
    assert batch.guide[1, 0].tolist() == [0, 1, 0] and batch.guide[1, 1].sum() == 0
    with pytest.raises(ValueError, match="3 alignments for 2 pairs"):
        BatchPlan(src, tgt, links=links + [[]])


def test_loss_is_the_cross_entropy_of_the_guided_rows():
    attention = torch.tensor([[[0.25, 0.5, 0.25], [0.1, 0.8, 0.1]]])  # 1 x 2 x 3
    guide = torch.tensor([[[0.5, 0.0, 0.5], [0.0, 0.0, 0.0]]])
    loss, rows = guidance.alignment_loss(attention, guide)
    assert rows == 1  # the unguided row counts nothing
    assert loss.item() == pytest.approx(-math.log(0.25))  # 0.5 ln4 + 0.5 ln4
    # a masked (zero) attention weight costs -log(1e-9), not inf
    loss, _ = guidance.alignment_loss(torch.tensor([[[0.0, 1.0]]]), torch.tensor([[[1.0, 0.0]]]))
    assert loss.item() == pytest.approx(-math.log(guidance.MIN_ATTENTION))


def _argmax_rate(model, dev, gold) -> float:
    """Share of dev target words whose attention argmax is the source word gold(n, t)."""
    hits = total = 0
    model.eval()
    with torch.no_grad():
        for s, t in dev:
            out = model(torch.tensor([s]), torch.tensor([len(s)]), torch.tensor([[2, *t]]))
            for j in range(len(t)):
                hits += int(out.attention[0, j].argmax()) == gold(len(s), j)
                total += 1
    return hits / total


@pytest.mark.parametrize("name, gold", [
    ("anti-diagonal", lambda n, j: n - 1 - j),  # the task's true alignment
    ("diagonal", lambda n, j: j),                # a wrong one: the attention must follow it
])
def test_training_pulls_the_attention_towards_the_given_links(tmp_path, name, gold):
    """120 steps on the reversal task: with the guide the attention argmax lands on the
    guided source word for most target words; without it, on few."""
    def links(n):
        return [(gold(n, j), j) for j in range(n)]

    rates = {}
    for weight in (0.0, 1.0):
        data, dev = guided_reversal_train_data(links)
        torch.manual_seed(3)
        config = tiny_sampled_config(sampled_softmax=0, max_steps=120, valid_every=0,
                                     guided_alignment=weight)
        model = build_model(config.model, 60, 60)
        rec = RecordingContext()
        train_model(config, data, tmp_path / f"{name}-{weight}", rec, model=model)
        rates[weight] = _argmax_rate(model, dev, gold)
        steps = rec.of_kind("step")
        assert ("align_loss" in steps[0].data) == (weight > 0)
        if weight > 0:  # the alignment loss falls as training follows the guide
            first = sum(e.data["align_loss"] for e in steps[:10]) / 10
            last = sum(e.data["align_loss"] for e in steps[-10:]) / 10
            assert last < 0.5 * first
    assert rates[1.0] > 0.8, rates
    assert rates[1.0] > rates[0.0] + 0.4, rates


def test_guided_alignment_weight_is_validated():
    for bad in (-0.5, "1", True, 1000.0):
        with pytest.raises(ConfigError, match="train.guided_alignment"):
            RunConfig(train=TrainConfig(guided_alignment=bad)).validate()
    RunConfig(train=TrainConfig(guided_alignment=0.5)).validate()


def test_guided_training_without_links_says_what_is_missing(tmp_path):
    data, _ = guided_reversal_train_data(lambda n: [])
    data.train_links = None
    with pytest.raises(ConfigError, match="needs alignments of the training pairs"):
        train_model(tiny_sampled_config(sampled_softmax=0, guided_alignment=1.0), data, tmp_path,
                    RecordingContext())


def test_a_run_aligns_its_training_split_once_and_the_next_run_reuses_it(tmp_path):
    """Two guided runs on the demo corpus with the same tokenisation: eflomal runs for
    the first (one Pharaoh line per kept training pair, links inside each pair), the
    second reads the stored file (eflomal samples at random, so equal links prove reuse)."""
    from core.data.dataset import encode_text
    from core.services.demo import demo_config, import_demo_corpus
    from core.services.training import create_run, load_split_corpora, train_run
    from core.train import artifacts
    from core.workspace.store import Workspace

    with Workspace.open(tmp_path / "ws") as ws:
        corpus_id = import_demo_corpus(ws)
        logs, files, texts = [], [], []
        for name in ("g1", "g2"):
            config = demo_config(name, dict(emb_size=16, hidden_size=24), max_steps=4,
                                 valid_every=4, device="cpu")
            config.train.guided_alignment = 0.5
            config.data.dev_sample = 2
            rec = RecordingContext()
            train_run(ws, create_run(ws, corpus_id, config, name), rec)
            logs.append([e.data["message"] for e in rec.of_kind("log")])
            files.append(sorted((ws.get_corpus(corpus_id).path / "alignments").glob("*.pharaoh")))
            texts.append(files[-1][0].read_text(encoding="utf-8"))
            assert "align_loss" in ws.curves(ws.run_id(name), "train")
        assert any("aligning" in m and "eflomal" in m for m in logs[0])
        assert any("reusing the stored alignments" in m for m in logs[1])
        assert len(files[0]) == len(files[1]) == 1
        assert texts[0] == texts[1]
        lines = texts[0].splitlines()
        # the kept training pairs of the demo split, each line's links within its pair
        src_vocab, tgt_vocab, src_pre, tgt_pre = artifacts.load_text_side(ws.run_dir(ws.run_id("g1")))
        _, parts = load_split_corpora(ws, corpus_id, config.train.seed)
        kept = [p for p in parts["train"].pairs if p.src.strip() and p.tgt.strip()]
        kept = [p for p in kept if len(encode_text(p.src, src_pre, src_vocab)) <= config.data.max_len
                and len(encode_text(p.tgt, tgt_pre, tgt_vocab)) <= config.data.max_len]
        assert len(lines) == len(kept)
        linked = 0
        for line, pair in zip(lines, kept, strict=True):
            n_src = len(encode_text(pair.src, src_pre, src_vocab))
            n_tgt = len(encode_text(pair.tgt, tgt_pre, tgt_vocab))
            for link in line.split():
                i, j = map(int, link.split("-"))
                assert 0 <= i < n_src and 0 <= j < n_tgt
                linked += 1
        assert linked > len(lines)  # real alignments: more than one link per pair on average

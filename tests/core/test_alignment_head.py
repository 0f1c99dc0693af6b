"""The target-conditioned alignment head (model.alignment_head,
core/models/alignment_head.py): its rows, that it never changes a translation, that
trained alone over a frozen model (train.stage = 2) it learns the guide's links while the
translation weights stay bit for bit, and the 'head' reading in `align`."""
from __future__ import annotations

import math

import pytest
import torch

from core.config import ModelConfig, RunConfig, TrainConfig
from core.errors import ConfigError
from core.infer.greedy import greedy
from core.jobs import RecordingContext
from core.models.alignment_head import (
    freeze_all_but_head,
    head_parameter_names,
    load_base,
    predicted_tokens,
)
from core.models.registry import build_model
from core.train.loop import train_model
from tests.core.reversal import guided_reversal_train_data
from tests.core.tiny_runs import tiny_sampled_config

FAMILIES = {
    "luong": dict(family="luong", emb_size=16, hidden_size=24, layers=2, attention="global",
                  score="general", input_feeding=True),
    "rnnsearch": dict(family="rnnsearch", cell="gru", emb_size=16, hidden_size=24, layers=1,
                      attention="global", score="additive"),
}


def _pair(family: str, seed: int = 0):
    """A model without a head and the same model (same weights) with one."""
    torch.manual_seed(seed)
    plain = build_model(ModelConfig(**FAMILIES[family]), 30, 40)
    headed = build_model(ModelConfig(**FAMILIES[family], alignment_head=True), 30, 40)
    load_base(headed, plain.state_dict())
    return plain.eval(), headed.eval()


def test_predicted_tokens_are_the_next_input_and_pad_for_eos():
    tgt_in = torch.tensor([[2, 7, 8, 9], [2, 5, 0, 0]])  # BOS y.. PAD
    assert predicted_tokens(tgt_in).tolist() == [[7, 8, 9, 0], [5, 0, 0, 0]]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_head_rows_are_distributions_over_the_real_source_tokens(family):
    _, model = _pair(family)
    src = torch.randint(4, 30, (3, 7))
    lens = torch.tensor([7, 4, 1])
    out = model(src, lens, torch.randint(4, 40, (3, 5)))
    assert out.alignment.shape == (3, 5, 7) and out.alignment.dtype == torch.float32
    # each row's source weights and NULL's (1 - their sum) make a distribution: NULL's
    # key starts at zero, so every row gives it some weight
    sums = out.alignment.sum(-1)
    assert sums.max() < 1 and sums.min() > 0
    assert out.alignment[1, :, 4:].abs().max() == 0 and out.alignment[2, :, 1:].abs().max() == 0
    # the head reads the target word it aligns: another word gives other rows
    other = model(src, lens, torch.cat([torch.full((3, 1), 2), torch.randint(4, 40, (3, 4))], 1))
    assert not torch.allclose(out.alignment[0, :-1], other.alignment[0, :-1])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_head_never_changes_the_translation(family):
    plain, headed = _pair(family, seed=1)
    src, lens = torch.randint(4, 30, (4, 6)), torch.tensor([6, 5, 3, 2])
    tgt = torch.randint(4, 40, (4, 5))
    a, b = plain(src, lens, tgt), headed(src, lens, tgt)
    assert torch.equal(a.scores, b.scores) and torch.equal(a.attention, b.attention)
    assert a.alignment is None and b.alignment is not None
    for x, y in zip(greedy(plain, src, lens, max_len_abs=8),
                    greedy(headed, src, lens, max_len_abs=8), strict=True):
        assert x.tokens == y.tokens and x.score == pytest.approx(y.score, abs=1e-6)


def test_load_base_names_weights_that_do_not_fit():
    _, headed = _pair("luong")
    other = build_model(ModelConfig(**{**FAMILIES["luong"], "hidden_size": 20}), 30, 40)
    with pytest.raises(RuntimeError, match="size mismatch"):
        load_base(headed, other.state_dict())
    state = {k: v for k, v in headed.state_dict().items() if not k.startswith("w_s.")}
    with pytest.raises(ValueError, match=r"missing \['w_s.bias', 'w_s.weight'\]"):
        load_base(headed, state)


def _argmax_rate(rows, dev, gold) -> float:
    hits = total = 0
    for (s, t), r in zip(dev, rows, strict=True):
        for j in range(len(t)):
            hits += int(r[j].argmax()) == gold(len(s), j)
            total += 1
    return hits / total


def _rows(model, dev, which: str):
    model.eval()
    with torch.no_grad():
        return [getattr(model(torch.tensor([s]), torch.tensor([len(s)]),
                              torch.tensor([[2, *t]])), which)[0] for s, t in dev]


def test_a_head_trained_alone_learns_the_links_and_leaves_the_model_as_it_was(tmp_path):
    """Reversal task: a model trained without guidance, then a head trained alone over it
    on the true (anti-diagonal) links. The translation weights stay bit for bit; the
    head's argmax lands on the linked source word far more often than the model's own
    attention does; checkpoints are ranked by the head's alignment loss."""
    def gold(n, j):
        return n - 1 - j

    data, dev = guided_reversal_train_data(lambda n: [(gold(n, j), j) for j in range(n)])
    torch.manual_seed(3)
    base_config = tiny_sampled_config(sampled_softmax=0, max_steps=60, valid_every=0)
    base = build_model(base_config.model, 60, 60)
    train_model(base_config, data, tmp_path / "base", RecordingContext(), model=base)
    attention_rate = _argmax_rate(_rows(base, dev, "attention"), dev, gold)

    config = tiny_sampled_config(sampled_softmax=0, max_steps=600, valid_every=200,
                                 guided_alignment=1.0, stage=2, lr=1e-2)
    config.model.alignment_head = True
    config.validate()
    headed = build_model(config.model, 60, 60)
    load_base(headed, base.state_dict())
    assert freeze_all_but_head(headed) == head_parameter_names(headed) != []
    rec = RecordingContext()
    result = train_model(config, data, tmp_path / "head", rec, model=headed)
    for name, value in base.state_dict().items():
        assert torch.equal(headed.state_dict()[name], value), name
    head_rate = _argmax_rate(_rows(headed, dev, "alignment"), dev, gold)
    assert head_rate > 0.85 and head_rate > attention_rate + 0.5, (head_rate, attention_rate)
    # the frozen model's dev perplexity is the same at every validation, so the
    # alignment loss of the training batches ranks the checkpoints
    ppls = {round(e.data["dev_ppl"], 6) for e in rec.of_kind("validation")}
    assert len(ppls) == 1
    ranked = [e.data["message"] for e in rec.of_kind("log")
              if e.data["message"].startswith("alignment head: mean alignment loss")]
    losses = [float(m.split()[5]) for m in ranked]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert result.best_dev_ppl == pytest.approx(min(losses), abs=1e-4)


def test_alignment_head_settings_are_checked():
    def config(**model):
        return RunConfig(model=ModelConfig(**{**FAMILIES["luong"], **model}),
                         train=TrainConfig(guided_alignment=1.0))

    with pytest.raises(ConfigError, match="model.alignment_head is available for the families "
                                          "rnnsearch, luong, not 'transformer'"):
        config(family="transformer", alignment_head=True).validate()
    no_guide = config(alignment_head=True)
    no_guide.train.guided_alignment = 0.0
    with pytest.raises(ConfigError, match="trained by guided alignment only"):
        no_guide.validate()
    stage2 = config()
    stage2.train.stage = 2
    with pytest.raises(ConfigError, match="or the alignment head of a rnnsearch/luong"):
        stage2.validate()
    stage2.model.alignment_head = True
    stage2.validate()


def test_a_head_run_over_a_workspace_run_and_its_reading_in_align(tmp_path, capsys):
    """`train --alignment-head RUN` over a trained (guided) demo run: the new run reuses
    its vocabularies and the stored eflomal links of the demo split, keeps the run's
    weights, reads 'head' by default and reports it beside the attention in `align`."""
    from pathlib import Path

    from core.cli import run_cli
    from core.services.alignment_runs import default_reading
    from core.services.demo import demo_config
    from core.services.training import alignment_head_config, create_run
    from core.train.artifacts import load_model
    from core.workspace.store import Workspace
    from tests.core.conftest import train_tiny_demo_run

    demo = Path(__file__).resolve().parents[2] / "resources" / "demo"
    root = train_tiny_demo_run(tmp_path / "ws", steps=6, dev_sample=0, guided_alignment=0.5)
    with Workspace.open(root) as ws:
        def head_config(**model):
            config = demo_config("tiny-head", {"emb_size": 16, "hidden_size": 24, **model},
                                 max_steps=30, valid_every=15, device="cpu")
            config.model.alignment_head = True
            config.train.guided_alignment = 1.0
            config.train.stage, config.train.init_from = 2, "tiny"
            config.data.dev_sample = 0
            return config

        corpus = ws.get_run("tiny").corpus_id
        with pytest.raises(ConfigError, match="model.hidden_size is 20 here and 24 there"):
            create_run(ws, corpus, head_config(hidden_size=20), "tiny-bad")  # refused up front
        ws.create_run("tiny-bad", head_config(hidden_size=20).to_dict(), corpus)
        with pytest.raises(ConfigError, match="has an alignment head already"):
            alignment_head_config(ws, "tiny-bad")
    assert run_cli(["--workspace", str(root), "train", "--alignment-head", "tiny",
                    "--max-steps", "30", "--threads", "1", "--quiet"]) == 0
    printed = capsys.readouterr()
    assert "run tiny-head (id 3): finished after 30 steps; best alignment loss" in printed.out
    assert "reusing the stored alignments" in printed.out + printed.err
    with Workspace.open(root) as ws:
        run = ws.run_id("tiny-head")
        config = RunConfig.from_dict(ws.get_run(run).config)
        assert (config.train.stage, config.train.init_from, config.train.valid_every) == \
            (2, "tiny", 5)
        base = load_model(ws.run_dir(ws.run_id("tiny")), "best").model.state_dict()
        headed = load_model(ws.run_dir(run), "best").model.state_dict()
        assert sorted(set(headed) - set(base)) == ["align_head.key.bias", "align_head.key.weight",
                                                   "align_head.null",
                                                   "align_head.query.bias",
                                                   "align_head.query.weight"]
        assert all(torch.equal(headed[k], v) for k, v in base.items())
        assert default_reading(config) == "head"
    gold = ["--gold-src", str(demo / "gold.es"), "--gold-tgt", str(demo / "gold.en"),
            "--gold-links", str(demo / "gold.links")]
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny-head", *gold,
                    "--reading", "all"]) == 0
    rows = [ln.split(" | ")[0][2:] for ln in capsys.readouterr().out.splitlines()
            if ln.startswith("| tiny-head")]
    assert rows == ["tiny-head attention", "tiny-head attention (shift)",
                    "tiny-head attention (sum)", "tiny-head attention (previous)",
                    "tiny-head alignment head"]
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny", *gold,
                    "--reading", "head"]) != 0
    assert "needs a run with an alignment head" in capsys.readouterr().err
    # a run installed from a bundle learnt another corpus: no head over it
    from core.services.demo import BUNDLED_MARK

    with Workspace.open(root) as ws:
        (ws.run_dir(ws.run_id("tiny")) / BUNDLED_MARK).write_text("bundled\n", encoding="utf-8")
        with pytest.raises(ConfigError, match="installed from a bundle"):
            alignment_head_config(ws, "tiny")


def test_unlinked_words_are_pulled_towards_null_and_read_as_unaligned():

    from core.evaluate.extract import argmax_alignment
    from core.evaluate.readings import read_attention
    from core.train.guidance import head_alignment_loss

    # 3 target rows (word, word, EOS) over 2 source words; NULL = 1 - row sum
    alignment = torch.tensor([[[0.6, 0.2], [0.1, 0.3], [0.5, 0.5]]])
    guide = torch.tensor([[[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]])  # word 2 unlinked
    loss, rows = head_alignment_loss(alignment, guide, torch.tensor([[7, 8, 3]]))  # 3 = EOS
    assert rows == 2  # the linked word and the unlinked one; EOS is neither
    assert loss.item() == pytest.approx(-math.log(0.6) - math.log(0.6))
    # reading: word 2's NULL (0.6) beats both source words, so it is left unaligned
    read = read_attention(alignment[0].numpy(), "head")
    assert read[1].tolist() == [0, 0] and read[0].tolist() == pytest.approx([0.6, 0.2])
    assert argmax_alignment(read).sure == {(0, 0)}


def test_neighbours_are_the_embeddings_on_both_sides_with_zero_edges():
    from core.models.alignment_head import with_neighbours

    emb = torch.arange(1.0, 7.0).reshape(1, 3, 2)  # words [1 2], [3 4], [5 6]
    assert with_neighbours(emb)[0].tolist() == [[0, 0, 1, 2, 3, 4], [1, 2, 3, 4, 5, 6],
                                               [3, 4, 5, 6, 0, 0]]

"""Jean et al. 2015's candidate-vocabulary softmax (train.sampled_softmax)."""
from __future__ import annotations

import pytest
import torch

from core.config import ModelConfig, RunConfig, TrainConfig
from core.data.batching import BatchPlan
from core.errors import ConfigError
from core.jobs import RecordingContext
from core.models.base import PAD
from core.models.registry import build_model, variant_config
from core.train import checkpoint as ckpt
from core.train.loop import TrainData, evaluate_perplexity, train_model
from core.train.sampled_softmax import candidate_vocab
from tests.core.model_batches import random_batch, tatoeba_batch
from tests.core.reversal import wide_reversal_train_data
from tests.core.tiny_runs import tiny_sampled_config

VOCAB = 20
FAMILIES = ["luong-global-general", "luong-local-p-general", "rnnsearch", "rnnencdec"]


def test_candidate_vocab_holds_targets_pad_and_fills_up_to_size():
    torch.manual_seed(0)
    tgt = torch.tensor([[7, 9, 3, 0], [12, 7, 3, 0]])
    out_vocab, targets = candidate_vocab(tgt, 50, 10)
    assert out_vocab.tolist() == sorted(set(out_vocab.tolist()))  # sorted, distinct
    assert out_vocab.numel() == 10
    assert {0, 3, 7, 9, 12} <= set(out_vocab.tolist())
    assert torch.equal(out_vocab[targets], tgt)  # renumbering maps back
    assert targets[0, 3] == 0  # PAD keeps index 0, so sequence_nll still masks it
    # more distinct targets than K: all are kept, nothing sampled
    wide = torch.arange(4, 24).view(2, 10)
    out_vocab, targets = candidate_vocab(wide, 50, 5)
    assert out_vocab.tolist() == [0, *range(4, 24)]
    assert torch.equal(out_vocab[targets], wide)


def test_candidate_vocab_fill_up_is_uniform_over_absent_words():
    torch.manual_seed(1)
    tgt = torch.tensor([[4, 5, 3]])
    counts = torch.zeros(40)
    for _ in range(2000):
        out_vocab, _ = candidate_vocab(tgt, 40, 10)  # 4 fixed (0, 3, 4, 5) + 6 of 36
        counts[out_vocab] += 1
    assert counts[[0, 3, 4, 5]].tolist() == [2000.0] * 4
    others = counts[[i for i in range(40) if i not in (0, 3, 4, 5)]] / 2000
    assert others.mean().item() == pytest.approx(6 / 36, abs=1e-6)
    assert (others - 6 / 36).abs().max().item() < 0.04  # each absent word ~1/6 of the time


@pytest.mark.parametrize("name", FAMILIES)
def test_restricted_log_probs_are_the_softmax_over_the_candidates(name):
    torch.manual_seed(0)
    model = build_model(variant_config(name, emb_size=16, hidden_size=32, window=2, dropout=0.0,
                                       max_src_len=12), VOCAB, VOCAB).eval()
    src, lens, tgt = random_batch([6, 4, 3], 5)
    out_vocab = torch.tensor([0, 3, 5, 8, 13, 19])
    with torch.no_grad():
        full = model(src, lens, tgt).log_probs  # 3 x 5 x 20
        sub = model(src, lens, tgt, out_vocab=out_vocab).log_probs  # 3 x 5 x 6
        every = model(src, lens, tgt, out_vocab=torch.arange(VOCAB)).log_probs
    assert sub.shape == (3, 5, 6)
    expected = full[..., out_vocab] - full[..., out_vocab].logsumexp(-1, keepdim=True)
    assert torch.allclose(sub, expected, atol=1e-5)
    assert torch.allclose(every, full, atol=1e-6)  # V' = V is the full softmax


def test_words_outside_the_candidates_get_no_gradient():
    torch.manual_seed(0)
    model = build_model(variant_config("luong-global-general", emb_size=16, hidden_size=32),
                        VOCAB, VOCAB)
    src, lens, tgt = random_batch([6, 4, 3], 5)
    out_vocab = torch.tensor([0, 3, 5, 8, 13, 19])
    targets = torch.randint(1, 6, (3, 5))
    out = model(src, lens, tgt, out_vocab=out_vocab)
    torch.nn.functional.nll_loss(out.log_probs.flatten(0, 1), targets.flatten()).backward()
    grad_rows = model.w_s.weight.grad.abs().sum(1)  # V
    outside = torch.ones(VOCAB, dtype=torch.bool)
    outside[out_vocab] = False
    assert grad_rows[outside].max().item() == 0.0
    assert grad_rows[out_vocab].min().item() > 0.0


def test_resume_with_sampled_softmax_continues_exactly(tmp_path):
    straight = RecordingContext()
    train_model(tiny_sampled_config(), wide_reversal_train_data(), tmp_path / "a", straight)
    first, second = RecordingContext(), RecordingContext()
    train_model(tiny_sampled_config(max_steps=6), wide_reversal_train_data(), tmp_path / "b", first)
    train_model(tiny_sampled_config(max_steps=12), wide_reversal_train_data(), tmp_path / "b",
                second, resume=True)
    loss = [e.data["loss"] for e in first.of_kind("step") + second.of_kind("step")]
    assert loss == [e.data["loss"] for e in straight.of_kind("step")]
    a = ckpt.load_checkpoint(tmp_path / "a" / ckpt.LAST)["model"]
    b = ckpt.load_checkpoint(tmp_path / "b" / ckpt.LAST)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    # the sampled run differs from a full-softmax one: the option is really applied
    full = RecordingContext()
    train_model(tiny_sampled_config(sampled_softmax=0), wide_reversal_train_data(),
                tmp_path / "c", full)
    assert [e.data["loss"] for e in full.of_kind("step")] != loss


def test_negative_size_is_a_config_error():
    with pytest.raises(ConfigError, match="sampled_softmax"):
        RunConfig(train=TrainConfig(sampled_softmax=-5)).validate()


@pytest.mark.slow
def test_sampled_training_lowers_full_softmax_perplexity_on_real_pairs(tmp_path, shared):
    """Tatoeba pairs, K = 1/4 of the target vocabulary: the perplexity normalised over the
    whole vocabulary falls from ~uniform (230) to ~2-3, against ~1.1-1.6 for the full
    softmax (the candidate softmax never pushes down words it did not draw). The exact
    end points move with the CPU's floating-point kernels (sampled 1.9 to 3.1, full 1.1
    to 1.6 over seeds and machines), hence the bounds of 5 and 2: a broken softmax of
    either kind stays near uniform."""
    src, lens, tgt_in, tgt_out, sv, tv = tatoeba_batch(shared("tatoeba-spa-eng", "spa.txt"), n=96)
    src_ids = [s[: int(n)].tolist() for s, n in zip(src, lens, strict=True)]
    tgt_ids = [[w for w in row.tolist() if w != PAD][:-1] for row in tgt_out]
    data = TrainData(src_ids, tgt_ids, src_ids, tgt_ids, sv, tv,
                     lambda s, t, c, shuffle: BatchPlan(s, t, batch_size=16, seed=3, shuffle=shuffle))
    model_cfg = ModelConfig(family="luong", emb_size=32, hidden_size=64, layers=1,
                            attention="global", score="general", input_feeding=True, dropout=0.0)
    results = {}
    for k in (0, tv // 4):
        cfg = RunConfig(model=model_cfg, train=TrainConfig(
            optimizer="adam", lr=1e-2, epochs=100, max_steps=400, valid_every=0, seed=3,
            device="cpu", sampled_softmax=k))
        torch.manual_seed(3)
        model = build_model(model_cfg, sv, tv)
        plan = data.make_plan(src_ids, tgt_ids, None, False)
        start_ppl = evaluate_perplexity(model, plan, torch.device("cpu"))[1]
        train_model(cfg, data, tmp_path / f"k{k}", RecordingContext(), model=model)
        results[k] = (start_ppl, evaluate_perplexity(model, plan, torch.device("cpu"))[1])
    (start_full, end_full), (start_sampled, end_sampled) = results[0], results[tv // 4]
    assert start_full == pytest.approx(start_sampled) and start_full > tv / 2  # ~uniform
    assert end_full < 2.0  # the full softmax memorises the 96 pairs ...
    assert end_sampled < 5.0  # ... and the sampled one nearly, judged by the full softmax

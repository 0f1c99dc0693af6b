"""The training engine: exact resume, cancel, NaN, early stopping, schedules, store runs."""
from __future__ import annotations

import math

import pytest
import torch

from core.config import TrainConfig
from core.errors import TrainingError
from core.jobs import RecordingContext
from core.train import checkpoint as ckpt
from core.train.loop import sequence_nll, train_model
from core.train.optim import EpochSchedule, build_optimizer
from tests.core.reversal import reversal_train_data
from tests.core.tiny_runs import tiny_luong_config


def losses(ctx: RecordingContext) -> list[float]:
    return [e.data["loss"] for e in ctx.of_kind("step")]


def test_sequence_nll_ignores_padding_and_smooths():
    logp = torch.log_softmax(torch.tensor([[[2.0, 0.0, 1.0], [0.0, 0.0, 0.0]]]), dim=-1)
    target = torch.tensor([[2, 0]])  # second position is PAD
    loss, nll, n = sequence_nll(logp, target)
    assert n == 1 and float(loss) == pytest.approx(-float(logp[0, 0, 2]))
    smooth, nll2, _ = sequence_nll(logp, target, smoothing=0.1)
    expected = 0.9 * -float(logp[0, 0, 2]) + 0.1 * -float(logp[0, 0].mean())
    assert float(smooth) == pytest.approx(expected) and float(nll2) == float(nll)


def test_halving_schedule_follows_luong():
    params = [torch.nn.Parameter(torch.zeros(1))]
    cfg = TrainConfig(optimizer="sgd", lr=1.0, lr_decay=0.5, decay_start_epoch=5)
    sched = EpochSchedule(build_optimizer(params, cfg), cfg)
    lrs = [sched.end_epoch() for _ in range(8)]
    # after epochs 1-4 unchanged; halved after every epoch from the 5th on
    assert lrs == [1.0, 1.0, 1.0, 1.0, 0.5, 0.25, 0.125, 0.0625]


def test_training_lowers_dev_perplexity_and_keeps_best(tmp_path):
    ctx = RecordingContext()
    result = train_model(tiny_luong_config(max_steps=24, valid_every=8), reversal_train_data(),
                         tmp_path, ctx)
    dev = [e.data["dev_ppl"] for e in ctx.of_kind("validation")]
    assert result.status == "finished" and result.step == 24 and len(dev) == 3
    assert dev[-1] < dev[0] < 14  # better than uniform over the 14-symbol vocabulary
    assert result.best_dev_ppl == pytest.approx(min(dev))
    assert len(list(tmp_path.glob("best-*.pt"))) == 2
    start = ctx.of_kind("start")[0].data
    assert start["steps_per_epoch"] == 6 and start["total_steps"] == 24


def test_resume_continues_exactly(tmp_path):
    straight = RecordingContext()
    train_model(tiny_luong_config(), reversal_train_data(), tmp_path / "a", straight)

    first = RecordingContext()
    train_model(tiny_luong_config(max_steps=6), reversal_train_data(), tmp_path / "b", first)
    assert ckpt.load_checkpoint(tmp_path / "b" / ckpt.LAST)["position"]["step"] == 6
    second = RecordingContext()
    result = train_model(tiny_luong_config(max_steps=12), reversal_train_data(), tmp_path / "b",
                         second, resume=True)
    assert second.of_kind("start")[0].data["resumed_from"] == 6
    assert result.step == 12
    # dropout is on (0.3): equality needs the RNG states and data position restored
    assert losses(first) + losses(second) == losses(straight)
    a = ckpt.load_checkpoint(tmp_path / "a" / ckpt.LAST)["model"]
    b = ckpt.load_checkpoint(tmp_path / "b" / ckpt.LAST)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_cancel_stops_within_one_step_and_leaves_a_checkpoint(tmp_path):
    ctx = RecordingContext()
    ctx.add_listener(lambda e: ctx.cancel() if e.kind == "step" and e.data["step"] == 3 else None)
    result = train_model(tiny_luong_config(max_steps=50, valid_every=0), reversal_train_data(),
                         tmp_path, ctx)
    assert result.status == "cancelled" and result.step == 3
    state = ckpt.load_checkpoint(tmp_path / ckpt.LAST)
    assert state["position"]["step"] == 3
    # and the run resumes from there
    again = RecordingContext()
    resumed = train_model(tiny_luong_config(max_steps=5, valid_every=0), reversal_train_data(),
                          tmp_path, again, resume=True)
    assert [e.data["step"] for e in again.of_kind("step")] == [4, 5] and resumed.status == "finished"


def test_nan_loss_ends_with_clear_message_and_keeps_last_good_checkpoint(tmp_path):
    from core.models.registry import build_model

    cfg = tiny_luong_config(max_steps=50, valid_every=2)
    model = build_model(cfg.model, 14, 14)

    def poison(event):  # weights turn NaN after step 5, as a diverging run's would
        if event.kind == "step" and event.data["step"] == 5:
            with torch.no_grad():
                next(model.parameters()).fill_(float("nan"))

    ctx = RecordingContext()
    ctx.add_listener(poison)
    with pytest.raises(TrainingError, match=r"loss became nan at step 6: lower the learning rate"):
        train_model(cfg, reversal_train_data(), tmp_path, ctx, model=model)
    state = ckpt.load_checkpoint(tmp_path / ckpt.LAST)
    assert state["position"]["step"] == 4  # the last validation's checkpoint, before the NaN
    assert all(torch.isfinite(v).all() for v in state["model"].values())


def test_early_stopping_on_dev_perplexity(tmp_path):
    ctx = RecordingContext()
    # lr 0 => dev perplexity never improves after the first validation
    result = train_model(tiny_luong_config(max_steps=100, valid_every=2, lr=0.0,
                                           early_stop_patience=2),
                         reversal_train_data(), tmp_path, ctx)
    assert len(ctx.of_kind("validation")) == 3 and result.step == 6
    assert result.status == "finished"


def test_perplexity_is_exp_of_token_nll(tmp_path):
    ctx = RecordingContext()
    train_model(tiny_luong_config(max_steps=2, valid_every=2), reversal_train_data(), tmp_path, ctx)
    v = ctx.of_kind("validation")[0].data
    assert v["dev_ppl"] == pytest.approx(math.exp(v["dev_loss"]))


def test_best_checkpoint_is_the_lowest_dev_perplexity_of_all_validations(tmp_path):
    """Found by a run whose last validation was its best: 'best' must come from the newest
    ranking, not from the first best file's (which predates the later improvement)."""
    from core.train.artifacts import pick_checkpoint

    ctx = RecordingContext()
    train_model(tiny_luong_config(max_steps=24, valid_every=4, keep_best=2), reversal_train_data(),
                tmp_path, ctx)
    dev = {e.data["step"]: e.data["dev_ppl"] for e in ctx.of_kind("validation")}
    best_step = min(dev, key=dev.get)
    assert best_step != min(dev)  # the first validation was not the best one
    assert pick_checkpoint(tmp_path, "best").name == f"best-{best_step:08d}.pt"
    kept = sorted(int(p.stem.split("-")[1]) for p in tmp_path.glob("best-*.pt"))
    assert kept == sorted(sorted(dev, key=dev.get)[:2])


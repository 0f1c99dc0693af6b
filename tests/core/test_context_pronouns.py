"""Context-aware models learn a pronoun that only the previous sentence determines;
the sentence-level Transformer cannot (see tests/core/pronoun_task.py)."""
from __future__ import annotations

import pytest
import torch

from core.config import ModelConfig
from core.models import context_transformer, transformer, two_stage
from tests.core.pronoun_task import contrastive_accuracy, make_task, train_model

pytestmark = pytest.mark.slow
STEPS = 120


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models: a second intra-op thread only adds spin-waiting on a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _config(family: str, strategy: str = "ws") -> ModelConfig:
    return ModelConfig(family=family, d_model=32, ff_size=64, heads=2, enc_layers=2, dec_layers=1,
                       ctx_layers=1, dropout=0.0, strategy=strategy)


@pytest.fixture(scope="module")
def trained():
    task = make_task(seed=0)
    models, accuracy = {}, {}
    for family in ("transformer", "concat", "context_transformer"):
        torch.manual_seed(0)
        module = context_transformer if family == "context_transformer" else transformer
        model = module.build(_config(family), len(task.src_itos), len(task.tgt_itos))
        train_model(model, task.train, STEPS, seed=0)
        models[family], accuracy[family] = model, contrastive_accuracy(model, task.test)
    return task, models, accuracy


def test_task_is_balanced_and_held_out(trained):
    task, _, _ = trained
    assert len(task.test) == 48  # 8 adjectives x (3 masculine + 3 feminine)
    train_pairs = {(tuple(e.ctx), tuple(e.src)) for e in task.train}
    assert not any((tuple(c.ctx), tuple(c.src)) in train_pairs for c in task.test)
    # the two targets differ in the pronoun only
    assert all(sum(a != b for a, b in zip(c.correct, c.contrastive, strict=True)) == 1 for c in task.test)


def test_sentence_level_model_can_only_guess(trained):
    _, _, accuracy = trained
    assert 0.35 <= accuracy["transformer"] <= 0.65


def test_context_models_resolve_the_pronoun(trained):
    _, _, accuracy = trained
    assert accuracy["context_transformer"] >= 0.9
    assert accuracy["concat"] >= 0.9


def test_two_stage_learns_with_the_sentence_model_frozen(trained):
    task, models, _ = trained
    torch.manual_seed(0)
    model = context_transformer.build(_config("context_transformer", "ts"), len(task.src_itos), len(task.tgt_itos))
    two_stage.load_stage1(model, models["transformer"].state_dict())
    two_stage.freeze_for_stage2(model)
    frozen_decoder = model.decoder[0].cross_attn.q_proj.weight.detach().clone()
    train_model(model, task.train, STEPS, seed=1)
    assert torch.equal(model.decoder[0].cross_attn.q_proj.weight, frozen_decoder)
    assert contrastive_accuracy(model, task.test) >= 0.9

"""Run configurations small enough to train on a CPU inside a test.

- tiny_run_config: a 1-layer Luong local-p run for `create_run` on the demo corpus of a
  workspace (6 steps, validation every 3).
- tiny_luong_config: a 2-layer Luong global run for `train_model` on the reversal task
  (tests/core/reversal.py: reversal_train_data), keeping the 2 best checkpoints.
- tiny_sampled_config: the same model trained with a sampled softmax of 30 candidates
  (pass sampled_softmax=0 for the full softmax) on wide_reversal_train_data.
- tiny_transformer_config: a small Transformer preset (sentence-level or context
  model) for the demo corpus; SENTENCES the short document the context tests translate.
"""
from __future__ import annotations

from core.config import DataConfig, ModelConfig, RunConfig, TrainConfig, load_preset

DOCUMENT = "Compré una mesa nueva.\nEs muy bonita.\nLa trajeron el lunes.\n"
SENTENCES = DOCUMENT.splitlines()


def tiny_run_config(**train) -> RunConfig:
    """A run for the demo corpus: embeddings and hidden 16, vocabularies of 300 words,
    6 Adam steps; `train` overrides TrainConfig fields."""
    base = dict(optimizer="adam", lr=3e-3, max_steps=6, valid_every=3, seed=3, device="cpu",
                epochs=100)
    base.update(train)
    return RunConfig(
        name="tiny",
        model=ModelConfig(family="luong", emb_size=16, hidden_size=16, layers=1,
                          attention="local-p", score="general", dropout=0.0),
        data=DataConfig(src_vocab_size=300, tgt_vocab_size=300, batch_size=32, dev_sample=10),
        train=TrainConfig(**base))


def _luong_2_layers(**train) -> RunConfig:
    model = ModelConfig(family="luong", emb_size=16, hidden_size=24, layers=2, attention="global",
                        score="general", input_feeding=True, dropout=0.3)
    base = dict(optimizer="adam", lr=3e-3, epochs=50, max_steps=12, valid_every=4, seed=7,
                device="cpu")
    base.update(train)
    return RunConfig(name="tiny", model=model, train=TrainConfig(**base))


def tiny_luong_config(**train) -> RunConfig:
    """2-layer Luong global/general with input feeding (embeddings 16, hidden 24, dropout
    0.3), 12 Adam steps, validation every 4, the 2 best checkpoints kept."""
    return _luong_2_layers(**{"keep_best": 2, **train})


def tiny_sampled_config(**train) -> RunConfig:
    """tiny_luong_config's model and schedule (the default keep_best) with a sampled
    softmax of 30 candidate words."""
    return _luong_2_layers(**{"sampled_softmax": 30, **train})


def tiny_transformer_config(name: str, family: str, steps: int, joint: bool) -> RunConfig:
    """The transformer-cpu preset at d_model 16, one layer each side, no dropout, word
    vocabularies (joint or not), batches of 32 sentences, `steps` steps, validated once
    at the end; `family` is "transformer" or "context_transformer"."""
    cfg = load_preset("transformer-cpu")
    cfg.name = name
    m = cfg.model
    m.family, m.d_model, m.ff_size, m.heads, m.enc_layers, m.dec_layers = family, 16, 32, 2, 1, 1
    m.dropout = 0.0
    cfg.data.vocab, cfg.data.joint_vocab, cfg.data.batch_tokens = "word", joint, 0
    cfg.data.batch_size, cfg.data.dev_sample = 32, 4
    cfg.train.max_steps, cfg.train.valid_every, cfg.train.device = steps, steps, "cpu"
    cfg.train.lr, cfg.train.label_smoothing = 0.003, 0.0
    return cfg

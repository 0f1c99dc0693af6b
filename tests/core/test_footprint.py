"""The memory a config takes to train, estimated from its numbers before anything is
built (round 2, item 8): `train --set model.layers=3000` passed the old size check
(weights and gradients, counted on the meta device) and grew to 23.9 GB until the
kernel killed it; 100,000 layers kept that check itself busy for 32 minutes."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from core.config import ModelConfig, RunConfig, load_preset
from core.errors import TrainingError
from core.models.registry import VARIANTS, build_model, variant_config
from core.services.training import create_run
from core.train import footprint
from core.train.footprint import GIB, check_fits, estimate, parameter_count

ROOT = Path(__file__).resolve().parents[2]

# odd sizes, so that no two of them can be confused in a formula
SIZES = dict(emb_size=12, hidden_size=20, layers=2, dropout=0.0, max_src_len=17,
             maxout_pool=3)
TRANSFORMERS = [
    dict(family="transformer", d_model=24, ff_size=40, heads=4, enc_layers=2, dec_layers=3),
    dict(family="transformer", d_model=24, ff_size=40, heads=4, enc_layers=1, dec_layers=1,
         tie_embeddings=True),
    dict(family="concat", d_model=16, ff_size=36, heads=2, enc_layers=2, dec_layers=1),
    dict(family="context_transformer", d_model=16, ff_size=36, heads=2, enc_layers=3,
         dec_layers=2, ctx_layers=2, strategy="ws"),
    dict(family="context_transformer", d_model=16, ff_size=36, heads=2, enc_layers=2,
         dec_layers=1, ctx_layers=3, strategy="ws"),
    dict(family="context_transformer", d_model=16, ff_size=36, heads=2, enc_layers=2,
         dec_layers=1, ctx_layers=2, strategy="ts"),
]


def _real(config: ModelConfig, src: int = 31, tgt: int = 43) -> int:
    return sum(p.numel() for p in build_model(config, src, tgt).parameters())


@pytest.mark.parametrize(("name", "head"), [(v, False) for v, _ in VARIANTS] + [
    (v, True) for v, o in VARIANTS if o["family"] != "rnnencdec"])  # no head there
def test_the_count_of_every_recurrent_variant_is_the_models(name, head):
    config = variant_config(name, **SIZES)
    config.alignment_head = head
    assert parameter_count(config, 31, 43) == _real(config)


@pytest.mark.parametrize("sizes", TRANSFORMERS)
def test_the_count_of_every_transformer_family_is_the_models(sizes):
    config = ModelConfig(**sizes)
    assert parameter_count(config, 31, 43) == _real(config)


def _refuse_to_build(monkeypatch):
    import core.models.registry as registry

    def no_build(*args, **kwargs):
        raise AssertionError("a model was built")

    monkeypatch.setattr(registry, "build_model", no_build)


def test_a_model_too_large_is_refused_with_the_estimate_before_any_model_is_built(
        workspace, monkeypatch):
    """1,000 layers of the demo model (within every field's limit) passed the old check
    (weights and gradients: 8.4 GB of a machine's memory); the estimate counts Adam's
    moments and the activations of a batch too, and refuses it before the run exists,
    on a machine with 8 GiB available, without building anything."""
    _refuse_to_build(monkeypatch)
    monkeypatch.setattr(footprint, "available_memory", lambda device: 8 * GIB)
    config = load_preset("demo")
    config.model.layers = 1000
    config.train.device = "cpu"
    need = estimate(config, 4000, 4000)
    assert need.parameters * 8 < 8 * GIB < need.total  # the old check let it through
    with pytest.raises(TrainingError, match=(
            r"the model is too large to train here: 265,269,152 parameters, training needs "
            r"about [0-9.]+ GiB \(weights 1.0, gradients 1.0, optimiser 2.0, activations of "
            r"32 x 41 tokens [0-9.]+\), and this machine has 8.0 GiB available \(the limit\)")):
        create_run(workspace, "demo", config)
    assert workspace.list_runs() == []
    config.model.layers = 1
    assert create_run(workspace, "demo", config)  # the demo model itself fits


def test_the_estimate_of_the_largest_config_is_arithmetic(monkeypatch):
    """Every size at its limit: a count too large for memory, found without building
    anything (the meta device took 32 minutes for 100,000 layers)."""
    _refuse_to_build(monkeypatch)
    config = RunConfig().validate()
    m = config.model
    m.layers = m.enc_layers = m.dec_layers = m.ctx_layers = 1000
    m.emb_size = m.hidden_size = m.d_model = 65_536
    config.data.src_vocab_size = config.data.tgt_vocab_size = 10_000_000
    for family in ("luong", "rnnsearch", "transformer", "context_transformer"):
        m.family = family
        config.validate()
        need = estimate(config, 10_000_000, 10_000_000)
        assert need.parameters > 10**12 and need.total > 16 * need.parameters
        with pytest.raises(TrainingError, match="too large to train here"):
            check_fits(config, 10_000_000, 10_000_000, torch.device("cpu"), available=10**12)


def test_amp_sampled_softmax_and_sgd_change_the_estimate_as_they_change_training():
    config = load_preset("demo")
    base = estimate(config, 4000, 4000)
    assert base.optimiser == 2 * base.weights and base.casts == 0
    config.train.optimizer = "sgd"
    assert estimate(config, 4000, 4000).optimiser == 0
    config.train.amp = True
    assert estimate(config, 4000, 4000).casts == base.parameters * 2
    config.train.sampled_softmax = 100
    assert estimate(config, 4000, 4000).activations < base.activations
    assert estimate(config, 4000, 4000, "cuda").activations > \
        estimate(config, 4000, 4000, "cpu").activations


# A training step of one small config in a fresh process, its peak resident memory over
# the memory before the model was built (after a warm-up step of a tiny model, so that
# torch's own first-use allocations are in the baseline): the estimate must lie within
# FACTOR of it either way.
FACTOR = 2.0
MEASURE = textwrap.dedent("""
    import json, resource, sys
    import torch
    torch.set_num_threads(1)
    from core.config import load_preset
    from core.models.registry import build_model
    from core.train.loss import sequence_nll
    from core.train.optim import build_optimizer

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()

    def steps(config, vocab, n):
        torch.manual_seed(0)
        model = build_model(config.model, vocab, vocab)
        optimizer = build_optimizer(model.parameters(), config.train)
        b, t = config.data.batch_size, config.data.max_len + 1
        src = torch.randint(5, vocab, (b, t))
        tgt = torch.randint(5, vocab, (b, t + 1))
        lens = torch.full((b,), t)
        for _ in range(n):
            out = model(src, lens, tgt[:, :-1])
            loss, _, n_tokens = sequence_nll(out.scores, tgt[:, 1:], consume_scores=True)
            optimizer.zero_grad(set_to_none=True)
            (loss / n_tokens).backward()
            optimizer.step()
        return model

    config = load_preset("demo")
    config.model.dropout = 0.0
    tiny = load_preset("demo")
    tiny.model.emb_size = tiny.model.hidden_size = 8
    steps(tiny, 50, 2)
    before = rss()
    config.model.emb_size, config.model.hidden_size, config.model.layers = 256, 256, 2
    config.data.batch_size, config.data.max_len = 64, 30
    steps(config, int(sys.argv[1]), 2)
    # VmHWM, not ru_maxrss: exec keeps the forking parent's ru_maxrss (a pytest process
    # of 2 GB after a full suite), while VmHWM belongs to this process's own memory
    with open("/proc/self/status") as f:
        peak = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
    print(json.dumps({"peak": peak - before}))
""")


def test_the_estimate_is_within_a_factor_of_two_of_a_measured_peak():
    vocab = 6000
    def measure() -> int:
        out = subprocess.run([sys.executable, "-c", MEASURE, str(vocab)], cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out.splitlines()[-1])["peak"]

    measured = measure()
    config = load_preset("demo")
    config.model.emb_size, config.model.hidden_size, config.model.layers = 256, 256, 2
    config.data.batch_size, config.data.max_len = 64, 30
    estimated = estimate(config, vocab, vocab).total
    assert measured / FACTOR < estimated < measured * FACTOR, (estimated, measured)

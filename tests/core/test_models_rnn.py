"""The recurrent families against the Seq2Seq contract, hand-worked attention cases and
an overfit check on real Tatoeba pairs. Every variant in VARIANTS, tiny sizes."""
from __future__ import annotations

import math

import pytest
import torch

from core.config import ModelConfig
from core.errors import ConfigError
from core.models.attention import LuongAttention
from core.models.base import PAD, length_mask
from core.models.registry import VARIANTS, build_model, describe, variant_config
from core.models.rnn_common import reverse_padded
from tests.core.model_batches import VOCAB, random_batch, tatoeba_batch

NAMES = [name for name, _ in VARIANTS]
TINY = dict(emb_size=16, hidden_size=32, window=2, dropout=0.0, max_src_len=12)


def tiny(name: str, **over) -> torch.nn.Module:
    torch.manual_seed(0)
    return build_model(variant_config(name, **{**TINY, **over}), VOCAB, VOCAB)


def has_attention(name: str) -> bool:
    return not name.startswith("rnnencdec")


@pytest.mark.parametrize("name", NAMES)
def test_shapes_and_normalisation(name):
    model = tiny(name).eval()
    src, lens, tgt = random_batch([7, 5, 2], 9)
    with torch.no_grad():
        out = model(src, lens, tgt)
    assert out.log_probs.shape == (3, 9, VOCAB)
    assert torch.allclose(out.log_probs.logsumexp(-1), torch.zeros(3, 9), atol=1e-5)
    attn = out.attention
    assert attn.shape == (3, 9, 7)
    pad = ~length_mask(lens, 7)[:, None, :].expand_as(attn)
    assert torch.all(attn[pad] == 0)
    if not has_attention(name):
        assert torch.all(attn == 0)
        return
    assert torch.allclose(attn.sum(-1), torch.ones(3, 9), atol=1e-5)
    cfg = variant_config(name, **TINY)
    if cfg.attention == "global":
        assert out.positions is None
        return
    pos = out.positions
    assert pos.shape == (3, 9)
    assert torch.all(pos >= 0) and torch.all(pos <= lens[:, None])
    if cfg.attention == "local-m":  # p_t = t, clipped to the last word
        expected = torch.minimum(torch.arange(9)[None, :], lens[:, None] - 1).float()
        assert torch.equal(pos, expected)
    center = torch.minimum(pos.round(), (lens - 1)[:, None].float())
    outside = (torch.arange(7)[None, None, :] - center[:, :, None]).abs() > cfg.window
    assert torch.all(attn[outside] == 0)
    assert outside.any()  # the window really excludes something in this batch


@pytest.mark.parametrize("name", NAMES)
def test_forward_equals_stepwise_decoding(name):
    model = tiny(name).eval()
    src, lens, tgt = random_batch([6, 4, 3], 7, seed=1)
    with torch.no_grad():
        out = model(src, lens, tgt)
        enc = model.encode(src, lens)
        state = model.init_state(enc)
        logps, attns, poss = [], [], []
        for t in range(tgt.size(1)):
            for value in [*enc.values(), *state.values()]:
                assert value.size(0) == 3  # batch on dim 0 everywhere
            logp, attn, state, pos = model.step(tgt[:, t], state, enc)
            logps.append(logp)
            attns.append(attn)
            poss.append(pos)
    assert torch.allclose(torch.stack(logps, 1), out.log_probs, atol=1e-5)
    assert torch.allclose(torch.stack(attns, 1), out.attention, atol=1e-5)
    if out.positions is None:
        assert all(p is None for p in poss)
    else:
        assert torch.allclose(torch.stack(poss, 1), out.positions, atol=1e-5)


def test_decoding_builds_the_step_weights_once_across_searches(monkeypatch):
    """Luong's input-feeding steps reuse their concatenated (and cast) weights: one build
    for two beam searches of 5 steps, not one a step or a search; an optimiser step, an
    in-place change of a weight and another autocast dtype each build them anew."""
    from core.infer.beam import beam_search

    model = tiny("luong-global-general").eval()
    src, lens, _ = random_batch([6, 4, 3], 2, seed=1)
    builds = []
    feed_weights = type(model)._feed_weights

    def counted(self, *args, **kwargs):
        builds.append(kwargs)
        return feed_weights(self, *args, **kwargs)

    monkeypatch.setattr(type(model), "_feed_weights", counted)

    def search():
        hyps = beam_search(model, src, lens, beam=3, max_len_abs=5, max_len_ratio=1e9,
                           min_len=5)
        assert [len(h[0].tokens) for h in hyps] == [5, 5, 5]
        return [h[0].tokens for h in hyps]

    with torch.no_grad():
        first = search()
        assert search() == first
    assert len(builds) == 1
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    opt.step()  # a step (here one that changes nothing) drops them
    with torch.no_grad():
        assert search() == first
    assert len(builds) == 2
    with torch.no_grad():
        model.cells[1].bias_hh.add_(0.0)  # moves the version counter
        search()
    assert len(builds) == 3
    if torch.backends.mkldnn.is_available():
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            search()
        assert len(builds) == 4


def test_decoding_after_an_optimiser_step_uses_the_new_weights():
    """A search after training uses the trained weights, although fused Adam changes them
    without bumping their version counters; so do steps after load_state_dict. Each is
    compared with a step computed with gradients on, which builds the weights afresh."""
    from core.config import TrainConfig
    from core.train.optim import build_optimizer

    model = tiny("luong-global-general")
    src, lens, tgt = random_batch([6, 4, 3], 4, seed=1)

    def step(grad: bool) -> torch.Tensor:
        model.eval()
        with torch.set_grad_enabled(grad):
            enc = model.encode(src, lens)
            return model.step(tgt[:, 0], model.init_state(enc), enc)[0].detach()

    before = step(False)
    opt = build_optimizer(model.parameters(), TrainConfig(optimizer="adam", lr=0.05))
    model.train()
    model(src, lens, tgt).log_probs.mean().backward()
    opt.step()
    after = step(False)
    assert (after - before).abs().max() > 1e-3
    assert torch.allclose(after, step(True), atol=1e-6)
    torch.manual_seed(3)
    other = build_model(variant_config("luong-global-general", **TINY), VOCAB, VOCAB)
    model.load_state_dict(other.state_dict())
    loaded = step(False)
    assert (loaded - after).abs().max() > 1e-3
    assert torch.allclose(loaded, step(True), atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_gradients_reach_every_parameter(name):
    model = tiny(name, dropout=0.2).train()
    src, lens, tgt = random_batch([8, 6, 3, 5], 7, seed=2)
    gold = torch.randint(4, VOCAB, tgt.shape, generator=torch.Generator().manual_seed(3))
    out = model(src, lens, tgt)
    torch.nn.functional.nll_loss(out.log_probs.flatten(0, 1), gold.flatten()).backward()
    for pname, p in model.named_parameters():
        assert p.grad is not None, pname
        assert p.grad.abs().sum() > 0, pname
    if "local-p" in name:
        names = {n for n, _ in model.named_parameters()}
        assert {"attention.w_p.weight", "attention.v_p.weight"} <= names


@pytest.mark.parametrize("name", NAMES)
def test_padding_invariance(name):
    model = tiny(name).eval()
    src, lens, tgt = random_batch([3], 4, seed=4)
    long_src, long_lens, long_tgt = random_batch([9], 8, seed=5)
    both_src = torch.zeros(2, 9, dtype=torch.long)
    both_src[0, :3], both_src[1] = src[0], long_src[0]
    both_tgt = torch.zeros(2, 8, dtype=torch.long)
    both_tgt[0, :4], both_tgt[1] = tgt[0], long_tgt[0]
    with torch.no_grad():
        alone = model(src, lens, tgt)
        joint = model(both_src, torch.tensor([3, 9]), both_tgt)
    assert torch.allclose(joint.log_probs[0, :4], alone.log_probs[0], atol=1e-5)
    assert torch.allclose(joint.attention[0, :4, :3], alone.attention[0], atol=1e-5)
    assert torch.all(joint.attention[0, :, 3:] == 0)
    if alone.positions is not None:
        assert torch.allclose(joint.positions[0, :4], alone.positions[0], atol=1e-5)


def test_a_bidirectional_encoder_joins_each_layers_final_states_forward_then_backward():
    """model.bidirectional: each direction is hidden_size / 2 wide; the decoder starts
    from layer l's [forward; backward] final states (OpenNMT-py's brnn layout)."""
    from core.models.rnn_common import join_directions

    model = tiny("luong-global-general-bi").eval()
    assert model.encoder.rnn.hidden_size == 16 and model.encoder.rnn.bidirectional
    src, lens, _ = random_batch([5, 3], 2, seed=2)
    with torch.no_grad():
        enc = model.encode(src, lens)
        _, (h_n, c_n) = model.encoder.rnn(model.encoder.embed(src[1:, :3]))
    assert enc["h0"].shape == (2, 2, 32) and enc["memory"].shape == (2, 5, 32)
    # sentence 2 (3 tokens, no padding when run alone): layer 2 = h_n[2] (forward), h_n[3]
    assert torch.allclose(enc["h0"][1, 1], torch.cat([h_n[2, 0], h_n[3, 0]]), atol=1e-6)
    assert torch.allclose(enc["c0"][1, 0], torch.cat([c_n[0, 0], c_n[1, 0]]), atol=1e-6)
    assert torch.equal(join_directions(torch.arange(8.0).view(4, 1, 2)),
                       torch.tensor([[[0.0, 1, 2, 3]], [[4.0, 5, 6, 7]]]))
    with pytest.raises(ConfigError, match="model.bidirectional needs family 'luong' and an even"):
        ModelConfig(family="luong", hidden_size=33, bidirectional=True).validate()
    with pytest.raises(ConfigError, match="model.bidirectional needs family 'luong'"):
        ModelConfig(family="rnnsearch", cell="gru", score="additive", bidirectional=True).validate()


def test_reverse_padded_by_hand():
    x = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0], [6, 7, 8, 9]])
    lens = torch.tensor([3, 2, 4])
    expected = torch.tensor([[3, 2, 1, 0], [5, 4, 0, 0], [9, 8, 7, 6]])
    assert torch.equal(reverse_padded(x, lens), expected)
    feats = x[:, :, None].expand(3, 4, 2).float()
    assert torch.equal(reverse_padded(feats, lens)[:, :, 1], expected.float())


def test_reversed_encoder_reads_backwards_but_reports_natural_order():
    """memory at natural position j is the encoder state after reading words len-1..j."""
    model = tiny("luong-global-general-rev").eval()
    src, lens, _ = random_batch([5], 1, seed=6)
    with torch.no_grad():
        memory = model.encode(src, lens)["memory"][0]  # S x H
        plain, _, _ = model.encoder(src.flip(1), lens)  # the reversed sentence, read forwards
    assert torch.allclose(memory, plain[0].flip(0), atol=1e-6)


def test_local_p_gaussian_by_hand():
    """v_p = 0 -> p_t = S / 2 = 3; equal scores -> softmax 1/5 over the window 1..5;
    sigma = D / 2 = 1 -> weights exp(-(s-3)^2 / 2) / 5 (sum < 1, eq. 10), reported
    renormalised."""
    att = LuongAttention("local-p", "dot", hidden_size=4, window=2)
    with torch.no_grad():
        att.v_p.weight.zero_()
    memory = torch.zeros(1, 6, 4)
    memory[0, :, 0] = torch.arange(6.0)  # feature 0 = source position; dot scores stay 0
    query = torch.zeros(1, 1, 4)
    context, reported, pos = att(query, att.prepare(memory), memory, torch.tensor([6]))
    assert pos.item() == pytest.approx(3.0)
    g = [0.0] + [math.exp(-((s - 3) ** 2) / 2) for s in range(1, 6)]
    assert reported[0, 0].tolist() == pytest.approx([v / sum(g) for v in g], abs=1e-6)
    assert context[0, 0, 0].item() == pytest.approx(sum(s * v / 5 for s, v in enumerate(g)), abs=1e-6)


def test_location_score_truncates_and_renormalises():
    """W_a produces max_src_len = 4 scores: a 3-word sentence renormalises over its 3
    positions; in a 6-word batch positions >= 4 get exactly 0."""
    att = LuongAttention("global", "location", hidden_size=2, max_src_len=4)
    with torch.no_grad():
        att.score.w_loc.weight.copy_(torch.tensor([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]]))
    query = torch.tensor([[[1.0, 0.0]], [[1.0, 0.0]]])  # scores 0, 1, 2, 3
    memory = torch.zeros(2, 6, 2)
    _, weights, _ = att(query, att.prepare(memory), memory, torch.tensor([3, 6]))
    e = [math.exp(v) for v in range(3)]
    assert weights[0, 0].tolist() == pytest.approx([v / sum(e) for v in e] + [0, 0, 0], abs=1e-6)
    e = [math.exp(v) for v in range(4)]
    assert weights[1, 0].tolist() == pytest.approx([v / sum(e) for v in e] + [0, 0], abs=1e-6)


def test_config_errors_and_description():
    with pytest.raises(ConfigError, match="family"):
        build_model(ModelConfig(family="nope"), 10, 10)
    with pytest.raises(ConfigError, match="reverse_source"):
        build_model(variant_config("rnnsearch", reverse_source=True), 10, 10)
    with pytest.raises(ConfigError, match="lstm"):
        build_model(variant_config("luong-global-dot", cell="gru"), 10, 10)
    cfg = variant_config("luong-local-p-general", layers=2, hidden_size=256, window=10)
    assert describe(cfg) == "Luong local-p D=10 general, input feeding, 2x256 LSTM"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_overfits_real_batch(name, shared):
    src, lens, tgt_in, tgt_out, sv, tv = tatoeba_batch(shared("tatoeba-spa-eng", "spa.txt"))
    assert lens.float().mean() > 4  # real sentences, not one-word greetings
    torch.manual_seed(0)
    cfg = variant_config(name, emb_size=32, hidden_size=64, layers=1, dropout=0.0, window=3)
    model = build_model(cfg, sv, tv)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    first = None
    for _ in range(300):
        out = model(src, lens, tgt_in)
        loss = torch.nn.functional.nll_loss(
            out.log_probs.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD
        )
        first = loss.item() if first is None else first
        if loss.item() < 0.08:
            break
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert first > 2.0  # it started from ignorance ...
    assert loss.item() < 0.1  # ... and memorised the batch

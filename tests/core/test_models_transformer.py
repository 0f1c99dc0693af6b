"""The Transformer families: shapes, masks, incremental decoding, context use, and the
weight-sharing / two-stage strategies of the context-aware model."""
from __future__ import annotations

import pytest
import torch

from core.config import ModelConfig
from core.errors import CheckpointError
from core.models import context_transformer, transformer, two_stage
from core.models.base import BOS, select_batch

FAMILIES = ["transformer", "concat", "context_transformer"]
SRC_V, TGT_V = 20, 22


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models: a second intra-op thread only adds spin-waiting on a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def make(family: str, seed: int = 0, **over) -> torch.nn.Module:
    torch.manual_seed(seed)
    fields = dict(family=family, d_model=32, ff_size=64, heads=2, enc_layers=2, dec_layers=2,
                  ctx_layers=1, dropout=0.0)
    fields.update(over)
    cfg = ModelConfig(**fields)
    mod = context_transformer if family == "context_transformer" else transformer
    return mod.build(cfg, SRC_V, TGT_V).eval()


def batch() -> dict[str, torch.Tensor]:
    return {
        "src": torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0], [11, 0, 0, 0]]),
        "src_lens": torch.tensor([4, 2, 1]),
        "tgt_in": torch.tensor([[BOS, 5, 6, 7, 8], [BOS, 8, 9, 0, 0], [BOS, 4, 4, 4, 0]]),
        "ctx": torch.tensor([[12, 13, 14], [4, 0, 0], [15, 16, 0]]),
        "ctx_lens": torch.tensor([3, 1, 2]),
    }


def run(model, b):
    return model(b["src"], b["src_lens"], b["tgt_in"], ctx=b["ctx"], ctx_lens=b["ctx_lens"])


@pytest.mark.parametrize("family", FAMILIES)
def test_shapes_and_attention_masks(family):
    model, b = make(family), batch()
    out = run(model, b)
    assert out.log_probs.shape == (3, 5, TGT_V)
    assert torch.allclose(out.log_probs.exp().sum(-1), torch.ones(3, 5), atol=1e-5)
    assert out.attention.shape == (3, 5, 4)
    real = torch.arange(4)[None, :] < b["src_lens"][:, None]  # batch x src
    assert torch.allclose(out.attention.sum(-1), torch.ones(3, 5), atol=1e-5)
    assert torch.all(out.attention.masked_select(~real[:, None, :].expand(-1, 5, -1)) == 0)
    assert torch.all(out.attention.masked_select(real[:, None, :].expand(-1, 5, -1)) > 0)
    heads = model.last_cross_attention
    assert heads.shape == (2, 3, 2, 5, 4)  # layers x batch x heads x tgt x src
    assert torch.allclose(heads[-1].mean(1), out.attention)
    assert torch.allclose(heads.sum(-1), torch.ones(2, 3, 2, 5), atol=1e-5)


def test_gates_are_per_token_and_in_unit_interval():
    model, b = make("context_transformer"), batch()
    out = run(model, b)
    real = torch.arange(4)[None, :] < b["src_lens"][:, None]
    assert out.gates.shape == (3, 4)
    assert torch.all((out.gates[real] > 0) & (out.gates[real] < 1))
    assert torch.all(out.gates[~real] == 0)
    full = model.last_gates_full
    assert full.shape == (3, 4, 32)
    assert torch.all((full[real] > 0) & (full[real] < 1))
    assert torch.allclose(full.mean(-1), out.gates)
    assert model.last_context_attention.shape == (3, 2, 4, 3)  # batch x heads x src x ctx


@pytest.mark.parametrize("family", FAMILIES)
def test_forward_equals_step_decoding(family):
    model, b = make(family), batch()
    out = run(model, b)
    enc = model.encode(b["src"], b["src_lens"], ctx=b["ctx"], ctx_lens=b["ctx_lens"])
    state = model.init_state(enc)
    logps, attns = [], []
    for t in range(b["tgt_in"].size(1)):
        logp, attn, state, pos = model.step(b["tgt_in"][:, t], state, enc)
        assert pos is None
        logps.append(logp)
        attns.append(attn)
    assert torch.allclose(torch.stack(logps, 1), out.log_probs, atol=1e-5)
    assert torch.allclose(torch.stack(attns, 1), out.attention, atol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_reordered_state_matches_reordered_batch(family):
    """What beam search does: reorder enc and state mid-way, keep stepping."""
    model, b = make(family), batch()
    order = torch.tensor([2, 0, 0, 1])
    enc = model.encode(b["src"], b["src_lens"], ctx=b["ctx"], ctx_lens=b["ctx_lens"])
    state = model.init_state(enc)
    for t in range(2):
        _, _, state, _ = model.step(b["tgt_in"][:, t], state, enc)
    enc, state = select_batch(enc, order), select_batch(state, order)
    for t in range(2, 5):
        logp, attn, state, _ = model.step(b["tgt_in"][order, t], state, enc)
    reordered = {k: v[order] for k, v in b.items()}
    out = run(model, reordered)
    assert torch.allclose(logp, out.log_probs[:, 4], atol=1e-5)
    assert torch.allclose(attn, out.attention[:, 4], atol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_extra_padding_changes_nothing(family):
    model, b = make(family), batch()
    out = run(model, b)
    padded = dict(b)
    padded["src"] = torch.cat([b["src"], torch.zeros(3, 3, dtype=torch.long)], 1)
    padded["ctx"] = torch.cat([b["ctx"], torch.zeros(3, 2, dtype=torch.long)], 1)
    out2 = run(model, padded)
    assert torch.allclose(out2.log_probs, out.log_probs, atol=1e-5)
    assert torch.allclose(out2.attention[:, :, :4], out.attention, atol=1e-6)
    assert torch.all(out2.attention[:, :, 4:] == 0)


@pytest.mark.parametrize("family,uses_context", [
    ("transformer", False), ("concat", True), ("context_transformer", True)])
def test_previous_sentence_changes_the_distribution(family, uses_context):
    model, b = make(family), batch()
    before = run(model, b).log_probs
    changed = dict(b)
    changed["ctx"] = b["ctx"].clone()
    changed["ctx"][0, 1] = 17  # another word in the first row's previous sentence only
    after = run(model, changed).log_probs
    assert torch.equal(after[1:], before[1:])  # other rows untouched
    if uses_context:
        assert (after[0] - before[0]).abs().max() > 1e-4
    else:
        assert torch.equal(after, before)


def test_concat_context_packs_rows_by_hand():
    src = torch.tensor([[5, 6, 0], [7, 8, 9]])
    ctx = torch.tensor([[10, 11, 12], [13, 0, 0]])
    tokens, lens, offsets = transformer.concat_context(
        src, torch.tensor([2, 3]), ctx, torch.tensor([3, 1]), break_id=3)
    assert tokens.tolist() == [[10, 11, 12, 3, 5, 6], [13, 3, 7, 8, 9, 0]]
    assert lens.tolist() == [6, 5]
    assert offsets.tolist() == [4, 2]


def test_concat_is_a_transformer_over_the_concatenation():
    b = batch()
    concat, plain = make("concat"), make("transformer", seed=1)
    plain.load_state_dict(concat.state_dict())
    tokens, lens, offsets = transformer.concat_context(b["src"], b["src_lens"], b["ctx"], b["ctx_lens"], 3)
    out_c = run(concat, b)
    out_p = plain(tokens, lens, b["tgt_in"])
    assert torch.allclose(out_c.log_probs, out_p.log_probs, atol=1e-6)
    # the reported attention is the current sentence's slice of the full one, renormalised
    # per head (layers x batch x heads x tgt x src), then averaged over heads
    full = plain.last_cross_attention
    for i in range(3):
        start, n = int(offsets[i]), int(b["src_lens"][i])
        piece = full[:, i, :, :, start:start + n]
        piece = piece / piece.sum(-1, keepdim=True)
        assert torch.allclose(concat.last_cross_attention[:, i, :, :, :n], piece, atol=1e-5)
        assert torch.allclose(out_c.attention[i, :, :n], piece[-1].mean(0), atol=1e-5)
    assert torch.allclose(concat.last_cross_attention_full[-1].mean(1), out_p.attention, atol=1e-6)
    # without context the concat model is the sentence-level model
    alone = concat(b["src"], b["src_lens"], b["tgt_in"])
    assert torch.allclose(alone.log_probs, plain(b["src"], b["src_lens"], b["tgt_in"]).log_probs, atol=1e-6)


def test_context_model_requires_context():
    model, b = make("context_transformer"), batch()
    with pytest.raises(ValueError, match="start-of-document"):
        model(b["src"], b["src_lens"], b["tgt_in"])
    with pytest.raises(ValueError, match=">= 1"):
        model(b["src"], b["src_lens"], b["tgt_in"], ctx=b["ctx"], ctx_lens=torch.tensor([3, 0, 2]))


def test_weight_sharing_uses_the_same_parameters():
    model = make("context_transformer", enc_layers=2, ctx_layers=3, strategy="ws")
    assert model.ctx_encoder[0] is model.encoder[0]
    assert model.ctx_encoder[0].self_attn.q_proj.weight is model.encoder[0].self_attn.q_proj.weight
    # only enc_layers - 1 = 1 ordinary source layer exists: deeper context layers are own
    assert all(model.ctx_encoder[i] is not layer for i in (1, 2) for layer in model.encoder)
    ts = make("context_transformer", enc_layers=2, ctx_layers=3, strategy="ts")
    ws_count = sum(p.numel() for p in model.parameters())
    ts_count = sum(p.numel() for p in ts.parameters())
    layer_size = sum(p.numel() for p in model.encoder[0].parameters())
    assert ts_count - ws_count == layer_size
    assert ts.ctx_encoder[0] is not ts.encoder[0]


def test_context_parameter_names():
    names = two_stage.context_parameter_names(make("context_transformer", strategy="ts"))
    prefixes = {n.split(".")[0] if n.startswith("ctx_encoder") else ".".join(n.split(".")[:3]) for n in names}
    assert prefixes == {"ctx_encoder", "encoder.1.ctx_attn", "encoder.1.ctx_norm", "encoder.1.gate"}
    assert "encoder.1.gate.weight" in names and "encoder.1.self_attn.q_proj.weight" not in names


def test_stage2_trains_only_the_context_parts():
    model = make("context_transformer", strategy="ts").train()
    trainable = two_stage.freeze_for_stage2(model)
    assert trainable == two_stage.context_parameter_names(model)
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if n not in trainable}
    ctx_before = {n: p.detach().clone() for n, p in model.named_parameters() if n in trainable}
    assert frozen and ctx_before
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    b = batch()
    target = torch.roll(b["tgt_in"], -1, dims=1)
    for _ in range(3):
        out = run(model, b)
        loss = torch.nn.functional.nll_loss(out.log_probs.flatten(0, 1), target.flatten(), ignore_index=0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    params = dict(model.named_parameters())
    assert all(torch.equal(params[n], v) for n, v in frozen.items())
    changed = [n for n, v in ctx_before.items() if not torch.equal(params[n], v)]
    assert set(changed) == set(ctx_before)
    with pytest.raises(ValueError, match="ts"):
        two_stage.freeze_for_stage2(make("context_transformer", strategy="ws"))


def test_load_stage1_reproduces_the_sentence_model_when_the_gate_is_shut():
    b = batch()
    sentence = make("transformer", seed=3)
    model = make("context_transformer", seed=4, strategy="ts")
    loaded = two_stage.load_stage1(model, sentence.state_dict())
    assert "decoder.1.cross_attn.v_proj.weight" in loaded and "ctx_encoder.0.ff.0.weight" in loaded
    assert torch.equal(model.ctx_encoder[0].ff[0].weight, sentence.encoder[0].ff[0].weight)
    assert torch.equal(model.encoder[1].self_attn.k_proj.bias, sentence.encoder[1].self_attn.k_proj.bias)
    # stage 2 starts with the gate open towards the source, for every token and dimension
    gates = run(model, b).gates
    real = b["src"] != 0
    assert torch.allclose(gates[real], torch.full_like(gates[real], torch.sigmoid(torch.tensor(3.0)).item()))
    with torch.no_grad():  # lambda = sigmoid(40) == 1 in float32: O' = O, context ignored
        model.encoder[1].gate.weight.zero_()
        model.encoder[1].gate.bias.fill_(40.0)
    ref = sentence(b["src"], b["src_lens"], b["tgt_in"])
    out = run(model, b)
    assert torch.allclose(out.log_probs, ref.log_probs, atol=1e-5)
    assert torch.allclose(out.attention, ref.attention, atol=1e-5)


def test_load_stage1_rejects_another_size():
    model = make("context_transformer", strategy="ts")
    with pytest.raises(CheckpointError, match="shape differs"):
        two_stage.load_stage1(model, make("transformer", ff_size=48).state_dict())
    with pytest.raises(CheckpointError, match="missing"):
        two_stage.load_stage1(model, make("transformer", dec_layers=1).state_dict())


def test_tied_embeddings_and_build_errors():
    model = make("transformer", tie_embeddings=True)
    assert model.generator.weight is model.tgt_embed.weight
    with pytest.raises(ValueError):
        transformer.build(ModelConfig(family="luong"), SRC_V, TGT_V)
    with pytest.raises(ValueError):
        context_transformer.build(ModelConfig(family="transformer"), SRC_V, TGT_V)


@pytest.mark.parametrize("family", FAMILIES)
def test_sampled_softmax_restricts_the_generator_to_the_candidates(family):
    """Training's out_vocab (Jean et al.): log-probs over K words = the full log-probs
    renormalised over those words; with tied embeddings too."""
    for tie in (False, True):
        model, b = make(family, tie_embeddings=tie), batch()
        out_vocab = torch.tensor([0, 3, 5, 9, TGT_V - 1])
        with torch.no_grad():
            full = run(model, b).log_probs
            sub = model(b["src"], b["src_lens"], b["tgt_in"], ctx=b["ctx"], ctx_lens=b["ctx_lens"],
                        out_vocab=out_vocab).log_probs
        assert sub.shape == (3, 5, 5)
        expected = full[..., out_vocab] - full[..., out_vocab].logsumexp(-1, keepdim=True)
        assert torch.allclose(sub, expected, atol=1e-5)

"""core.train.optim.embedding_rows finds the parameters whose gradient is nonzero only in
the looked-up rows, and clip_gradients over those rows gives the full gradients' norm and
clipping. A parameter with any other use (a tied output layer, an extra term) is left out."""
from __future__ import annotations

import pytest
import torch

from core.config import ModelConfig
from core.models.base import BOS, PAD
from core.models.registry import build_model, variant_config
from core.train.loss import sequence_nll
from core.train.optim import clip_gradients, embedding_rows

SRC_V, TGT_V = 50, 40


def batch(seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    lens = torch.tensor([9, 6, 4])
    src = torch.randint(4, SRC_V, (3, 9), generator=g)
    src[1, 6:], src[2, 4:] = PAD, PAD
    tgt = torch.randint(4, TGT_V, (3, 6), generator=g)
    tgt_in = torch.cat([torch.full((3, 1), BOS), tgt[:, :-1]], 1)
    tgt[2, 4:], tgt_in[2, 5:] = PAD, PAD
    return src, lens, tgt_in, tgt


def training_loss(model, seed: int = 1):
    src, lens, tgt_in, tgt = batch(seed)
    out = model(src, lens, tgt_in)
    loss_sum, _, n = sequence_nll(out.scores, tgt)
    return loss_sum / n, src, tgt_in


def full_norm(model) -> float:
    return float(torch.sqrt(sum((p.grad.double() ** 2).sum() for p in model.parameters()
                                if p.grad is not None)))


@pytest.mark.parametrize("config", [
    variant_config("luong-global-general", emb_size=8, hidden_size=16),
    variant_config("rnnsearch", emb_size=8, hidden_size=16),
    ModelConfig(family="transformer", d_model=16, ff_size=32, heads=2, enc_layers=1,
                dec_layers=1),
])
def test_the_rows_hold_every_nonzero_row_of_the_embeddings_gradients(config):
    torch.manual_seed(0)
    model = build_model(config, SRC_V, TGT_V).double().train()
    loss, src, tgt_in = training_loss(model)
    rows = embedding_rows(loss)
    loss.backward()
    looked_up = {SRC_V: set(src.flatten().tolist()), TGT_V: set(tgt_in.flatten().tolist())}
    tables = [m.weight for m in model.modules() if isinstance(m, torch.nn.Embedding)]
    assert {id(p) for p in rows} == {id(p) for p in tables}  # the source and target tables
    assert sorted(p.size(0) for p in rows) == [TGT_V, SRC_V]
    for param, ids in rows.items():
        assert set(ids.tolist()) == looked_up[param.size(0)]
        untouched = torch.ones(param.size(0), dtype=torch.bool)
        untouched[ids] = False
        assert param.grad[untouched].abs().max().item() == 0.0  # the premise
        assert param.grad[ids].abs().sum().item() > 0
    norm = clip_gradients(model.parameters(), 1e9, rows)
    assert float(norm) == pytest.approx(full_norm(model), rel=1e-12)


def test_a_tied_output_layer_makes_the_target_embedding_dense():
    torch.manual_seed(0)
    config = ModelConfig(family="transformer", d_model=16, ff_size=32, heads=2, enc_layers=1,
                         dec_layers=1, tie_embeddings=True)
    model = build_model(config, SRC_V, TGT_V).double().train()
    loss, _, _ = training_loss(model)
    rows = embedding_rows(loss)
    assert [p.size(0) for p in rows] == [SRC_V]  # the target embedding is the generator too
    loss.backward()
    assert float(clip_gradients(model.parameters(), 1e9, rows)) == \
        pytest.approx(full_norm(model), rel=1e-12)


def test_any_other_use_or_an_earlier_gradient_leaves_a_parameter_out():
    emb = torch.nn.Embedding(10, 3)
    other = torch.nn.Embedding(10, 3)
    ids = torch.tensor([[1, 2], [2, 7]])
    # two lookups of one table: the union of their rows
    loss = emb(ids).sum() + emb(torch.tensor([4])).sum() + (other(ids) ** 2).sum()
    rows = embedding_rows(loss)
    assert sorted(rows[emb.weight].tolist()) == [1, 2, 2, 4, 7]
    assert sorted(rows[other.weight].tolist()) == [1, 2, 2, 7]
    # a term that reads the whole table
    loss = emb(ids).sum() + emb.weight.mean() + other(ids).sum()
    assert list(embedding_rows(loss)) == [other.weight]
    # a gradient from an earlier backward (accumulation): its rows are unknown
    other(torch.tensor([9])).sum().backward()
    assert embedding_rows(emb(ids).sum() + other(ids).sum()).keys() == {emb.weight}
    assert embedding_rows(torch.tensor(1.0)) == {}


def test_clipping_over_the_rows_scales_as_over_the_whole_gradients():
    torch.manual_seed(0)
    model = build_model(variant_config("luong-global-general", emb_size=8, hidden_size=16),
                        SRC_V, TGT_V).train()
    clipped = {}
    for use_rows in (False, True):
        model.zero_grad(set_to_none=True)
        torch.manual_seed(3)  # the same dropout masks
        loss, _, _ = training_loss(model)
        rows = embedding_rows(loss) if use_rows else None
        (loss * 1000).backward()  # far above the limit
        norm = clip_gradients(model.parameters(), 1.0, rows)
        clipped[use_rows] = (float(norm), {n: p.grad.clone() for n, p in model.named_parameters()})
    assert clipped[True][0] == pytest.approx(clipped[False][0], rel=1e-5)
    assert clipped[True][0] > 100
    for name, grad in clipped[False][1].items():
        torch.testing.assert_close(clipped[True][1][name], grad, rtol=1e-5, atol=1e-9)
    total = torch.sqrt(sum((g.double() ** 2).sum() for g in clipped[True][1].values()))
    assert float(total) == pytest.approx(1.0, rel=1e-4)

"""The input-feeding decoder through shape buckets (core/models/feed_graphs.py) against
the fused decoder itself: the same outputs and gradients whatever the padding, stale or
non-finite values in the buffers, two forwards before a backward, the bucket cache's
memory limit; on a GPU the captured CUDA graphs against the eager decoder."""
from __future__ import annotations

import pytest
import torch

import core.models.feed_decoder as fd
import core.models.feed_graphs as fg
from core.models.base import BOS, PAD, length_mask
from tests.core.decoder_gradients import VOCAB, decoder_only, forward_backward, model_and_batch


def batch_of(batch: int, src_len: int, steps: int, seed: int, device="cpu"):
    """A random batch: src batch x src_len (the longest sentence that long), lens, tgt
    batch x steps."""
    g = torch.Generator().manual_seed(seed)
    lens = torch.randint(1, src_len + 1, (batch,), generator=g)
    lens[batch // 2] = src_len
    src = torch.randint(4, VOCAB, (batch, src_len), generator=g).masked_fill(
        ~length_mask(lens), PAD)
    tgt = torch.randint(4, VOCAB, (batch, steps), generator=g)
    tgt[:, 0] = BOS
    return src.to(device), lens.to(device), tgt.to(device)


def run(model, batch, graphed: bool, device="cpu", **kw):
    """forward_backward through the buckets (graphed) or the fused decoder."""
    model.graph_decoder_devices = (device,) if graphed else ()
    model.graph_decoder_attentions = ("global", "local-p")
    model.fuse_decoder_devices = () if graphed else (device,)
    return forward_backward(model, *batch, True, **kw)


def assert_same(a, b, rel=1e-12):
    """Outputs (local-p's positions too) and every gradient of two forward_backward
    results equal to rel."""
    assert (a[3] is None) == (b[3] is None)
    for x, y in ((a[0], b[0]), (a[1], b[1])) + (() if a[3] is None else ((a[3], b[3]),)):
        assert x.shape == y.shape
        assert (x - y).abs().max() <= rel * max(1.0, y.abs().max().item())
    assert a[2].keys() == b[2].keys()
    for name, g in b[2].items():
        scale = g.abs().max()
        assert scale > 0, name
        assert (a[2][name] - g).abs().max() <= rel * scale, name


def value_keep(x, p):
    """A dropout mask that depends on x's values only (not on the random stream), so
    the padded and the unpadded decoder drop the same real elements."""
    return torch.sin(x.double() * 7919.0) > (2 * p - 1)


@pytest.fixture
def buckets(count_calls):
    return count_calls(fg, "_Bucket")


def test_buckets_give_the_fused_decoders_values_and_gradients(buckets):
    """float64, no dropout: batches of different shapes (three in one bucket, the later
    ones smaller, so the padding holds an earlier batch's values) give the fused
    decoder's outputs and gradients to rounding; the cache builds one bucket a shape."""
    model, *_ = model_and_batch("luong-global-general", layers=2, dropout=0.0)
    shapes = [(13, 14, 15), (9, 10, 10), (16, 16, 16), (3, 20, 4), (5, 2, 2)]
    for i, (b, s, t) in enumerate(shapes):
        batch = batch_of(b, s, t, seed=i)
        graphed = run(model, batch, True)
        assert graphed[0].shape == (b, t, VOCAB) and graphed[1].shape == (b, t, s)
        assert_same(graphed, run(model, batch, False))
    graphs = model._decoder_graphs(torch.device("cpu"))
    assert len(buckets) == graphs.captured == 3  # (16, 16, 16) x 3, (24, 8, 8), (8, 8, 8)
    assert sorted(k[1:4] for k in graphs.buckets) == [(8, 8, 8), (8, 8, 24), (16, 16, 16)]


def test_local_p_buckets_give_the_fused_decoders_values_positions_and_gradients(buckets):
    """Local-p (window D = 3, so windows cut words off; reversed source): the buckets
    give the fused decoder's outputs, positions and gradients (W_p and v_p included) to
    rounding, over shapes in one bucket and in others; padded sentences are one word
    long, so nothing padded is NaN (the gradients are finite)."""
    model, *_ = model_and_batch("luong-local-p-general", layers=2, dropout=0.0, window=3,
                                reverse_source=True)
    for i, shape in enumerate(((13, 14, 15), (9, 10, 10), (3, 20, 4), (5, 2, 2))):
        batch = batch_of(*shape, seed=i)
        graphed = run(model, batch, True)
        assert graphed[3].shape == (shape[0], shape[2])
        assert (graphed[1] == 0).float().mean() > 0.2  # the windows leave words out
        assert all(torch.isfinite(g).all() for g in graphed[2].values())
        assert {"attention.w_p.weight", "attention.v_p.weight"} <= graphed[2].keys()
        assert_same(graphed, run(model, batch, False))
    assert len(buckets) == 3


def test_dropout_and_input_feeding_variants(monkeypatch):
    """With dropout (masks that depend on the values, so both decoders drop the same
    elements), three layers, the dot score and a reversed source: the same values and
    gradients."""
    dropped = []

    def keep(x, p):
        kept = value_keep(x, p)
        if x.abs().sum() > 0:  # a bucket's first pass runs on zeros
            dropped.append(1 - kept.double().mean().item())
        return kept

    monkeypatch.setattr(fd, "draw_keep", keep)
    for name, layers in (("luong-global-general", 2), ("luong-global-dot", 3),
                         ("luong-global-general-rev", 1), ("luong-local-p-general", 2),
                         ("luong-local-p-dot", 1)):
        over = {"window": 3} if "local-p" in name else {}
        model, *_ = model_and_batch(name, layers=layers, dropout=0.3, **over)
        for seed, shape in enumerate(((7, 9, 11), (4, 5, 6))):
            batch = batch_of(*shape, seed=seed)
            assert_same(run(model, batch, True), run(model, batch, False))
    assert 0.2 < sum(dropped) / len(dropped) < 0.4  # the masks drop about p


def test_non_finite_padding_cannot_reach_the_results():
    """NaN written over every static buffer between two calls: zeroed before the copy,
    so the next batch's results are finite and the fused decoder's."""
    model, *_ = model_and_batch("luong-global-general", layers=2, dropout=0.0)
    run(model, batch_of(12, 13, 14, seed=1), True)
    (bucket,) = model._decoder_graphs(torch.device("cpu")).buckets.values()
    for static in (bucket.x_pre, bucket.h0, bucket.c0, bucket.keys, bucket.memory,
                   bucket.bias, bucket.d_out, bucket.d_attn):
        static.fill_(float("nan"))
    batch = batch_of(10, 11, 12, seed=2)
    graphed = run(model, batch, True)
    assert all(torch.isfinite(g).all() for g in graphed[2].values())
    assert_same(graphed, run(model, batch, False))


def test_two_forwards_before_one_backward_use_the_bucket_once(count_calls):
    """The second forward of a shape whose backward has not run yet goes to the fused
    decoder (the bucket's saved steps would be overwritten): both losses' gradients
    are right; a forward dropped without a backward frees its bucket."""
    model, *_ = model_and_batch("luong-global-general", layers=2, dropout=0.0)
    a, b = batch_of(6, 7, 8, seed=3), batch_of(5, 8, 7, seed=4)

    def summed(graphed: bool):
        model.graph_decoder_devices = ("cpu",) if graphed else ()
        model.fuse_decoder_devices = () if graphed else ("cpu",)
        model.zero_grad(set_to_none=True)
        loss = sum((model(*x).scores * w).sum() for x, w in ((a, 0.5), (b, -1.5)))
        loss.backward()
        return {n: p.grad.clone() for n, p in model.named_parameters()}

    applied = count_calls(fg._GraphedFeedDecoder, "apply")
    fused = count_calls(fd._FeedDecoder, "apply")
    graphed = summed(True)
    assert len(applied) == 1 and len(fused) == 1
    reference = summed(False)
    for name, g in reference.items():
        assert (graphed[name] - g).abs().max() <= 1e-12 * g.abs().max(), name
    model.graph_decoder_devices = ("cpu",)
    model(*a)  # a forward whose output is dropped: its node, and the wait, go with it
    model(*a).scores.sum().backward()
    assert len(applied) == 3


def test_building_a_bucket_draws_no_random_numbers():
    """With dropout, a step that builds its bucket and one that finds it built draw the
    same masks and leave the generator in the same state: a resumed run, which builds
    its buckets at other steps, repeats the uninterrupted run's dropout."""
    batch, other = batch_of(6, 7, 8, seed=3), batch_of(5, 6, 7, seed=4)  # one bucket
    results = []
    for prebuilt in (False, True):
        model, *_ = model_and_batch("luong-global-general", layers=2, dropout=0.3)
        if prebuilt:
            run(model, other, True)
        results.append(run(model, batch, True))  # seeds 7 before its forward
        results[-1] += (torch.get_rng_state(),)
    fresh, found = results
    assert torch.equal(fresh[4], found[4])
    assert torch.equal(fresh[0], found[0])
    for name, g in fresh[2].items():
        assert torch.equal(g, found[2][name]), name


def test_no_gradient_no_bucket(buckets):
    """Decoding and dev perplexity (no_grad) run the fused decoder: nothing is kept."""
    model, *_ = model_and_batch("luong-global-general", layers=2, dropout=0.0)
    model.graph_decoder_devices = ("cpu",)
    with torch.no_grad():
        model(*batch_of(4, 5, 6, seed=0))
    assert buckets == []


def test_the_least_recently_used_idle_bucket_goes_beyond_the_memory_limit():
    model, *_ = model_and_batch("luong-global-general", layers=2, dropout=0.0)
    graphs = model._decoder_graphs(torch.device("cpu"))
    run(model, batch_of(4, 5, 6, seed=0), True)
    one = next(iter(graphs.buckets.values())).nbytes()
    assert one > 0
    graphs.max_bytes = int(2.7 * one)  # any two of the buckets below, never three
    for seed, shape in enumerate(((4, 12, 6), (4, 5, 6), (4, 20, 6), (4, 28, 6))):
        run(model, batch_of(*shape, seed=seed), True)
    # (8, 8, 8) was used again after (8, 8, 16): (8, 8, 16) went first, then (8, 8, 8)
    assert [k[3] for k in graphs.buckets] == [24, 32] and graphs.captured == 4
    assert sum(b.nbytes() for b in graphs.buckets.values()) <= graphs.max_bytes
    # a bucket whose backward is pending stays, whatever the limit
    graphs.max_bytes = 0
    pending = model(*batch_of(4, 28, 6, seed=9))  # bucket (8, 8, 32), now busy
    run(model, batch_of(4, 5, 6, seed=0), True)
    assert [k[3] for k in graphs.buckets] == [32, 8]
    pending.scores.sum().backward()


def test_bf16_autocast_through_the_buckets():
    """Under bf16 autocast (the decoder alone, which every CPU can train in bf16): the
    outputs are bf16, within bf16's rounding of the fused decoder's (padding changes
    the products' shapes, hence their rounding), and the gradients within 1 % of its."""
    model, _, _, tgt = model_and_batch("luong-global-general", dtype=torch.float32,
                                       hidden=32, batch=11, layers=2, dropout=0.0)
    results = []
    for graphed in (True, False):
        model.graph_decoder_devices = ("cpu",) if graphed else ()
        results.append(decoder_only(model, tgt, True, amp=True))
    graphed, fused = results
    assert graphed[0].dtype == fused[0].dtype == torch.bfloat16
    for x, y in ((graphed[0], fused[0]), (graphed[1], fused[1])):
        assert (x.float() - y.float()).abs().max() <= 0.02 * y.float().abs().max()
    for name, g in fused[2].items():
        assert (graphed[2][name] - g).norm() <= 0.01 * g.norm(), name


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (CI has none)")


@cuda
def test_cuda_graphs_replay_the_decoder(monkeypatch):
    """On a GPU the buckets are captured graphs: float64 with value-keyed dropout masks
    and float32 without dropout (its rounding could flip such a mask), the same values
    and gradients as the fused decoder over batches in one bucket and in others."""
    monkeypatch.setattr(fd, "draw_keep", value_keep)
    for dtype, rel, dropout in ((torch.float64, 1e-12, 0.3), (torch.float32, 1e-4, 0.0)):
        model, *_ = model_and_batch("luong-global-general", dtype=dtype, hidden=32,
                                    layers=2, dropout=dropout)
        model = model.cuda()
        for seed, shape in enumerate(((13, 14, 15), (9, 10, 10), (5, 2, 2), (13, 14, 15))):
            batch = batch_of(*shape, seed=seed, device="cuda")
            assert_same(run(model, batch, True, device="cuda", dtype=dtype),
                        run(model, batch, False, device="cuda", dtype=dtype), rel)
        graphs = model._decoder_graphs(batch[0].device)
        assert graphs.captured == 2
        assert all(b.graphs is not None for b in graphs.buckets.values())


@cuda
def test_cuda_graphs_replay_the_local_p_decoder(monkeypatch):
    """Local-p's graphs (Luong's paper model, reversed source, window D = 3): the fused
    decoder's values, positions and gradients in float64, value-keyed dropout masks."""
    monkeypatch.setattr(fd, "draw_keep", value_keep)
    model, *_ = model_and_batch("luong-local-p-general", hidden=32, layers=2, dropout=0.3,
                                window=3, reverse_source=True)
    model = model.cuda()
    for seed, shape in enumerate(((13, 14, 15), (9, 10, 10), (5, 2, 2))):
        batch = batch_of(*shape, seed=seed, device="cuda")
        assert_same(run(model, batch, True, device="cuda"),
                    run(model, batch, False, device="cuda"))
    graphs = model._decoder_graphs(batch[0].device)
    assert graphs.captured == 2
    assert all(b.graphs is not None for b in graphs.buckets.values())


@cuda
def test_cuda_graphs_under_bf16_autocast():
    """bf16 autocast on the GPU (the trainer's --amp there): outputs within bf16's
    rounding of the fused decoder's, gradients within 1 %, global and local-p."""
    for name in ("luong-global-general", "luong-local-p-general"):
        model, *_ = model_and_batch(name, dtype=torch.float32, hidden=64, layers=2,
                                    dropout=0.0)
        model = model.cuda()
        batch = batch_of(16, 12, 11, seed=5, device="cuda")
        graphed = run(model, batch, True, device="cuda", amp=True, dtype=torch.float32)
        fused = run(model, batch, False, device="cuda", amp=True, dtype=torch.float32)
        assert model._decoder_graphs(batch[0].device).captured == 1
        for x, y in ((graphed[0], fused[0]), (graphed[1], fused[1])):
            assert (x.float() - y.float()).abs().max() <= 0.02 * y.float().abs().max()
        for key, g in fused[2].items():
            assert (graphed[2][key] - g).norm() <= 0.01 * g.norm(), key


@cuda
def test_cuda_graphs_draw_new_dropout_masks_each_replay():
    """Real dropout inside the graph: each replay draws new masks (the generator's
    offset advances), about p of the elements are dropped, the gradients are finite."""
    model, *_ = model_and_batch("luong-global-general", dtype=torch.float32, hidden=64,
                                layers=2, dropout=0.3)
    model = model.cuda()
    model.graph_decoder_devices = ("cuda",)
    batch = batch_of(16, 8, 16, seed=1, device="cuda")
    enc = model.encode(batch[0], batch[1])
    outs = []
    for _ in range(2):
        h_tilde, _, _ = model._feed_forward(batch[2], enc)
        h_tilde.sum().backward(retain_graph=True)
        outs.append(h_tilde.detach())
    graphs = model._decoder_graphs(batch[0].device)
    assert graphs.captured == 1 and next(iter(graphs.buckets.values())).graphs is not None
    dropped = [(o == 0).float().mean().item() for o in outs]
    assert all(0.25 < d < 0.35 for d in dropped), dropped
    assert not torch.equal(outs[0] == 0, outs[1] == 0)
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)

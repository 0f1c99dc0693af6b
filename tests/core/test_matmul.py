"""core/models/matmul.py: products through oneDNN give torch's results (bf16: to the bit;
fp32: to rounding, against float64) and torch's gradients, and only products of at least
MIN_MACS multiply-adds on the CPU in fp32 or bf16 take that route."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from core.models import matmul

# 96 x 128 x 300 = 3.7 M multiply-adds: above matmul.MIN_MACS
M, K, N = 96, 128, 300
ONEDNN = matmul.uses_onednn(torch.zeros(1), M * K * N)


@pytest.fixture
def products(count_calls):
    """How many products went to oneDNN."""
    return count_calls(matmul, "_product")


def tensors(dtype, seed=0, rows=(4, M // 4)):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*rows, K, generator=g).to(dtype).requires_grad_()
    w = (torch.randn(N, K, generator=g) / K ** 0.5).to(dtype).requires_grad_()
    b = torch.randn(N, generator=g).to(dtype).requires_grad_()
    up = torch.randn(*rows, N, generator=g).to(dtype)
    return x, w, b, up


def test_which_products_take_onednn(monkeypatch):
    assert not matmul.uses_onednn(torch.zeros(1, dtype=torch.float64), 1 << 30)
    assert not matmul.uses_onednn(torch.zeros(1), matmul.MIN_MACS - 1)
    bf16 = torch.zeros(1, dtype=torch.bfloat16)
    assert not matmul.uses_onednn(bf16, 1 << 30)  # torch calls oneDNN itself
    assert matmul.uses_onednn(bf16, 1 << 30, with_bias=True) == (
        torch.backends.mkldnn.is_available() and matmul._bf16_supported())
    if torch.backends.mkldnn.is_available():
        assert matmul.uses_onednn(torch.zeros(1), matmul.MIN_MACS)
        monkeypatch.setattr(torch.backends.mkldnn, "enabled", False)
        assert not matmul.uses_onednn(torch.zeros(1), matmul.MIN_MACS)


# 96 rows (<= 2K): dW = (g^T copied) x; 300 rows: dW = (x^T g)^T copied
@pytest.mark.parametrize("rows", [(4, M // 4), (3, 100)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_fp32_linear_and_its_gradients_equal_float64s_to_rounding(with_bias, rows, products):
    x, w, b, up = tensors(torch.float32, rows=rows)
    bias = b if with_bias else None
    out = matmul.linear(x, w, bias)
    out.backward(up)
    assert products == ([1, 1, 1] if ONEDNN else [])  # forward, dx, dW
    exact = [t.detach().double().requires_grad_() for t in (x, w, b)]
    ref = F.linear(exact[0], exact[1], exact[2] if with_bias else None)
    ref.backward(up.double())
    assert out.shape == (*rows, N) and w.grad.is_contiguous()
    for got, want in ((out, ref), (x.grad, exact[0].grad), (w.grad, exact[1].grad)):
        # K or M terms of size ~1 each: a few fp32 ulps of the sum's magnitude
        scale = want.abs().max().item() + K ** 0.5
        assert (got.double() - want).abs().max().item() < 1e-5 * scale
    if with_bias:
        assert torch.allclose(b.grad.double(), exact[2].grad, rtol=1e-5, atol=1e-5)
    else:
        assert b.grad is None


def test_bf16_linear_and_its_gradients_are_torchs_to_the_bit(products):
    x, w, b, up = tensors(torch.bfloat16)
    out = matmul.linear(x, w, b)
    out.backward(up)
    theirs = [t.detach().clone().requires_grad_() for t in (x, w, b)]
    ref = F.linear(*theirs)
    ref.backward(up)
    if matmul.uses_onednn(x, M * K * N, with_bias=True):
        assert len(products) == 1  # the forward, for its bias; dx and dW: torch's (oneDNN)
    assert torch.equal(out, ref)
    for ours, them in zip((x, w, b), theirs, strict=True):
        assert torch.equal(ours.grad, them.grad)


def test_under_autocast_linear_casts_as_autocast_does():
    x, w, b, up = tensors(torch.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = matmul.linear(x, w, b)
        ref = F.linear(x, w, b)
    assert out.dtype == ref.dtype == torch.bfloat16
    assert torch.equal(out, ref)
    out.backward(up.bfloat16())
    assert w.grad.dtype == torch.float32 and x.grad.dtype == torch.float32


def test_decoding_under_autocast_keeps_autocasts_cast_weights(products):
    """Without gradients (a search) under autocast, linear is F.linear: autocast casts a
    leaf weight once and keeps it for every step; a cast per call would recast it."""
    x, w, b, _ = tensors(torch.float32)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        out = matmul.linear(x, w, b)
        assert torch.equal(out, F.linear(x, w, b))
    assert out.dtype == torch.bfloat16 and products == []


def test_frozen_inputs_get_no_gradient(products):
    x, w, b, up = tensors(torch.float32)
    w.requires_grad_(False)
    matmul.linear(x.detach(), w, b).backward(up)
    assert w.grad is None and b.grad is not None
    assert len(products) == (1 if ONEDNN else 0)  # the forward only: no dx, no dW


def test_a_weight_slice_is_made_dense_for_onednn(products):
    """A column slice of a weight (Luong's embedding columns of W_ih) has gaps between its
    rows; oneDNN ran those through its reference code, 500x slower. It gets a copy."""
    g = torch.Generator().manual_seed(6)
    x, wide = torch.randn(M, K, generator=g), torch.randn(N, K + 40, generator=g)
    sliced = wide[:, :K]
    assert not sliced.is_contiguous()
    out = matmul.linear(x, sliced)
    assert torch.allclose(out, x @ sliced.t(), rtol=1e-5, atol=1e-4)
    assert matmul._dense(sliced).is_contiguous()
    assert matmul._dense(wide.t()).data_ptr() == wide.data_ptr()  # column-major: as it is


def test_mm_and_addmm_equal_torchs():
    g = torch.Generator().manual_seed(3)
    a, bt = torch.randn(M, K, generator=g), torch.randn(N, K, generator=g)
    rows, bias = torch.randn(M, N, generator=g), torch.randn(N, generator=g)
    exact = a.double() @ bt.double().t()
    assert (matmul.mm(a, bt.t()).double() - exact).abs().max() < 1e-4
    assert (matmul.addmm(bias, a, bt.t()).double() - (exact + bias.double())).abs().max() < 1e-4
    assert (matmul.addmm(rows, a, bt.t()).double() - (exact + rows.double())).abs().max() < 1e-4
    a16, b16, r16, c16 = a.bfloat16(), bt.bfloat16().t(), rows.bfloat16(), bias.bfloat16()
    assert torch.equal(matmul.mm(a16, b16), torch.mm(a16, b16))
    assert torch.equal(matmul.addmm(c16, a16, b16), torch.addmm(c16, a16, b16))
    assert torch.equal(matmul.addmm(r16, a16, b16), torch.addmm(r16, a16, b16))
    small = torch.randn(3, 4, generator=g)  # below MIN_MACS, float64: torch itself
    assert torch.equal(matmul.mm(small, small.t()), torch.mm(small, small.t()))
    assert torch.equal(matmul.mm(a.double(), bt.double().t()), exact)


def test_the_linear_module_is_nn_linear_with_the_fast_product(products):
    torch.manual_seed(4)
    ours, theirs = matmul.Linear(K, N), torch.nn.Linear(K, N)
    theirs.load_state_dict(ours.state_dict())  # the same parameters and names
    assert list(ours.state_dict()) == ["weight", "bias"]
    x = torch.randn(M, K)
    assert torch.allclose(ours(x), theirs(x), rtol=1e-5, atol=1e-5)
    assert products == ([1] if ONEDNN else [])
    with torch.autocast("cpu", dtype=torch.bfloat16):  # autocast: nn.Linear, cached casts
        assert torch.equal(ours(x), theirs(x))
    assert products == ([1] if ONEDNN else [])


@pytest.mark.skipif(not matmul._available(), reason="this torch has no oneDNN")
def test_a_search_uses_each_weight_packed_once_and_repacks_when_it_changes(monkeypatch):
    """In a search, a product of few rows takes the Parameter's weight in oneDNN's blocked
    layout, packed once and kept until the weight changes; the results are the plain
    product's up to summation order. Outside a search, with gradients, with many rows or
    for a part of a Parameter, nothing is packed."""
    packs = []
    reorder = torch.ops.mkldnn._reorder_linear_weight
    monkeypatch.setattr(matmul.torch.ops.mkldnn, "_reorder_linear_weight",
                        lambda w, rows: packs.append(tuple(w.shape)) or reorder(w, rows),
                        raising=False)
    torch.manual_seed(0)
    layer = matmul.Linear(256, 4096)
    cell = torch.nn.Parameter(torch.randn(1024, 512) * 0.05)  # N x K, as a layer stores it
    x, h, c = torch.randn(32, 256), torch.randn(32, 512), torch.randn(32, 1024)
    exact = (x.double() @ layer.weight.double().t() + layer.bias.double())
    with torch.no_grad():
        layer(x)  # no gradients, but not a search
    assert packs == []
    with torch.no_grad(), matmul.packed_weights():
        for _ in range(3):  # three search steps
            out = layer(x)
            step = matmul.addmm(c, h, cell.t())
    assert packs == [(4096, 256), (1024, 512)]  # each weight once: N x K
    assert (out.double() - exact).abs().max() < 1e-4
    assert torch.allclose(step, torch.addmm(c, h, cell.t()), atol=1e-4)
    with torch.no_grad(), matmul.packed_weights():
        layer.weight.mul_(2.0)  # an update: the version moves, the packed copy is stale
        again = layer(x)
        assert packs[-1] == (4096, 256) and len(packs) == 3
        assert torch.allclose(again - layer.bias, 2 * (out - layer.bias), atol=1e-4)
        layer(torch.randn(matmul.PACKED_MAX_ROWS + 1, 256))  # a teacher-forced batch
        matmul.addmm(c, h, cell.detach().clone().t())  # not a Parameter
        matmul.addmm(c[:, :512], h, cell[:512].t())  # a part of the Parameter
    with matmul.packed_weights():
        layer(x).sum().backward()  # gradients
    assert len(packs) == 3
    assert layer.weight.grad is not None and layer.weight.grad.shape == (4096, 256)


@pytest.mark.skipif(not matmul._available(), reason="this torch has no oneDNN")
def test_training_steps_pack_nothing():
    """An autograd Function's forward and backward run without gradients too: the bench
    model's training steps, whose fused decoder calls mm and addmm in them, pack nothing."""
    from core.models.registry import build_model
    from core.tooling.bench import bench_variants

    torch.manual_seed(4)
    model = build_model(dict(bench_variants())["luong-global-general"], 2000, 2000).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
    src, tgt = torch.randint(4, 2000, (16, 9)), torch.randint(4, 2000, (16, 8))
    lens = torch.full((16,), 9)
    for _ in range(2):
        scores = model(src, lens, tgt).scores
        torch.nn.functional.cross_entropy(scores.reshape(-1, 2000), tgt.reshape(-1)).backward()
        assert not any(p in matmul._packed for p in model.parameters())
        opt.step()
        opt.zero_grad()


@pytest.mark.skipif(not matmul._available(), reason="this torch has no oneDNN")
def test_inference_tensors_are_used_unpacked():
    """A model made under torch.inference_mode has no version counters to tell a change:
    its weights are used as they are."""
    with torch.inference_mode():
        layer = matmul.Linear(256, 2048)
        x = torch.randn(32, 256)
        with matmul.packed_weights():
            out = layer(x)
    exact = x.double() @ layer.weight.double().t() + layer.bias.double()
    assert (out.double() - exact).abs().max() < 1e-4
    assert layer.weight not in matmul._packed


@pytest.mark.skipif(not matmul._available(), reason="this torch has no oneDNN")
@pytest.mark.parametrize("beam", [1, 5])
def test_a_search_with_packed_weights_finds_the_same_translations(beam, monkeypatch):
    from core.infer.beam import beam_search
    from core.infer.greedy import greedy
    from core.models.registry import build_model
    from core.tooling.bench import bench_variants

    torch.manual_seed(2)
    model = build_model(dict(bench_variants())["luong-global-general"], 3000, 3000).eval()
    src = torch.randint(4, 3000, (12, 9))
    lens = torch.tensor([9, 7, 9, 3, 5, 8, 9, 2, 6, 9, 4, 9])
    found = {}
    for rows in (0, matmul.PACKED_MAX_ROWS):
        monkeypatch.setattr(matmul, "PACKED_MAX_ROWS", rows)
        with torch.no_grad():
            if beam == 1:
                hyps = greedy(model, src, lens, max_len_abs=15, max_len_ratio=1e9, min_len=15)
            else:
                hyps = [h[0] for h in beam_search(model, src, lens, beam=beam, max_len_abs=15,
                                                   max_len_ratio=1e9, min_len=15)]
        found[rows] = hyps
    plain, packed = found[0], found[matmul.PACKED_MAX_ROWS]
    kept = {name for name, p in model.named_parameters() if p in matmul._packed}
    # the softmax layer, the attention's score and output layers, and the cells' weights
    # that the searches build from them once (_step_weights: matmul.kept)
    assert kept == {"w_s.weight", "attention.score.w_a.weight", "w_c.weight"}
    built = [w for w in matmul._kept[model][1] if w.dim() == 2]
    assert [tuple(w.shape) for w in built] == [(1024, 768), (1024, 512)]
    assert all((w if w._base is None else w._base) in matmul._packed for w in built)
    assert [h.tokens for h in packed] == [h.tokens for h in plain]
    assert all(len(h.tokens) == 15 for h in plain)
    assert len({tuple(h.tokens) for h in plain}) > 6  # real, varied outputs
    assert [h.score for h in packed] == pytest.approx([h.score for h in plain], rel=1e-4)


@pytest.mark.skipif(not matmul._available(), reason="this torch has no oneDNN")
def test_an_optimiser_step_drops_the_packed_weights_even_when_fused():
    """Fused Adam changes a weight without moving its version counter: a search after the
    step must not use the weight packed before it."""
    torch.manual_seed(1)
    layer = matmul.Linear(256, 2048)
    opt = torch.optim.Adam(layer.parameters(), lr=0.1, fused=True)
    x = torch.randn(32, 256)
    with torch.no_grad(), matmul.packed_weights():
        before = layer(x)
    assert layer.weight in matmul._packed
    version = layer.weight._version
    layer(x).pow(2).mean().backward()
    opt.step()
    assert layer.weight._version == version  # fused: the counter did not move
    with torch.no_grad(), matmul.packed_weights():
        after = layer(x)
        exact = x.double() @ layer.weight.double().t() + layer.bias.double()
    assert (after.double() - exact).abs().max() < 1e-4
    assert (after - before).abs().max() > 1e-2  # the step did change the outputs


@pytest.mark.parametrize("shape, block", [((256, 14790), matmul.TRANSPOSE_BLOCK),
                                          ((7, 100), 7 * 16), ((5, 3), 1 << 19)])
def test_a_blocked_transpose_is_the_transpose(shape, block, monkeypatch):
    """_transposed copies K x N to N x K in blocks of columns (the last one partial where
    N is not a multiple): the same elements as torch's contiguous transpose, fp32 and bf16."""
    monkeypatch.setattr(matmul, "TRANSPOSE_BLOCK", block)
    g = torch.Generator().manual_seed(3)
    for dtype in (torch.float32, torch.bfloat16):
        t = torch.randn(*shape, generator=g).to(dtype)
        out = matmul._transposed(t)
        assert out.is_contiguous() and out.dtype == dtype
        assert torch.equal(out, t.t())
    if shape[1] > block // shape[0]:  # several blocks: the blocked path, not torch's
        calls = []
        copy = torch.Tensor.copy_
        monkeypatch.setattr(torch.Tensor, "copy_", lambda a, b: calls.append(1) or copy(a, b))
        matmul._transposed(t)
        assert len(calls) == -(-shape[1] // (block // shape[0]))


def test_kept_weights_built_across_an_optimiser_step_are_not_kept():
    """An optimiser step (here from inside the build, as another thread's could land)
    between reading the weights and keeping them: the search gets what it built, and the
    next call builds again rather than reuse weights read before the step."""
    owner = torch.nn.Linear(2, 2)
    opt = torch.optim.SGD(owner.parameters(), lr=0.0)
    builds = []

    def build():
        builds.append(1)
        if len(builds) == 1:
            opt.step()
        return [owner.weight.detach().clone()]

    first = matmul.kept(owner, "key", build)
    assert len(first) == 1 and owner not in matmul._kept
    matmul.kept(owner, "key", build)
    matmul.kept(owner, "key", build)
    assert len(builds) == 2 and owner in matmul._kept

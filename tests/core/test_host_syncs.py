"""A training step on a GPU never waits for the GPU: the batch is copied from pinned
memory and the recurrent encoder packs with the lengths kept on the host (Batch.to,
host_lengths). A wait would let the GPU run dry while the host prepares the next step."""
import pytest
import torch

from core.config import TrainConfig
from core.data.batching import BatchPlan, host_lengths
from core.models.registry import build_model
from core.tooling.bench import bench_step, bench_variants
from core.train.optim import build_optimizer


def random_plan(seed: int, pairs: int = 96, vocab: int = 50) -> BatchPlan:
    g = torch.Generator().manual_seed(seed)

    def sentence() -> list[int]:
        n = int(torch.randint(2, 15, (1,), generator=g))
        return torch.randint(4, vocab, (n,), generator=g).tolist()

    return BatchPlan([sentence() for _ in range(pairs)], [sentence() for _ in range(pairs)],
                     batch_size=16, seed=seed)


def test_a_moved_batch_keeps_its_source_lengths_on_the_host():
    batch = random_plan(0).collate(list(range(16)))
    moved = batch.to("meta")  # a device whose values cannot be read back at all
    assert moved.src_lens.device.type == "meta"
    kept = host_lengths(moved.src_lens)
    assert kept.device.type == "cpu"
    assert kept.tolist() == batch.src_lens.tolist()
    assert min(kept.tolist()) >= 2 and max(kept.tolist()) <= 14
    # a tensor without a kept copy is read back, with its values
    assert host_lengths(batch.src_lens + 1).tolist() == [n + 1 for n in batch.src_lens.tolist()]
    with pytest.raises(NotImplementedError):
        host_lengths(moved.src_lens + 1)  # meta: no copy kept, nothing to read back


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (CI has none)")
@pytest.mark.parametrize("name", ["luong-global-general", "luong-local-p-general",
                                  "rnnsearch", "transformer"])
@pytest.mark.parametrize("amp", [False, True])
def test_a_gpu_training_step_never_waits_for_the_gpu(name, amp, monkeypatch):
    from core.models.luong import LuongModel

    monkeypatch.setattr(LuongModel, "graph_decoder_attentions", ("global", "local-p"))
    cfg = dict(bench_variants())[name]
    torch.manual_seed(0)
    model = build_model(cfg, 60, 60).cuda().train()
    opt = build_optimizer(model.parameters(), TrainConfig(optimizer="adam", lr=1e-3))
    plan = random_plan(1)
    batches = [plan.collate(b) for b in plan.epoch(0)]
    dev = torch.device("cuda")
    for b in batches:  # every shape once: the decoder's graphs are recorded here
        bench_step(model, opt, b, dev, amp, clip=5.0)
    before = [p.detach().clone() for p in model.parameters()]
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for b in batches:
            bench_step(model, opt, b, dev, amp, clip=5.0)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    moved = sum(float((p.detach() - q).abs().sum()) for p, q in zip(model.parameters(), before, strict=True))
    assert moved > 0  # the steps really trained


@pytest.mark.parametrize("cell,bidirectional", [("gru", True), ("lstm", True), ("gru", False)])
def test_the_encoder_sorts_its_batch_as_torch_would(cell, bidirectional):
    """RNNEncoder sorts the batch by length itself (so that nothing is copied to a GPU
    from pageable memory) and puts every output and final state back in batch order:
    the same as torch's pack_padded_sequence(enforce_sorted=False)."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    from core.models.rnn_common import PackedEncoder

    torch.manual_seed(3)
    enc = PackedEncoder(30, 8, 6, layers=2, cell=cell, bidirectional=bidirectional,
                     dropout=0.0).eval()
    lens = torch.tensor([3, 7, 1, 7, 5, 2])  # unsorted, with a tie
    src = torch.randint(4, 30, (6, 8))
    out, h_n, c_n = enc(src, lens)
    packed = pack_padded_sequence(enc.embed(src), lens, batch_first=True, enforce_sorted=False)
    ref_out, ref_final = enc.rnn(packed)
    ref_out, _ = pad_packed_sequence(ref_out, batch_first=True, total_length=8)
    ref_h, ref_c = ref_final if cell == "lstm" else (ref_final, None)
    assert torch.allclose(out, ref_out, atol=1e-6)
    assert torch.allclose(h_n, ref_h, atol=1e-6)
    assert (c_n is None) == (ref_c is None)
    if c_n is not None:
        assert torch.allclose(c_n, ref_c, atol=1e-6)
    assert out[2, 1:].abs().max() == 0  # past a sentence's length: zeros
    assert out[2, 0].abs().max() > 0

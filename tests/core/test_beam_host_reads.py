"""A beam search step reads the device once (core.infer.beam's module docstring): on a GPU
every read waits for the GPU's queue to drain, and a step that waited two or three times
ran at under half greedy's rate (docs/benchmarks.md)."""
from __future__ import annotations

import warnings

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import core.infer.beam
from core.infer.beam import beam_search
from tests.core.toy_models import ToyAttnModel

SRC = torch.tensor([[4, 5, 6, 7, 8, 9], [5, 6, 7, 0, 0, 0], [9, 4, 0, 0, 0, 0], [10, 11, 4, 5, 0, 0]])
LENS = torch.tensor([6, 3, 2, 4])


class _DeviceWaits(TorchDispatchMode):
    """The tensor operations that on a GPU wait for it: reads of one value, nonzero and
    masked_select (they count before they allocate), indexing with a boolean mask (a
    nonzero inside), copies to the host."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(func)
        indices = args[1] if func in (torch.ops.aten.index.Tensor, torch.ops.aten.index_put_.default,
                                      torch.ops.aten.index_put.default) else ()
        if (func in (torch.ops.aten._local_scalar_dense.default, torch.ops.aten.nonzero.default,
                     torch.ops.aten.masked_select.default)
                or any(i is not None and i.dtype == torch.bool for i in indices)
                or (func is torch.ops.aten._to_copy.default and kwargs.get("device") is not None
                    and torch.device(kwargs["device"]).type == "cpu")):
            self.found.append(name)
        return func(*args, **kwargs)


def _count_reads(model, monkeypatch, **opts):
    """Runs beam_search over SRC and records, per call of host_read and to_host, the
    model step it followed (1-based) and to_host's number of rows. -> (hypotheses,
    steps, read steps, copies as (step, rows), device waits of other kinds)."""
    steps = []
    real_step = type(model).step
    monkeypatch.setattr(type(model), "step",
                        lambda m, *a, **kw: steps.append(1) or real_step(m, *a, **kw))
    reads, copies = [], []
    real_read, real_copy = core.infer.beam.host_read, core.infer.beam.to_host
    monkeypatch.setattr(core.infer.beam, "host_read",
                        lambda t: reads.append(len(steps)) or real_read(t))
    monkeypatch.setattr(core.infer.beam, "to_host", lambda rows, *h: copies.append(
        (len(steps), rows.numel())) or real_copy(rows, *h))
    with _DeviceWaits() as waits:
        hyps = beam_search(model, SRC, LENS, **opts)
    return hyps, len(steps), reads, copies, waits.found


@pytest.mark.parametrize("onmt_style", [False, True])
def test_a_fixed_length_beam_step_reads_the_device_once(monkeypatch, onmt_style):
    """At a fixed length of 5 every hypothesis ends at step 6: six steps, six reads of
    the step's flags (one each), and the histories of all 4 x 5 hypotheses in one copy
    at the last step. The search made two or three reads a step before (the EOS
    candidates' nonzero and its list, onmt_style's best-is-EOS flags, the best alive
    scores)."""
    model = ToyAttnModel(seed=1, with_positions=True)
    hyps, steps, reads, copies, waits = _count_reads(
        model, monkeypatch, beam=5, n_best=5, max_len_abs=5, max_len_ratio=1e9, min_len=5,
        onmt_style=onmt_style)
    assert steps == 6 and reads == [1, 2, 3, 4, 5, 6]
    assert copies == [(6, 20)]
    assert waits == []
    assert [len(h.tokens) for hs in hyps for h in hs] == [5] * 20


@pytest.mark.parametrize("onmt_style", [False, True])
def test_a_beam_step_reads_the_device_once_and_copies_only_when_hypotheses_end(
        monkeypatch, onmt_style):
    """Free lengths, per-sentence limits (2 x source length: 12, 6, 4, 8) and min_len 2:
    hypotheses end at several steps and sentences leave the batch at several steps. One
    read a step; one copy at a step where some end, none elsewhere; no value read one by
    one, no nonzero, no boolean mask (each a wait on a GPU)."""
    model = ToyAttnModel(seed=2, with_positions=True)
    with torch.no_grad():
        model.out.bias[3] += 1.5  # EOS likelier: hypotheses end at many steps
    hyps, steps, reads, copies, waits = _count_reads(
        model, monkeypatch, beam=4, n_best=2, min_len=2, onmt_style=onmt_style)
    assert reads == list(range(1, steps + 1))
    copy_steps = [s for s, _ in copies]
    assert len(set(copy_steps)) == len(copy_steps) >= 2  # at most one copy a step
    assert all(n >= 1 for _, n in copies)
    # every hypothesis returned ended at a step with a copy (its length + EOS)
    assert {len(h.tokens) + 1 for hs in hyps for h in hs} <= set(copy_steps)
    assert len(copy_steps) < steps  # steps without an end copy nothing
    assert waits == []


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (CI has none)")
@pytest.mark.parametrize("onmt_style", [False, True])
def test_a_gpu_beam_step_waits_for_the_gpu_once(monkeypatch, onmt_style):
    """On a GPU (torch.cuda.set_sync_debug_mode counts the calls that wait for it,
    outside the model's own step): a search 8 steps longer waits exactly 8 times more,
    one wait a step; the hypotheses end at the last step in both."""
    model = ToyAttnModel(seed=1).cuda()  # no positions: the toy's use a host arange
    real_step = type(model).step

    def quiet_step(m, *a, **kw):  # the model's step is not the search's
        torch.cuda.set_sync_debug_mode("default")
        try:
            return real_step(m, *a, **kw)
        finally:
            torch.cuda.set_sync_debug_mode("warn")

    monkeypatch.setattr(type(model), "step", quiet_step)

    def waits(length: int) -> int:
        src, lens = SRC.cuda(), LENS.cuda()
        torch.cuda.synchronize()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
            try:
                hyps = beam_search(model, src, lens, beam=5, n_best=5, max_len_abs=length,
                                   max_len_ratio=1e9, min_len=length, onmt_style=onmt_style)
            finally:
                torch.cuda.set_sync_debug_mode("default")
        assert [len(h.tokens) for hs in hyps for h in hs] == [length] * 20
        return sum("synchroniz" in str(w.message) for w in caught)

    waits(4)  # warm-up: the pinned buffers and kernels' first use
    short, long = waits(4), waits(12)
    assert long - short == 12 - 4

"""core/models/rnn_common.py's lstm_by_segments: a unidirectional LSTM run in one call per
stretch between a batch's distinct lengths gives the packed LSTM's outputs, final states
and gradients (to rounding), and the recurrent encoders use it on the CPU outside
autocast."""
from __future__ import annotations

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from core.models import rnn_common
from core.models.rnn_common import PackedEncoder, lstm_by_segments

IN, HIDDEN = 12, 16


def packed_lstm(rnn, x, lens):
    """The reference: torch's packed LSTM, padded back to x's length."""
    packed = pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False)
    out, (h, c) = rnn(packed)
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
    return out, h, c


def segmented_lstm(rnn, x, lens):
    out, (h, c) = lstm_by_segments(rnn, x, lens)
    return out, h, c


@pytest.mark.parametrize("lens", [
    [5, 3, 5, 1, 4, 3],  # unsorted, repeated, a one-token sentence
    [4, 4, 4],  # one length: a single call
    [7, 2, 6, 3, 5, 4, 1],  # every length distinct
])
@pytest.mark.parametrize("layers", [1, 2])
def test_outputs_final_states_and_gradients_are_the_packed_lstms(lens, layers):
    torch.manual_seed(len(lens) + layers)
    rnn = torch.nn.LSTM(IN, HIDDEN, num_layers=layers, batch_first=True).double()
    lens_t = torch.tensor(lens)
    x = torch.randn(len(lens), max(lens) + 2, IN, dtype=torch.float64)  # 2 steps of padding
    weights = torch.randn(len(lens), max(lens) + 2, HIDDEN, dtype=torch.float64)
    results = []
    for run in (packed_lstm, segmented_lstm):
        rnn.zero_grad()
        xi = x.clone().requires_grad_()
        out, h, c = run(rnn, xi, lens_t)
        ((out * weights).sum() + h.sum() * 0.5 + c.sum() * 0.25).backward()
        results.append([out, h, c, xi.grad] + [p.grad.clone() for p in rnn.parameters()])
    for ours, theirs in zip(results[1], results[0], strict=True):
        assert ours.shape == theirs.shape
        torch.testing.assert_close(ours, theirs, rtol=1e-10, atol=1e-12)
    out = results[1][0]
    for i, n in enumerate(lens):  # exactly zero past each sentence's end
        assert torch.count_nonzero(out[i, n:]) == 0 and torch.count_nonzero(out[i, n - 1]) > 0


def test_in_fp32_through_onednn_its_gradients_are_the_packed_lstms():
    """The fast path itself (fp32, training mode, no dropout): float64 never reaches
    oneDNN's LSTM."""
    torch.manual_seed(7)
    rnn = torch.nn.LSTM(IN, HIDDEN, num_layers=2, batch_first=True).train()
    lens = torch.tensor([6, 2, 5, 6, 3, 1])
    x = torch.randn(len(lens), 7, IN)
    weights = torch.randn(len(lens), 7, HIDDEN)
    results = []
    for run in (packed_lstm, segmented_lstm):
        rnn.zero_grad()
        xi = x.clone().requires_grad_()
        out, h, c = run(rnn, xi, lens)
        ((out * weights).sum() + h.sum() + c.sum()).backward()
        results.append([out, h, c, xi.grad] + [p.grad.clone() for p in rnn.parameters()])
    for ours, theirs in zip(results[1], results[0], strict=True):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5)


def test_lengths_beyond_the_input_are_refused():
    rnn = torch.nn.LSTM(IN, HIDDEN, batch_first=True)
    with pytest.raises(ValueError, match="lengths must be 1..4"):
        lstm_by_segments(rnn, torch.randn(2, 4, IN), torch.tensor([5, 2]))
    with pytest.raises(ValueError, match="got 0..2"):
        lstm_by_segments(rnn, torch.randn(2, 4, IN), torch.tensor([0, 2]))


def test_the_encoder_runs_a_cpu_lstm_by_segments_outside_autocast(count_calls):
    calls = count_calls(rnn_common, "lstm_by_segments")
    torch.manual_seed(0)
    enc = PackedEncoder(30, IN, HIDDEN, 2, "lstm").eval()
    src = torch.randint(4, 30, (5, 6))
    lens = torch.tensor([6, 2, 4, 6, 3])
    with torch.no_grad():
        out, h, c = enc(src, lens)
        ref_out, ref_h, ref_c = packed_lstm(enc.rnn, enc.embed(src), lens)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            amp_out, _, _ = enc(src, lens)
    assert len(calls) == 1  # under autocast the packed LSTM (bf16 products) is faster
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(h, ref_h)
    torch.testing.assert_close(c, ref_c)
    assert amp_out.dtype == torch.float32 and not torch.equal(amp_out, out)
    # a GRU (RNNsearch's bidirectional one included) stays packed
    gru = PackedEncoder(30, IN, HIDDEN, 1, "gru", bidirectional=True).eval()
    with torch.no_grad():
        gru(src, lens)
    assert len(calls) == 1

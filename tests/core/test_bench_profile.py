"""core.tooling.bench_profile: the FLOP of each product the profiler records, from the
shapes torch.profiler itself records for them, and the table by input shapes."""
from __future__ import annotations

import re

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from core.models import matmul
from core.tooling.bench_profile import by_shapes, product_flop, profile_steps


def recorded(fn) -> list:
    """fn's operators as torch.profiler records them with shapes."""
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        fn()
    return list(prof.events())


def flop_of(events, name: str) -> list[int]:
    return [product_flop(e.name, e.input_shapes) for e in events if e.name == name]


def test_torch_products_count_two_flop_per_multiply_add():
    a, b, c = torch.randn(7, 5), torch.randn(5, 3), torch.randn(3)
    x, y = torch.randn(4, 7, 5), torch.randn(4, 5, 3)
    events = recorded(lambda: (torch.mm(a, b), torch.addmm(c, a, b), torch.bmm(x, y),
                               torch.baddbmm(torch.randn(4, 7, 3), x, y)))
    assert flop_of(events, "aten::mm") == [2 * 7 * 5 * 3]
    assert flop_of(events, "aten::addmm") == [2 * 7 * 5 * 3]
    assert flop_of(events, "aten::bmm") == [2 * 4 * 7 * 5 * 3]
    assert flop_of(events, "aten::baddbmm") == [2 * 4 * 7 * 5 * 3]
    assert product_flop("aten::relu", [[7, 5]]) == 0
    assert product_flop("aten::mm", [[], []]) == 0  # shapes it cannot read: not a product


@pytest.mark.skipif(not matmul.uses_onednn(torch.randn(64, 64), 1 << 22),
                    reason="this torch has no oneDNN products on the CPU")
def test_onednn_products_both_overloads():
    x, w, b = torch.randn(64, 256), torch.randn(512, 256), torch.randn(512)
    other = torch.randn(64, 512)
    events = recorded(lambda: (matmul.linear(x, w, b), matmul.addmm(other, x, w.t())))
    # the plain overload (X, W, B, ...) and the binary one (X, other, W, ...)
    assert flop_of(events, "mkldnn::_linear_pointwise") == [2 * 64 * 256 * 512] * 2


def test_an_lstm_layer_counts_its_gate_products_forward_and_backward():
    lstm = torch.nn.LSTM(24, 16, batch_first=False)
    x = torch.randn(9, 5, 24, requires_grad=True)

    def run():
        out, _ = lstm(x)
        out.sum().backward()

    events = recorded(run)
    forward = flop_of(events, "aten::mkldnn_rnn_layer")
    if not forward:
        pytest.skip("this torch's CPU LSTM does not go through oneDNN")
    gates = 2 * 9 * 5 * (4 * 16) * (24 + 16)  # each step: [x; h] times the gate weights
    assert forward == [gates]
    assert flop_of(events, "aten::mkldnn_rnn_layer_backward") == [2 * gates]


def test_the_shape_table_gives_each_products_rate_from_its_own_time():
    # 600^3 multiply-adds: a millisecond or more even at 400 GFLOP/s, so the table's
    # two decimals of ms leave the rate within 1 %
    a = torch.randn(600, 600)
    report = profile_steps(lambda i: (a @ a).relu_(), range(4), torch.device("cpu"))
    head = re.search(r"# products: ([\d.]+) ms a step \((\d+)% of own time\) at ([\d.]+) "
                     r"GFLOP/s", report)
    assert head, report
    row = [ln for ln in report.splitlines() if "aten::mm [[600, 600], [600, 600]]" in ln]
    assert len(row) == 1, report
    ms, calls, _, rate = row[0].split()[:4]
    assert float(calls) == 1.0
    # 2 x 600^3 FLOP a call in `ms` milliseconds: the printed rate, to its rounding
    assert float(rate) == pytest.approx(2 * 600 ** 3 / (float(ms) * 1e6), rel=0.02)
    assert float(head.group(1)) == pytest.approx(float(ms), abs=0.051)  # the one product
    relu = [ln for ln in report.splitlines() if ln.strip().endswith("aten::relu_ [[600, 600]]")]
    assert len(relu) == 1 and relu[0].split()[3] == "aten::relu_"  # no rate: not a product


def test_the_table_sorts_by_own_time_and_keeps_the_top_rows():
    class Event:
        def __init__(self, name, shapes, us):
            self.name, self.input_shapes, self.self_cpu_time_total = name, shapes, us

    events = [Event("aten::mm", [[10, 20], [20, 30]], 100.0),
              Event("aten::mm", [[10, 20], [20, 30]], 300.0),
              Event("aten::add", [[10, 30], [10, 30]], 600.0),
              Event("aten::mul", [[10, 30], []], 50.0)]
    table = by_shapes(events, steps=2, rows=2).splitlines()
    # products: 400 us over 2 steps (38 % of 1,050 us), 2 x 12,000 FLOP in 400 us
    assert table[0] == "# products: 0.2 ms a step (38% of own time) at 0.1 GFLOP/s"
    assert [ln.split()[4] for ln in table[3:]] == ["aten::mm"]
    assert table[2].split()[3] == "aten::add"  # no rate: the name follows the share
    assert table[3].split()[:4] == ["0.20", "1.0", "38.1%", "0.1"]

"""experiments/train_vs_onmt.py: issue 17's training comparison with OpenNMT-py in one
command. Its parsing, its ratios and verdict, and the order of the sides by round."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "train_vs_onmt.py"


@pytest.fixture(scope="module")
def vs():
    spec = importlib.util.spec_from_file_location("train_vs_onmt", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_peer_rate_takes_the_last_rate_line_and_names_a_missing_one(vs):
    out = "installing...\nonmt_tgt_tok_per_s 1234\nonmt_tgt_tok_per_s 1700.5\n"
    assert vs.peer_rate(out) == 1700.5
    with pytest.raises(ValueError, match="(?s)no .onmt_tgt_tok_per_s N. line.*Traceback"):
        vs.peer_rate("step 1\nTraceback (most recent call last):\n")


def _row(variant, rate, amp=False, sampled=0):
    return {"variant": variant + (" +bf16" if amp else ""), "amp": amp,
            "sampled_softmax": sampled, "tgt_tok_per_s": rate}


def test_workbench_rates_keep_the_variants_full_softmax_rows_by_precision(vs):
    rows = [_row("rnnsearch", 9.0), _row("luong-global-general", 2600.0),
            _row("luong-global-general", 5000.0, sampled=2000),
            _row("luong-global-general", 3900.0, amp=True)]
    assert vs.workbench_rates(rows, "luong-global-general") == {"fp32": 2600.0, "bf16": 3900.0}
    with pytest.raises(ValueError, match="no fp32 row for 'luong-paper'"):
        vs.workbench_rates(rows, "luong-paper")


def test_summary_judges_each_precision_by_its_median_ratio(vs):
    rounds = [vs.Round(1, 1000.0, {"fp32": 2100.0, "bf16": 2900.0}),
              vs.Round(2, 1000.0, {"fp32": 1900.0, "bf16": 3200.0}),
              vs.Round(3, 2000.0, {"fp32": 4100.0, "bf16": 6200.0})]
    lines, met = vs.summary(rounds)
    # fp32 ratios 2.1, 1.9, 2.05 -> median 2.05; bf16 2.9, 3.2, 3.1 -> 3.1
    assert lines == ["fp32: median 2.05x OpenNMT-py (rounds 1.90-2.10x), target >= 2x: met",
                     "bf16: median 3.10x OpenNMT-py (rounds 2.90-3.20x), target >= 3x: met"]
    assert met
    rounds[2].workbench["bf16"] = 5000.0  # 2.5x: the median falls to 2.9x
    lines, met = vs.summary(rounds)
    assert lines[1].endswith("target >= 3x: NOT met") and not met


def test_summary_without_bf16_judges_fp32_alone(vs):
    lines, met = vs.summary([vs.Round(1, 1000.0, {"fp32": 2500.0})])
    assert lines[1] == "bf16: not measured (no native bf16 on this CPU)"
    assert met


def test_rounds_alternate_which_side_goes_first_and_write_json(vs, tmp_path, monkeypatch, capsys):
    calls = []
    rates = iter([1000.0, 1250.0, 800.0])

    def peer(workdir, steps, keep, timeout):
        calls.append("peer")
        return next(rates)

    def workbench(data, args, timeout):
        calls.append("workbench")
        return {"fp32": 2000.0, "bf16": 3000.0}

    monkeypatch.setattr(vs, "_peer_round", peer)
    monkeypatch.setattr(vs, "_workbench_round", workbench)
    monkeypatch.setattr(vs, "PEER_SCRIPT", SCRIPT)  # any file that exists
    out = tmp_path / "ratios.json"
    assert vs.main(["--rounds", "3", "--peers", str(tmp_path), "--json", str(out)]) == 0
    assert calls == ["peer", "workbench", "workbench", "peer", "peer", "workbench"]
    printed = capsys.readouterr().out
    assert "round 2: OpenNMT-py 1,250  fp32 2,000 (1.60x)  bf16 3,000 (2.40x)" in printed
    saved = json.loads(out.read_text())
    # fp32 ratios 2.0, 1.6, 2.5 -> 2.0 (met); bf16 3.0, 2.4, 3.75 -> 3.0 (met)
    assert saved["targets_met"] is True
    assert [r["peer"] for r in saved["rounds"]] == [1000.0, 1250.0, 800.0]


def test_a_missing_peer_script_is_named(vs, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(vs, "PEER_SCRIPT", tmp_path / "shared" / "bench" / "peers-onmt.sh")
    assert vs.main(["--rounds", "1"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "shared" / "bench" / "peers-onmt.sh") in err and "../shared/bench" in err

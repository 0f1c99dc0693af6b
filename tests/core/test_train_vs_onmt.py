"""core/tooling/train_vs_onmt.py (run as experiments/train_vs_onmt.py): the
training comparison with OpenNMT-py in one command. Its parsing, its ratios and verdict, and the order of the sides by round."""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pytest

from core.tooling import train_vs_onmt

SCRIPT = Path(train_vs_onmt.__file__)


@pytest.fixture
def vs():
    return train_vs_onmt


def test_peer_rate_takes_the_last_rate_line_and_names_a_missing_one(vs):
    out = "installing...\nonmt_tgt_tok_per_s 1234\nonmt_tgt_tok_per_s 1700.5\n"
    assert vs.peer_rate(out) == 1700.5
    with pytest.raises(ValueError, match="(?s)no positive .onmt_tgt_tok_per_s N. line.*Traceback"):
        vs.peer_rate("step 1\nTraceback (most recent call last):\n")
    with pytest.raises(ValueError, match="no positive"):
        vs.peer_rate("onmt_tgt_tok_per_s 0\n")


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
    lines, met = vs.summary(rounds, True, "")
    # fp32 ratios 2.1, 1.9, 2.05 -> median 2.05; bf16 2.9, 3.2, 3.1 -> 3.1
    assert lines == [
        "fp32: median 2.05x OpenNMT-py over 3 of 3 rounds (1.90-2.10x), target >= 2x: met",
        "bf16: median 3.10x OpenNMT-py over 3 of 3 rounds (2.90-3.20x), target >= 3x: met"]
    assert met
    rounds[2].workbench["bf16"] = 5000.0  # 2.5x: the median falls to 2.9x
    lines, met = vs.summary(rounds, True, "")
    assert lines[1].endswith("target >= 3x: NOT met") and not met


def test_a_precision_missing_from_a_round_is_not_met(vs):
    rounds = [vs.Round(1, 1000.0, {"fp32": 2500.0, "bf16": 3500.0}),
              vs.Round(2, 1000.0, {"fp32": 2500.0})]  # its bf16 row failed
    lines, met = vs.summary(rounds, True, "")
    assert lines[1] == ("bf16: median 3.50x OpenNMT-py over 1 of 2 rounds (3.50-3.50x), "
                        "target >= 3x: NOT met")
    assert not met


def test_without_native_bf16_fp32_alone_decides_but_asked_for_bf16_must_come(vs):
    fp32_only = [vs.Round(1, 1000.0, {"fp32": 2500.0})]
    lines, met = vs.summary(fp32_only, False, "no native bf16 here: AVX2")
    assert lines[1] == "bf16: not measured (no native bf16 here: AVX2)" and met
    lines, met = vs.summary(fp32_only, True, "")
    assert lines[1] == "bf16: not measured (no rows)" and not met


def test_rounds_alternate_which_side_goes_first_and_write_json(vs, tmp_path, monkeypatch, capsys):
    calls = []
    rates = iter([1000.0, 1250.0, 800.0])

    def peer(peers, steps, threads, timeout):
        calls.append(("peer", threads))
        return next(rates)

    def workbench(data, args, timeout):
        calls.append(("workbench", args.threads))
        # 10 MFLOP a token: fp32 at 2,000 tok/s is 20 GFLOP/s of a 400 peak (5 %), bf16
        # at 3,000 30 of 1,000 (3 %); the peer at 1,000 / 1,250 / 800 tok/s 2.5 / 3.1 / 2 %
        return {"fp32": 2000.0, "bf16": 3000.0}, {"fp32": (10.0, 400.0), "bf16": (10.0, 1000.0)}

    monkeypatch.setattr(vs, "_peer_round", peer)
    monkeypatch.setattr(vs, "_workbench_round", workbench)
    monkeypatch.setattr(vs, "cpu_bf16_status", lambda: (True, "AVX512-BF16"))
    monkeypatch.setattr(vs, "PEER_SCRIPT", SCRIPT)  # any file that exists
    for asset in vs.PEER_ASSETS:  # no set-up run
        (tmp_path / asset).mkdir()
    out = tmp_path / "ratios.json"
    assert vs.main(["--rounds", "3", "--threads", "3", "--peers", str(tmp_path),
                    "--json", str(out)]) == 0
    assert [side for side, _ in calls] == ["peer", "workbench", "workbench", "peer",
                                           "peer", "workbench"]
    assert {threads for _, threads in calls} == {3}
    printed = capsys.readouterr().out
    assert "round 2: OpenNMT-py 1,250  fp32 2,000 (1.60x)  bf16 3,000 (2.40x)" in printed
    assert ("share of the matmul peak: OpenNMT-py 3.1 %, fp32 5.0 %, bf16 3.0 %; load"
            in printed)
    assert ("share of this host's matmul peak (median; bench train --flops): "
            "OpenNMT-py 2.5 %, fp32 5.0 %, bf16 3.0 %") in printed
    saved = json.loads(out.read_text())
    # fp32 ratios 2.0, 1.6, 2.5 -> 2.0 (met); bf16 3.0, 2.4, 3.75 -> 3.0 (met)
    assert saved["targets_met"] is True
    assert [r["peer"] for r in saved["rounds"]] == [1000.0, 1250.0, 800.0]


def test_the_workbench_side_runs_bench_train_on_the_cpu(vs, tmp_path, monkeypatch):
    seen = []

    def run(command, timeout, env=None):
        seen.append(command)
        rows = [{"variant": "luong-global-general", "amp": False, "tgt_tok_per_s": 2500.0,
                 "mflop_per_tok": 12.5, "peak_gflops": 450.0}]
        Path(command[command.index("--json") + 1]).write_text(json.dumps(rows))
        return ""

    monkeypatch.setattr(vs, "_run", run)
    args = argparse.Namespace(variant="luong-global-general", threads=2, warmup=5, steps=7,
                              no_amp=False)
    assert vs._workbench_round(tmp_path, args, 60) == ({"fp32": 2500.0},
                                                        {"fp32": (12.5, 450.0)})
    assert "--flops" in seen[0]  # the roofline: FLOP per token and the host's peak
    command = seen[0]
    assert command[command.index("--device") + 1] == "cpu"  # not a GPU where there is one
    assert command[command.index("--split") + 1] == "onmt" and "--amp" in command
    assert command[command.index("--steps") + 1] == "7"


def fake_peer(tmp_path, body: str) -> Path:
    """A stand-in for peers-onmt.sh: `body` runs with $1 the work folder, $2 the steps."""
    script = tmp_path / "peers-onmt.sh"
    script.write_text("set -e\n" + body)
    return script


def test_the_peer_runs_in_a_folder_of_its_own_with_the_threads_asked(vs, tmp_path, monkeypatch):
    peers = tmp_path / "peers"
    for asset in vs.PEER_ASSETS:
        (peers / asset).mkdir(parents=True)
    (peers / "venv-onmt" / "marker").write_text("kept")
    # like the real script: a run folder with a checkpoint, the rate from $(nproc) threads
    monkeypatch.setattr(vs, "PEER_SCRIPT", fake_peer(tmp_path, (
        'test -f "$1/venv-onmt/marker"; mkdir "$1/run-1"; echo ckpt > "$1/run-1/model.pt"\n'
        'echo "onmt_tgt_tok_per_s $(nproc)00.5"\n')))
    assert vs._peer_round(peers, 10, 3, 60) == 300.5
    assert sorted(p.name for p in peers.iterdir()) == sorted(vs.PEER_ASSETS)  # no run left
    assert (peers / "venv-onmt" / "marker").read_text() == "kept"  # the links, not the venv


def test_a_failed_peer_run_quotes_its_own_log(vs, tmp_path, monkeypatch):
    peers = tmp_path / "peers"
    for asset in vs.PEER_ASSETS:
        (peers / asset).mkdir(parents=True)
    monkeypatch.setattr(vs, "PEER_SCRIPT", fake_peer(tmp_path, (
        'mkdir "$1/run-1"; echo "RuntimeError: out of memory" > "$1/run-1/stdout"; exit 3\n')))
    with pytest.raises(RuntimeError, match="(?s)exited with 3.*log ended with:\nRuntimeError: "
                                           "out of memory"):
        vs._peer_round(peers, 10, 2, 60)


def test_a_command_past_its_time_is_killed_with_its_children(vs, tmp_path):
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="(?s)ran past 1 s.*started"):
        vs._run(["bash", "-c", f"sleep 120 & echo $! > {pid_file}; echo started; wait"], 1)
    # killing only bash would leave the sleep holding the output pipe: _run would then
    # wait the whole 120 s for it
    assert time.monotonic() - started < 60
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # gone, or a zombie waiting to be reaped
        status = Path(f"/proc/{pid}/status")
        if not status.exists() or "\tZ" in status.read_text():
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the command's child {pid} still runs")


def test_a_missing_peer_script_is_named(vs, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(vs, "PEER_SCRIPT", tmp_path / "shared" / "bench" / "peers-onmt.sh")
    assert vs.main(["--rounds", "1"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "shared" / "bench" / "peers-onmt.sh") in err and "../shared/bench" in err


def test_too_few_peer_steps_or_rounds_are_refused(vs, capsys):
    # the peer's script reports its rate every 50 steps and skips the first report
    with pytest.raises(SystemExit):
        vs.main(["--peer-steps", "60"])
    assert "--peer-steps must be at least 100" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        vs.main(["--rounds", "0"])
    assert "--rounds must be at least 1" in capsys.readouterr().err


def test_a_first_run_sets_the_peer_up_with_enough_steps_for_a_rate(vs, tmp_path, monkeypatch):
    seen = []

    def run(command, timeout, env=None):  # the real script creates its venv and split
        seen.append(command)
        for asset in vs.PEER_ASSETS:
            (tmp_path / asset).mkdir()
        return "onmt_tgt_tok_per_s 1500\n"

    monkeypatch.setattr(vs, "_run", run)
    monkeypatch.setattr(vs, "_peer_round", lambda *a: 1000.0)
    monkeypatch.setattr(vs, "_workbench_round", lambda *a: ({"fp32": 2000.0}, {}))
    monkeypatch.setattr(vs, "PEER_SCRIPT", SCRIPT)
    assert vs.main(["--rounds", "1", "--no-amp", "--peers", str(tmp_path)]) == 0
    # a run shorter than MIN_PEER_STEPS prints no rate, and its script then exits 1
    assert seen == [["bash", str(SCRIPT), str(tmp_path.resolve()), str(vs.MIN_PEER_STEPS)]]
    assert vs.main(["--rounds", "1", "--no-amp", "--peers", str(tmp_path)]) == 0
    assert len(seen) == 1  # set up once


def test_the_experiments_script_runs_the_tooling_modules_main():
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "experiments" / "train_vs_onmt.py"
    result = subprocess.run([sys.executable, str(script), "--rounds", "0"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert "--rounds must be at least 1" in result.stderr

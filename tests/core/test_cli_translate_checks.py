"""`translate`, `evaluate`, `bench` and `demo` refuse bad options and unwritable outputs
with one line (exit status 2) before any work, and their messages give advice the
command can follow."""
from __future__ import annotations

import pytest

from core.cli import run_cli
from core.errors import ConfigError
from core.train.device import pick_device


def error_line(capsys) -> str:
    """The one 'error: ...' line the CLI printed on stderr."""
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error: ")]
    assert len(lines) == 1
    return lines[0]


# ------------------------------------------------------------------ --device


@pytest.mark.parametrize("command", [
    ["translate", "--run", "tiny"], ["evaluate", "--run", "tiny"], ["align", "--run", "tiny"],
    ["bench", "translate"], ["bench", "train"],
])
@pytest.mark.parametrize("device", ["bogus", "cuda:x"])
def test_a_bad_device_is_one_line_before_any_work(command, device, tmp_path, capsys):
    # the workspace does not exist: the device is checked before it is opened
    argv = ["--workspace", str(tmp_path / "none"), *command, "--device", device]
    assert run_cli(argv) == 2
    line = error_line(capsys)
    assert f"--device must be auto, cpu, cuda or cuda:N, not {device!r}" in line
    assert not (tmp_path / "none").exists()


def test_pick_device_names_the_setting_it_checks():
    with pytest.raises(ConfigError, match="device must be auto, cpu, cuda or cuda:N, not 'gpu'"):
        pick_device("gpu")
    assert pick_device("cpu").type == "cpu"


# ------------------------------------------------------------------ numbers out of range


@pytest.mark.parametrize("command", [["evaluate", "--run", "tiny"], ["demo", "--quick"]])
@pytest.mark.parametrize("beam", ["0", "-2"])
def test_evaluate_and_demo_refuse_a_beam_below_one_before_any_work(command, beam, tmp_path,
                                                                     capsys):
    ws = tmp_path / "ws"
    argv = ["--workspace", str(ws), *command, "--beam", beam]
    if command[0] == "demo":
        argv = [*command, "--workspace", str(ws), "--beam", beam]
    assert run_cli(argv) == 2
    assert f"--beam must be 1 or more (1 = greedy), not {beam}" in error_line(capsys)
    assert not ws.exists()  # no half-built demo workspace


@pytest.mark.parametrize("options, message", [
    (["train", "--steps", "0"], "--steps must be 1 or more, not 0"),
    (["train", "--steps", "-1"], "--steps must be 1 or more, not -1"),
    (["train", "--warmup", "-1"], "--warmup must be 0 or more, not -1"),
    (["train", "--threads", "0"], "--threads must be 1 or more, not 0"),
    (["train", "--batch-size", "0"], "--batch-size must be 1 or more, not 0"),
    (["train", "--batch-tokens", "-5"], "--batch-tokens must be 1 or more, not -5"),
    (["train", "--profile", "-1"], "--profile must be 0 or more, not -1"),
    (["translate", "--threads", "0"], "--threads must be 1 or more, not 0"),
])
def test_bench_refuses_values_out_of_range_before_any_work(options, message, capsys,
                                                            monkeypatch):
    import core.services.bench as bench
    import core.services.bench_translate as bench_translate

    def no_work(*a, **k):
        raise AssertionError("the bench ran")

    monkeypatch.setattr(bench, "run_train_bench", no_work)
    monkeypatch.setattr(bench_translate, "run_translate_bench", no_work)
    assert run_cli(["bench", *options, "--device", "cpu"]) == 2
    assert message in error_line(capsys)
    assert capsys.readouterr().out == ""


def test_bench_train_passes_no_batch_option_as_the_presets(monkeypatch):
    import core.services.bench as bench

    seen = {}

    def record(*a, **k):
        seen.update(k)
        return [{"variant": "x"}]

    monkeypatch.setattr(bench, "run_train_bench", record)
    assert run_cli(["bench", "train", "--device", "cpu", "--steps", "1"]) == 0
    assert seen["batch_size"] == 0 and seen["batch_tokens"] == 0
    assert run_cli(["bench", "train", "--device", "cpu", "--batch-tokens", "900"]) == 0
    assert seen["batch_size"] == 0 and seen["batch_tokens"] == 900

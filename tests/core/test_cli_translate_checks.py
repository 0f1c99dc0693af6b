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

"""main.py chooses the front: the workbench with no command or `gui`, else the CLI."""
from __future__ import annotations

import pytest

import main


def test_workspace_option_is_taken_before_the_command():
    assert main.split_workspace(["--workspace", "w", "gui", "--demo"]) == ("w", ["gui", "--demo"])
    assert main.split_workspace(["--workspace=w"]) == ("w", [])
    assert main.split_workspace(["corpus", "list"]) == (None, ["corpus", "list"])
    assert main.split_workspace(["--workspace"]) == (None, ["--workspace"])


def test_no_command_and_gui_open_the_workbench(monkeypatch):
    import app.main_window

    calls = []
    monkeypatch.setattr(app.main_window, "launch",
                        lambda workspace=None, demo=False: calls.append((workspace, demo)) or 7)
    assert main.main([]) == 7
    assert main.main(["--workspace", "/tmp/w", "gui", "--demo"]) == 7
    assert calls == [(None, False), ("/tmp/w", True)]


def test_other_commands_run_the_cli(tmp_path, capsys, monkeypatch):
    import app.main_window

    monkeypatch.setattr(app.main_window, "launch", lambda **kw: 99)
    assert main.main(["--workspace", str(tmp_path / "ws"), "corpus", "list"]) == 0
    assert capsys.readouterr().out == "no corpora yet; add one with `corpus import`\n"
    with pytest.raises(SystemExit) as exit_info:  # the CLI's own parser, not the GUI's
        main.main(["translate", "--run", "x", "--workspace-typo"])
    assert exit_info.value.code == 2
    assert "unrecognized arguments: --workspace-typo" in capsys.readouterr().err

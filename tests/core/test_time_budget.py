"""train.max_minutes: a wall-clock budget for the training loop, pauses excluded, summed
over resumes through the checkpoint (core/train/loop.py)."""
from __future__ import annotations

import time

import pytest

from core.config import RunConfig
from core.errors import ConfigError
from core.jobs import RecordingContext
from core.train import checkpoint as ckpt
from core.train.loop import train_model
from tests.core.reversal import reversal_train_data
from tests.core.tiny_runs import tiny_luong_config

BUDGET_S = 0.6


def budgeted(**train) -> RunConfig:
    """Far more steps than fit the budget; validation only at the end."""
    return tiny_luong_config(max_steps=0, epochs=10_000, valid_every=0,
                             max_minutes=BUDGET_S / 60, **train)


def saved_seconds(run_dir) -> float:
    return float(ckpt.load_checkpoint(run_dir / ckpt.LAST)["position"]["seconds"])


def test_the_run_stops_when_its_time_is_spent(tmp_path):
    start = time.perf_counter()
    result = train_model(budgeted(), reversal_train_data(), tmp_path, RecordingContext())
    wall = time.perf_counter() - start
    assert result.status == "finished" and 0 < result.step < 10_000
    assert result.epoch < 10_000
    spent = saved_seconds(tmp_path)
    # the step that crosses the budget ends the run; the final validation and save follow
    assert BUDGET_S <= spent < wall < BUDGET_S + 5


def test_the_budget_is_summed_over_resumes(tmp_path):
    first = train_model(budgeted(), reversal_train_data(), tmp_path, RecordingContext())
    spent = saved_seconds(tmp_path)
    # resuming with the same budget: it is spent already, so no step is trained
    again = train_model(budgeted(), reversal_train_data(), tmp_path, RecordingContext(),
                        resume=True)
    assert again.step == first.step
    # a raised budget trains on for about the difference, counted from the saved time
    more = tiny_luong_config(max_steps=0, epochs=10_000, valid_every=0,
                             max_minutes=3 * BUDGET_S / 60)
    longer = train_model(more, reversal_train_data(), tmp_path, RecordingContext(), resume=True)
    assert longer.step > first.step
    # the total is 3 * BUDGET_S plus the last step's overshoot; a whole new budget on top
    # of the spent one would end near spent + 3 * BUDGET_S (the midpoint between the two
    # keeps a slow step on a loaded machine from failing the test)
    assert 3 * BUDGET_S <= saved_seconds(tmp_path) < spent + 2.5 * BUDGET_S


class PausedOnce(RecordingContext):
    """Paused for a while before the first step, as the GUI's pause button does."""

    def __init__(self, pause_s: float):
        super().__init__()
        self.pause_s = pause_s

    def wait_if_paused(self) -> None:
        if self.pause_s:
            time.sleep(self.pause_s)
            self.pause_s = 0.0


def test_a_pause_spends_no_budget(tmp_path):
    result = train_model(budgeted(), reversal_train_data(), tmp_path, PausedOnce(2 * BUDGET_S))
    # had the pause counted, the budget would have ended the run after its first step
    assert result.step > 3
    assert BUDGET_S <= saved_seconds(tmp_path) < BUDGET_S + 1


def test_distributed_runs_take_steps_not_minutes(tmp_path):
    with pytest.raises(ConfigError, match="max_minutes is not available with --distributed"):
        train_model(budgeted(), reversal_train_data(), tmp_path, RecordingContext(),
                    distributed=object())


def test_the_budget_is_validated():
    raw = budgeted().to_dict()
    raw["train"]["max_minutes"] = -1
    with pytest.raises(ConfigError, match="max_minutes"):
        RunConfig.from_dict(raw, source="run.toml")


def test_cli_trains_for_minutes_and_resumes_with_more(tmp_path, capsys):
    import re

    from core.cli import run_cli
    from core.workspace.store import Workspace
    from tests.core.conftest import DEMO

    ws_dir = str(tmp_path / "ws")
    assert run_cli(["--workspace", ws_dir, "corpus", "import", str(DEMO / "demo.es"),
                    str(DEMO / "demo.en"), "--src-lang", "es", "--tgt-lang", "en",
                    "--name", "demo"]) == 0
    common = ["--set", "model.emb_size=16", "--set", "model.hidden_size=16", "--set",
              "model.layers=1", "--set", "data.dev_sample=0", "--threads", "1", "--quiet"]
    assert run_cli(["--workspace", ws_dir, "train", "--preset", "demo", "--corpus", "demo",
                    "--name", "timed", "--epochs", "1000", "--valid-every", "0",
                    "--max-minutes", "0.01", *common]) == 0
    first = int(re.search(r"finished after (\d+) steps", capsys.readouterr().out).group(1))
    assert 0 < first
    assert run_cli(["--workspace", ws_dir, "train", "--resume", "timed", "--max-minutes",
                    "0.03", "--quiet"]) == 0
    more = int(re.search(r"finished after (\d+) steps", capsys.readouterr().out).group(1))
    assert more > first
    with Workspace.open(ws_dir) as ws:
        assert ws.get_run("timed").config["train"]["max_minutes"] == 0.03  # for the GUI
        run_dir = ws.run_dir(ws.get_run("timed").id)
    assert 1.8 <= saved_seconds(run_dir) < 4

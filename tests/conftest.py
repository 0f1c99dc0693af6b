"""Shared fixtures. SHARED_DATA is ../shared/data beside the checkout (absent on a
user's fresh clone: tests that need it skip with that reason)."""
from __future__ import annotations

import faulthandler
import os
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

# Test models are tiny: one thread avoids the synchronisation cost that makes two
# threads several times slower per step on them (measured: 40 steps, 1.9 s vs 10.2 s CPU).
torch.set_num_threads(1)


# A hung test (a deadlock, a modal dialog offscreen) prints every thread's stack to the
# real stderr and ends the run with status 1, instead of stalling CI until its own limit.
# faulthandler's watchdog is a C thread: it fires even while a deadlock holds the GIL.
# NMT_WB_TEST_HANG_S sets the limit in seconds (default 900; 0 turns the watchdog off).
HANG_LIMIT_S = int(os.environ.get("NMT_WB_TEST_HANG_S", "900"))
_real_stderr: dict[str, int] = {}


def pytest_configure(config):
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=False)
    _real_stderr["fd"] = os.dup(2)
    if capture is not None:
        capture.resume_global_capture()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Each test's whole protocol is watched: its fixtures' setup (a module's training
    included) and teardown as well as the test itself."""
    if HANG_LIMIT_S <= 0:
        yield
        return
    faulthandler.dump_traceback_later(HANG_LIMIT_S, exit=True, file=_real_stderr["fd"])
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def shared_path(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: shared corpora live beside the checkout only in CI")
    return path


@pytest.fixture
def shared():
    return shared_path


@pytest.fixture
def count_calls(monkeypatch):
    """count_calls(owner, name) -> a list that gains one item per call of owner.name,
    which still runs (the wrapper is undone after the test)."""
    def watch(owner, name: str) -> list:
        calls, original = [], getattr(owner, name)
        monkeypatch.setattr(owner, name, lambda *a: calls.append(1) or original(*a))
        return calls
    return watch

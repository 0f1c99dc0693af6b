"""The SessionCache shared by the GUI's screens: one model load per (workspace, runs,
checkpoint), and never a model of another workspace for the same run id."""
from types import SimpleNamespace

from core.services import translation


def test_sessions_are_cached_per_workspace_runs_and_checkpoint(monkeypatch, tmp_path):
    opened = []

    def fake_open(ws, run_ids, which):
        opened.append((ws.root, tuple(run_ids), which))
        return SimpleNamespace(workspace=ws.root, runs=tuple(run_ids), which=which)

    monkeypatch.setattr(translation, "open_session", fake_open)
    a, b = SimpleNamespace(root=tmp_path / "a"), SimpleNamespace(root=tmp_path / "b")
    cache = translation.SessionCache()

    first = cache.get(a, [1])
    assert cache.get(a, [1]) is first  # loaded once
    other = cache.get(b, [1])  # the same run id in another workspace is another model
    assert other is not first and other.workspace == tmp_path / "b"
    assert cache.get(a, [1], "last").which == "last"
    assert cache.get(a, [1, 2]).runs == (1, 2)
    assert len(opened) == 4

    cache.clear()
    assert cache.get(a, [1]) is not first
    assert len(opened) == 5

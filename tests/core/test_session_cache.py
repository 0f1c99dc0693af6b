"""The SessionCache shared by the GUI's screens: one model load per (workspace, runs,
checkpoint), and never a model of another workspace for the same run id."""
from types import SimpleNamespace

from core.services import translation


def fake_ws(root):
    """A workspace as the cache reads it: its folder, and runs whose stored config has no
    length penalty of its own."""
    return SimpleNamespace(root=root, get_run=lambda _id: SimpleNamespace(config={}))


def test_sessions_are_cached_per_workspace_runs_and_checkpoint(monkeypatch, tmp_path):
    opened = []

    def fake_open(ws, run_ids, which):
        opened.append((ws.root, tuple(run_ids), which))
        return SimpleNamespace(workspace=ws.root, runs=tuple(run_ids), which=which)

    monkeypatch.setattr(translation, "open_session", fake_open)
    a, b = fake_ws(tmp_path / "a"), fake_ws(tmp_path / "b")
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


def test_clear_never_waits_for_a_load_and_a_key_loads_once(monkeypatch, tmp_path):
    """A slow model load holds only its own key: two callers of the same key share one
    load, clear() (the GUI thread calls it) returns while a load is still under way, and
    that load's session is not kept after the clear."""
    import threading

    started, release = threading.Event(), threading.Event()
    loads = []

    def slow_open(ws, run_ids, which):
        loads.append(tuple(run_ids))
        started.set()
        release.wait(30)
        return SimpleNamespace(runs=tuple(run_ids))

    monkeypatch.setattr(translation, "open_session", slow_open)
    ws = fake_ws(tmp_path)
    cache = translation.SessionCache()
    got = []

    def run_all(n):
        threads = [threading.Thread(target=lambda: got.append(cache.get(ws, [7])))
                   for _ in range(n)]
        for t in threads:
            t.start()
        return threads

    threads = run_all(2)
    assert started.wait(10)
    release.set()
    for t in threads:
        t.join(10)
    assert loads == [(7,)] and got[0] is got[1]  # one load, shared

    cache.clear()
    started.clear()
    release.clear()
    [loader] = run_all(1)
    assert started.wait(10)  # a load under way ...
    clearing = threading.Thread(target=cache.clear)
    clearing.start()
    clearing.join(10)
    assert not clearing.is_alive() and loader.is_alive()  # ... does not hold clear() up
    release.set()
    loader.join(10)
    assert len(loads) == 2 and got[2].runs == (7,)
    release.set()
    assert cache.get(ws, [7]) is not got[2] and len(loads) == 3  # not kept after the clear


def test_a_cached_ensemble_reads_each_runs_stored_reading_and_the_first_runs_alpha(
        monkeypatch, tmp_path):
    """A reading chosen after the session was loaded (the Attention screen's "Choose
    readings", align --remember) is the one its members read at the next use; the
    ensemble's alpha is its first run's."""
    from core.config import RunConfig

    stored = {1: {"alignment_reading": "", "length_penalty": 0.0},
              2: {"alignment_reading": "", "length_penalty": 0.5}}
    ws = SimpleNamespace(root=tmp_path, get_run=lambda i: SimpleNamespace(config=stored[i]))

    def fake_open(_ws, run_ids, _which):
        members = [SimpleNamespace(config=RunConfig()) for _ in run_ids]
        return SimpleNamespace(members=members, length_penalty=0.0)

    monkeypatch.setattr(translation, "open_session", fake_open)
    cache = translation.SessionCache()
    session = cache.get(ws, [1, 2])
    assert [m.config.alignment_reading for m in session.members] == ["", ""]

    stored[1] = {"alignment_reading": "shift", "length_penalty": 1.0}
    stored[2] = {"alignment_reading": "previous", "length_penalty": 2.0}
    again = cache.get(ws, [1, 2])
    assert again is session
    assert [m.config.alignment_reading for m in again.members] == ["shift", "previous"]
    assert again.length_penalty == 1.0

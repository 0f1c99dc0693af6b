"""Lists of the GUI show stored names without control characters."""
from __future__ import annotations

import json

from app.main_window import MainWindow
from core.config import RunConfig
from core.workspace.store import Workspace


def test_corpus_and_run_lists_escape_control_characters(qtbot, demo_ws):
    with Workspace.open(demo_ws) as ws, ws._write() as conn:  # names from an older version
        conn.execute("UPDATE corpora SET name = ? WHERE id = 1", ("demo\x1b[2J\u202e",))
        conn.execute("INSERT INTO runs (name, family, config, corpus_id, created, error)"
                     " VALUES (?, 'luong', ?, 1, 0, ?)",
                     ("run\nforged", json.dumps(RunConfig().to_dict()), "bad\x1b[0m"))
    window = MainWindow(demo_ws)
    qtbot.addWidget(window)
    window.corpora.refresh()
    window.training.refresh()
    text = window.corpora.corpus_list.item(0).text()
    assert text.startswith("demo\\x1b[2J\\u202e\n")
    cells = [window.training.runs_table.item(0, k).text()
             for k in range(window.training.runs_table.columnCount())]
    assert "1: run\\nforged" in cells and "bad\\x1b[0m" in cells
    assert not any("\x1b" in c or "\n" in c for c in cells)


def test_interrupted_runs_with_a_checkpoint_are_listed_with_a_safe_title(demo_ws):
    from app.widgets.run_list import run_title, usable_runs

    with Workspace.open(demo_ws) as ws:
        run_id = ws.create_run("killed", RunConfig().to_dict(), 1)
        ws.update_run(run_id, status="running", steps=40)
        with ws._write() as conn:  # a name stored by an older version
            conn.execute("UPDATE runs SET name = ? WHERE id = ?", ("kil\x1bled", run_id))
        (ws.run_dir(run_id) / "last.pt").write_bytes(b"checkpoint")
    with Workspace.open(demo_ws) as ws:  # nobody holds its lock: marked interrupted
        runs = usable_runs(ws)
        assert [r.status for r in runs if r.id == run_id] == ["interrupted"]
        title = run_title(next(r for r in runs if r.id == run_id))
        assert "kil\\x1bled" in title and "interrupted at step 40" in title

"""Lists of the GUI show stored names without control characters (#13 item 5)."""
from __future__ import annotations

import json

from app.main_window import MainWindow
from core.config import RunConfig
from core.store import Workspace


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

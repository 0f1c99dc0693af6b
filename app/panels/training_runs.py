"""The Training screen's runs table and progress line: one row per run of the workspace
(its colour, family, attention, status, steps, best dev perplexity, device, when it was
created, and the note of a stopped run), the runs selected in it, a running run's steps
as they come, and the line under the progress bar."""
from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from app.widgets.run_colours import run_colour, swatch
from app.widgets.run_list import run_device
from core.textsafe import printable

RUN_COLUMNS = ("Run", "Family", "Attention", "Status", "Steps", "Best dev ppl", "Device",
               "Created", "Note")
STATUS_COLOURS = {"finished": "#1b7837", "failed": "#b2182b", "cancelled": "#8c6d1f",
                  "interrupted": "#8c6d1f",
                  "running": "#2166ac", "queued": "#555555"}


STEPS_COLUMN = RUN_COLUMNS.index("Steps")


def runs_table() -> QTableWidget:
    """The empty runs table: its columns, whole rows selected (several with Ctrl/Shift),
    read-only."""
    table = QTableWidget(0, len(RUN_COLUMNS))
    table.setHorizontalHeaderLabels(RUN_COLUMNS)
    table.horizontalHeaderItem(RUN_COLUMNS.index("Best dev ppl")).setToolTip(
        "Best dev perplexity")
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setAlternatingRowColors(True)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def selected_run_ids(table: QTableWidget) -> list[int]:
    """The ids of the runs selected in the runs table, in table order."""
    rows = {i.row() for i in table.selectedItems()}
    out = []
    for r in sorted(rows):
        item = table.item(r, 0)
        if item is not None:
            out.append(int(item.data(Qt.ItemDataRole.UserRole)))
    return out


def show_live_steps(table: QTableWidget, running: dict[int, dict[str, Any]]) -> None:
    """The Steps cell of each run of `running` (run id -> its last step event, with
    "step") at that step."""
    for row in range(table.rowCount()):
        item = table.item(row, STEPS_COLUMN)
        run_id = int(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None
        if run_id in running:
            item.setText(f"{int(running[run_id]['step']):,}")


def clock(seconds: float) -> str:
    """`seconds` as m:ss, or h:mm:ss from an hour on."""
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def progress_line(label: str, p: dict[str, Any]) -> str:
    """The line under the progress bar from run `label`'s last step event `p`: step (of
    the total), epoch, loss, tokens per second, time left."""
    step, total = int(p.get("step", 0)), p.get("total_steps")
    eta = p.get("eta_s")
    eta_text = f" · ETA {clock(eta)}" if eta else ""
    loss = p.get("loss")
    loss_text = f" · loss {loss:.3f}" if loss is not None else ""
    return (f"{label}: step {step:,}{f' / {int(total):,}' if total else ''} · "
            f"epoch {p.get('epoch', '?')}{loss_text} · {p.get('tok_per_s', 0):,.0f} tok/s"
            f"{eta_text}")


def fill_run_row(table: QTableWidget, row: int, run: Any, status: str, steps: int,
                 ppl: float | None) -> None:
    """Row `row` of the runs table for `run` (a core.workspace RunInfo), shown as `status` at
    `steps` (a live job's, else the stored ones) with best dev perplexity `ppl`; every
    cell carries the run id, the name and note are whole in their tooltips."""
    created = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.created))
    best = f"{ppl:.2f}" if ppl is not None else "–"
    attention = run.config.get("model", {}).get("attention", "")
    if "transformer" in run.family or run.family == "concat":
        attention = "multi-head"
    note = run.error or ""
    device, device_tip = run_device(run.device)
    values = (f"{run.id}: {printable(run.name)}", run.family, attention, status, f"{steps:,}",
              best, device, created, printable(note))
    tips = {0: values[0], 3: run.error, 6: device_tip, len(values) - 1: note}  # 0: elided
    for col, value in enumerate(values):
        item = QTableWidgetItem(str(value))
        item.setData(Qt.ItemDataRole.UserRole, run.id)
        item.setToolTip(tips.get(col) or "")
        if col == 3:
            item.setForeground(QColor(STATUS_COLOURS.get(status, "#333333")))
        elif col == 0:
            item.setIcon(swatch(run_colour(run.id)))  # its colour in every chart
        table.setItem(row, col, item)


def fit_run_columns(table: QTableWidget, runs: list[Any]) -> None:
    """Every column whole in the table's width (no sideways scrolling at 1280 x 720): the
    run's name and the note share what the others leave (elided, whole in the tooltip);
    the note column shows only when a run has one."""
    table.resizeColumnsToContents()
    header = table.horizontalHeader()
    note = len(RUN_COLUMNS) - 1
    for col in (0, note):
        header.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
    table.setColumnHidden(note, not any(run.error for run in runs))

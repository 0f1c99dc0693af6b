"""Export a figure through a save dialog (PNG / SVG / PDF)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from app import workers


def export_dialog(parent: QWidget, export: Callable[[str, int], Path], stem: str,
                  dpi: int = 200) -> Path | None:
    path, _ = QFileDialog.getSaveFileName(parent, "Export figure", f"{stem}.png",
                                          "PNG image (*.png);;SVG (*.svg);;PDF (*.pdf)")
    if not path:
        return None
    try:
        return export(path, dpi)
    except (OSError, ValueError) as exc:
        workers.show_error(parent, "Export failed", f"{path}: {exc}")
        return None

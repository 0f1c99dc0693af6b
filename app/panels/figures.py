"""Export figures through a save dialog: PNG at a chosen DPI, SVG or PDF."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QInputDialog, QWidget

from app import workers
from app.file_dialogs import ask_save_path
from app.widgets.figure_export import export_scene, render_png

FILTER = "PNG image (*.png);;SVG (*.svg);;PDF (*.pdf)"
DEFAULT_DPI = 200


def export_item(item, path: str | Path, dpi: int = DEFAULT_DPI) -> Path:
    """Write a pyqtgraph item (a PlotItem, a layout) as PNG/SVG/PDF by suffix; PNG is
    scaled for `dpi` (the screen counts as 96 dpi)."""
    return export_scene(item.scene(), item.sceneBoundingRect(), path, dpi)


def figure_png(item, dpi: int = DEFAULT_DPI) -> bytes:
    """A pyqtgraph item rendered as PNG bytes (for a report that embeds its figures)."""
    return render_png(item.scene(), item.sceneBoundingRect(), dpi)


def _ask(parent: QWidget, stem: str) -> tuple[str, int] | None:
    path = ask_save_path(parent, "Export figure", "figures", f"{stem}.png", FILTER)
    if not path:
        return None
    dpi = DEFAULT_DPI
    if path.lower().endswith(".png"):
        dpi, ok = QInputDialog.getInt(parent, "Export PNG", "Resolution (dots per inch):",
                                      DEFAULT_DPI, 72, 1200, 50)
        if not ok:
            return None
    return path, dpi


def export_dialog(parent: QWidget, export: Callable[[str, int], Path], stem: str,
                  dpi: int = DEFAULT_DPI) -> Path | None:
    """Ask a file and a resolution, then `export(path, dpi)`; a file that cannot be written opens
    an error dialog. Returns the path written, or None."""
    asked = _ask(parent, stem)
    if asked is None:
        return None
    try:
        return export(*asked)
    except (OSError, ValueError) as exc:
        workers.show_error(parent, "Export failed", f"{asked[0]}: {exc}")
        return None


def export_plot_dialog(parent: QWidget, items: dict, stem: str) -> Path | None:
    """Choose one of `items` (title -> pyqtgraph item), then the file and DPI."""
    titles = list(items)
    if len(titles) > 1:
        title, ok = QInputDialog.getItem(parent, "Export figure", "Figure:", titles, 0, False)
        if not ok:
            return None
    else:
        title = titles[0]
    return export_dialog(parent, lambda path, dpi: export_item(items[title], path, dpi), stem)

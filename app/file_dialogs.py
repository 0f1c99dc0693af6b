"""File dialogs of the whole application: a save dialog whose chosen filter decides the
suffix, and every dialog opening in the last folder used for the same purpose
(remembered with QSettings under "folders/<purpose>")."""
from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

_PATTERN = re.compile(r"\*(\.[A-Za-z0-9]+)")


def filter_suffixes(name_filter: str) -> list[str]:
    """The suffixes of one filter, in order: "XLIFF 1.2 (*.xlf *.xliff)" -> [".xlf", ".xliff"]."""
    return [s.lower() for s in _PATTERN.findall(name_filter)]


def with_filter_suffix(path: str, selected_filter: str, filters: str, default_name: str = "") -> str:
    """The file name to write, given what the user typed and the filter they chose: a name
    with no known suffix, or the default name left as it was while another filter was
    chosen, gets the chosen filter's first suffix; a name whose suffix is another known
    one (name .pdf, filter SVG; a name typed with the default's suffix) keeps it: the
    typed name wins."""
    chosen = filter_suffixes(selected_filter)
    if not path or not chosen:
        return path
    known = {s for f in filters.split(";;") for s in filter_suffixes(f)}
    suffix = Path(path).suffix.lower()
    default_suffix = Path(default_name).suffix.lower()
    if suffix in chosen:
        return path
    if suffix == default_suffix and suffix and Path(path).name == Path(default_name).name:
        return str(Path(path).with_suffix(chosen[0]))
    if suffix not in known:
        return path + chosen[0]
    return path


def last_folder(purpose: str) -> str:
    """The folder last used for `purpose` ("" when none: Qt then uses the home folder
    rather than the program's working directory)."""
    folder = str(QSettings().value(f"folders/{purpose}", "") or "")
    return folder if folder and Path(folder).is_dir() else str(Path.home())


def remember_folder(purpose: str, path: str) -> None:
    """Remember the folder of `path` (or `path`, a folder) as the last one used for `purpose`."""
    folder = Path(path) if Path(path).is_dir() else Path(path).parent
    QSettings().setValue(f"folders/{purpose}", str(folder))


def ask_save_path(parent: QWidget | None, title: str, purpose: str, default_name: str,
                  filters: str) -> str | None:
    """A save dialog in the last folder used for `purpose`; the chosen filter decides the
    suffix (see with_filter_suffix): a typed suffix of another listed type wins, and one
    the filters do not know gets the chosen type's suffix after it only when the user
    agrees; an existing file under the name so made is replaced only when the user
    agrees. None when cancelled."""
    start = str(Path(last_folder(purpose)) / default_name)
    selected = _filter_for(default_name, filters)
    typed, chosen = QFileDialog.getSaveFileName(parent, title, start, filters, selected)
    if not typed:
        return None
    path = with_filter_suffix(typed, chosen or selected, filters, default_name)
    if not _suffix_added_agreed(parent, title, typed, path, chosen or selected):
        return None
    # the dialog asked about replacing the name as typed, not the one with the suffix
    if path != typed and Path(path).exists() and QMessageBox.question(
            parent, title, f"{path} already exists.\nDo you want to replace it?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No) != QMessageBox.StandardButton.Yes:
        return None
    remember_folder(purpose, path)
    return path


def _suffix_added_agreed(parent: QWidget | None, title: str, typed: str, path: str,
                         chosen: str) -> bool:
    """Whether the user wants `path`, made by adding the chosen type's suffix after a
    suffix they typed ('informe.odt' -> 'informe.odt.tmx'): asked (Yes/No, default No);
    True without asking when no suffix was typed or none was added."""
    suffix = Path(typed).suffix
    if not suffix or path == typed or not path.startswith(typed):
        return True
    return QMessageBox.question(
        parent, title, f"{Path(typed).name} ends in {suffix}, which is not a file type of "
        f"this export.\nSave it as {Path(path).name} ({chosen})?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No) == QMessageBox.StandardButton.Yes


def ask_open_path(parent: QWidget | None, title: str, purpose: str, filters: str = "") -> str | None:
    """A file to open, asked in the last folder used for `purpose`; None when cancelled."""
    path, _ = QFileDialog.getOpenFileName(parent, title, last_folder(purpose), filters)
    if not path:
        return None
    remember_folder(purpose, path)
    return path


def ask_folder(parent: QWidget | None, title: str, purpose: str) -> str | None:
    """A folder, asked starting from the last one used for `purpose`; None when cancelled."""
    path = QFileDialog.getExistingDirectory(parent, title, last_folder(purpose))
    if not path:
        return None
    remember_folder(purpose, path)
    return path


def _filter_for(name: str, filters: str) -> str:
    """The filter matching `name`'s suffix (the dialog's preselected one), else the first."""
    parts = filters.split(";;")
    suffix = Path(name).suffix.lower()
    return next((f for f in parts if suffix and suffix in filter_suffixes(f)), parts[0])

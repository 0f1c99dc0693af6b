"""Rename and delete corpora and runs from their lists (a context menu, F2 and Delete):
each deletion is confirmed by a dialog that names what goes and what stays; a corpus
that runs use, and a run that is training, are refused with the reason. The store does
the work (Workspace.rename_corpus / delete_corpus, update_run(name=) / delete_run), so
nothing but the named corpus or run is touched. What a deletion removes, or why it is
refused, comes from core.services.manage, as for `corpus delete` / `runs delete`."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMessageBox, QWidget

from app import workers
from core.errors import WorkbenchError
from core.services.manage import corpus_deletion, run_deletion
from core.services.manage import delete_run as delete_run_locked
from core.workspace.store import Workspace


# --- the dialogs (tests replace these two) --------------------------------------------------
def confirm(parent: QWidget, title: str, text: str) -> bool:
    """Whether the user confirms a deletion: Delete / Cancel, Cancel the default."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, text,
                      QMessageBox.StandardButton.Cancel, parent)
    box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    return box.buttonRole(box.clickedButton()) == QMessageBox.ButtonRole.DestructiveRole


def refuse(parent: QWidget, title: str, text: str) -> None:
    """Say why an action is refused."""
    QMessageBox.information(parent, title, text)


def ask_name(parent: QWidget, title: str, current: str) -> str | None:
    """A new name for something now called `current`; None when cancelled, empty or unchanged."""
    name, ok = QInputDialog.getText(parent, title, "New name:", QLineEdit.EchoMode.Normal, current)
    return name.strip() if ok and name.strip() and name.strip() != current else None


# --- the actions ------------------------------------------------------------------------------
def delete_corpus(parent: QWidget, ws: Workspace, corpus_id: int) -> bool:
    """Delete corpus `corpus_id` when core.services.manage allows it and the user confirms;
    whether it was deleted."""
    return _delete(parent, "corpus", corpus_deletion(ws, corpus_id),
                   lambda: ws.delete_corpus(corpus_id))


def delete_run(parent: QWidget, ws: Workspace, run_id: int, training: bool) -> bool:
    """Delete run `run_id` when core.services.manage allows it (`training`: its job is running)
    and the user confirms; whether it was deleted."""
    return _delete(parent, "run", run_deletion(ws, run_id, training),
                   lambda: delete_run_locked(ws, run_id))


def _delete(parent: QWidget, what: str, verdict: tuple[bool, str], delete) -> bool:
    """Refuse with the reason, or ask to confirm and then `delete()`; True if deleted."""
    allowed, text = verdict
    if not allowed:
        refuse(parent, f"Cannot delete the {what}", text)
        return False
    if not confirm(parent, f"Delete {what}", text):
        return False
    try:
        delete()
    except WorkbenchError as exc:  # e.g. a trainer started on the run meanwhile
        workers.show_error(parent, f"Cannot delete the {what}", str(exc))
        return False
    return True


def rename(parent: QWidget, what: str, current: str, apply: Callable[[str], None]) -> bool:
    """Ask a new name for the `what` ("corpus", "run") now called `current`; a taken or
    invalid name is refused with the store's reason."""
    name = ask_name(parent, f"Rename {what}", current)
    if name is None:
        return False
    try:
        apply(name)
    except WorkbenchError as exc:
        workers.show_error(parent, f"Cannot rename the {what}", str(exc))
        return False
    return True


def add_actions(view: QWidget, on_rename: Callable[[], None],
                on_delete: Callable[[], None]) -> tuple[QAction, QAction]:
    """"Rename…" (F2) and "Delete…" (Delete) in the view's context menu."""
    view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
    actions = []
    for text, key, slot in (("Rename\u2026", QKeySequence(Qt.Key.Key_F2), on_rename),
                            ("Delete\u2026", QKeySequence(QKeySequence.StandardKey.Delete),
                             on_delete)):
        action = QAction(text, view)
        action.setShortcut(key)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(lambda _=False, slot=slot: slot())
        view.addAction(action)
        actions.append(action)
    return actions[0], actions[1]


def install_run_actions(panel: Any) -> tuple[QAction, QAction]:
    """The Training screen's runs table: rename / delete the selected run."""
    def selected() -> int | None:
        ids = panel.selected_runs()
        return ids[0] if ids and panel.workspace is not None else None

    def changed() -> None:
        panel.labels.clear()  # curve labels carry the names
        panel.refresh()
        panel.show_curves(panel.selected_runs())
        panel.runs_changed.emit()

    def on_rename() -> None:
        run_id = selected()
        if run_id is not None and rename(panel, "run", panel.workspace.get_run(run_id).name,
                                         lambda n: panel.workspace.update_run(run_id, name=n)):
            changed()

    def on_delete() -> None:
        run_id = selected()
        job = panel.run_jobs.get(run_id)
        if run_id is not None and delete_run(panel, panel.workspace, run_id,
                                             job is not None and not job.done):
            changed()

    return add_actions(panel.runs_table, on_rename, on_delete)


def install_corpus_actions(panel: Any) -> tuple[QAction, QAction]:
    """The Corpora screen's list: rename / delete the current corpus."""
    def current() -> int | None:
        item = panel.corpus_list.currentItem()
        if item is None or panel.workspace is None:
            return None
        return int(item.data(Qt.ItemDataRole.UserRole))

    def on_rename() -> None:
        corpus_id = current()
        if corpus_id is not None and rename(
                panel, "corpus", panel.workspace.get_corpus(corpus_id).name,
                lambda n: panel.workspace.rename_corpus(corpus_id, n)):
            panel.refresh(select_id=corpus_id)
            panel.corpora_changed.emit()

    def on_delete() -> None:
        corpus_id = current()
        if corpus_id is not None and delete_corpus(panel, panel.workspace, corpus_id):
            panel.refresh()
            panel.corpora_changed.emit()

    return add_actions(panel.corpus_list, on_rename, on_delete)

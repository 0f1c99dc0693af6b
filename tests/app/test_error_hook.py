"""An exception escaping a slot reaches the user in the error dialog (app/error_hook.py),
not only the terminal."""
from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QObject, Signal

from app import error_hook
from core.errors import StoreError


class Emitter(QObject):
    fired = Signal(str)


@pytest.fixture
def shown(monkeypatch):
    """The error dialogs shown, as (title, message, details); a slot raising while one
    is 'open' is replayed through `during` (the dialog's own event loop runs then)."""
    class Shown(list):
        during: list

    calls = Shown()
    during: list = []

    def fake_show_error(parent, title, message, details=""):
        calls.append((title, message, details))
        while during:
            during.pop(0)()

    monkeypatch.setattr(error_hook.workers, "show_error", fake_show_error)
    calls.during = during
    return calls


@pytest.mark.qt_no_exception_capture
def test_an_exception_in_a_slot_opens_the_error_dialog_with_its_traceback(qtbot, shown, capsys):
    hook = error_hook.ErrorDialogHook(lambda: None).install()
    try:
        emitter = Emitter()

        def export_slot(name: str) -> None:
            raise ValueError(f"cannot export {name}")

        emitter.fired.connect(export_slot)
        emitter.fired.emit("doc.tmx")  # Qt calls sys.excepthook and goes on
        emitter.fired.disconnect(export_slot)

        def failing_store(_name: str) -> None:
            raise StoreError("runs.db: database is locked; close the other program")

        emitter.fired.connect(failing_store)
        emitter.fired.emit("x")
    finally:
        hook.uninstall()
    assert sys.excepthook is not hook
    (title, message, details), (_, store_message, _) = shown
    assert title == "Unexpected error"
    assert message.startswith("ValueError: cannot export doc.tmx\n\nThat action did not finish")
    assert "in export_slot" in details and details.rstrip().endswith(
        "ValueError: cannot export doc.tmx")
    # a WorkbenchError's own message is for users: no class name before it
    assert store_message.startswith("runs.db: database is locked; close the other program")
    assert "cannot export doc.tmx" in capsys.readouterr().err  # the terminal keeps it


@pytest.mark.qt_no_exception_capture
def test_errors_while_the_dialog_is_open_are_counted_not_stacked(qtbot, shown):
    hook = error_hook.ErrorDialogHook(lambda: None).install()
    emitter = Emitter()

    def repaint(_text: str) -> None:
        raise RuntimeError("paint failed")

    emitter.fired.connect(repaint)
    # three more raise while the first dialog is open
    shown.during.extend([lambda: emitter.fired.emit("again")] * 3)
    try:
        emitter.fired.emit("first")
    finally:
        hook.uninstall()
    assert [t for t, _, _ in shown] == ["Unexpected error", "Unexpected errors"]
    assert shown[1][1].startswith("3 more errors happened while the last one was shown")
    assert hook.showing is False and hook.held_back == 0


def test_the_workbench_window_installs_the_hook(qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QApplication

    from app import main_window

    windows = []
    real_window = main_window.MainWindow
    monkeypatch.setattr(main_window, "MainWindow",
                        lambda ws: windows.append(real_window(ws)) or windows[-1])
    monkeypatch.setattr(QApplication, "exec", lambda self: 0)  # no event loop here
    # the application's style and the collector are process-wide: later tests keep theirs
    monkeypatch.setattr(main_window, "apply_style", lambda app: None)
    monkeypatch.setattr(main_window, "collect_on_gui_thread", lambda: None)
    before = sys.excepthook
    try:
        assert main_window.launch(str(tmp_path / "ws")) == 0
        hook = sys.excepthook
        assert isinstance(hook, error_hook.ErrorDialogHook) and hook.previous is before
        assert hook.parent() is windows[0]  # shown: the dialogs sit on the window
    finally:
        if isinstance(sys.excepthook, error_hook.ErrorDialogHook):
            sys.excepthook.uninstall()
        for w in windows:
            w.close()

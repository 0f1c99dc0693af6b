"""The last net under the GUI: an exception that escapes a slot or an event handler.

Qt calls Python's `sys.excepthook` for such an exception and goes on, so without this
hook it reached only the terminal, which a user of the window never sees. The hook
still prints it there (the previous hook), then shows it in the error dialog with its
traceback under 'Show Details...'. While that dialog is open (its own event loop runs),
further exceptions are printed and counted, not stacked as more dialogs: a handler that
raises at every repaint would otherwise open one per frame."""
from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable
from types import TracebackType

from PySide6.QtWidgets import QWidget

from app import workers
from core.errors import WorkbenchError

Hook = Callable[[type[BaseException], BaseException, TracebackType | None], None]


class ErrorDialogHook:
    """sys.excepthook for the GUI; `install` puts it in place, `uninstall` takes it out."""

    def __init__(self, parent: Callable[[], QWidget | None]):
        self.parent = parent  # the dialog's parent, looked up when one is shown
        self.previous: Hook = sys.excepthook
        self.showing = False
        self.held_back = 0  # exceptions printed only, while a dialog was open

    def install(self) -> ErrorDialogHook:
        """Make this the sys.excepthook (the previous one kept); returns self."""
        self.previous = sys.excepthook
        sys.excepthook = self
        return self

    def uninstall(self) -> None:
        """Give sys.excepthook back to the hook it replaced."""
        if sys.excepthook is self:
            sys.excepthook = self.previous

    def __call__(self, exc_type: type[BaseException], exc: BaseException,
                 tb: TracebackType | None) -> None:
        self.previous(exc_type, exc, tb)  # the terminal keeps it too
        if (issubclass(exc_type, KeyboardInterrupt)
                or threading.current_thread() is not threading.main_thread()):
            return  # no dialog outside the GUI thread (worker jobs report their own)
        if self.showing:
            self.held_back += 1
            return
        message = (str(exc) if isinstance(exc, WorkbenchError)
                   else f"{exc_type.__name__}: {exc}")
        details = "".join(traceback.format_exception(exc_type, exc, tb))
        self.showing = True
        try:
            workers.show_error(
                self.parent(), "Unexpected error",
                f"{message}\n\nThat action did not finish; the workbench goes on. If it "
                "happens again, please report it with the details below.", details)
            if self.held_back:
                count, self.held_back = self.held_back, 0
                workers.show_error(
                    self.parent(), "Unexpected errors",
                    f"{count} more error{'s' if count > 1 else ''} happened while the last "
                    "one was shown; they are printed on the terminal.")
        finally:
            self.showing = False

"""The main window: one tab per screen, menus, a status bar with the device and the
running jobs; geometry, splitter positions, the last tab and the last workspace restored
with QSettings."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QFont, QKeySequence, QUndoGroup
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QTabWidget,
    QWidget,
)

from app import workers
from app.error_hook import ErrorDialogHook
from app.file_dialogs import ask_folder
from app.gc_guard import collect_on_gui_thread
from app.model_import import ask_and_import
from app.panels.attention import AttentionPanel
from app.panels.corpora import CorporaPanel
from app.panels.evaluation import EvaluationPanel
from app.panels.training import TrainingPanel
from app.panels.translate import TranslatePanel
from app.widgets.status_label import StatusLabel
from app.workers import JobManager
from core.errors import WorkbenchError
from core.services.translation import SessionCache
from core.services.warm_up import warm_up
from core.workspace.store import Workspace

APP_NAME = "NMT Attention Workbench"
# keys that act inside one screen, not menu actions (the menus' own are listed from them)
SCREEN_SHORTCUTS = [
    ("Ctrl+F", "Corpora: search the corpus table"),
    ("Alt+Left / Alt+Right, PgUp / PgDown", "Attention: previous / next pair"),
]


def about_html() -> str:
    """The About box: the program's version, the versions it runs on and the device."""
    from importlib import metadata

    import PySide6
    import torch
    from PySide6.QtCore import qVersion

    try:
        version = metadata.version("nmt-workbench")
    except metadata.PackageNotFoundError:
        version = "(not installed)"
    rows = [("Version", version), ("PyTorch", torch.__version__), ("Qt", qVersion()),
            ("PySide6", PySide6.__version__), ("Python", sys.version.split()[0]),
            ("Device", device_description())]
    table = "".join(f"<tr><td>{k}</td><td>&nbsp;&nbsp;<b>{v}</b></td></tr>" for k, v in rows)
    return (f"<b>{APP_NAME}</b><p>Train, inspect and use attention-based neural machine "
            f"translation.</p><table>{table}</table>")


def device_description() -> str:
    """The device training would use here, in words (core.train.device.describe_device)."""
    from core.train.device import describe_device

    return str(describe_device())


class MainWindow(QMainWindow):
    """The workbench's window: the five screens as tabs over one workspace, its menus, status bar
    and the JobManager every screen submits to."""
    def __init__(self, workspace_path: str | Path | None = None):
        super().__init__()
        self.setWindowTitle(APP_NAME)
        self.resize(1400, 900)
        self.workspace: Workspace | None = None
        self.jobs = JobManager(self, error_parent=self)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.sessions = SessionCache()  # models loaded once, shared by the screens
        self.corpora = CorporaPanel(self.jobs)
        self.training = TrainingPanel(self.jobs)
        self.translate = TranslatePanel(self.jobs, self.sessions)
        self.attention = AttentionPanel(self.jobs, self.sessions)
        self.evaluation = EvaluationPanel(self.jobs, self.sessions)
        self.panels: dict[str, QWidget] = {
            "Corpora": self.corpora, "Training": self.training, "Translate": self.translate,
            "Attention": self.attention, "Evaluation": self.evaluation,
        }
        for title, panel in self.panels.items():
            self.tabs.addTab(panel, title)
        self.setCentralWidget(self.tabs)
        self.corpora.corpora_changed.connect(self.training.refresh)
        self.training.runs_changed.connect(self._refresh_runs)

        self._build_menus()
        self.device_label = QLabel(f"Device: {device_description()}")
        self.jobs_label = StatusLabel("No jobs running", logged=False)  # a long job name elides
        self.statusBar().addPermanentWidget(self.jobs_label)
        self.statusBar().addPermanentWidget(self.device_label)
        self.jobs.jobs_changed.connect(self._update_jobs_label)
        # import the training stack now, not inside the first training job (see warm_up)
        self.warm_up_job = self.jobs.submit(warm_up, name="Loading the training engine")

        self.tabs.setCurrentIndex(int(QSettings().value("window/tab", 0) or 0))
        settings = QSettings()
        geometry = settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = settings.value("window/state")
        if state is not None:
            self.restoreState(state)
        for key, splitter in self._splitters().items():
            sizes = settings.value(f"splitters/{key}")
            if sizes is not None:
                splitter.restoreState(sizes)
        create = True
        if workspace_path is None:
            workspace_path = settings.value("workspace/last") or None
            create = False  # a remembered workspace whose folder is gone is not made anew
        if workspace_path is not None:
            self.open_workspace(workspace_path, create=create)

    # --- workspace ------------------------------------------------------------------
    def open_workspace(self, path: str | Path, create: bool = True) -> bool:
        """Open (or create) the workspace at `path` in every screen; refused while a job
        of the current one runs, since opening closes it under the job."""
        busy = [j for j in self.jobs.active() if j is not self.warm_up_job]
        if self.workspace is not None and busy:
            names = ", ".join(j.name for j in busy[:3]) + (" ..." if len(busy) > 3 else "")
            workers.show_error(
                self, "Cannot open workspace",
                f"{len(busy)} job{'s' if len(busy) > 1 else ''} still running in "
                f"{self.workspace.root} ({names}): cancel {'them' if len(busy) > 1 else 'it'} "
                f"or wait for the end, then open {path}.")
            return False
        if self.workspace is not None and not self.translate.may_discard_edits(
                "Opening another workspace"):  # its Translate screen starts empty
            return False
        try:
            ws = Workspace.open(path, create=create)
        except WorkbenchError as exc:
            workers.show_error(self, "Cannot open workspace", str(exc))
            return False
        if self.workspace is not None:
            self.workspace.close()
        self.workspace = ws
        self.sessions.clear()  # the models of the previous workspace are not needed
        for panel in self.panels.values():
            panel.set_workspace(ws)
        QSettings().setValue("workspace/last", str(ws.root))
        self.setWindowTitle(f"{APP_NAME} \u2014 {ws.root}")
        self.statusBar().showMessage(f"Workspace {ws.root}", 5000)
        return True

    def _choose_workspace(self, new: bool) -> None:
        title = "New workspace (choose an empty folder)" if new else "Open workspace"
        path = ask_folder(self, title, "workspaces")
        if path:
            self.open_workspace(path, create=new)

    def _splitters(self) -> dict[str, QSplitter]:
        """Every splitter of the screens, by "<screen>/<index>" (their creation order)."""
        return {f"{title}/{i}": splitter for title, panel in self.panels.items()
                for i, splitter in enumerate(panel.findChildren(QSplitter))}

    def _refresh_runs(self) -> None:
        self.sessions.clear()  # a run may have new checkpoints
        for panel in (self.translate, self.attention, self.evaluation):
            panel.refresh()

    # --- menus ----------------------------------------------------------------------------
    def _action(self, menu, text: str, slot, shortcut: str | None = None) -> QAction:
        action = QAction(text, self)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self._action(file_menu, "&New workspace…", lambda: self._choose_workspace(True), "Ctrl+N")
        self._action(file_menu, "&Open workspace…", lambda: self._choose_workspace(False), "Ctrl+O")
        file_menu.addSeparator()
        self._action(file_menu, "&Import corpus…", self._import_corpus, "Ctrl+I")
        self._action(file_menu, "Import &model…", self._import_model)
        self._action(file_menu, "Open &document to translate…",
                     self._on(self.translate, self.translate._choose_document), "Ctrl+Shift+O")
        self._action(file_menu, "&Export figure…", self._export_current, "Ctrl+E")
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.close, "Ctrl+Q")
        self._build_edit_menu(bar.addMenu("&Edit"))
        view = bar.addMenu("&View")
        for i, title in enumerate(self.panels):
            self._action(view, title, lambda _=False, i=i: self.tabs.setCurrentIndex(i),
                         f"Ctrl+{i + 1}")
        run = bar.addMenu("&Run")  # the main action of each screen, from any screen
        self._action(run, "&Start training", self._on(self.training, self.training.start),
                     "Ctrl+Return")
        self._action(run, "&Translate", self._on(self.translate, self.translate.translate),
                     "Ctrl+T")
        self._action(run, "Compute &attention", self._on(self.attention, self.attention.compute),
                     "Ctrl+R")
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "&Keyboard shortcuts", self._show_shortcuts)
        self._action(help_menu, "&About", self._show_about)

    def _build_edit_menu(self, menu) -> None:
        """Undo / Redo of the Translate screen's target edits (Ctrl+Z; Ctrl+Shift+Z or
        Ctrl+Y), active while that screen is shown; a text field being edited keeps
        these keys for its own text."""
        self.undo_group = QUndoGroup(self)
        self.undo_group.addStack(self.translate.history.stack)
        self.undo_action = self.undo_group.createUndoAction(self, "&Undo")
        self.undo_action.setShortcuts(QKeySequence.keyBindings(QKeySequence.StandardKey.Undo))
        self.redo_action = self.undo_group.createRedoAction(self, "&Redo")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        menu.addActions([self.undo_action, self.redo_action])
        self.tabs.currentChanged.connect(lambda _i: self._activate_undo())
        self._activate_undo()

    def _activate_undo(self) -> None:
        """The Edit menu undoes the Translate screen's edits only while it is shown."""
        shown = self.tabs.currentWidget() is self.translate
        self.undo_group.setActiveStack(self.translate.history.stack if shown else None)

    def _on(self, panel: QWidget, action):
        """A menu action's slot: show `panel`, then call `action()`."""
        def slot(_checked: bool = False) -> None:
            self.tabs.setCurrentWidget(panel)
            action()
        return slot

    def shortcuts(self) -> list[tuple[str, str]]:
        """(keys, what they do): every menu action with a shortcut, then the screens' own."""
        out = []
        for menu_action in self.menuBar().actions():
            menu = menu_action.menu()
            for action in menu.actions() if menu is not None else []:
                keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                if keys:
                    title = menu_action.text().replace("&", "")
                    out.append((keys, f"{title} \u203a {action.text().replace('&', '')}"))
        return out + self._button_shortcuts() + SCREEN_SHORTCUTS

    def _button_shortcuts(self) -> list[tuple[str, str]]:
        """(keys, 'Screen: button') of every screen's buttons that have a shortcut of
        their own (Translate's "Translate text", Ctrl+Shift+Return)."""
        out = []
        for title, panel in self.panels.items():
            for button in panel.findChildren(QAbstractButton):
                keys = button.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                if keys:
                    out.append((keys, f"{title}: {button.text().replace('&', '')}"))
        return out

    def _import_corpus(self) -> None:
        self.tabs.setCurrentWidget(self.corpora)
        self.corpora.open_import_dialog()

    def _import_model(self) -> None:
        ask_and_import(self, self.jobs, self.workspace, self._runs_imported)

    def _runs_imported(self) -> None:
        self.training.refresh()
        self._refresh_runs()

    def _export_current(self) -> None:
        panel = self.tabs.currentWidget()
        export = getattr(panel, "export_figure", None)
        if export is None:
            QMessageBox.information(self, "Export", "This screen has no figure to export.")
        else:
            export()

    def _show_shortcuts(self) -> None:
        rows = "".join(f"<tr><td><b>{k}</b></td><td>&nbsp;&nbsp;{v}</td></tr>"
                       for k, v in self.shortcuts())
        QMessageBox.information(self, "Keyboard shortcuts", f"<table>{rows}</table>")

    def _show_about(self) -> None:
        QMessageBox.about(self, f"About {APP_NAME}", about_html())

    def _update_jobs_label(self) -> None:
        active = self.jobs.active()
        if not active:
            self.jobs_label.setText("No jobs running")
        else:
            names = ", ".join(f"{j.name} ({j.state})" for j in active[:3])
            more = f" +{len(active) - 3}" if len(active) > 3 else ""
            self.jobs_label.setText(f"{len(active)} job{'s' if len(active) > 1 else ''}: "
                                    f"{names}{more}")

    # --- closing ---------------------------------------------------------------------------
    def closeEvent(self, event) -> None:
        if not self.translate.may_discard_edits("Closing the workbench"):
            event.ignore()  # the user keeps the window and the edited targets
            return
        settings = QSettings()
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/state", self.saveState())
        settings.setValue("window/tab", self.tabs.currentIndex())
        for key, splitter in self._splitters().items():
            settings.setValue(f"splitters/{key}", splitter.saveState())
        self.jobs.shutdown()
        if self.workspace is not None:
            self.workspace.close()
            self.workspace = None
        super().closeEvent(event)


def apply_style(app: QApplication) -> None:
    """The application's look: Fusion, a 10 pt font, dark text on pyqtgraph's white plots."""
    import pyqtgraph as pg

    # dark text on the white plots (pyqtgraph's default foreground is a light grey)
    pg.setConfigOptions(foreground=(35, 35, 35), antialias=True)
    app.setStyle("Fusion")
    font = QFont(app.font())
    font.setPointSize(10)
    app.setFont(font)
    app.setStyleSheet(
        "QTabBar::tab { padding: 6px 16px; }"
        "QGroupBox { font-weight: 600; margin-top: 10px; }"
        "QGroupBox::title { subcontrol-origin: margin; left: 6px; padding: 0 3px; }"
        "#heatmapReadout { color: #333; padding: 2px 4px; }"
        "#hint { color: #555; }"
        "#caption { font-weight: 600; color: #333; padding: 2px 0; }"
        "#pairLabel { font-size: 11pt; padding: 2px 4px; }"
        # the header's own font is the bolder one (not its sections'): Qt measures a
        # long header in it, so it elides to what fits instead of clipping both ends
        "QHeaderView { font-weight: 600; } QHeaderView::section { padding: 3px 6px; }"
    )


def launch(workspace: str | None = None, demo: bool = False) -> int:
    """Open the workbench (the `gui` command). Returns the exit status."""
    app = QApplication.instance() or QApplication(sys.argv)
    app.setOrganizationName("nmt-workbench")
    app.setApplicationName("NMT Attention Workbench")
    apply_style(app)
    collect_on_gui_thread()
    if demo:
        from core.services.demo import ensure_demo_workspace

        try:
            workspace = str(ensure_demo_workspace())
        except WorkbenchError as exc:
            workers.show_error(None, "Demo workspace", str(exc))
            workspace = tempfile.mkdtemp(prefix="nmt-demo-")
    window = MainWindow(workspace)
    ErrorDialogHook(lambda: window if window.isVisible() else None).install()
    window.show()
    if os.environ.get("NMT_WORKBENCH_QUIT_AFTER_MS"):  # smoke runs: open, then quit
        QTimer.singleShot(int(os.environ["NMT_WORKBENCH_QUIT_AFTER_MS"]), window.close)
    window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return app.exec()

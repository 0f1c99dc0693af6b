"""File -> Import model...: an outside model made a run of the workspace by the one
service `runs import` calls (core.services.model_import), in a job; the screens' run
lists are refreshed when it is done. A Marian / OPUS-MT model is a folder."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QInputDialog, QLineEdit, QMessageBox, QWidget

from app.file_dialogs import ask_folder
from app.panel_jobs import import_model_job
from app.workers import Job, JobManager
from core.workspace.store import Workspace


def ask_and_import(parent: QWidget, jobs: JobManager, ws: Workspace | None,
                   done: Callable[[], None]) -> Job | None:
    """Ask for the model's folder and the run's name, then import it in a job; `done()`
    runs when the run exists. Returns the job, or None when the user cancelled (or no
    workspace is open)."""
    if ws is None:
        QMessageBox.information(parent, "Import model", "Open a workspace first.")
        return None
    path = ask_folder(parent, "Import model: a Marian / OPUS-MT folder (config.json, "
                      "weights, source.spm, target.spm, vocab.json)", "models")
    if not path:
        return None
    name, ok = QInputDialog.getText(parent, "Import model", "Name of the new run:",
                                    QLineEdit.EchoMode.Normal, Path(path).name)
    if not ok or not name.strip():
        return None
    job = jobs.submit(import_model_job, ws, path, name.strip(), name=f"Importing {name.strip()}")
    job.finished.connect(lambda _run_id: done())
    return job

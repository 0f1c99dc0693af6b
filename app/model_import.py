"""File -> Import model...: an outside model made a run of the workspace by the one
service `runs import` calls (core.services.model_import), in a job; the screens' run
lists are refreshed when it is done. A Marian / OPUS-MT model is a folder, an OpenNMT-py
checkpoint a .pt file: the user says which, then picks it."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QInputDialog, QLineEdit, QMessageBox, QWidget

from app.file_dialogs import ask_folder, ask_open_path
from app.workers import Job, JobManager
from core.services.model_import import import_model_job
from core.workspace.store import Workspace

#: what File -> Import model... offers, in the order of core.services.model_import.KINDS
CHOICES = ("Marian / OPUS-MT model (a folder)", "OpenNMT-py checkpoint (a .pt file)")


def ask_and_import(parent: QWidget, jobs: JobManager, ws: Workspace | None,
                   done: Callable[[], None]) -> Job | None:
    """Ask for the kind of model, its folder or file and the run's name, then import it
    in a job; `done()` runs when the run exists. Returns the job, or None when the user
    cancelled (or no
    workspace is open)."""
    if ws is None:
        QMessageBox.information(parent, "Import model", "Open a workspace first.")
        return None
    kind, ok = QInputDialog.getItem(parent, "Import model", "What to import:", list(CHOICES),
                                    0, False)
    if not ok:
        return None
    if kind == CHOICES[0]:
        path = ask_folder(parent, "Import model: a Marian / OPUS-MT folder (config.json, "
                          "weights, source.spm, target.spm, vocab.json)", "models")
    else:
        path = ask_open_path(parent, "Import model: an OpenNMT-py 3.x checkpoint", "models",
                             "OpenNMT-py checkpoints (*.pt);;All files (*)")
    if not path:
        return None
    name, ok = QInputDialog.getText(parent, "Import model", "Name of the new run:",
                                    QLineEdit.EchoMode.Normal,
                                    Path(path).name if Path(path).is_dir() else Path(path).stem)
    if not ok or not name.strip():
        return None
    answer, ok = QInputDialog.getText(
        parent, "Import model", "Languages it translates, source and target (e.g. 'es en');\n"
        "empty: as its files say (an OPUS-MT folder's name), else unknown:",
        QLineEdit.EchoMode.Normal, "")
    if not ok:
        return None
    codes = answer.replace("-", " ").replace(">", " ").split()
    if codes and len(codes) != 2:
        QMessageBox.warning(parent, "Import model", f"{answer!r}: give two language codes, "
                            "source and target (e.g. 'es en'), or none")
        return None
    languages = (codes[0], codes[1]) if codes else None
    job = jobs.submit(import_model_job, ws, path, name.strip(), languages,
                      name=f"Importing {name.strip()}")
    job.finished.connect(lambda _run_id: done())
    return job

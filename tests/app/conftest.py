"""Qt tests run offscreen, with QSettings in a temp folder (never the user's config)
and the error dialog replaced by a recorder."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402


@pytest.fixture(autouse=True)
def temp_settings(tmp_path_factory):
    folder = tmp_path_factory.mktemp("qsettings")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    QSettings().clear()
    yield folder


@pytest.fixture
def errors(monkeypatch):
    """Every error the GUI would show in a message box: (title, message, details)."""
    shown: list[tuple[str, str, str]] = []
    from app import workers

    monkeypatch.setattr(workers, "show_error",
                        lambda parent, title, message, details="": shown.append(
                            (title, message, details)))
    return shown

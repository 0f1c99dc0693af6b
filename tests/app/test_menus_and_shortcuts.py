"""The main window's menus: About names the program's, PyTorch's and Qt's versions and the
device; the main actions have keyboard shortcuts, none bound twice, all listed in the
shortcuts dialog (Translate text too) and working from any screen."""
from __future__ import annotations

import pytest


@pytest.fixture
def window(qtbot, demo_ws):
    from app.main_window import MainWindow

    w = MainWindow(demo_ws)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def test_about_names_the_versions_and_the_device(window, monkeypatch):
    from importlib import metadata

    import PySide6
    import torch
    from PySide6.QtCore import qVersion
    from PySide6.QtWidgets import QMessageBox

    from app.main_window import device_description

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "about",
                        staticmethod(lambda parent, title, text: shown.append(text)))
    about = next(a for m in window.menuBar().actions() if m.menu() is not None
                 for a in m.menu().actions() if a.text() == "&About")
    about.trigger()
    (text,) = shown
    for value in (metadata.version("nmt-workbench"), torch.__version__, qVersion(),
                  PySide6.__version__, device_description()):
        assert f"<b>{value}</b>" in text


def test_main_actions_have_shortcuts_listed_in_the_menus(qtbot, window, monkeypatch):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    in_menus = {a.text().replace("&", ""): a.shortcut().toString()
                for m in window.menuBar().actions() if m.menu() is not None
                for a in m.menu().actions()}
    expected = {"Open workspace…": "Ctrl+O", "Import corpus…": "Ctrl+I",
                "Start training": "Ctrl+Return", "Translate": "Ctrl+T",
                "Export figure…": "Ctrl+E", "Compute attention": "Ctrl+R",
                "Open document to translate…": "Ctrl+Shift+O"}
    assert {k: in_menus.get(k) for k in expected} == expected
    keys = [k for k in in_menus.values() if k]
    assert len(keys) == len(set(keys))  # no shortcut is bound twice (Qt would fire neither)
    listed: list[str] = []
    monkeypatch.setattr(QMessageBox, "information",
                        staticmethod(lambda parent, title, text: listed.append(text)))
    window._show_shortcuts()
    for keys in expected.values():
        assert f"<b>{keys}</b>" in listed[0]
    # a menu shortcut works from any screen: Ctrl+T shows the Translate screen
    window.tabs.setCurrentWidget(window.corpora)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=2000)
    qtbot.keyClick(window, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.translate


def test_the_shortcuts_dialog_lists_translate_text(qtbot, demo_ws, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from app.main_window import MainWindow

    window = MainWindow(demo_ws)
    qtbot.addWidget(window)
    listed: list[str] = []
    monkeypatch.setattr(QMessageBox, "information",
                        staticmethod(lambda parent, title, text: listed.append(text)))
    window._show_shortcuts()
    assert "<b>Ctrl+Shift+Return</b></td><td>&nbsp;&nbsp;Translate: Translate text" in listed[0]
    window.close()

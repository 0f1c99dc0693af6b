"""The Qt binding keeps Python's reference counts straight. PySide6 6.12.0 released a
reference to None on every call of a void method under Python 3.11 (where None is not
immortal): a workbench session aborted ('none_dealloc') after enough repaints and label
updates. constraints.txt pins a release without the bug; this test catches a regression."""
from __future__ import annotations

import sys

from PySide6.QtWidgets import QLabel


def test_void_qt_calls_leave_none_refcount_alone(qapp):
    label = QLabel("x")
    label.setText("warm-up")
    before = sys.getrefcount(None)
    for i in range(5000):
        label.setText(str(i))  # void: returns None
        label.setMinimumHeight(i % 7)
    # other threads may hold or drop a few references meanwhile; the bug drops 10,000
    assert abs(sys.getrefcount(None) - before) < 100

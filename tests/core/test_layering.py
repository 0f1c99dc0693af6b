"""The architecture's one hard rule: nothing under core/ imports Qt, pyqtgraph or app/,
not even lazily inside a function."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

FORBIDDEN = {"PySide6", "shiboken6", "pyqtgraph", "app"}
CORE = Path(__file__).resolve().parents[2] / "core"


def imported_roots(source: str) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def core_modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def test_core_has_modules():
    assert len(core_modules()) >= 5


@pytest.mark.parametrize("path", core_modules(), ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_never_imports_qt(path: Path):
    """Not even inside a function: the GUI/CLI choice lives in main.py."""
    assert not imported_roots(path.read_text()) & FORBIDDEN


def test_detector_catches_a_qt_import():
    assert "PySide6" in imported_roots("from PySide6.QtWidgets import QWidget\n")
    assert "pyqtgraph" in imported_roots("def f():\n    import pyqtgraph as pg\n")


def test_core_imports_without_qt_loaded():
    import subprocess
    import sys

    code = (
        "import sys, core.config, core.jobs, core.errors, core.models.base, core.cli;"
        "core.cli.build_parser();"
        "bad=[m for m in sys.modules if m.split('.')[0] in ('PySide6','shiboken6','pyqtgraph')];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=CORE.parent)
    assert result.returncode == 0, result.stdout + result.stderr

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


def unit_of(module: str) -> str | None:
    """core.X.y -> 'X' (a package or a top-level module of core); others -> None."""
    parts = module.split(".")
    return parts[1] if parts[0] == "core" and len(parts) > 1 else None


def core_graph() -> dict[str, set[str]]:
    """Which units of core import which (function-level imports included)."""
    graph: dict[str, set[str]] = {}
    for path in core_modules():
        rel = path.relative_to(CORE.parent).with_suffix("")
        me = unit_of(".".join(rel.parts))
        if me in (None, "__init__"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                other = unit_of(name)
                if other and other != me:
                    graph.setdefault(me, set()).add(other)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return found


def test_core_packages_import_each_other_without_cycles():
    graph = core_graph()
    assert {"train", "infer", "evaluate", "services", "cli"} <= set(graph)
    assert cycles(graph) == []
    assert "cli" not in {w for v, ws in graph.items() if v != "cli" for w in ws}  # a front
    assert not graph.get("models", set()) & {"train", "infer", "evaluate", "services", "store"}


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []

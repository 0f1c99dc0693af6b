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


#: core's layers, lowest first (ARCHITECTURE.md, "Which imports which"): a module imports
#: modules of its own layer or of layers below it, never above. Each entry names core's
#: units: its packages and top-level modules.
LAYERS = (
    ("foundation", {"errors", "limits", "diskspace", "atomic", "safepath", "textsafe",
                    "families", "runlock", "jobs", "config", "allocator"}),
    ("data", {"data", "formats"}),
    ("workspace", {"workspace"}),
    ("models", {"models"}),
    ("train", {"train"}),
    ("infer", {"infer"}),
    ("evaluate", {"evaluate"}),
    ("services", {"services"}),
    ("tooling", {"tooling"}),
    ("cli", {"cli"}),
)
RANK = {unit: rank for rank, (_, units) in enumerate(LAYERS) for unit in units}


def module_names() -> dict[str, Path]:
    """core's modules by dotted name (a package by its own name: core.cli)."""
    names = {}
    for path in core_modules():
        parts = path.relative_to(CORE.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def imports_of(source: str, me: str, known: set[str]) -> list[tuple[str, int, bool]]:
    """(core module imported, line, inside a function) for every import statement of
    `source` (module `me`), top-level and inside functions; `from core.x import name`
    counts as importing core.x.name when that is a module, else core.x."""
    found: list[tuple[str, int, bool]] = []

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                names = [f"{child.module}.{a.name}" for a in child.names]
            for name in names:
                target = resolve(name) if name.split(".")[0] == "core" else None
                if target and target != me:
                    found.append((target, child.lineno, in_function))
            walk(child, in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(ast.parse(source), False)
    return found


def module_graph() -> dict[str, set[str]]:
    """Which core modules import which (function-level imports included)."""
    names = module_names()
    return {me: {target for target, _, _ in imports_of(path.read_text(), me, set(names))}
            for me, path in names.items()}


def unit_of(module: str) -> str:
    """core.X.y -> 'X' (a package or a top-level module of core); core -> 'core'."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "core"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one node (Tarjan)."""
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


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """'a -> b' for each import of a module in a higher layer than the importer's."""
    return [f"{a} -> {b}" for a, bs in sorted(graph.items()) for b in sorted(bs)
            if RANK.get(unit_of(b), -1) > RANK.get(unit_of(a), len(LAYERS))]


def test_every_unit_of_core_has_a_layer():
    units = {unit_of(m) for m in module_names()} - {"core"}
    assert units - set(RANK) == set(), "place the new module in LAYERS (and ARCHITECTURE.md)"


def test_core_modules_import_each_other_without_cycles():
    """Module by module, imports inside functions included: a circle hidden in function
    bodies is still a circle (services.alignment_runs -> training -> demo -> training was)."""
    graph = module_graph()
    assert len(graph) > 100 and sum(map(len, graph.values())) > 300
    assert cycles(graph) == []


def test_no_module_imports_a_layer_above_its_own():
    assert upward_imports(module_graph()) == []


def test_the_workspace_stands_below_the_models():
    """Opening a workspace loads neither torch nor numpy: every module of core.workspace
    (Workspace.recover included, which puts right a killed gold-set import through
    workspace.gold_folders, not evaluate.goldsets) ranks below the ML stack."""
    import subprocess
    import sys

    assert RANK["workspace"] < min(RANK[u] for u in ("models", "train", "infer", "evaluate"))
    modules = sorted(m for m in module_names() if unit_of(m) == "workspace")
    assert {"core.workspace.store", "core.workspace.gold_folders"} <= set(modules)
    code = (f"import sys, {', '.join(modules)};"
            "sys.exit(1 if {'torch', 'numpy'} & set(sys.modules) else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=CORE.parent)
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_finder_sees_imports_inside_functions():
    names = {"core.a", "core.b", "core.b.c", "core.d"}
    source = "import core.a\ndef f():\n    from core.b import c, x\n    from core.d import y\n"
    assert imports_of(source, "core.z", names) == [
        ("core.a", 1, False), ("core.b.c", 3, True), ("core.b", 3, True), ("core.d", 4, True)]


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_upward_imports_are_found():
    assert upward_imports({"core.workspace.store": {"core.evaluate.goldsets"},
                           "core.cli.x": {"core.workspace.store"}}) == [
        "core.workspace.store -> core.evaluate.goldsets"]


def imports_in_functions(source: str) -> list[int]:
    """Lines of the import statements inside functions of `source`."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines.update(s.lineno for s in ast.walk(node)
                         if isinstance(s, (ast.Import, ast.ImportFrom)))
    return sorted(lines)


def test_each_import_inside_a_function_says_why():
    """An import goes at the top of its module; one inside a function (to keep torch or
    another heavy package out of start-up, or a name tests patch at its source) says why
    in a comment on its line or the line above."""
    silent = []
    for path in core_modules():
        lines = path.read_text().split("\n")
        for n in imports_in_functions("\n".join(lines)):
            if "#" not in lines[n - 1] and not lines[n - 2].strip().startswith("#"):
                silent.append(f"{path.relative_to(CORE.parent)}:{n}")
    assert silent == []


def test_imports_in_functions_are_found():
    source = "import os\ndef f():\n    import re\n    def g():\n        import json\n"
    assert imports_in_functions(source) == [3, 5]


def shared_file_names(paths: list[Path]) -> dict[str, list[str]]:
    """file name -> the modules (paths under core/) that carry it, for each name more than
    one module of core has (a package's __init__.py aside)."""
    by_name: dict[str, list[str]] = {}
    for path in paths:
        if path.name != "__init__.py":
            by_name.setdefault(path.name, []).append(str(path.relative_to(CORE)))
    return {name: sorted(where) for name, where in sorted(by_name.items()) if len(where) > 1}


def test_no_two_core_modules_share_a_file_name():
    """One room per concept: a name says what its module holds wherever it is read (an
    import line, a traceback, an editor's tab), so no two modules of core share one
    (infer/scoring.py and services/scoring.py did)."""
    assert shared_file_names(core_modules()) == {}


def test_shared_file_names_are_found():
    paths = [CORE / "infer" / "scoring.py", CORE / "services" / "scoring.py",
             CORE / "infer" / "__init__.py", CORE / "services" / "__init__.py",
             CORE / "workspace" / "store.py"]
    assert shared_file_names(paths) == {"scoring.py": ["infer/scoring.py",
                                                       "services/scoring.py"]}


def private_imports(source: str, me: str) -> list[str]:
    """'module._name' for each private name (one underscore, not a dunder) that module
    `me` imports with `from core.x import _name` / `from app.x import _name` from
    another package than its own."""
    package = me.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] in ("core", "app"):
            source_package = node.module.rpartition(".")[0]
            found += [f"{node.module}.{a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")
                      and source_package != package]
    return found


def test_no_private_name_is_imported_from_another_package():
    """What two packages share is public: a `_name` is its own package's business (a
    private helper imported from another package hid what services.alignment_runs took
    from data.readers)."""
    found = []
    for path in sorted([*CORE.rglob("*.py"), *(CORE.parent / "app").rglob("*.py")]):
        parts = path.relative_to(CORE.parent).with_suffix("").parts
        found += private_imports(path.read_text(), ".".join(parts))
    assert found == []


def test_private_imports_are_found():
    source = ("from core.data.readers import _check, public\n"
              "from core.services.x import _same_package\nfrom core.a import __version__\n")
    assert private_imports(source, "core.services.alignment_runs") == [
        "core.data.readers._check"]

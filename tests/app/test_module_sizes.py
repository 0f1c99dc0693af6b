"""One room per concept in the screens: every function of the screens (app/panels/: their
constructors, `_build_*` methods and slots) short enough to read at once, at most 60 lines
(the 500-line limit of every module is tests/core/test_code_shape.py's)."""
from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
MAX_FUNCTION_LINES = 60


def _function_lengths(path: Path) -> dict[str, int]:
    """{qualified name: lines from its `def` to its last line} of every function of `path`."""
    lengths: dict[str, int] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                lengths[f"{prefix}{child.name}"] = child.end_lineno - child.lineno + 1
                walk(child, f"{prefix}{child.name}.")

    walk(ast.parse(path.read_text(encoding="utf-8")), "")
    return lengths


def test_no_screen_function_is_over_60_lines():
    long = {f"{p.name}:{name}": n for p in sorted((APP / "panels").glob("*.py"))
            for name, n in _function_lengths(p).items() if n > MAX_FUNCTION_LINES}
    assert long == {}


def test_lengths_are_counted_from_def_to_last_line(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("class A:\n    def f(self):\n        x = 1\n\n        return x\n\n\n"
                      "def g():\n    pass\n", encoding="utf-8")
    assert _function_lengths(source) == {"A.f": 4, "g": 2}

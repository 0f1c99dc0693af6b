"""One room per concept: no module of core/ or app/ over MAX_MODULE_LINES lines
and no function of theirs over MAX_FUNCTION_LINES lines, each offender named (the screens'
own, shorter limit on their functions is tests/app/test_module_sizes.py's)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE, APP = ROOT / "core", ROOT / "app"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 100
MODULE_ROOTS = (CORE, APP)
FUNCTION_ROOTS = (CORE, APP)


def long_functions(source: str, where: str, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """'where:line name: N lines' for each function or method of `source` (nested ones
    included) whose lines, from its `def` to its last line, number more than `limit`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                found.append(f"{where}:{node.lineno} {node.name}: {lines} lines")
    return found


def module_lines(source: str) -> int:
    """The lines of a module's text (as `wc -l` counts them, a last line without a
    newline included)."""
    return len(source.splitlines())


def modules(*roots: Path) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*.py"))


def test_there_are_modules_to_check():
    assert len(modules(CORE)) > 100 and len(modules(APP)) > 20


def test_no_module_of_core_or_app_is_over_the_limit():
    """Split a module that grows past the limit along a seam into modules of one
    concept each (ARCHITECTURE.md names them)."""
    over = [f"{p.relative_to(ROOT)}: {n} lines (limit {MAX_MODULE_LINES})"
            for p in modules(*MODULE_ROOTS)
            if (n := module_lines(p.read_text(encoding="utf-8"))) > MAX_MODULE_LINES]
    assert over == [], "\n".join(over)


def test_no_function_of_core_or_app_is_over_the_limit():
    """Cut a function that grows past the limit into named steps with docstrings."""
    over = []
    for p in modules(*FUNCTION_ROOTS):
        over += long_functions(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))
    assert over == [], "\n".join(over)


def test_long_functions_are_found_and_named():
    """A function at the limit passes; methods and nested functions over it are named."""
    def body(n: int, indent: str) -> str:
        return "".join(f"{indent}x{i} = {i}\n" for i in range(n))

    source = ("def short():\n" + body(99, "    ")  # lines 1-100: at the limit
              + "class C:\n"
              + "    def long(self):\n" + body(100, " " * 8)  # 102-202
              + "    async def host(self):\n"  # 203-304
              + "        def inner():\n" + body(100, " " * 12))  # 204-304
    assert long_functions(source, "m.py") == [
        "m.py:102 long: 101 lines", "m.py:203 host: 102 lines", "m.py:204 inner: 101 lines"]


def test_module_lines_count_as_wc_does():
    assert module_lines("a\nb\n") == 2 and module_lines("a\nb") == 2 and module_lines("") == 0

"""The test suite's own shape: no module under tests/ imports a test module (test_*.py).
What several test modules share lives in a helper module named for what it builds
(tests/core/tiny_runs.py, tests/app/pictures.py, ...) or in a conftest.py fixture, so
running, moving or deleting one test file never changes another's."""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def _is_test_module(dotted: str) -> bool:
    return dotted.rsplit(".", 1)[-1].startswith("test_")


def imports_of_test_modules(source: str, filename: str = "<test>") -> list[tuple[int, str]]:
    """(line, imported module) of each import of a test_* module in `source`, at any
    depth (inside functions too): `import tests.x.test_y`, `from tests.x.test_y import
    z`, `from tests.x import test_y`, `from .test_y import z`, `import test_y`."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if _is_test_module(a.name)]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if node.module and _is_test_module(node.module):
                found.append((node.lineno, module))
            elif node.level or (node.module or "").split(".")[0] == "tests":
                found += [(node.lineno, f"{module.rstrip('.')}.{a.name}") for a in node.names
                          if a.name.startswith("test_")]
    return sorted(found)


def test_no_module_under_tests_imports_a_test_module():
    offences = [f"{path.relative_to(ROOT)}:{line} imports {module}"
                for path in sorted(TESTS.rglob("*.py"))
                for line, module in imports_of_test_modules(path.read_text(encoding="utf-8"),
                                                        str(path))]
    assert not offences, ("a module under tests/ imports a test module; move what they share "
                          "into a helper module or a conftest.py fixture:\n" + "\n".join(offences))


def test_the_detector_finds_every_form_of_import_and_spares_helpers():
    source = ("import tests.core.test_a\n"
              "from tests.core.test_b import helper\n"
              "from tests.core import test_c, reversal\n"
              "def f():\n"
              "    from .test_d import x\n"
              "    import test_e\n"
              "from tests.core.tiny_runs import tiny_run_config\n"
              "from tests.app.conftest import job_result\n"
              "from core.evaluate import test_sets\n")
    assert imports_of_test_modules(source) == [
        (1, "tests.core.test_a"), (2, "tests.core.test_b"), (3, "tests.core.test_c"),
        (5, ".test_d"), (6, "test_e")]

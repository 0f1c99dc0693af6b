"""Docstrings of the code: every public function of core/ has a docstring, and one whose signature
passes tensors names their shapes; every public class and function of app/ has one
too (Qt's virtual methods it overrides aside).

Public: a function, method or property whose name does not start with '_', at module
level or in a class whose name does not start with '_' (nested functions are not
public); `__init__` counts too when its signature passes tensors.
Passes tensors: a parameter or return annotation names `Tensor` or `State` (the
models' dict[str, Tensor], core/models/base.py).
Names a shape: the docstring joins two dimensions with " x " (a word character,
'.', ')' or ']' before it and a word character, '.' or '(' after it: "batch x S",
"... x V", "(len + 1) x S") or says "1-D"/"2-D"/... or "scalar" (vectors and
0-d tensors, e.g. "index (1-D long)").
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"

TENSOR_ANNOTATION = re.compile(r"\b(Tensor|State)\b")
SHAPE = re.compile(r"[\w.)\]] x [\w.(]|\b\d-D\b|\bscalar\b")


def signature_text(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Every parameter and return annotation of `fn`, as source text."""
    a = fn.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
    notes = [p.annotation for p in params if p is not None and p.annotation is not None]
    if fn.returns is not None:
        notes.append(fn.returns)
    return " ".join(ast.unparse(n) for n in notes)


def public_functions(tree: ast.Module):
    """(qualified name, node, passes tensors) of the public functions of a module."""
    def walk(body, prefix):
        for node in body:
            if isinstance(node, ast.If | ast.Try):
                yield from walk(node.body, prefix)
                yield from walk(node.orelse, prefix)
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                yield from walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                tensors = bool(TENSOR_ANNOTATION.search(signature_text(node)))
                if not node.name.startswith("_") or (node.name == "__init__" and tensors):
                    yield f"{prefix}{node.name}", node, tensors
    yield from walk(tree.body, "")


def problems(source: str, where: str) -> list[str]:
    """One line per public function of `source` lacking a docstring or a shape."""
    out = []
    for name, node, tensors in public_functions(ast.parse(source)):
        doc = ast.get_docstring(node)
        if doc is None:
            out.append(f"{where}:{node.lineno} {name}: no docstring")
        elif tensors and not SHAPE.search(doc):
            out.append(f"{where}:{node.lineno} {name}: passes tensors, docstring names no shape")
    return out


def test_every_public_core_function_has_a_docstring_with_shapes():
    found = []
    for path in sorted(CORE.rglob("*.py")):
        found += problems(path.read_text(), str(path.relative_to(CORE.parent)))
    assert not found, f"{len(found)} public functions in core/ need a docstring:\n" + \
        "\n".join(found)


def test_detector():
    source = '''
from torch import Tensor
def ok(x: Tensor) -> Tensor:
    """x: batch x S -> batch x S."""
def vector(lens: Tensor) -> int:
    """lens (1-D long) -> the longest."""
def bare():
    pass
def shapeless(x: "Tensor") -> None:
    """Does a thing with x."""
def _private():
    pass
def outer():
    """Outer."""
    def inner():
        pass
class Model:
    """A model."""
    def __init__(self, table: Tensor):
        pass
    def __len__(self):
        return 0
    @property
    def size(self):
        return 0
    def step(self, state: State) -> State:
        """Prose, no shape."""
class _Hidden:
    def method(self):
        pass
'''
    names = [line.split(" ", 1)[1] for line in problems(source, "m.py")]
    assert names == [
        "bare: no docstring",
        "shapeless: passes tensors, docstring names no shape",
        "Model.__init__: no docstring",
        "Model.size: no docstring",
        "Model.step: passes tensors, docstring names no shape",
    ]


APP = CORE.parent / "app"
#: the Qt virtual methods app's classes override (camelCase, or these lowercase ones):
#: Qt's documentation says what each does, and the class's docstring why it overrides
QT_OVERRIDE = re.compile(r"^[a-z]+[A-Z]\w*$|^(paint|data|undo|redo|validate)$")


def app_problems(source: str, where: str) -> list[str]:
    """One line per public class or function of an app module lacking a docstring (Qt
    overrides aside); shapes are not asked for: app passes no tensors."""
    tree = ast.parse(source)
    out = [f"{where}:{node.lineno} {node.name}: no docstring" for node in ast.walk(tree)
           if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
           and ast.get_docstring(node) is None]
    for name, node, _ in public_functions(tree):
        if not QT_OVERRIDE.match(node.name) and ast.get_docstring(node) is None:
            out.append(f"{where}:{node.lineno} {name}: no docstring")
    return out


def test_every_public_class_and_function_of_app_has_a_docstring():
    found, paths = [], sorted(APP.rglob("*.py"))
    assert len(paths) > 40
    for path in paths:
        found += app_problems(path.read_text(), str(path.relative_to(APP.parent)))
    assert not found, f"{len(found)} public names in app/ need a docstring:\n" + "\n".join(found)


def test_app_detector_spares_qt_overrides_only():
    source = '''
class Panel:
    def paintEvent(self, event):
        pass
    def paint(self, painter, option, index):
        pass
    def refresh(self):
        pass
class Bare:
    """Documented."""
    def sizeHint(self):
        pass
def build_panel():
    pass
class Undocumented:
    pass
'''
    names = [line.split(" ", 1)[1] for line in app_problems(source, "m.py")]
    assert sorted(names) == ["Panel.refresh: no docstring", "Panel: no docstring",
                             "Undocumented: no docstring", "build_panel: no docstring"]

"""ARCHITECTURE.md stays true: its module index names every module of core/ and app/
(`__init__.py` left out) and no module that is gone, and the test files its rules cite
exist."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "ARCHITECTURE.md"


def index_paths() -> list[str]:
    """The paths the module index lists: the first word of each line of the fenced block
    under '## Module index'."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Module index", 1)[1]
    block = section.split("```", 2)[1]
    return [line.split()[0] for line in block.splitlines()
            if line.strip() and line.split()[0].endswith(".py")]


def modules_on_disk() -> set[str]:
    """Every module of core/ and app/ and main.py, as a path from the repository root."""
    found = {"main.py"}
    for package in ("core", "app"):
        found |= {p.relative_to(ROOT).as_posix() for p in (ROOT / package).rglob("*.py")
                  if p.name != "__init__.py"}
    return found


def test_the_module_index_names_every_module_once():
    listed = index_paths()
    assert len(listed) > 150
    assert sorted(p for p in set(listed) if listed.count(p) > 1) == []
    on_disk = modules_on_disk()
    assert sorted(on_disk - set(listed)) == [], "add these modules to ARCHITECTURE.md's index"
    assert sorted(set(listed) - on_disk) == [], "these modules are gone: drop them from the index"


def test_the_tests_the_rules_cite_exist():
    text = DOC.read_text(encoding="utf-8")
    cited = set(re.findall(r"`(tests/[\w/]+\.py)`", text))
    assert len(cited) >= 4
    assert sorted(p for p in cited if not (ROOT / p).is_file()) == []


def test_the_layers_drawn_are_the_layers_tested():
    """The layer table of 'The packages' lists the LAYERS of test_layering.py, in order
    (read from its source: a test module imports no other)."""
    source = (ROOT / "tests" / "core" / "test_layering.py").read_text(encoding="utf-8")
    tested = re.findall(r'^\s*\("(\w+)", \{', source.split("LAYERS = (", 1)[1].split("\n)\n", 1)[0], re.M)
    assert len(tested) >= 8
    text = DOC.read_text(encoding="utf-8")
    block = text.split("## The packages", 1)[1].split("```", 2)[1]
    drawn = [line.split()[0] for line in block.splitlines() if line.strip()]
    assert drawn == tested

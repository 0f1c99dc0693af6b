"""Job functions live in the job modules (app/core_jobs.py, app/panel_jobs.py), not in
the screens that submit them: a screen file builds widgets and reacts to results."""
from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"


def _job_functions(path: Path) -> list[str]:
    """Top-level functions of `path` that take the job runner's `ctx` argument."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef)
            and "ctx" in [a.arg for a in node.args.args + node.args.kwonlyargs]]


def test_no_screen_module_defines_a_job_function():
    screens = sorted((APP / "panels").glob("*.py")) + [APP / "model_import.py"]
    found = {p.name: names for p in screens if (names := _job_functions(p))}
    assert found == {}


def test_the_screens_jobs_are_in_panel_jobs():
    assert {"import_job", "load_job", "split_job", "choose_readings_job",
            "import_model_job"} <= set(_job_functions(APP / "panel_jobs.py"))

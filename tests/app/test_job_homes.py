"""app/ only presents and drives: the jobs the screens submit to the
JobManager are core functions (core/services/), so no module of app/ defines a function
that takes the job runner's `ctx`; a screen file builds widgets and reacts to results."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP, SERVICES = ROOT / "app", ROOT / "core" / "services"


def job_functions(source: str) -> list[str]:
    """Every function of `source` (top-level, method, nested or lambda) that takes the job
    runner's `ctx` argument (app/workers.py calls `fn(*args, ctx=..., **kwargs)`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            if "ctx" in [a.arg for a in args]:
                found.append(getattr(node, "name", "<lambda>"))
    return found


def test_no_module_of_app_defines_a_job_function():
    found = {str(p.relative_to(ROOT)): names for p in sorted(APP.rglob("*.py"))
             if (names := job_functions(p.read_text(encoding="utf-8")))}
    assert found == {}


def test_the_screens_jobs_are_in_the_services_of_their_concepts():
    homes = {"translation_jobs.py": {"read_document_job", "translate_job", "compare_job",
                                     "export_translation_job"},
             "attention_set.py": {"pairs_job", "pairs_attention_job", "attention_views",
                                  "gold_baseline"},
             "eval_scores.py": {"evaluate_runs", "write_report_job"},
             "corpora.py": {"import_corpus", "load_job", "split_job", "preview_job"},
             "training.py": {"create_run_job", "alignment_head_run_job"},
             "reading_anchors.py": {"choose_readings_job"},
             "model_import.py": {"import_model_job"},
             "warm_up.py": {"warm_up"}}
    for name, jobs in homes.items():
        assert jobs <= set(job_functions((SERVICES / name).read_text(encoding="utf-8"))), name


def test_job_functions_are_found_in_every_form():
    source = ("def job(a, ctx):\n    pass\n"
              "class Panel:\n    def run(self, *, ctx=None):\n"
              "        def inner(ctx, /):\n            pass\n"
              "        return lambda ctx: 1\n"
              "def plain(a, context):\n    pass\n")
    assert job_functions(source) == ["job", "run", "inner", "<lambda>"]

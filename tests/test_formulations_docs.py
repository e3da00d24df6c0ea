"""docs/formulations.md's tables (issue 48 item 4): one per problem, written by benchmarks/formulations.py from the
studies it keeps in benchmarks/formulations.json, so the page is checked against that data without solving again
(as tests/test_library.py checks the library pages against the library)."""

import importlib.util
import json
from pathlib import Path

import pytest

from iosched.core import EVERY_SOLUTION
from iosched.formulations import formulations_of
from iosched.library import PROBLEMS

ROOT = Path(__file__).resolve().parents[1]
PAGE, STORED = ROOT / "benchmarks" / "formulations.md", ROOT / "benchmarks" / "formulations.json"


def _generator():
    spec = importlib.util.spec_from_file_location("formulations_benchmark", ROOT / "benchmarks" / "formulations.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RECORD = json.loads(STORED.read_text(encoding="utf-8"))
CASES = {case["study"]["problem"]: case for case in RECORD["cases"]}


def test_the_page_is_what_the_generator_writes_for_the_stored_studies():
    assert PAGE.read_text(encoding="utf-8") == _generator().render(RECORD)


def test_the_docs_page_includes_one_table_per_problem():
    docs = (ROOT / "docs" / "formulations.md").read_text(encoding="utf-8")
    assert "```{include} ../benchmarks/formulations.md" in docs
    page = PAGE.read_text(encoding="utf-8")
    assert sorted(CASES) == sorted(PROBLEMS)
    for problem in PROBLEMS:
        assert page.count(f"### {problem}\n") == 1 and f"`iosched formulations {problem} lib:{problem}/" in page


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_each_stored_study_is_its_command_on_the_cases_instance(problem):
    """The stored study is the case's (its instance, profile, every registered formulation and each variant)."""
    gen, case = _generator(), CASES[problem]
    _, instance, variants = next(c for c in gen.CASES if c[0] == problem)
    study = case["study"]
    assert study["instance"] == instance and study["profile"] == RECORD["profile"]
    assert case["command"] == gen.command(problem, instance, variants, RECORD["profile"])
    assert [r["formulation"] for r in study["rows"]] == list(formulations_of(problem)) + list(variants)


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_no_stored_bound_passes_an_evaluated_value(problem):
    """The claim the page makes: a row whose scope is every solution has its LP relaxation, root bound and bound
    (and a relaxation's proved optimum) on the bound's side of the best evaluated value of any row; a restricted
    row's hold against its own value only."""
    study = CASES[problem]["study"]
    sign = 1 if study["sense"] == "min" else -1
    values = [r["evaluated"] for r in study["rows"] if r["evaluated"] is not None and r["status"] != "error"]
    best = min(values) if sign == 1 else max(values)
    for r in study["rows"]:
        if r["objective"] != study["objective"]:
            continue
        if r["scope"] == EVERY_SOLUTION:
            ref = best
            keys = ["lp_relaxation", "root_bound", "bound"] + (
                ["best"] if r["relaxation"] and r["model_status"] == "optimal" else [])
        else:
            solved = r["model_status"] in ("optimal", "feasible", "time_limit") and not r["relaxation"]
            ref, keys = (r["best"] if solved else None), ["lp_relaxation", "root_bound", "bound"]
        for key in keys:
            if ref is not None and r[key] is not None:
                assert sign * (ref - r[key]) >= -1e-6 * abs(ref), (r["formulation"], key, r[key], ref)

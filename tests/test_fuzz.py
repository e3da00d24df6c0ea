"""Fuzzing every problem with mutated JSON: only the package's own errors escape, and whatever is
accepted is solved, evaluated and re-checked without a crash.

Each problem names a fast method (with a short budget where it has one) and the valid instances
that the mutations start from. A mutation replaces one value anywhere in the JSON tree by a
troublesome one, deletes a key, or adds an unknown one.
"""

import copy
import json
import math

import pytest
from edits import json_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import iosched
from iosched.core import PROBLEMS, Status
from iosched.errors import InstanceError, ParameterError

# problem -> (seed instances as JSON dicts, (method, params) run on every accepted mutant)
FUZZ = {
    "window": (["paper:example", "random:0:12", "random:3:8:S4"], [("naive", {}), ("exact", {"profile": "quick"})]),
    "periodic": (["paper:set1", "paper:set4"], [("fairshare", {"cycles": 3})]),
    "forwarding": (["testbed:wrf1", "pair:wrf1:awp", "random:0:20"], [("fixed", {}), ("dfra", {}),
                                                                      ("milp", {"profile": "quick"})]),
    "malleable": (["paper:50", "random:0:4:grid"], [("rigid-fcfs", {}), ("dmr", {})]),
    "filedomain": (["paper:fig2", "example:gpfs", "example:requests"],
                   [("even", {}), ("transpose", {}), ("exact", {"profile": "quick"})]),
}
assert set(FUZZ) == set(PROBLEMS), "every registered problem is fuzzed: add it to FUZZ"

NASTY = [None, True, -1, 0, 0.5, 1e308, -1e308, math.nan, math.inf, -math.inf, 10**400, 2**63, "abc", "", [], {},
         [1, 2], {"x": 1}, "1e3", 1e-300]


def _mutate(doc, path, how, value):
    doc = copy.deepcopy(doc)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if how == "replace":
        parent[last] = value
    elif how == "delete":
        del parent[last]
    elif isinstance(parent, dict):
        parent[f"unknown_{last}"] = value
    else:
        parent.append(copy.deepcopy(parent[last]))  # a duplicate list entry
    return doc


def _seed_docs(problem):
    prob = iosched.core.get_problem(problem)
    return [prob.read_instance(spec).to_dict() for spec in FUZZ[problem][0]]


DOCS = {p: _seed_docs(p) for p in FUZZ}


@pytest.mark.parametrize("problem", sorted(FUZZ))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(data=st.data())
def test_mutated_instances_raise_only_our_errors(problem, data):
    doc = data.draw(st.sampled_from(DOCS[problem]))
    path = data.draw(st.sampled_from(json_paths(doc)))
    how = data.draw(st.sampled_from(["replace", "delete", "add"]))
    mutant = _mutate(doc, path, how, data.draw(st.sampled_from(NASTY)))
    text = json.dumps(mutant)  # NaN and Infinity as Python's json writes them
    try:
        inst = iosched.load_instance(problem, text)
    except InstanceError:
        return
    for method, params in FUZZ[problem][1]:
        try:
            res = iosched.solve(problem, inst, method, **params)
        except ParameterError:
            continue
        assert res.status != Status.ERROR or "error" in res.info, "an error result says why"
        if res.solution is not None:
            again = iosched.evaluate(problem, inst, res.solution)  # re-checked from scratch
            assert again.feasible == res.evaluation.feasible
            if res.status in (Status.OPTIMAL, Status.FEASIBLE):
                assert again.feasible
            json.dumps(res.to_dict(inst), allow_nan=True)  # what --json prints is serialisable


@pytest.mark.parametrize("problem", sorted(FUZZ))
@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=st.data())
def test_mutated_solutions_are_rejected_or_checked(problem, data):
    """A solution's JSON, mutated anywhere: read back it raises InstanceError or the evaluator judges it;
    with a non-finite number in it, it is never feasible."""
    doc = data.draw(st.sampled_from(DOCS[problem]))
    inst = iosched.load_instance(problem, doc)
    method, params = FUZZ[problem][1][0]
    solution = iosched.solve(problem, inst, method, **params).solution.to_dict(inst)
    paths = json_paths(solution)
    if not paths:
        return
    path = data.draw(st.sampled_from(paths))
    value = data.draw(st.sampled_from(NASTY))
    mutant = _mutate(solution, path, "replace", value)
    try:
        ev = iosched.evaluate(problem, inst, mutant)
    except InstanceError:
        return
    if isinstance(value, float) and not math.isfinite(value):
        assert not ev.feasible

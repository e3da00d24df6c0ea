"""Fuzz: mutated JSON of valid periodic instances through load -> solve -> evaluate.

Only the package's own errors (InstanceError, ParameterError) may escape; a method may not end
in an error of its own (a foreign exception inside a method becomes status "error"); every
solution is re-checked by the evaluator, also after a JSON round trip.
"""

import json
import math

import pytest
from edits import json_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import iosched
from iosched.errors import InstanceError, ParameterError
from iosched.evaluate.periodic import solution_from_dict
from iosched.instances.periodic import generate, paper_set

BASES = [
    paper_set(7).to_dict(),
    paper_set(10).to_dict(),
    generate(3, 3).to_dict(),
    {"platform": {"processors": 4, "processor_bandwidth": 1.0, "bandwidth": 2.0},
     "applications": [{"name": "A", "processors": 2, "work": 4.0, "io_volume": 4.0},
                      {"name": "B", "processors": 1, "work": 2.0, "io_volume": 2.0}]},
]

VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.integers(-(2**70), 2**70), st.just(10**400),
    st.floats(allow_nan=True, allow_infinity=True), st.floats(1e-300, 1e300), st.text(max_size=3),
    st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)


def _get(d, path):
    for p in path:
        d = d[p]
    return d


@st.composite
def mutated(draw):
    d = json.loads(json.dumps(draw(st.sampled_from(BASES))))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(json_paths(d))
        if not paths:  # everything deleted already
            break
        path = draw(st.sampled_from(paths))
        parent, key = _get(d, path[:-1]), path[-1]
        op = draw(st.sampled_from(["replace", "scale", "scale", "delete", "add", "duplicate"]))
        if op == "replace":
            parent[key] = draw(VALUES)
        elif op == "scale" and isinstance(parent[key], (int, float)) and not isinstance(parent[key], bool):
            factor = 10.0 ** draw(st.integers(-30, 30))
            try:
                scaled = parent[key] * factor
            except OverflowError:  # an integer beyond floats stays as it is
                continue
            parent[key] = int(scaled) if isinstance(parent[key], int) and math.isfinite(scaled) else scaled
        elif op == "delete":
            del parent[key]
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=3))] = draw(VALUES)
        elif op == "duplicate" and isinstance(d.get("applications"), list) and d["applications"]:
            d["applications"].append(json.loads(json.dumps(d["applications"][0])))
    return d


def _run(d, method="persched", **params):
    text = json.dumps(d)  # NaN and Infinity as JSON's usual extension
    try:
        inst = iosched.load_instance("periodic", text)
        res = iosched.solve("periodic", inst, method, **params)
    except (InstanceError, ParameterError):
        return
    error = res.info.get("error", "")
    assert res.status != iosched.Status.ERROR or error.startswith("InstanceError: "), (res.status, res.info)
    if res.solution is None:
        return
    assert res.evaluation.feasible, res.evaluation.violations[:3]
    again = iosched.evaluate("periodic", inst, res.solution)
    assert again.feasible and again.counts == res.evaluation.counts
    data = json.loads(json.dumps(res.to_dict(inst)["solution"]))
    assert iosched.evaluate("periodic", inst, solution_from_dict(data)).feasible


SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@settings(max_examples=40, **SETTINGS)
@given(mutated())
def test_fuzz_persched(d):
    _run(d, time_limit=0.3)


@settings(max_examples=10, **SETTINGS)
@given(mutated())
def test_fuzz_fairshare(d):
    _run(d, "fairshare", cycles=3, time_limit=0.3)


@pytest.mark.slow
@settings(max_examples=2000, **SETTINGS)
@given(mutated(), st.sampled_from(["persched", "persched-mindil", "fairshare", "online-minmax"]))
def test_fuzz_many(d, method):
    _run(d, method, time_limit=0.5, **({"cycles": 3} if not method.startswith("persched") else {}))

"""Every method parameter of every problem declares its range in the method's signature, and a value
outside it is refused by name, by ``solve`` and by a suite at load time, before anything runs.

The bad values are derived from each declared check, so a parameter added later is tried too.
"""

import json
import math
import re
import typing

import pytest

import iosched
from iosched.core import METHODS, method_parameters
from iosched.errors import ParameterError
from iosched.harness.suite import load_suite
from iosched.validate import CHECKS, Boolean, Integer, ListOf, Number, OneOf

# problem -> a small built-in instance (the checks run before the method sees it)
INSTANCE = {"window": "paper:example", "periodic": "paper:set1", "forwarding": "testbed:cesm",
            "malleable": "paper:50", "filedomain": "paper:fig2"}
NOT_DECLARED = {"profile", "seed"}  # checked against solvers.toml by solve; a run's seed comes from --seed


def _params(method):
    hints = typing.get_type_hints(method.run, include_extras=True)
    for name in method_parameters(method.run):
        if name not in NOT_DECLARED:
            yield name, [c for c in getattr(hints[name], "__metadata__", ()) if isinstance(c, CHECKS)]


def outside(check) -> list:
    """Values that ``check`` must refuse: a wrong type and each side of its range."""
    if isinstance(check, Integer):
        return ["abc", 2.5, True] + ([check.lo - 1] if check.lo is not None else []) \
            + ([check.hi + 1] if check.hi is not None else [])
    if isinstance(check, Number):
        values = ["abc", math.nan, math.inf, 10**400]
        if check.lo is not None:
            values.append(check.lo if check.lo_open else check.lo - max(1.0, abs(check.lo)))
        if check.hi is not None:
            values.append(check.hi if check.hi_open else check.hi + max(1.0, abs(check.hi)))
        return values
    if isinstance(check, OneOf):
        return ["no-such-choice", 1]
    if isinstance(check, Boolean):
        return ["abc", 1]
    if isinstance(check, ListOf):
        return [[], [outside(check.item)[0]]]
    raise AssertionError(f"no bad values for {check!r}")


BAD = [pytest.param(m.problem, m.name, name, value, id=f"{key}:{name}={value!r}")
       for key, m in sorted(METHODS.items()) for name, checks in _params(m) for c in checks for value in outside(c)]


def test_every_parameter_declares_its_range():
    assert set(INSTANCE) == {m.problem for m in METHODS.values()}, "give every problem an instance here"
    missing = [f"{key}: {name}" for key, m in sorted(METHODS.items()) for name, checks in _params(m) if not checks]
    assert not missing, "parameters without an Annotated range check: " + ", ".join(missing)


@pytest.mark.parametrize("problem, method, param, value", BAD)
def test_a_bad_value_is_refused_by_solve(problem, method, param, value):
    inst = iosched.load_instance(problem, INSTANCE[problem])
    with pytest.raises(ParameterError, match=rf"{problem}/{re.escape(method)}: {param}(\[0\])? must"):
        iosched.solve(problem, inst, method, **{param: value})


SUITE = """name = "bad"
problem = "{problem}"
profile = "quick"
[instances]
names = ["{instance}"]
[[methods]]
name = "{method}"
[[methods]]
name = "{method}"
params = {{ {param} = {value} }}
"""


@pytest.mark.parametrize("problem, method, param, value", BAD)
def test_a_bad_value_refuses_the_suite_on_its_line(tmp_path, problem, method, param, value):
    if isinstance(value, float) and not math.isfinite(value) or isinstance(value, int) and abs(value) > 2**63:
        value_text = {math.inf: "inf"}.get(value, "nan") if isinstance(value, float) else "1e400"
    else:
        value_text = json.dumps(value)
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.format(problem=problem, instance=INSTANCE[problem], method=method, param=param,
                                 value=value_text))
    with pytest.raises(ParameterError, match=rf"line 10: method {re.escape(method)}: {param}(\[0\])? must"):
        load_suite(str(path))

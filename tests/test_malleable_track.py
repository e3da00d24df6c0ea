"""Fluid tracking (malleable ``fluid-track``): the plan of an optimal schedule's order against that optimum, the
neighbour orders, and the method against its starts."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iosched import load_instance
from iosched.core import solve
from iosched.evaluate.malleable import Schedule, evaluate
from iosched.heuristics.malleable import dmr
from iosched.heuristics.malleable_track import completion_order, swapped
from iosched.instances.malleable_presets import generate
from iosched.library import entry, read_json_gz, summary
from iosched.models.malleable_fluid import ARRIVAL, COMPLETION, Free
from iosched.solvers import Deadline


@pytest.mark.parametrize("name", ["grid3-0", "grid4-2", "grid6-1"])
def test_the_plan_of_an_optimal_schedules_order_is_no_worse(name):
    # the free plan relaxes checks, costs and contiguity: for the order an optimal schedule follows, it is at most
    # that schedule's value (the library's optimum, proven by malleable exact)
    inst = load_instance("malleable", f"lib:malleable/{name}")
    e = entry(f"malleable/{name}")
    assert summary("malleable")[e.name]["class"] != "open"
    optimum = Schedule.from_dict(read_json_gz(e.solution_path))
    plan = Free(inst).schedule(tuple(completion_order(inst, optimum)), Deadline(60))
    assert plan is not None
    assert plan.value / len(inst.jobs) <= evaluate(inst, optimum).mean_completion + 1e-9


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), jobs=st.integers(1, 8))
def test_a_neighbour_keeps_every_completion_after_its_arrival(seed, jobs):
    inst = generate(seed, jobs=jobs)
    order = completion_order(inst, dmr(inst).solution)
    out = swapped(order, random.Random(seed))
    assert sorted(out) == sorted(order)
    assert all(out.index((ARRIVAL, j)) < out.index((COMPLETION, j)) for j in range(jobs))
    assert sum(x != y for x, y in zip(out, order)) == (2 if jobs > 1 else 0)


@pytest.mark.parametrize("seed", [0, 1])
def test_never_worse_than_its_start_and_always_feasible(seed):
    inst = generate(seed, jobs=6)
    res = solve("malleable", inst, "fluid-track", profile="quick", rounds=4)
    assert res.evaluation.feasible
    assert res.objective <= evaluate(inst, dmr(inst).solution).mean_completion
    assert res.info["rounds"] and all(r["polished"] <= r["tracked"] + 1e-9 for r in res.info["rounds"]
                                      if r.get("tracked") is not None)

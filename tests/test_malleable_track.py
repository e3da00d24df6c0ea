"""Fluid tracking (malleable ``fluid-track``): the pricing knapsack by brute force, the fluid plan against known
optima, the neighbour orders, and the method against its starts."""

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iosched import load_instance
from iosched.core import solve
from iosched.evaluate.malleable import Schedule, evaluate
from iosched.heuristics.malleable import dmr
from iosched.heuristics.malleable_track import best_configuration, completion_order, fluid_plan, swapped
from iosched.instances.malleable import Job, MalleableInstance, Runtime
from iosched.instances.malleable_presets import generate
from iosched.library import entry, read_json_gz, summary
from iosched.solvers import Deadline


@settings(max_examples=40, deadline=None)
@given(nodes=st.integers(1, 12), data=st.data())
def test_the_pricing_knapsack_is_the_best_choice(nodes, data):
    n = data.draw(st.integers(1, 4))
    sizes = [sorted(data.draw(st.sets(st.integers(1, 8), min_size=1, max_size=3))) for _ in range(n)]
    value = [[data.draw(st.floats(-1, 5)) for _ in s] for s in sizes]
    best, conf = best_configuration(nodes, list(range(n)), sizes, value)
    brute = 0.0
    for pick in itertools.product(*[[None, *range(len(s))] for s in sizes]):
        if sum(sizes[j][k] for j, k in enumerate(pick) if k is not None) <= nodes:
            brute = max(brute, sum(value[j][k] for j, k in enumerate(pick) if k is not None))
    assert best == pytest.approx(brute, abs=1e-9)
    assert sum(conf.values()) <= nodes
    assert sum(value[j][sizes[j].index(p)] for j, p in conf.items()) == pytest.approx(best, abs=1e-9)


def test_one_job_plans_its_fastest_run():
    job = Job("A", 2.0, 1, Runtime("amdahl", seconds_1=12.0, serial=0.5), 1, 4)
    inst = MalleableInstance(4, (job,))
    value, plans = fluid_plan(inst, [("a", 0), ("c", 0)], "highs", Deadline(60))
    assert value == pytest.approx(min(job.times))  # 7.5 s at 4 nodes
    assert plans[0] == [(pytest.approx(2.0), pytest.approx(2.0 + min(job.times)), 4)]


@pytest.mark.parametrize("name", ["grid3-0", "grid4-2", "grid6-1"])
def test_the_plan_of_an_optimal_schedules_order_is_no_worse(name):
    # the free plan relaxes checks, costs and contiguity: for the order an optimal schedule follows, it is at most
    # that schedule's value (the library's optimum, proven by malleable exact)
    inst = load_instance("malleable", f"lib:malleable/{name}")
    e = entry(f"malleable/{name}")
    assert summary("malleable")[e.name]["class"] != "open"
    optimum = Schedule.from_dict(read_json_gz(e.solution_path))
    value, _ = fluid_plan(inst, completion_order(inst, optimum), "highs", Deadline(60))
    assert value / len(inst.jobs) <= evaluate(inst, optimum).mean_completion + 1e-9


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), jobs=st.integers(1, 8))
def test_a_neighbour_keeps_every_completion_after_its_arrival(seed, jobs):
    inst = generate(seed, jobs=jobs)
    order = completion_order(inst, dmr(inst).solution)
    out = swapped(order, random.Random(seed))
    assert sorted(out) == sorted(order)
    assert all(out.index(("a", j)) < out.index(("c", j)) for j in range(jobs))
    assert sum(x != y for x, y in zip(out, order)) == (2 if jobs > 1 else 0)


@pytest.mark.parametrize("seed", [0, 1])
def test_never_worse_than_its_start_and_always_feasible(seed):
    inst = generate(seed, jobs=6)
    res = solve("malleable", inst, "fluid-track", profile="quick")
    assert res.evaluation.feasible
    assert res.objective <= evaluate(inst, dmr(inst).solution).mean_completion
    assert res.info["rounds"] and all(r["polished"] <= r["tracked"] + 1e-9 for r in res.info["rounds"]
                                      if r.get("tracked") is not None)

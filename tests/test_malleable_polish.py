"""The continuous-time polish of malleable schedules: by hand, never worse and always feasible (the DMR policy's
and the rigid list's schedules of generated workloads), and after the grid models."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iosched.core import solve
from iosched.evaluate.malleable import Interval, Schedule, evaluate
from iosched.heuristics.malleable import dmr
from iosched.heuristics.malleable_list import rigid_list
from iosched.instances.malleable import Job, MalleableInstance, Runtime
from iosched.instances.malleable_presets import generate
from iosched.models.malleable_polish import polish, read_skeleton
from iosched.models.malleable_skeleton import job_data
from iosched.solvers import Deadline

# A: arrives at 0.3, linear speed-up, 16 s on 1 node, 4 s on 4; checks every 2 s, a resize costs 0.5 s
A = Job("A", 0.3, 1, Runtime("linear", seconds_1=16.0, up_to=4), 1, 4, period=2.0, reconfig_s=0.5)
# B: arrives at 0, 4 nodes only, 1 s
B = Job("B", 0.0, 1, Runtime("table", seconds=((4, 1.0),)), 4, 4)


def grid_like_a(start: float) -> tuple[Interval, ...]:
    """A as a 1 s grid would have it from ``start``: 1 node to its first check, a resize held a whole step,
    then 4 nodes until its work is done (2 of 16 s of work at 1 node, 14 / 4 = 3.5 s at 4)."""
    return (Interval(start, start + 2, 1, "run"), Interval(start + 2, start + 3, 4, "reconfig"),
            Interval(start + 3, start + 6.5, 4, "run"))


def test_alone_the_job_starts_at_its_arrival_and_resizes_at_its_cost():
    inst = MalleableInstance(4, (A,))
    grid = Schedule({"A": grid_like_a(1.0)})
    assert evaluate(inst, grid).mean_completion == pytest.approx(7.5 - 0.3)
    out = polish(inst, grid)
    # from 0.3: 1 node to 2.3, resize to 2.8, 3.5 s at 4 nodes: ends at 6.3
    assert evaluate(inst, out).feasible
    assert evaluate(inst, out).mean_completion == pytest.approx(6.3 - 0.3, abs=1e-9)
    assert out.jobs["A"][0].start == pytest.approx(0.3)


def test_the_order_of_blocks_is_kept():
    # B holds every node over [0, 1): A cannot start before 1, but its resize still shrinks to its cost
    inst = MalleableInstance(4, (A, B))
    grid = Schedule({"A": grid_like_a(1.0), "B": (Interval(0.0, 1.0, 4, "run"),)})
    out = polish(inst, grid)
    assert evaluate(inst, out).feasible
    assert out.jobs["A"][0].start == pytest.approx(1.0)
    assert evaluate(inst, out).mean_completion == pytest.approx((1.0 + (7.0 - 0.3)) / 2, abs=1e-9)


def test_a_schedule_it_cannot_read_is_returned_as_it_is():
    inst = MalleableInstance(4, (A,))
    off_check = Schedule({"A": (Interval(1.0, 2.5, 1, "run"), Interval(2.5, 3.0, 4, "reconfig"),
                                Interval(3.0, 3.0 + (1 - 1.5 / 16) * 4, 4, "run"))})  # resized between checks
    assert read_skeleton(job_data(A), off_check.jobs["A"]) is None
    assert polish(inst, off_check) is off_check


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), jobs=st.integers(2, 6), policy=st.sampled_from(["dmr", "list"]))
def test_never_worse_and_always_feasible(seed, jobs, policy):
    inst = generate(seed, jobs=jobs)
    schedule = (dmr(inst) if policy == "dmr" else rigid_list(inst, iterations=50, restarts=1)).solution
    before = evaluate(inst, schedule)
    out = polish(inst, schedule)
    after = evaluate(inst, out)
    assert after.feasible, after.violations
    assert after.mean_completion <= before.mean_completion
    assert (out is schedule) == (after.mean_completion == before.mean_completion)


def test_the_grid_models_hand_back_the_polished_schedule():
    res = solve("malleable", generate(3, jobs=4), "cpsat", profile="quick")
    polished = res.info["polished"]
    assert polished["to"] < polished["from"]
    assert res.objective == pytest.approx(polished["to"], rel=1e-12)
    assert res.evaluation.feasible


def test_a_deadline_that_has_come_returns_the_schedule_as_it_is():
    inst = MalleableInstance(4, (A,))
    grid = Schedule({"A": grid_like_a(1.0)})
    assert polish(inst, grid, deadline=Deadline(0.0)) is grid

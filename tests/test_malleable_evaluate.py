"""The malleable evaluator: a hand-computed schedule, every kind of violation, malformed and non-finite input."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iosched.errors import InstanceError
from iosched.evaluate.malleable import Interval, Schedule, evaluate
from iosched.heuristics.malleable_sim import simulate
from iosched.instances.malleable import Job, MalleableInstance, Runtime
from iosched.instances.malleable_presets import generate

# A: T(1) = 16 s, T(2) = 8 s, T(4) = 4 s, checks every 2 s, a resize costs 1 s. B: 2 nodes only, T(2) = 4 s.
A = Job("A", 0, 100, Runtime("linear", seconds_1=16.0, up_to=4), 1, 4, period=2.0, reconfig_s=1.0, timeout=3.0)
B = Job("B", 1, 100, Runtime("linear", seconds_1=8.0, up_to=4), 2, 2, period=2.0)
PAIR = MalleableInstance(4, (A, B), name="pair")
ALONE = MalleableInstance(4, (A,), name="alone")
# A runs on 4 nodes for 2 s (half its work), shrinks to 2 at its first check (t = 2; 1 s holding 4 nodes),
# runs on 2 nodes 4 s (the other half); B starts when the shrink ends.
A_IVS = (Interval(0, 2, 4), Interval(2, 3, 4, "reconfig"), Interval(3, 7, 2))
HAND = Schedule({"A": A_IVS, "B": (Interval(3, 7, 2),)})


def test_hand_schedule_scores():
    ev = evaluate(PAIR, HAND)
    assert ev.feasible, ev.violations
    assert ev.makespan == 7
    assert ev.mean_wait == pytest.approx((0 + 2) / 2)
    assert ev.mean_execution == pytest.approx((7 + 4) / 2)
    assert ev.mean_completion == pytest.approx((7 + 6) / 2)
    assert ev.node_seconds == pytest.approx(4 * 2 + 4 * 1 + 2 * 4 + 2 * 4)
    assert ev.utilization == pytest.approx(28 / (4 * 7))
    assert (ev.expands, ev.shrinks, ev.stalls, ev.abandoned) == (0, 1, 0, 0)
    assert ev.to_dict()["feasible"] is True


def test_schedule_json_round_trip():
    d = HAND.to_dict(PAIR)
    assert d["jobs"]["A"][1] == [2, 3, 4, "reconfig"]
    assert Schedule.from_dict(d) == HAND


@pytest.mark.parametrize("d", [None, [], {"jobs": []}, {"jobs": {"A": [[0, 1, 2]]}}, {"jobs": {"A": 5}}])
def test_schedule_from_bad_dict(d):
    with pytest.raises(InstanceError):
        Schedule.from_dict(d)


def _alone(*ivs):
    return evaluate(ALONE, Schedule({"A": tuple(ivs)}))


def _kinds(ev):
    return {v.constraint for v in ev.violations}


CASES = {  # a schedule of A alone -> the violations it must raise
    "fine": ((Interval(0, 2, 4), Interval(2, 3, 4, "reconfig"), Interval(3, 7, 2)), set()),
    "no_resize": ((Interval(0, 4, 4),), set()),
    "split_run": ((Interval(0, 1.3, 4), Interval(1.3, 4, 4)), set()),  # a split at no check changes nothing
    "later_check": ((Interval(0, 2, 4), Interval(2, 4, 4), Interval(4, 5, 4, "reconfig"), Interval(5, 5.0001, 2)),
                    {"work_overrun"}),  # at the second check (4) after all the work: the last run is too much
    "second_check": ((Interval(0, 3, 4), Interval(3, 4, 4, "reconfig"), Interval(4, 6, 2)), {"check_point"}),
    "at_second_check": ((Interval(0, 2, 4), Interval(2, 3, 4), Interval(3, 4, 4, "reconfig"), Interval(4, 6, 2)),
                        {"check_point"}),
    "zero_cost_after_stall": ((Interval(0, 2, 1), Interval(2, 3, 1, "stall"), Interval(3, 6.5, 4)),
                              {"reconfig_cost"}),  # a stall then a resize that costs 1 s, unpaid
    "ladder": ((Interval(0, 16 / 3, 3),), {"ladder", "work"}),  # a run off the ladder does no work
    "short": ((Interval(0, 2, 4), Interval(2, 3, 4, "reconfig"), Interval(3, 6.5, 2)), {"work"}),
    "overrun": ((Interval(0, 2, 4), Interval(2, 3, 4, "reconfig"), Interval(3, 7.5, 2)), {"work_overrun"}),
    "gap": ((Interval(0, 2, 4), Interval(2, 3, 4, "reconfig"), Interval(3.5, 7.5, 2)), {"contiguity"}),
    "off_check": ((Interval(0, 2.5, 4), Interval(2.5, 3.5, 4, "reconfig"), Interval(3.5, 6.5, 2)),
                  {"check_point"}),
    "before_first_check": ((Interval(0, 1, 4), Interval(1, 2, 4, "reconfig"), Interval(2, 8, 2)), {"check_point"}),
    "cheap_reconfig": ((Interval(0, 2, 4), Interval(2, 2.5, 4, "reconfig"), Interval(2.5, 6.5, 2)),
                       {"reconfig_cost"}),
    "reconfig_nodes": ((Interval(0, 2, 4), Interval(2, 3, 2, "reconfig"), Interval(3, 7, 2)), {"reconfig"}),
    "unpaid_resize": ((Interval(0, 2, 4), Interval(2, 6, 2)), {"reconfig_cost"}),
    "same_size_reconfig": ((Interval(0, 2, 4), Interval(2, 3, 4, "reconfig"), Interval(3, 5, 4)), {"reconfig"}),
    "stall_too_long": ((Interval(0, 2, 1), Interval(2, 6, 1, "stall"), Interval(6, 20, 1)), {"timeout"}),
    "stall_before_shrink": ((Interval(0, 2, 4), Interval(2, 3, 4, "stall"), Interval(3, 4, 4, "reconfig"),
                             Interval(4, 8, 2)), {"stall"}),
    "stall_wrong_nodes": ((Interval(0, 2, 1), Interval(2, 4, 2, "stall"), Interval(4, 18, 1)), {"stall"}),
    "stall_then_unpaid_expansion": ((Interval(0, 2, 2), Interval(2, 4, 2, "stall"), Interval(4, 7, 4)),
                                    {"reconfig_cost"}),
    "stall_then_shrink": ((Interval(0, 2, 2), Interval(2, 4, 2, "stall"), Interval(4, 5, 2, "reconfig"),
                           Interval(5, 17, 1)), {"stall"}),
    "starts_with_reconfig": ((Interval(0, 1, 4, "reconfig"), Interval(1, 5, 4)), {"kinds"}),
    "ends_with_stall": ((Interval(0, 4, 4), Interval(4, 5, 4, "stall")), {"kinds"}),
    "two_reconfigs": ((Interval(0, 2, 4), Interval(2, 3, 4, "reconfig"), Interval(3, 4, 4, "reconfig"),
                       Interval(4, 8, 2)), {"kinds"}),
    "zero_length": ((Interval(0, 0, 4), Interval(0, 4, 4)), {"interval"}),
}


@pytest.mark.parametrize("key", CASES)
def test_violations(key):
    ivs, expected = CASES[key]
    ev = _alone(*ivs)
    assert _kinds(ev) == expected, ev.violations
    assert ev.feasible == (not expected)
    assert all(v.amount > 0 for v in ev.violations)


def test_a_stall_then_expansion_and_an_abandoned_one():
    # waits 2 s for nodes (within the 3 s timeout), then expands 1 -> 4 (1 s, holding 4): 2 s at 1 node = 1/8,
    # the remaining 7/8 at 4 nodes = 3.5 s
    ok = _alone(Interval(0, 2, 1), Interval(2, 4, 1, "stall"), Interval(4, 5, 4, "reconfig"), Interval(5, 8.5, 4))
    assert ok.feasible, ok.violations
    assert (ok.stalls, ok.expands, ok.abandoned) == (1, 1, 0)
    # abandoned after 3 s; the check at 4 is skipped; at 6 it expands without waiting
    gave_up = _alone(Interval(0, 2, 1), Interval(2, 5, 1, "stall"), Interval(5, 5.5, 1),
                     Interval(5.5, 6.5, 4, "reconfig"), Interval(6.5, 9.875, 4))
    assert not gave_up.feasible and _kinds(gave_up) == {"check_point"}  # 5.5 is not a check: 2, 4, 6...
    fixed = _alone(Interval(0, 2, 1), Interval(2, 5, 1, "stall"), Interval(5, 6, 1), Interval(6, 7, 4, "reconfig"),
                   Interval(7, 10.25, 4))
    assert fixed.feasible, fixed.violations
    assert (fixed.stalls, fixed.abandoned, fixed.expands) == (1, 1, 1)


def test_capacity_and_arrival():
    early = Schedule({"A": A_IVS, "B": (Interval(2, 6, 2),)})  # B starts while A still holds 4 nodes
    ev = evaluate(PAIR, early)
    assert _kinds(ev) == {"capacity"}
    assert ev.violations[0].amount == 2
    before = Schedule({"A": (Interval(0, 4, 4),), "B": (Interval(0.5, 4.5, 2),)})
    assert {"arrival", "capacity"} <= _kinds(evaluate(PAIR, before))
    touching = Schedule({"A": (Interval(0, 4, 4),), "B": (Interval(4, 8, 2),)})  # an end and a start at 4
    assert evaluate(PAIR, touching).feasible


def test_missing_unknown_and_malformed():
    assert _kinds(evaluate(PAIR, Schedule({"A": A_IVS}))) == {"missing_job"}
    ev = evaluate(PAIR, Schedule({**HAND.jobs, "C": (Interval(0, 1, 1),)}))
    assert _kinds(ev) == {"unknown_job"}
    assert _kinds(evaluate(PAIR, Schedule({"A": A_IVS, "B": ()}))) == {"missing_job"}
    assert _kinds(evaluate(PAIR, "not a schedule")) == {"malformed"}
    assert _kinds(evaluate(PAIR, Schedule(None))) == {"malformed"}


@pytest.mark.parametrize("bad", [
    Interval(3, math.nan, 2), Interval(math.inf, 7, 2), Interval(3, 7, True), Interval(3, 7, 2.0),
    Interval(3, 7, 0), Interval(3, 7, 2, "sleep"), Interval(3, 7, None), Interval("3", 7, 2), (3, 7, 2, "run"),
    Interval(3, 10**400, 2),
])
def test_malformed_intervals(bad):
    ev = evaluate(PAIR, Schedule({"A": A_IVS, "B": (bad,)}))
    assert not ev.feasible and "malformed" in _kinds(ev)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 50), st.data())
def test_any_non_finite_number_makes_it_infeasible(seed, data):
    inst = generate(seed, 5, "grid")
    sched = simulate(inst, "dmr").schedule
    assert evaluate(inst, sched).feasible
    job = data.draw(st.sampled_from(sorted(sched.jobs)))
    ivs = list(sched.jobs[job])
    k = data.draw(st.integers(0, len(ivs) - 1))
    field = data.draw(st.sampled_from(["start", "end"]))
    value = data.draw(st.sampled_from([math.nan, math.inf, -math.inf]))
    iv = ivs[k]
    ivs[k] = Interval(value if field == "start" else iv.start, value if field == "end" else iv.end, iv.nodes, iv.kind)
    ev = evaluate(inst, Schedule({**sched.jobs, job: tuple(ivs)}))
    assert not ev.feasible

"""The periodic evaluator on small hand-built instances whose numbers are computed by hand.

Platform: N = 4 processors, b = 1 data/s per processor, B = 2 data/s.
App A: β = 2 (cap β b = 2), w = 4 s, vol = 4  -> ρ_A = 4 / (4 + 4/2) = 2/3.
App B: β = 1 (cap β b = 1), w = 2 s, vol = 2  -> ρ_B = 2 / (2 + 2/1) = 1/2.

Base pattern, T = 10: A computes [0, 4), I/O [4, 6) at 2; B computes [0, 2), I/O [6, 8) at 1.
Load: 2 on [4, 6), 1 on [6, 8). SysEff = (2·4 + 1·2) / (4·10) = 0.25;
Dilation = max(2/3 · 10/4, 1/2 · 10/2) = max(5/3, 5/2) = 2.5.
"""

import json
import math
from dataclasses import replace

import pytest

from iosched.errors import InstanceError
from iosched.evaluate.periodic import REL_TOL, Instance, Pattern, evaluate
from iosched.instances.periodic import Application, PeriodicInstance, Platform

T = 10.0


@pytest.fixture
def inst():
    return PeriodicInstance(
        Platform(processors=4, processor_bandwidth=1.0, bandwidth=2.0),
        (Application("A", 2, 4.0, 4.0), Application("B", 1, 2.0, 2.0)),
        name="tiny",
    )


def pattern(a_insts, b_insts, period=T):
    """A pattern from plain lists: each instance is (compute_start, [(s, e, r), ...])."""
    return Pattern(period, tuple(
        tuple(Instance(c, tuple(tuple(s) for s in io)) for c, io in insts)
        for insts in (a_insts, b_insts)
    ))


A_BASE = [(0.0, [(4, 6, 2)])]
B_BASE = [(0.0, [(6, 8, 1)])]


def base():
    return pattern(A_BASE, B_BASE)


def kinds(ev):
    return [v.constraint for v in ev.violations]


def amounts(ev, kind):
    return [v.amount for v in ev.violations if v.constraint == kind]


# --- feasible patterns ------------------------------------------------------------------

FEASIBLE = {
    # name: (A instances, B instances, SysEff, Dilation)
    "base": (A_BASE, B_BASE, 0.25, 2.5),
    # A computes [5, 9) and its I/O [9, 11) wraps past T onto [0, 1); B computes [1, 3), I/O [3, 5).
    "wrap": ([(5.0, [(9, 11, 2)])], [(1.0, [(3, 5, 1)])], 0.25, 2.5),
    # a segment written as negative time, i.e. [9, 10) + [0, 1) mod T for A
    "wrap_negative": ([(5.0, [(-1, 1, 2)])], [(1.0, [(3, 5, 1)])], 0.25, 2.5),
    # B twice (listed out of order): B#c=0 I/O [2, 4) in window [2, 5]; B#c=5 I/O [7, 9) in [7, 10].
    # SysEff = (2·1·4 + 1·2·2) / 40 = 0.3; Dilation = max(5/3, 1/2 · 10/(2·2) = 1.25) = 5/3.
    "two_instances": (A_BASE, [(5.0, [(7, 9, 1)]), (0.0, [(2, 4, 1)])], 0.3, 5 / 3),
    # A's I/O in two pieces at different rates, sharing [5, 7) with B: load exactly B = 2 there.
    "split_rates": ([(0.0, [(4, 5, 2), (5, 7, 1)])], [(0.0, [(5, 7, 1)])], 0.25, 2.5),
    # I/O may end exactly at the next compute start (window end, single instance: c + T).
    "window_edges": ([(0.0, [(4, 6, 2)])], [(0.0, [(8, 10, 1)])], 0.25, 2.5),
}


@pytest.mark.parametrize("name", list(FEASIBLE))
def test_feasible_patterns(inst, name):
    a, b, se, dil = FEASIBLE[name]
    ev = evaluate(inst, pattern(a, b))
    assert ev.violations == []
    assert ev.feasible is True
    assert ev.sys_efficiency == pytest.approx(se, rel=1e-12)
    assert ev.dilation == pytest.approx(dil, rel=1e-12)
    assert ev.counts == [len(a), len(b)]


def test_objectives_scale_with_period(inst):
    # the same schedule in a period twice as long: SysEff halves, Dilation doubles
    ev = evaluate(inst, pattern(A_BASE, B_BASE, period=20.0))
    assert ev.feasible
    assert ev.sys_efficiency == pytest.approx(0.125)
    assert ev.dilation == pytest.approx(5.0)


def test_evaluation_to_dict(inst):
    d = evaluate(inst, base()).to_dict()
    assert d == {"feasible": True, "violations": [], "sys_efficiency": pytest.approx(0.25),
                 "dilation": pytest.approx(2.5), "counts": [1, 1]}


# --- one broken constraint at a time ------------------------------------------------------------

BROKEN = {
    # id: (A instances, B instances, kind, expected amount)
    "no_instance": (A_BASE, [], "no_instance", 1),
    # c + T is cyclically the same schedule: only the start itself is wrong (amount = the start)
    "compute_start_T": ([(10.0, [(4, 6, 2)])], B_BASE, "compute_start", 10.0),
    "compute_start_negative": ([(-10.0, [(4, 6, 2)])], B_BASE, "compute_start", -10.0),
    # B#2 computes [8.5, 10.5): 0.5 s on top of B#1's [0, 2)
    "compute_overlap": (A_BASE, [(0.0, [(2, 4, 1)]), (8.5, [(2.5, 4.5, 1)])], "compute_overlap", 0.5),
    # extra zero-rate segment ending before it starts
    "segment_end_before_start": (A_BASE, [(0.0, [(6, 8, 1), (7, 6, 0)])], "segment", 1.0),
    # extra empty segment at a negative rate
    "segment_negative_rate": (A_BASE, [(0.0, [(6, 8, 1), (6, 6, -1.5)])], "segment", 1.5),
    # B at rate 2 for 1 s: volume still 2, load 2 on [6, 7), but cap β b = 1
    "app_rate": (A_BASE, [(0.0, [(6, 7, 2)])], "app_rate", 1.0),
    # B's I/O [1, 3) while B computes [0, 2): 1 s outside the window [2, 10]
    "io_window": (A_BASE, [(0.0, [(1, 3, 1)])], "io_window", 1.0),
    # B's I/O [9, 11) runs 1 s past its window end 10 (into its next compute)
    "io_window_wrap": (A_BASE, [(0.0, [(9, 11, 1)])], "io_window", 1.0),
    "volume_short": (A_BASE, [(0.0, [(6, 7.5, 1)])], "volume", -0.5),
    "volume_long": (A_BASE, [(0.0, [(6, 9, 1)])], "volume", 1.0),
    # B at 0.5 on [4, 8): with A's 2 on [4, 6) the file system carries 2.5 > B = 2
    "capacity": (A_BASE, [(0.0, [(4, 8, 0.5)])], "capacity", 0.5),
    # through wrapping segments: A at 2 on [9, 11) = [9, 10) + [0, 1); B (computes [8, 10)) at 0.5 on [10, 14)
    "capacity_wrap": ([(5.0, [(9, 11, 2)])], [(8.0, [(10, 14, 0.5)])], "capacity", 0.5),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_each_violation_kind(inst, name):
    a, b, kind, amount = BROKEN[name]
    ev = evaluate(inst, pattern(a, b))
    assert ev.feasible is False
    assert kind in kinds(ev), ev.violations
    assert amounts(ev, kind) == [pytest.approx(amount, rel=1e-9)]


@pytest.mark.parametrize("name", [n for n in BROKEN if n != "compute_overlap"])
def test_broken_in_one_way_gives_one_violation(inst, name):
    # each of these breaks the feasible pattern in exactly one place: nothing else is reported
    a, b, kind, _ = BROKEN[name]
    assert kinds(evaluate(inst, pattern(a, b))) == [kind]


def test_capacity_where_is_the_overloaded_interval(inst):
    a, b, _, _ = BROKEN["capacity"]
    (v,) = evaluate(inst, pattern(a, b)).violations
    assert v.where == "[4, 6]"
    assert str(v) == "capacity at [4, 6]: by 0.5"


def test_no_instance_objectives(inst):
    ev = evaluate(inst, pattern(A_BASE, []))
    assert ev.counts == [1, 0]
    assert ev.sys_efficiency == 0.0
    assert math.isinf(ev.dilation)
    assert ev.violations[0].where == "B"


def test_work_longer_than_period(inst):
    # A's work 4 > T = 3.5: compute_overlap by 0.5 (the rest breaks too)
    ev = evaluate(inst, pattern([(0.0, [(0.5, 2.5, 2)])], [(0.0, [(2, 3.5, 1)])], period=3.5))
    assert ev.feasible is False
    assert pytest.approx(0.5) in amounts(ev, "compute_overlap")


def test_segment_longer_than_period_amount(inst):
    # an extra zero-rate segment of 2T: only the 'segment' kind is broken, by 20 - 10 = 10 s
    ev = evaluate(inst, pattern(A_BASE, [(0.0, [(6, 8, 1), (0, 20, 0)])]))
    assert kinds(ev) == ["segment"]
    assert amounts(ev, "segment") == [pytest.approx(10.0)]


@pytest.mark.parametrize("period", [0.0, -10.0, float("nan")])
def test_bad_period(inst, period):
    ev = evaluate(inst, pattern(A_BASE, B_BASE, period=period))
    assert ev.feasible is False
    assert kinds(ev) == ["period"]


def test_wrong_application_count(inst):
    p = Pattern(T, base().applications[:1])
    ev = evaluate(inst, p)
    assert ev.feasible is False
    assert kinds(ev) == ["applications"]
    assert ev.violations[0].amount == 1


# --- tolerances -------------------------------------------------------------------------------------

@pytest.mark.parametrize("end, ok", [
    (8 + 1e-7, True),    # moves 2 + 1e-7: 5e-8 relative
    (8 - 1e-7, True),
    (8 + 1e-3, False),   # 5e-4 relative
    (8 - 1e-3, False),
])
def test_volume_tolerance(inst, end, ok):
    ev = evaluate(inst, pattern(A_BASE, [(0.0, [(6, end, 1)])]))
    assert ev.feasible is ok
    assert kinds(ev) == ([] if ok else ["volume"])


def test_volume_tolerance_by_rate(inst):
    # rate 1 + 4e-7 on [6, 8): volume and app_rate both off by 4e-7 relative -> accepted
    assert evaluate(inst, pattern(A_BASE, [(0.0, [(6, 8, 1 + 4e-7)])])).feasible
    # rate 1 + 4e-4: both off by 4e-4 relative -> rejected on both counts
    assert sorted(kinds(evaluate(inst, pattern(A_BASE, [(0.0, [(6, 8, 1 + 4e-4)])])))) == [
        "app_rate", "volume"]


def test_rel_tol_parameter(inst):
    p = pattern(A_BASE, [(0.0, [(6, 8 + 1e-3, 1)])])
    assert not evaluate(inst, p).feasible
    assert evaluate(inst, p, rel_tol=1e-2).feasible
    assert REL_TOL == 1e-5


def test_capacity_tolerance(inst):
    # B moves a sliver x on [4, 6) next to A's 2 (and 2 - 2x on [6, 8), volume unchanged):
    # x = 1e-7 exceeds B = 2 by 5e-8 relative -> accepted; x = 1e-3 (5e-4 relative) -> rejected
    ok = pattern(A_BASE, [(0.0, [(6, 8, 1 - 1e-7), (4, 6, 1e-7)])])
    assert evaluate(inst, ok).feasible
    bad = pattern(A_BASE, [(0.0, [(6, 8, 1 - 1e-3), (4, 6, 1e-3)])])
    assert kinds(evaluate(inst, bad)) == ["capacity"]


def test_time_tolerance(inst):
    # I/O 1e-5 s before the compute end: inside rel_tol · T = 1e-4 s; 1e-3 s is not
    assert evaluate(inst, pattern(A_BASE, [(0.0, [(2 - 1e-5, 4 - 1e-5, 1)])])).feasible
    assert kinds(evaluate(inst, pattern(A_BASE, [(0.0, [(2 - 1e-3, 4 - 1e-3, 1)])]))) == ["io_window"]


def test_period_cap():
    """One application (w 1 s, vol 1 at 1 data/s: a cycle of 2 s, so t_min 2 s and K' t_min 20 s):
    n instances back to back in T = 2n s are feasible up to the cap and a ``period_cap`` violation
    past it, naming the period, the cap and by how much."""
    one = PeriodicInstance(Platform(1, 1.0, 1.0), (Application("A", 1, 1.0, 1.0),))

    def back_to_back(n, stretch=1.0):
        T = 2.0 * n * stretch
        return Pattern(T, ((tuple(Instance(2.0 * i, ((2.0 * i + 1, 2.0 * i + 2, 1.0),)) for i in range(n))),))

    assert evaluate(one, back_to_back(10)).feasible
    assert evaluate(one, back_to_back(10, 1 + 0.5 * REL_TOL)).feasible  # within the tolerance of times
    ev = evaluate(one, back_to_back(11))
    assert not ev.feasible and [v.constraint for v in ev.violations] == ["period_cap"]
    v = ev.violations[0]
    assert v.amount == pytest.approx(2.0) and "period 22.0 s" in v.where and "10 x 2.0 s = 20.0 s" in v.where
    assert not evaluate(replace(one, k_prime=5), back_to_back(6)).feasible
    assert evaluate(replace(one, k_prime=5.5), back_to_back(5)).feasible


# --- Pattern serialisation --------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(FEASIBLE))
def test_pattern_round_trip(inst, name):
    a, b, _, _ = FEASIBLE[name]
    p = pattern(a, b)
    assert Pattern.from_dict(p.to_dict()) == p
    d = p.to_dict(inst)
    assert [e["name"] for e in d["applications"]] == ["A", "B"]
    assert Pattern.from_dict(json.loads(json.dumps(d))) == p
    assert Pattern.from_dict(d).counts() == [len(a), len(b)]


def test_pattern_round_trip_keeps_values():
    p = Pattern(7.5, ((Instance(1.25, ((5.25, 6.5, 0.125), (6.5, 8.0, 2.0))),), (Instance(0.0, ()),)))
    q = Pattern.from_dict(p.to_dict())
    assert q == p
    assert q.applications[0][0].io[1] == (6.5, 8.0, 2.0)
    assert q != Pattern(7.5, ((Instance(1.25, ((5.25, 6.5, 0.125),)),), (Instance(0.0, ()),)))


GARBAGE = [
    None,
    5,
    "pattern",
    [],
    {},
    {"period": 10},
    {"applications": []},
    {"period": "ten", "applications": []},
    {"period": 10, "applications": 3},
    {"period": 10, "applications": [{"instances": 3}]},
    {"period": 10, "applications": [{"instance": []}]},
    {"period": 10, "applications": [{"instances": [{"io": []}]}]},
    {"period": 10, "applications": [{"instances": [{"compute_start": 0}]}]},
    {"period": 10, "applications": [{"instances": [{"compute_start": "x", "io": []}]}]},
    {"period": 10, "applications": [{"instances": [{"compute_start": 0, "io": [[0, 1, "fast"]]}]}]},
    {"period": 10, "applications": [{"instances": [{"compute_start": 0, "io": [None]}]}]},
]


@pytest.mark.parametrize("d", GARBAGE, ids=range(len(GARBAGE)))
def test_pattern_from_dict_garbage(d):
    with pytest.raises(InstanceError, match="not a periodic pattern"):
        Pattern.from_dict(d)


@pytest.mark.parametrize("seg", [[4, 6], [4, 6, 2, 1]])
def test_pattern_from_dict_segment_arity(seg):
    with pytest.raises(InstanceError):
        Pattern.from_dict({"period": 10, "applications": [
            {"instances": [{"compute_start": 0, "io": [seg]}]}]})

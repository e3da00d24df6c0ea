"""Online baselines: the fluid primitives, the simulator and the timeline evaluator."""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import iosched
from iosched.evaluate.periodic import Instance, Trace, evaluate_trace
from iosched.fluid import max_min_fair, priority_fill
from iosched.heuristics.periodic import ONLINE_POLICIES, simulate_online
from iosched.instances.periodic import Application, PeriodicInstance, Platform, paper_set
from iosched.models.periodic import longrun_bound


def test_max_min_fair_by_hand():
    assert max_min_fair([1, 5, 5], 7) == [1, 3, 3]
    assert max_min_fair([1, 1], 7) == [1, 1]
    assert max_min_fair([4, 4, 4], 6) == [2, 2, 2]
    assert max_min_fair([], 3) == []


def test_priority_fill_by_hand():
    assert priority_fill([2, 2, 2], [2, 0, 1], 3) == [1, 0, 2]


@given(st.lists(st.floats(0.01, 10), min_size=1, max_size=8), st.floats(0.1, 30))
def test_max_min_fair_properties(caps, capacity):
    rates = max_min_fair(caps, capacity)
    assert sum(rates) <= capacity * (1 + 1e-9)
    assert all(0 <= r <= c * (1 + 1e-12) for r, c in zip(rates, caps))
    # max-min: anyone below its cap gets at least as much as everybody else
    for r, c in zip(rates, caps):
        if r < c * (1 - 1e-9):
            assert r >= max(rates) * (1 - 1e-9)
    assert sum(rates) == pytest.approx(min(capacity, sum(caps)))


INST = PeriodicInstance(Platform(4, 1.0, 2.0), (Application("A", 2, 4.0, 4.0), Application("B", 1, 2.0, 2.0)))


def test_trace_evaluation_by_hand():
    """A: compute [0, 4), I/O [4, 6) at 2; B: compute [0, 2), I/O [6, 8) at 1; horizon 10."""
    trace = Trace(10.0, ((Instance(0.0, ((4.0, 6.0, 2.0),)),), (Instance(0.0, ((6.0, 8.0, 1.0),)),)))
    ev = evaluate_trace(INST, trace)
    assert ev.feasible, ev.violations
    assert ev.sys_efficiency == pytest.approx((2 * 4 / 10 + 1 * 2 / 10) / 4)
    assert ev.dilation == pytest.approx(max((4 / 6) / 0.4, (2 / 4) / 0.2))
    over = Trace(10.0, ((Instance(0.0, ((4.0, 6.0, 2.0),)),), (Instance(0.0, ((5.0, 7.0, 1.0),)),)))
    assert [v.constraint for v in evaluate_trace(INST, over).violations] == ["capacity"]
    starved = Trace(10.0, ((Instance(0.0, ((4.0, 6.0, 2.0),)),), ()))
    ev = evaluate_trace(INST, starved)
    assert ev.feasible and math.isinf(ev.dilation)


@pytest.mark.parametrize("policy", ONLINE_POLICIES)
def test_every_policy_is_feasible_and_moves_every_volume(policy):
    inst = paper_set(3)
    trace = simulate_online(inst, policy, cycles=10)
    ev = evaluate_trace(inst, trace)
    assert ev.feasible, [str(v) for v in ev.violations[:3]]  # volume, rates, B all checked
    for app, insts in zip(inst.applications, trace.applications):
        for i in insts:
            assert sum(r * (e - s) for s, e, r in i.io) == pytest.approx(app.io_volume, rel=1e-9)


def test_fairshare_without_contention_is_ideal():
    """B large enough for everyone at full speed: every application runs at ρ_k, Dilation 1."""
    inst = PeriodicInstance(Platform(8, 1.0, 100.0), (Application("A", 2, 3.0, 4.0),
                                                       Application("B", 4, 5.0, 2.0)))
    ev = evaluate_trace(inst, simulate_online(inst, "fairshare", cycles=30))
    assert ev.feasible
    assert ev.dilation == pytest.approx(1.0, abs=1e-9)


def test_online_methods_through_solve():
    res = iosched.solve("periodic", paper_set(1), "fairshare")
    assert res.evaluation.feasible and 0 < res.objective <= res.bound
    assert res.objective == pytest.approx(0.089, abs=2e-3)
    with pytest.raises(iosched.ParameterError, match="cycles"):
        iosched.solve("periodic", paper_set(1), "online-fcfs", cycles=0)


@st.composite
def instances(draw):
    n = draw(st.integers(1, 4))
    apps = tuple(Application(f"A{i}", draw(st.sampled_from([1, 2, 4])), draw(st.floats(1.0, 50.0)),
                             draw(st.floats(0.5, 100.0))) for i in range(n))
    return PeriodicInstance(Platform(16, 1.0, draw(st.floats(0.5, 8.0))), apps)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.sampled_from(ONLINE_POLICIES))
def test_online_schedules_are_feasible_and_obey_the_bounds(inst, policy):
    ev = evaluate_trace(inst, simulate_online(inst, policy, cycles=8))
    assert ev.feasible, [str(v) for v in ev.violations[:3]]
    assert ev.sys_efficiency <= longrun_bound(inst, "sys_efficiency") * (1 + 1e-9)
    assert ev.dilation >= longrun_bound(inst, "dilation") * (1 - 1e-9)

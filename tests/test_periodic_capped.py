"""The period-capped integer bound (models.periodic_counts): its search against brute force over count
vectors, its relations to the other bounds, and the issue's figures."""

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import periodic_instances

import iosched
from iosched.evaluate.periodic import evaluate
from iosched.heuristics.periodic import build_pattern, search
from iosched.instances.periodic import Application, PeriodicInstance, Platform, paper_set
from iosched.models.periodic import contiguity_bound, longrun_bound, paper_bound
from iosched.models.periodic_counts import capped_bound, relaxation, root_box, upper


def brute_capped(inst):
    """Every vector of type counts within the cap scored by U(m): the definition, enumerated."""
    rel = relaxation(inst)
    ranges = [range(int(q), int(h) + 1) for q, h in zip(rel.copies, root_box(rel))]
    return max((upper(rel, m)[0] for m in itertools.product(*ranges)), default=0.0)


def enumerable(inst, limit=20_000):
    rel = relaxation(inst)
    return math.prod(int(h - q + 1) for q, h in zip(rel.copies, root_box(rel))) <= limit


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(periodic_instances(max_apps=3), st.sampled_from([1.0, 2.0, 3.5]))
def test_the_search_finds_the_brute_force_maximum(inst, k_prime):
    """Best-first over boxes (peak above B) or the breakpoints (peak within B): the same maximum."""
    inst = replace(inst, k_prime=k_prime)
    if not enumerable(inst):
        return
    cap = capped_bound(inst)
    assert cap["complete"]
    assert cap["value"] == pytest.approx(brute_capped(inst), rel=1e-9, abs=1e-15)
    assert cap["value"] <= longrun_bound(inst, "sys_efficiency") * (1 + 1e-9)
    assert cap["value"] <= contiguity_bound(inst)["value"] * (1 + 1e-9)
    if cap["counts"] is not None:
        assert cap["period"] <= inst.period_cap() * (1 + 1e-12)


def test_identical_applications_are_one_type():
    """Two identical applications: one type whose count is any integer in [2, 2 cap], the busier copy
    deciding the cycle (ceil(m / 2) c)."""
    inst = PeriodicInstance(Platform(16, 1.0, 5.0), (Application("a1", 4, 10.0, 30.0), Application("a2", 4, 10.0, 30.0),
                                                     Application("b", 8, 35.0, 12.0)), k_prime=3)
    rel = relaxation(inst)
    assert rel.members == [[0, 1], [2]] and list(rel.copies) == [2, 1]
    assert capped_bound(inst)["value"] == pytest.approx(brute_capped(inst), rel=1e-12)


def test_a_volume_that_fills_b_t_max_exactly_counts():
    """Found by hypothesis (old enumeration): one instance each moves exactly B x t_max (up to rounding)."""
    inst = PeriodicInstance(Platform(32, 1.0, 1.0), (Application("A0", 1, 1.6603003830749046, 63.01996751184781),
                                                     Application("A1", 1, 1.0, 1.6603003830749046)), k_prime=1)
    assert brute_capped(inst) > 0 and capped_bound(inst)["value"] == pytest.approx(brute_capped(inst), rel=1e-12)


def test_where_the_peak_fits_the_cycles_alone_bind():
    """Σ r_k <= B: a (cycle 5) and b (cycle 6.5) run back to back; T = 6.5 m or 5 m, counts floor(T / c)."""
    a, b = Application("a", 2, 3.0, 4.0), Application("b", 2, 4.5, 4.0)
    inst = PeriodicInstance(Platform(8, 1.0, 100.0), (a, b), k_prime=2)  # cap 13 s
    cap = capped_bound(inst)
    by_hand = max((2 * 3.0 * math.floor(T / 5) + 2 * 4.5 * math.floor(T / 6.5)) / (8 * T)
                  for T in (6.5, 10.0, 13.0))
    assert cap["value"] == pytest.approx(by_hand, rel=1e-12)
    assert by_hand == pytest.approx(15 / 52) and cap["counts"] in ([1, 1], [2, 2])  # 6.5 s and 13 s tie


@pytest.mark.parametrize("k", range(1, 11))
def test_paper_sets_capped_bound_holds_for_persched_and_the_others(k):
    inst = paper_set(k)
    cap = capped_bound(inst)
    b = iosched.get_problem("periodic").bounds(inst)
    assert b["capped_sys_efficiency"] == cap["value"] and b["period_cap_s"] == 10 * inst.t_min
    assert cap["value"] <= min(b["lp_sys_efficiency"], b["contiguity_sys_efficiency"], paper_bound(inst)) * (1 + 1e-9)
    assert iosched.get_problem("periodic").bound(inst, "sys_efficiency") == pytest.approx(cap["value"], rel=1e-12)
    found = search(inst)
    ev = evaluate(inst, build_pattern(inst, found["period"]))
    assert ev.feasible and ev.sys_efficiency <= cap["value"] * (1 + 1e-9)


def test_set5_blocking_closes_the_gap_to_the_stored_pattern():
    """PlasmaPhysics moves 34304 GB at B = 3 GB/s: while it does, a Turbulence2 (76.8 s compute, 0.64 GB/s)
    computes once and waits, losing 11434.67 - 76.8 s per PP window unless PP slows down, which costs more:
    1086 instances per PP cycle at most. The capped bound without blocking, 0.8160134, falls to the value of
    the library's pattern (1086, 1086, 1) at T = 494890.67 s."""
    inst = paper_set(5)
    rel = relaxation(inst)
    assert [a for a, _, _ in rel.blockers] == [1]  # PP blocks the T2 type
    cap = capped_bound(inst)
    value_1086 = (2 * 1086 * 64 * 76.8 + 512 * 483456) / (640 * inst.default_t_min())
    assert cap["value"] == pytest.approx(value_1086, rel=1e-9)
    assert upper(rel, [2172, 1])[1] == pytest.approx(1.0)  # T_lb = one PP cycle (units of max_k c_k)
    assert upper(rel, [2174, 1])[1] > 1.0 + 1e-4  # one more T2 each needs PP to slow down


def test_library_small_instances_reproduce_the_issue():
    """Issue 47: where the peak demand is within B the capped bound is exact (back to back patterns attain
    it): small-0..4 0.15697256, 0.10963668, 0.15811328, 0.06653858 (period 5518 s), 0.16884385."""
    prob = iosched.get_problem("periodic")
    issue = [0.15697256, 0.10963668, 0.15811328, 0.06653858, 0.16884385]
    for i, value in enumerate(issue):
        inst = prob.read_instance(f"lib:periodic/small-{i}")
        cap = capped_bound(inst)
        assert relaxation(inst).peak_fits
        assert round(cap["value"], 8) == value
    assert capped_bound(prob.read_instance("lib:periodic/small-3"))["period"] == pytest.approx(5518.358)


def test_a_deadline_gives_a_valid_bound_and_says_so():
    inst = paper_set(4)
    done = capped_bound(inst)
    cut = capped_bound(inst, iosched.solvers.Deadline(0.0))
    assert not cut["complete"] and cut["value"] >= done["value"] and cut["counts"] is None


def test_a_timeline_is_measured_against_the_lp_bound():
    """An online baseline's trace is no pattern within the cap (it can beat the capped bound: without
    contention it reaches the LP bound), so its gap is against the long-run LP bound."""
    inst = iosched.get_problem("periodic").read_instance("lib:periodic/small-0")
    res = iosched.solve("periodic", inst, "fairshare")
    assert res.bound == pytest.approx(longrun_bound(inst, "sys_efficiency"), rel=1e-12)
    assert "timeline" in res.info["gap_against"] and "bound_error" not in res.info
    assert res.objective > capped_bound(inst)["value"]


def test_t_lower_is_monotone_in_the_counts():
    rel = relaxation(paper_set(7))
    base = np.array([7, 142])
    assert upper(rel, base + [0, 1])[1] >= upper(rel, base)[1]
    assert upper(rel, base + [1, 0])[1] >= upper(rel, base)[1]

"""trace-compact (windows of fluid runs compacted by the LP) and the contiguity bound."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import periodic_instances

import iosched
from iosched.evaluate.periodic import evaluate
from iosched.heuristics.periodic import build_pattern, search
from iosched.instances.periodic import Application, PeriodicInstance, Platform, paper_set
from iosched.models.periodic import capped_bound, compact, longrun_bound
from iosched.models.periodic_trace import compaction_lp, fluid_starts, matched_multiples, window

SMALL = {"profile": "quick", "k_prime": 3, "eps": 0.05, "multiples": [1, 2], "matched": 1, "candidates": 4,
         "warmups": [2]}


# --- the pieces of trace-compact ------------------------------------------------------------------


def test_fluid_run_without_contention_repeats_the_cycle():
    """One application alone: starts every w + time_io, from 0."""
    inst = PeriodicInstance(Platform(8, 1.0, 5.0), (Application("a", 2, 3.0, 4.0),))
    starts = fluid_starts(inst, "syseff", 0.0, 4)
    assert starts[0] == pytest.approx([0.0, 5.0, 10.0, 15.0, 20.0])


def test_window_drops_or_stretches_an_overlapping_last_compute():
    """No contention: a (cycle 5) and b (cycle 6.5, the longest) start at 0. A window of one cycle
    of b holds a's starts 0 and 5; the compute [5, 8) overlaps a's next first one at 6.5: dropped,
    or the period stretched to 8."""
    a, b = Application("a", 2, 3.0, 4.0), Application("b", 2, 4.5, 4.0)
    inst = PeriodicInstance(Platform(8, 1.0, 100.0), (a, b))
    starts = fluid_starts(inst, "fcfs", 0.0, 3)
    one = window(inst, starts, 0, 1)
    assert one.period == pytest.approx(6.5) and one.counts() == [1, 1]  # a's start at 5 ends at 8 > 0 + 6.5
    longer = window(inst, starts, 0, 1, stretch=True)
    assert longer.counts() == [2, 1] and longer.period == pytest.approx(8.0)


def test_matched_multiples_pick_near_integer_ratios():
    a, b = Application("a", 2, 3.0, 4.0), Application("b", 2, 8.0, 4.0)  # cycles 5 and 10: ratio 2
    inst = PeriodicInstance(Platform(8, 1.0, 100.0), (a, b))
    assert matched_multiples(inst, 3) == [1, 2, 3]  # every n gives whole counts: the smallest first


def test_sparse_lp_matches_the_pyomo_compaction():
    inst = paper_set(7)
    pattern = build_pattern(inst, search(inst)["period"])
    pyomo, _ = compact(inst, pattern)
    fast = compaction_lp(inst, pattern, 30.0)
    assert evaluate(inst, fast).feasible
    assert fast.counts() == pattern.counts()
    assert fast.period == pytest.approx(pyomo.period, rel=1e-9)


# --- the method -------------------------------------------------------------------------------------


@pytest.mark.parametrize("k, issue", [(7, 0.826403), (10, 0.986508)])
def test_trace_compact_beats_persched_compact_on_paper_sets(k, issue):
    """The issue's figure for set 7 in the cap (0.826403) and set 10's capped optimum, or better, every
    pattern within the period cap; on set 10 the capped bound is met: optimal."""
    inst = paper_set(k)
    res = iosched.solve("periodic", inst, "trace-compact", profile="quick", candidates=12)
    base = iosched.solve("periodic", inst, "persched-compact", profile="quick")
    assert res.evaluation.feasible and res.solution.period <= inst.period_cap()
    assert res.objective >= base.objective * (1 - 1e-9) and res.objective >= issue * (1 - 1e-6)
    assert res.info["period_cap_s"] == pytest.approx(10 * inst.t_min)
    assert res.objective <= res.info["capped_bound"] * (1 + 1e-9)
    if k == 10:
        assert res.status == iosched.Status.OPTIMAL and res.gap <= 1e-9


def test_trace_compact_is_optimal_when_it_meets_the_lp_bound():
    res = iosched.solve("periodic", paper_set(9), "trace-compact", profile="quick")
    assert res.status == iosched.Status.OPTIMAL and res.gap <= 1e-9


def test_dilation_variant():
    inst = paper_set(2)
    res = iosched.solve("periodic", inst, "trace-compact-dilation", profile="quick", candidates=4, multiples=[1],
                        matched=0, warmups=2)
    base = iosched.solve("periodic", inst, "persched-mindil-compact", profile="quick")
    assert res.evaluation.feasible and res.objective <= base.objective * (1 + 1e-9)
    assert res.objective >= longrun_bound(inst, "dilation") * (1 - 1e-9)


@pytest.mark.parametrize("param, value, match", [
    ("priorities", ["nope"], "priorities"), ("multiples", [0], "multiples"), ("staggers", [1.5], "staggers"),
    ("warmups", -1, "warmups"), ("candidates", 0, "candidates"), ("matched", 61, "matched"),
    ("max_instances", 0, "max_instances"),
])
def test_parameters_are_checked(param, value, match):
    with pytest.raises(iosched.ParameterError, match=match):
        iosched.solve("periodic", paper_set(9), "trace-compact", **{param: value})


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(periodic_instances(max_apps=3))
def test_never_worse_than_persched_compact(inst):
    res = iosched.solve("periodic", inst, "trace-compact", **SMALL)
    base = iosched.solve("periodic", inst, "persched-compact", profile="quick", k_prime=3, eps=0.05)
    if base.solution is None:
        return
    assert res.evaluation.feasible, [str(v) for v in res.evaluation.violations[:3]]
    assert res.objective >= base.objective * (1 - 1e-7)
    assert res.objective <= longrun_bound(inst, "sys_efficiency") * (1 + 1e-7)


# --- the contiguity bound -------------------------------------------------------------------------

from iosched.models.periodic import contiguity_bound, contiguity_cuts  # noqa: E402


def test_contiguity_bound_on_set4_by_hand():
    """Set 4: during an AstroPhysics transfer (330.8 s at 1.28) four Turbulence2 (0.64 each) compute at
    most 76.8 s each: g = (4 x 0.64 + 1.28 - 3) 330.8 - 4 x 0.64 x 76.8 = 81.25 GB per AP instance,
    paid by T2 deficits (the cheapest): the bound drops by 3 g / c_AP x β_T2 ρ_T2 / (N r_T2)."""
    inst = paper_set(4)
    t2, ap = inst.applications[0], inst.applications[4]
    assert (t2.name, ap.name) == ("T2-1", "AP-1")
    c = contiguity_bound(inst)
    g = (4 * 0.64 + 1.28 - 3) * inst.time_io(4) - 4 * 0.64 * t2.work
    assert [cut["g"] for cut in c["binding"]] == [pytest.approx(g)]
    drop = 3 * g / (ap.work + inst.time_io(4)) * t2.processors * inst.rho(0) / (640 * 0.64)
    assert c["value"] == pytest.approx(longrun_bound(inst, "sys_efficiency") - drop, rel=1e-8)
    assert c["value"] < 0.656348


@pytest.mark.parametrize("k", [4, 5])
def test_contiguity_bound_holds_for_the_best_patterns_found(k):
    inst = paper_set(k)
    bound = contiguity_bound(inst)["value"]
    for method, params in (("persched-compact", {}), ("trace-compact", {"candidates": 4})):
        res = iosched.solve("periodic", inst, method, profile="quick", **params)
        assert res.evaluation.feasible and res.objective <= bound


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(periodic_instances(max_apps=3), st.floats(1.0, 4.0))
def test_contiguity_bound_is_valid(inst, scale):
    """Never below a pattern: PerSched's at a period, compacted."""
    bound = contiguity_bound(inst)["value"]
    assert bound <= longrun_bound(inst, "sys_efficiency") * (1 + 1e-12)
    for S, A, ell, g in contiguity_cuts(inst):
        assert g > 0 and not set(S) & set(A) and ell <= min(inst.time_io(j) for j in S + A)
    pattern = build_pattern(inst, scale * inst.default_t_min())
    ev = evaluate(inst, pattern)
    if min(ev.counts) == 0:
        return
    assert ev.sys_efficiency <= bound * (1 + 1e-9)
    shorter, _ = compact(inst, pattern)
    assert evaluate(inst, shorter).sys_efficiency <= bound * (1 + 1e-9)


def test_a_result_says_which_bound_its_gap_is_measured_against():
    res = iosched.solve("periodic", paper_set(1), "persched")
    assert res.gap is not None and "period-capped integer bound" in res.info["gap_against"]
    assert res.bound == pytest.approx(capped_bound(paper_set(1))["value"], rel=1e-12)
    res = iosched.solve("periodic", paper_set(1), "persched-mindil")
    assert "Dilation" in res.info["gap_against"]

"""PerSched: the paper's Table 4, and properties on generated instances."""

import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import iosched
from iosched.evaluate.periodic import evaluate
from iosched.heuristics.periodic import build_pattern, period_grid, search
from iosched.instances.periodic import PAPER_TABLE4, Application, PeriodicInstance, Platform, paper_set
from iosched.models.periodic import longrun_bound, paper_bound


def _check_table4(k):
    inst = paper_set(k)
    res = iosched.solve("periodic", inst, "persched")
    ref_mindil, _, ref_dil, ref_se, _, _ = PAPER_TABLE4[k]
    assert res.evaluation.feasible, res.evaluation.violations[:3]
    assert res.objective == pytest.approx(ref_se, rel=1e-3)
    assert res.evaluation.dilation == pytest.approx(ref_dil, rel=1e-3)
    mindil = iosched.solve("periodic", inst, "persched-mindil")
    assert mindil.evaluation.feasible
    assert mindil.objective == pytest.approx(ref_mindil, rel=1e-3)
    assert min(mindil.evaluation.counts) >= 1 and min(res.evaluation.counts) >= 1


@pytest.mark.parametrize("k", range(1, 11))
def test_table4(k):
    """PerSched's SysEfficiency and Dilation, and the min Dilation, within 1e-3 of Table 4."""
    _check_table4(k)


def test_set1_bounds_and_gap():
    """The reference page: PerSched's 0.0973 on set 1 is within 0.5 % of the LP bound 0.0977."""
    res = iosched.solve("periodic", paper_set(1), "persched")
    assert res.bound == pytest.approx(0.0977, abs=5e-5)
    assert res.bound >= res.objective
    assert 0 < res.gap < 0.005


def test_period_grid_is_the_authors():
    """T <- round(1000 T (1+eps)) / 1000 from t_min while T <= K' t_min."""
    g = period_grid(900.0, 9000.0, 0.01)
    assert g[:3] == [900.0, 909.0, 918.09]
    assert g[-1] <= 9000 < round(g[-1] * 1.01 * 1000) / 1000
    assert all(b > a for a, b in zip(g, g[1:]))


@pytest.mark.parametrize("threads_from, threads", [(0.0, 3), (math.inf, 1)])  # this one and the pool's two
def test_workers_give_the_same_answer_and_threads_only_once_periods_take_long(monkeypatch, threads_from, threads):
    import threading

    from iosched.heuristics import periodic_persched as periodic

    inst = paper_set(4)
    one = search(inst, workers=1, prune=False)
    seen, counts_at = set(), periodic._counts_at
    monkeypatch.setattr(periodic, "_counts_at", lambda task: seen.add(threading.get_ident()) or counts_at(task))
    monkeypatch.setattr(periodic, "THREADS_FROM", threads_from)
    two = search(inst, workers=2, prune=False)
    assert two["period"] == one["period"] and two["trace"] == one["trace"]
    assert len(seen) == threads
    pruned = search(inst, workers=2)  # threads prune by the best before their chunk: the same choice
    T = one["period"]
    assert pruned["period"] == T and dict(pruned["trace"])[T] == dict(one["trace"])[T]


def test_rejects_bad_parameters():
    with pytest.raises(iosched.ParameterError, match="eps"):
        iosched.solve("periodic", paper_set(1), "persched", eps=0)
    with pytest.raises(iosched.ParameterError, match="unknown parameter 'speed'; its parameters: k_prime, eps"):
        iosched.solve("periodic", paper_set(1), "persched", speed=3)


def test_no_pattern_is_infeasible_not_a_crash():
    """Two applications each needing all of B for most of t_min: none fits beside the other at K'=1."""
    plat = Platform(4, 1.0, 1.0)
    apps = (Application("a", 2, 1.0, 9.0), Application("b", 2, 1.0, 9.0))
    res = iosched.solve("periodic", PeriodicInstance(plat, apps), "persched", k_prime=1)
    assert res.status == iosched.Status.INFEASIBLE and res.solution is None


@st.composite
def instances(draw):
    n = draw(st.integers(1, 4))
    B = draw(st.floats(1.0, 32.0))
    apps = tuple(
        Application(f"A{i}", draw(st.sampled_from([1, 2, 4, 8, 16])), draw(st.floats(1.0, 200.0)),
                    draw(st.floats(0.5, 400.0)))
        for i in range(n)
    )
    return PeriodicInstance(Platform(64, 1.0, B), apps)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.sampled_from(["sys_efficiency", "dilation"]))
def test_persched_patterns_are_feasible_and_within_bounds(inst, objective):
    found = search(inst, k_prime=3, eps=0.05, objective=objective)
    if found["period"] is None:
        return
    pattern = build_pattern(inst, found["period"])
    ev = evaluate(inst, pattern)
    assert ev.feasible, [str(v) for v in ev.violations[:3]]
    assert min(pattern.counts()) >= 1
    assert ev.sys_efficiency <= longrun_bound(inst, "sys_efficiency") * (1 + 1e-9)
    assert longrun_bound(inst, "sys_efficiency") <= paper_bound(inst) * (1 + 1e-9)
    assert ev.dilation >= longrun_bound(inst, "dilation") * (1 - 1e-9)


def test_the_search_stays_within_the_instance_period_cap():
    """PerSched's k_prime and t_min default to the instance's; a larger k_prime stops at the instance's cap
    (info says so), a smaller one narrows the search, and a t_min above the cap is refused."""
    inst = replace(paper_set(10), k_prime=3)  # cap 48,000 s
    res = iosched.solve("periodic", inst, "persched")
    assert res.info["t_max"] == pytest.approx(48000.0) and "period_cap" not in res.info
    assert res.solution.period <= 48000.0 and res.evaluation.feasible
    wide = iosched.solve("periodic", inst, "persched", k_prime=20)
    assert wide.info["t_max"] == pytest.approx(48000.0) and "48000 s" in wide.info["period_cap"]
    assert wide.objective == res.objective
    narrow = search(inst, k_prime=1.5)
    assert narrow["t_max"] == pytest.approx(24000.0) and max(T for T, _ in narrow["trace"]) <= 24000.0
    with pytest.raises(iosched.ParameterError, match="t_min = 50000.0 s is above the instance's period cap"):
        iosched.solve("periodic", inst, "persched", t_min=50000.0)

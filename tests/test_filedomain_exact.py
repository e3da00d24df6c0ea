"""The exact formulations: brute force, agreement where scopes coincide, the bounds, time limits."""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import iosched
from iosched.errors import ParameterError
from iosched.evaluate.filedomain import evaluate
from iosched.heuristics.filedomain import by_stripe
from iosched.instances.filedomain_presets import generate, load, platform
from iosched.models.filedomain import (
    build_aggregated,
    build_cpsat,
    build_milp,
    build_relaxation,
    cheap_bound,
    column_split,
    dp_partition,
    from_sequence,
    layout,
    lock_units,
    time_bound,
)
from iosched.solvers import load_profile, solve_pyomo

HEURISTICS = ["even", "stripe-aligned", "stripe-size-io", "static-cyclic", "group-cyclic", "transpose", "lustre",
              "gpfs"]
SLOW_GB = 1e-6  # 1000 bytes/s: data times of tiny files comparable to lock costs of milliseconds


def tiny(S, P, w, offset, length, locking="extent", block=None, acquire=2e-3, revoke=5e-3, nodes=None, reqs=None):
    return platform(S, P if nodes is None else nodes, w, None if reqs else (offset, length), reqs, SLOW_GB, SLOW_GB,
                    SLOW_GB * 1.5 if nodes is not None else None, locking, block, acquire, revoke)


@st.composite
def tiny_case(draw, tokens=True, holes=True, max_units=3):
    S, P, w = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(3, 12))
    locking = draw(st.sampled_from(["extent", "token"] if tokens else ["extent"]))
    block = draw(st.sampled_from([w, 2 * w])) if locking == "token" else None  # no more units than stripes
    offset = draw(st.integers(0, 2 * w))
    length = draw(st.integers(1, max_units * w - offset % w))
    reqs = None
    if holes and draw(st.booleans()):
        reqs = [[(offset, max(1, length // 3)), (offset + length - max(1, length // 4), max(1, length // 4))]]
    return tiny(S, P, w, offset, length, locking, block, draw(st.sampled_from([0.0, 1e-3, 4e-3])),
                draw(st.sampled_from([0.0, 2e-3, 1e-2])), reqs=reqs)


def unit_brute_force(inst):
    """The best whole-unit assignment (stripes, or blocks with tokens) by enumeration and the evaluator."""
    units = lock_units(inst)
    best = None
    for owners in itertools.product(range(inst.aggregators), repeat=len(units.weight)):
        t = evaluate(inst, from_sequence(inst, owners, units.weight)).time
        best = t if best is None else min(best, t)
    return best


def halves_brute_force(inst):
    """The best assignment of half-units (each unit split in two at its data midpoint): an upper bound on byte."""
    units = lock_units(inst)
    halves = np.column_stack([units.weight // 2, units.weight - units.weight // 2]).ravel()
    best = None
    for owners in itertools.product(range(inst.aggregators), repeat=len(halves)):
        t = evaluate(inst, from_sequence(inst, owners, halves)).time
        best = t if best is None else min(best, t)
    return best


def solve(inst, engine, granularity=None, profile="quick", early=False):
    res = iosched.solve("filedomain", inst, "exact", engine=engine, granularity=granularity, profile=profile,
                        early=early)
    assert res.evaluation is not None and res.evaluation.feasible, res.info
    return res


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_case(max_units=5))
def test_unit_scope_equals_brute_force_milp_and_cpsat(inst):
    assert inst.aggregators ** len(lock_units(inst).weight) <= 3**6
    brute = unit_brute_force(inst)
    for engine in ("milp", "cpsat"):
        res = solve(inst, engine, "unit")
        assert res.info["model_status"] == "optimal", res.info
        assert res.info["model_objective"] == pytest.approx(brute, rel=1e-6, abs=1e-9), engine
        assert res.info["candidates"]["solver"] == pytest.approx(brute, rel=1e-6, abs=1e-9), engine
        assert res.objective <= brute * (1 + 1e-9)  # the best of the solver's and the heuristics'
        assert res.bound <= res.objective * (1 + 1e-9)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_case())
def test_byte_scope_agrees_across_engines_and_beats_restricted_scopes(inst):
    assert inst.aggregators ** (2 * len(lock_units(inst).weight)) <= 3**6
    milp, cpsat = solve(inst, "milp"), solve(inst, "cpsat")
    assert milp.status.value == "optimal" and cpsat.status.value == "optimal", (milp.info, cpsat.info)
    assert milp.objective == pytest.approx(cpsat.objective, rel=1e-4, abs=1e-9)
    assert milp.objective <= halves_brute_force(inst) * (1 + 1e-4) + 1e-12
    assert milp.objective <= unit_brute_force(inst) * (1 + 1e-4) + 1e-12
    assert milp.objective >= time_bound(inst) * (1 - 1e-9)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(0, 3),
       st.sampled_from([0.0, 1e-3]), st.sampled_from([0.0, 3e-3, 2e-2]))
def test_aggregated_equals_unit_milp_on_equal_stripes(S, P, rounds, shift, acquire, revoke):
    w = 8
    inst = tiny(S, P, w, shift * w, rounds * S * w + (shift % 2) * w, acquire=acquire, revoke=revoke)
    agg, unit = solve(inst, "aggregated"), solve(inst, "milp", "unit")
    assert agg.info["model_status"] == unit.info["model_status"] == "optimal"
    assert agg.info["model_objective"] == pytest.approx(unit.info["model_objective"], rel=1e-6)  # whole stripes
    assert agg.info["candidates"]["whole stripes"] == pytest.approx(agg.info["model_objective"], rel=1e-6)
    assert agg.objective <= unit.objective * (1 + 1e-9) and agg.bound <= agg.objective * (1 + 1e-12)
    if agg.status.value == "optimal":  # certified against the relaxation: no split does better
        assert agg.objective <= solve(inst, "milp").objective * (1 + 1e-4)


def contiguous_brute_force(inst, weights):
    """Min over cuts of the unit sequence into P consecutive (possibly empty) parts, in aggregator order."""
    P, n = inst.aggregators, len(weights)
    cap = np.array(inst.bandwidth.aggregator) * 1e9
    best = None
    for cuts in itertools.combinations_with_replacement(range(n + 1), P - 1):
        bounds = (0, *cuts, n)
        loads = [sum(weights[bounds[i]:bounds[i + 1]]) for i in range(P)]
        t = max(load / c for load, c in zip(loads, cap))
        best = t if best is None else min(best, t)
    return best


@settings(max_examples=25, deadline=None)
@given(tiny_case(tokens=False), st.lists(st.sampled_from([SLOW_GB, 2 * SLOW_GB, 3.5 * SLOW_GB]), min_size=3,
                                         max_size=3))
def test_dp_equals_brute_force_over_contiguous_partitions(inst, bws):
    from dataclasses import replace

    inst = replace(inst, bandwidth=replace(inst.bandwidth, aggregator=tuple(bws[:inst.aggregators])))
    weights = lock_units(inst).weight.tolist()
    domains, fluid, finished = dp_partition(inst, "unit")
    assert finished
    server = max(inst.server_bytes() / (np.array(inst.bandwidth.server) * 1e9))
    assert fluid == pytest.approx(max(contiguous_brute_force(inst, weights), server), rel=1e-9)
    ev = evaluate(inst, domains)
    assert ev.feasible and ev.fluid_time == pytest.approx(fluid, rel=1e-9)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_case(tokens=False))
def test_dp_byte_without_lock_costs_is_the_optimum(inst):
    from dataclasses import replace

    inst = replace(inst, acquire_s=0.0, revoke_s=0.0)
    dp, milp = solve(inst, "dp", "byte"), solve(inst, "milp")
    assert dp.status.value == "optimal" and milp.status.value == "optimal"
    assert dp.objective == pytest.approx(milp.objective, rel=1e-4)
    assert dp.objective == pytest.approx(dp.info["model_objective"], rel=1e-12)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6))
def test_exact_never_worse_than_a_heuristic_when_proven(seed):
    inst = generate(seed, servers=2 + seed % 3, aggregators=1 + seed % 4, max_stripes=6,
                    locking="token" if seed % 5 == 0 else "extent", requests=seed % 2 == 1)
    res = iosched.solve("filedomain", inst, "exact", profile="quick")
    assert res.evaluation.feasible
    assert res.objective >= res.bound * (1 - 1e-9) and res.bound >= cheap_bound(inst)
    if res.info["chosen"] == "solver":  # the model's objective is the evaluator's time of its domains
        assert res.objective == pytest.approx(res.info["model_objective"], rel=1e-6)
    if res.status.value == "optimal":
        for method in HEURISTICS:
            h = iosched.solve("filedomain", inst, method)
            assert res.objective <= h.objective * (1 + 1e-4) + 1e-12, method


def test_figure2d_optimum_and_model_objective_is_the_evaluators():
    inst = load("paper:fig2d")
    for engine, gran in (("milp", "byte"), ("milp", "unit"), ("cpsat", "byte"), ("cpsat", "unit"),
                         ("aggregated", None)):
        res = solve(inst, engine, gran)
        if engine == "aggregated":  # the count model's objective is the evaluator's time of its domains
            assert res.info["candidates"]["whole stripes"] == pytest.approx(res.info["model_objective"], rel=1e-9)
            assert res.objective == min(res.info["candidates"].values())
        else:
            value = res.info["model_objective"]
            assert res.info["candidates"]["solver"] == pytest.approx(value, rel=1e-6, abs=2e-9), (engine, gran)
        assert res.objective == pytest.approx(time_bound(inst), rel=1e-9)  # lustre's 3 aggregators reach it
        assert res.status.value == "optimal"


def test_relaxation_bound_is_below_the_optimum():
    inst = load("example:requests")
    res = solve(inst, "milp", "unit")
    assert res.info["relaxation_status"] == "optimal" and res.bound <= res.objective * (1 + 1e-9)
    for name in ("milp", "relaxation"):
        assert (build_milp if name == "milp" else build_relaxation)(inst).name.startswith("filedomain")


def test_time_limit_gives_incumbent_and_bound(tmp_path, monkeypatch):
    (tmp_path / "solvers.toml").write_text("[default]\ntime_limit = 60\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n"
                                           "[tiny]\ntime_limit = 1.5\nrel_gap = 0\nthreads = 1\nseed = 0\n")
    monkeypatch.setenv("IOSCHED_SOLVERS", str(tmp_path / "solvers.toml"))
    inst = load("sweep:4:6:4")
    import time

    start = time.perf_counter()
    res = iosched.solve("filedomain", inst, "exact", profile="tiny")
    assert time.perf_counter() - start < 10
    assert res.status.value in ("time_limit", "optimal") and res.evaluation.feasible
    assert res.bound is not None and res.bound <= res.objective * (1 + 1e-9)


@pytest.mark.parametrize("params, fragment", [
    ({"engine": "gurobi"}, "engine"), ({"granularity": "page"}, "granularity"),
    ({"engine": "aggregated", "granularity": "byte"}, "granularity must be unit"),
    ({"profile": "warp"}, "warp"), ({"early": "yes"}, "early"),
])
def test_bad_parameters(params, fragment):
    with pytest.raises(ParameterError, match=fragment):
        iosched.solve("filedomain", load("paper:fig2d"), "exact", **params)


def test_scope_refusals():
    with pytest.raises(ParameterError, match="equal stripes"):
        build_aggregated(load("example:requests"))
    with pytest.raises(ParameterError, match="extent locking"):
        build_aggregated(load("example:gpfs"))
    with pytest.raises(ParameterError, match="this model takes at most"):
        build_milp(load("sweep:64:256"))
    with pytest.raises(ParameterError, match="one aggregator per node"):
        dp_partition(load("example:gpfs"))
    assert build_cpsat(load("paper:fig2")).Proto().variables


def test_aggregated_solution_layout():
    inst = load("sweep:4:6:3")  # 12 stripes on 4 servers, 6 aggregators
    res = solve(inst, "aggregated")
    owner = np.zeros(inst.stripes, dtype=int)
    for a, dom in enumerate(res.solution.domains):
        for s, e in np.asarray(dom).reshape(-1, 2).tolist():
            owner[s // inst.stripe_size:e // inst.stripe_size] = a
    assert by_stripe(inst, owner, inst.aggregators).domains is not None
    assert res.evaluation.false_sharing == 0


def test_counting_bound_certifies_group_cyclic_at_p_4s_without_a_solve():
    inst = load("sweep:4:16")  # 16 aggregators at 0.25 GB/s saturate 4 servers at 1 GB/s
    res = iosched.solve("filedomain", inst, "exact", engine="aggregated")
    assert res.status.value == "optimal" and "counting bound" in res.info["certified_by"]
    assert res.objective == pytest.approx(time_bound(inst), rel=1e-9)
    assert res.info["chosen"] in ("heuristic group-cyclic", "heuristic transpose")
    # the bound by hand: 16 writers make 16 runs, 4 on some server: 16 MiB at 1 GB/s + 4 grants + 3 conflicts
    assert time_bound(inst) == pytest.approx(16 * 2**20 / 1e9 + 4 * 1e-4 + 3 * 1e-3, rel=1e-12)


def test_relaxation_bound_stays_below_a_known_solution():
    # with loads in bytes HiGHS's presolve proved 0.07160 s on sweep:4:48:64, where the column split
    # over 16 writers takes 0.07051 s (and the engine called itself optimal)
    inst = load("sweep:4:48:64")
    split = evaluate(inst, layout(inst, column_split(inst, 16))).time
    out = solve_pyomo(build_relaxation(inst), load_profile("default"))
    assert out.status == "optimal" and out.bound / 1e6 <= split * (1 + 1e-9)


# --- every engine within its budget, model building included (issue 21) -------------------------

def _tiny_profile(tmp_path, monkeypatch, seconds):
    (tmp_path / "solvers.toml").write_text("[default]\ntime_limit = 60\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n"
                                           f"[tiny]\ntime_limit = {seconds}\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n")
    monkeypatch.setenv("IOSCHED_SOLVERS", str(tmp_path / "solvers.toml"))


def test_cpsat_build_stops_at_the_limit(tmp_path, monkeypatch):
    """sweep:16:128 with engine=cpsat took 15.7 s under a 5 s profile: its build alone is 32,768 cells
    (seconds of Python); it now checks the clock per unit and gives up with the heuristics' best."""
    _tiny_profile(tmp_path, monkeypatch, 0.05)
    res = iosched.solve("filedomain", "sweep:16:128", "exact", engine="cpsat", profile="tiny", early=False)
    assert res.status.value == "time_limit" and res.evaluation.feasible
    assert "build reached the time limit" in res.info["skipped"]


@pytest.mark.parametrize("engine, skipped", [("aggregated", "relaxation was not solved"),
                                             ("milp", "MILP was not solved")])
def test_pyomo_models_estimated_before_they_are_built(tmp_path, monkeypatch, engine, skipped):
    """engine=aggregated on sweep:64:256:4 took 12 s under 5 s: the relaxation and count models were built
    and handed to HiGHS whatever was left; now their build and handover is estimated first."""
    _tiny_profile(tmp_path, monkeypatch, 0.05)
    res = iosched.solve("filedomain", "sweep:64:256:4", "exact", engine=engine, profile="tiny", early=False)
    assert res.status.value == "time_limit" and res.evaluation.feasible
    assert skipped in res.info["skipped"] and "s left" in res.info["skipped"]


def test_heuristic_starts_stop_at_the_deadline():
    from iosched.models.filedomain import heuristic_starts
    from iosched.solvers import Deadline

    starts = heuristic_starts(load("paper:fig2"), Deadline(0.0))
    assert [name for name, _ in starts] == ["heuristic even"]  # the first always, none after the limit
    assert len(heuristic_starts(load("paper:fig2"))) == len(HEURISTICS)


def test_auto_engine_falls_back_where_segments_do_not_fit():
    """A long token sequence: the segment model (quadratic in a sequence's units) is refused, auto takes
    the unit-level MILP; engine=segments itself refuses naming the size."""
    inst = tiny(2, 2, 4, 0, 4 * 800, locking="token")
    res = iosched.solve("filedomain", inst, "exact", profile="quick", early=False)
    assert res.info["engine"] == "milp" and "engine=segments refused" in res.info["auto"]
    assert res.evaluation.feasible and res.bound <= res.objective * (1 + 1e-9)
    with pytest.raises(ParameterError, match="segment model would have at least"):
        iosched.solve("filedomain", inst, "exact", engine="segments")


def test_dp_stops_at_its_deadline_with_contiguous_domains():
    from iosched.solvers import Deadline

    inst = load("sweep:8:3000")
    domains, fluid, finished = dp_partition(inst, "unit", Deadline(0.0))
    assert not finished and evaluate(inst, domains).feasible and fluid >= time_bound(inst) * (1 - 1e-12)


def test_a_large_request_list_within_the_budget(tmp_path, monkeypatch):
    """Issue 21: a 900,000-piece write ran 71 s under the quick profile. Here 200,000 pieces under a
    0.2 s budget: the heuristic starts stop at the deadline, no model is built past it, and the
    result is the best found with a valid bound (optimal only if a bound certifies it)."""
    _tiny_profile(tmp_path, monkeypatch, 0.2)
    inst = platform(4, 6, 2**20, requests=[[(i * 2048, 1000 + i % 7) for i in range(200_000)]])
    res = iosched.solve("filedomain", inst, "exact", profile="tiny")
    assert res.evaluation.feasible and res.bound <= res.objective * (1 + 1e-9)
    assert res.status.value == "time_limit" or "certified_by" in res.info or res.info.get("model_status") == "optimal"

"""Exact models of malleable schedules: bounds by hand, brute force, the <= chains, MILP against CP-SAT, limits."""

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iosched.core import Status, solve
from iosched.errors import ParameterError
from iosched.evaluate.malleable import evaluate
from iosched.heuristics.malleable_sim import simulate
from iosched.instances.malleable import Job, MalleableInstance, Runtime
from iosched.instances.malleable_presets import app_job, generate
from iosched.models import driver
from iosched.models import malleable_cpsat as models
from iosched.models.malleable import (
    bound,
    build_cpsat,
    build_milp,
    closed_form_bounds,
    identical_jobs,
    make_grid,
    plan_schedule,
    schedule_plans,
    srpt_completions,
)
from iosched.models.malleable_cpsat import LNS_MIN_JOBS
from iosched.solvers import Deadline, load_profile

# --- closed-form bounds ----------------------------------------------------------------------------------------


def test_srpt_by_hand():
    # releases 0, 1, 2; work 4, 2, 1: A runs 0-1, B (2 < 3 left) 1-3, C 3-4, A 4-7
    assert srpt_completions(np.array([0.0, 1, 2]), np.array([4.0, 2, 1])).tolist() == [7, 3, 4]
    assert srpt_completions(np.array([5.0]), np.array([2.0])).tolist() == [7]
    assert srpt_completions(np.array([0.0, 10]), np.array([1.0, 1])).tolist() == [1, 11]  # an idle gap


def test_bounds_by_hand():
    # 4 nodes. A (arrives 0): T = 16, 8, 4 s at 1, 2, 4 nodes (area 16 at any size). B (arrives 1): Amdahl with
    # half serial, T(1) = 12, T(2) = 9 (area 12 at 1 node). C (arrives 1): 4 nodes only, 5 s (area 20).
    A = Job("A", 0, 1, Runtime("linear", seconds_1=16.0, up_to=4), 1, 4)
    B = Job("B", 1, 1, Runtime("amdahl", seconds_1=12.0, serial=0.5), 1, 2)
    C = Job("C", 1, 1, Runtime("table", seconds=((4, 5.0),)), 4, 4)
    inst = MalleableInstance(4, (A, B, C))
    b = closed_form_bounds(inst)
    assert b["mean_completion_per_job"] == pytest.approx((4 + 9 + 5) / 3)
    # areas / 4 nodes: A 4, B 3, C 5 (s of the whole machine). SRPT: A from 0; at 1 A has 3 left, B 3 (a tie, A
    # keeps the machine), C 5: A ends at 4, B at 7, C at 12
    done = srpt_completions(np.array([0.0, 1, 1]), np.array([4.0, 3, 5]))
    assert b["mean_completion_srpt_area"] == pytest.approx(float(np.mean(done - [0, 1, 1])))
    assert done.tolist() == [4, 7, 12]
    assert b["mean_completion"] == max(b["mean_completion_per_job"], b["mean_completion_srpt_area"])
    assert b["makespan_per_job"] == max(0 + 4, 1 + 9, 1 + 5)
    assert b["makespan_area"] == pytest.approx(max(0 + 12, 1 + 8))
    assert bound(inst, "makespan") >= 12 and bound(inst, "mean_wait") is None  # the LP's may be larger


# --- brute force ------------------------------------------------------------------------------------------------


def _brute_rigid(inst: MalleableInstance) -> float:
    """The best rigid schedule on the 1 s grid: every size and every start time (two or three jobs)."""
    H = int(max(j.arrival for j in inst.jobs) + sum(min(j.times) for j in inst.jobs)) + 1
    best = math.inf
    for sizes in itertools.product(*(j.sizes for j in inst.jobs)):
        dur = [math.ceil(j.time(p) - 1e-9) for j, p in zip(inst.jobs, sizes)]
        for starts in itertools.product(*(range(int(j.arrival), H) for j in inst.jobs)):
            load = np.zeros(H + max(dur) + 1, dtype=int)
            for s, d, p in zip(starts, dur, sizes):
                load[s:s + d] += p
            if load.max() <= inst.nodes:
                best = min(best, float(np.mean([s + j.time(p) - j.arrival
                                                for s, p, j in zip(starts, sizes, inst.jobs)])))
    return best


@pytest.mark.parametrize("seed", range(4))
def test_rigid_optimal_matches_brute_force(seed):
    inst = generate(seed, 2, "grid", nodes=4)
    res = solve("malleable", inst, "rigid-optimal", profile="quick")
    assert res.info["model_status"] == "optimal" and res.evaluation.feasible
    assert res.objective == pytest.approx(_brute_rigid(inst))


# --- the <= chains on small workloads ------------------------------------------------------------------------------


def _max_runs(schedule) -> int:
    return max(sum(iv.kind == "run" for iv in ivs) for ivs in schedule.jobs.values())


@pytest.mark.parametrize("seed", range(6))
def test_cpsat_le_rigid_optimal_le_rigid_fcfs_and_cpsat_le_dmr(seed):
    inst = generate(seed, 4, "grid")
    dmr = solve("malleable", inst, "dmr")
    segments = max(2, _max_runs(dmr.solution))
    assert schedule_plans(inst, make_grid(inst), dmr.solution, segments) is not None  # DMR's schedule is in scope
    cp = solve("malleable", inst, "cpsat", segments=segments, profile="quick")
    rigid = solve("malleable", inst, "rigid-optimal", profile="quick")
    fcfs = solve("malleable", inst, "rigid-fcfs")
    assert cp.info["model_status"] == rigid.info["model_status"] == "optimal"
    for r in (cp, rigid):
        assert r.evaluation.feasible and r.status in (Status.FEASIBLE, Status.OPTIMAL)
        assert r.bound == pytest.approx(bound(inst, "mean_completion"))  # the Result's bound: every schedule's
        assert r.info["model_bound"] == pytest.approx(r.info["model_objective"])  # the model's own: its scope's
        assert r.objective >= r.bound - 1e-9
    eps = 1e-9
    assert cp.objective <= rigid.objective + eps <= fcfs.objective + 2 * eps
    assert cp.objective <= dmr.objective + eps
    assert cp.objective == pytest.approx(cp.info["model_objective"])  # on the grid nothing is rounded


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 3))
def test_exact_never_worse_than_the_policies_nor_better_than_the_bound(seed, n):
    inst = generate(seed, n, "grid")
    dmr = simulate(inst, "dmr").schedule
    cp = solve("malleable", inst, "cpsat", segments=max(2, _max_runs(dmr)), profile="quick")
    assert cp.evaluation.feasible and cp.objective >= cp.bound - 1e-9
    if cp.info["model_status"] == "optimal":
        for policy in (dmr, simulate(inst, "rigid", "fcfs").schedule, simulate(inst, "rigid", "easy").schedule):
            assert cp.objective <= evaluate(inst, policy).mean_completion + 1e-9


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_milp_and_cpsat_agree(seed):
    inst = generate(seed, 2, "grid")
    cp = solve("malleable", inst, "cpsat", segments=4, profile="quick")
    mi = solve("malleable", inst, "milp", profile="quick")
    assert cp.info["model_status"] == mi.info["model_status"] == "optimal"
    assert mi.evaluation.feasible
    assert _max_runs(mi.solution) <= 4  # the MILP's optimum lies in CP-SAT's scope, so the values are equal
    assert mi.info["model_objective"] == pytest.approx(cp.info["model_objective"], abs=1e-6)
    assert mi.objective == pytest.approx(cp.objective, abs=1e-6)


def _twins(seed: int, n: int) -> MalleableInstance:
    """A grid workload whose jobs are all copies of its first but for their arrival (in reverse order
    of index, so that the symmetry rows order them against the index)."""
    base = generate(seed, n, "grid")
    first = base.jobs[0]
    jobs = tuple(replace(first, id=f"t{i}", arrival=float(3 * (n - i))) for i in range(n))
    return MalleableInstance(base.nodes if seed % 2 else 4, jobs, f"twins:{seed}")


@pytest.mark.parametrize("seed", range(4))
def test_identical_jobs_symmetry_keeps_the_optimum(seed):
    # rigid-optimal (with its symmetry rows) against a brute force over every size and start (without)
    three = _twins(seed, 3)
    assert identical_jobs(three, make_grid(three)) == [[2, 1, 0]]  # arrival order: the last index first
    inst = _twins(seed, 2)
    res = solve("malleable", inst, "rigid-optimal", profile="quick")
    assert res.info["model_status"] == "optimal" and res.evaluation.feasible
    assert res.objective == pytest.approx(_brute_rigid(inst))
    # with resizes: CP-SAT (symmetry rows) against the MILP (none), the same scope when CP-SAT's segments suffice
    cp = solve("malleable", inst, "cpsat", segments=4, profile="quick")
    mi = solve("malleable", inst, "milp", profile="quick")
    assert cp.info["model_status"] == mi.info["model_status"] == "optimal"
    if _max_runs(mi.solution) <= 4:
        assert cp.info["model_objective"] == pytest.approx(mi.info["model_objective"], abs=1e-6)
    starts = [cp.solution.jobs[j.id][0].start for j in inst.jobs]
    assert starts[1] <= starts[0]  # t1 arrived first


# --- the large-neighbourhood search (cpsat from LNS_MIN_JOBS jobs) ------------------------------------------------


def _fcfs_with_room(inst: MalleableInstance, by: int):
    """The grid with its horizon ``by`` units longer (room to delay jobs), and rigid FCFS's runs on it."""
    grid = make_grid(inst)
    grid = replace(grid, horizon=grid.horizon + by)
    return grid, schedule_plans(inst, grid, grid.fallback, 1)


def _delayed(runs, by: int):
    return [(rs + by, re + by, p) for rs, re, p in runs]


@pytest.mark.parametrize("objective", ["mean_completion", "makespan"])
def test_the_neighbourhood_search_keeps_a_schedule_feasible_and_never_worse(objective):
    inst = generate(4, LNS_MIN_JOBS + 1, "grid")
    grid, plans = _fcfs_with_room(inst, 5)
    late = [_delayed(runs, 5) for runs in plans]  # every job 5 units late: feasible, and moving jobs back helps
    out, search = models._lns(inst, grid, 3, objective, late, Deadline(4.0), load_profile("quick"))
    before = evaluate(inst, plan_schedule(inst, grid, late))
    after = evaluate(inst, plan_schedule(inst, grid, out))
    assert before.feasible and after.feasible, after.violations[:3]
    assert search["neighbourhoods"] >= 1 and 2 <= search["last_size"] <= models.LNS_MAX_JOBS
    assert getattr(after, objective) <= getattr(before, objective) + 1e-9


def test_the_neighbourhood_search_moves_a_late_job_back(monkeypatch):
    monkeypatch.setattr(models, "LNS_JOBS", 6)
    inst = generate(4, 6, "grid")  # every neighbourhood frees every job: the first one can move the late job
    grid, plans = _fcfs_with_room(inst, 5)  # rigid FCFS: nobody starts after the last start, so the
    last = max(range(6), key=lambda j: plans[j][0][0])  # nodes in use only fall from then on: it can start later
    plans[last] = _delayed(plans[last], 5)
    out, search = models._lns(inst, grid, 1, "mean_completion", plans, Deadline(4.0), load_profile("quick"))
    before = evaluate(inst, plan_schedule(inst, grid, plans))
    after = evaluate(inst, plan_schedule(inst, grid, out))
    assert before.feasible and after.feasible
    assert search["improved"] >= 1 and after.mean_completion < before.mean_completion


def test_the_blocks_are_the_nodes_a_schedule_holds():
    runs = [[(0, 4, 2), (5, 9, 4)], [(2, 6, 1)]]  # a resize 2 -> 4 in unit 4 holds 4 nodes
    assert models._blocks(runs) == [(0, 4, 2), (4, 5, 4), (5, 9, 4), (2, 6, 1)]
    assert models._plans_key(runs, "mean_completion") == (15, 15) and models._plans_key(runs, "makespan") == (9, 15)


def test_cpsat_from_13_jobs_searches_neighbourhoods_of_its_start():
    inst = generate(2, LNS_MIN_JOBS, "grid")
    res = solve("malleable", inst, "cpsat", profile="quick")
    fcfs = solve("malleable", inst, "rigid-fcfs")  # one of the starts it picks the best of
    assert res.evaluation.feasible and res.objective >= res.bound - 1e-9
    assert res.status == Status.TIME_LIMIT and res.info["model_status"] == "time_limit"
    assert res.info["model_bound"] is None and "neighbourhoods" in res.info["message"]
    assert res.info["search"]["neighbourhoods"] >= 1
    assert res.objective <= fcfs.objective + 1e-9
    if res.info["hint"] != "dmr":  # a start without resizes (rigid FCFS or the list search): rigid neighbourhoods first
        assert 1 <= res.info["search"]["rigid_neighbourhoods"] <= res.info["search"]["neighbourhoods"]
        assert "rigid first" in res.info["message"]


def test_makespan_objective():
    inst = generate(3, 4, "grid")
    cp = solve("malleable", inst, "cpsat", objective="makespan", profile="quick")
    dmr = simulate(inst, "dmr").schedule
    assert cp.info["minimised"] == "makespan" and cp.info["model_status"] == "optimal"
    assert cp.evaluation.makespan <= evaluate(inst, dmr).makespan + 1e-9
    assert cp.evaluation.makespan >= bound(inst, "makespan") - 1e-9
    mi = solve("malleable", generate(1, 2, "grid"), "milp", objective="makespan", profile="quick")
    cp2 = solve("malleable", generate(1, 2, "grid"), "cpsat", segments=4, objective="makespan", profile="quick")
    assert mi.evaluation.makespan == pytest.approx(cp2.evaluation.makespan)


def test_off_grid_instance_rounds_safely():
    # Amdahl run times are not whole seconds: rates round down, the converter ends jobs when their work is done
    inst = MalleableInstance(64, (app_job("cg", "a", 0.0), app_job("nbody", "b", 3.3), app_job("jacobi", "c", 7.1)))
    grid = make_grid(inst)
    assert not grid.exact and grid.unit == 1.0  # the gcd of the periods 15 s and 28 s
    res = solve("malleable", inst, "cpsat", segments=2, profile="quick")
    assert res.evaluation.feasible, res.evaluation.violations[:3]
    assert res.objective <= res.info["model_objective"] + 1e-9 and not res.info["rates_exact"]
    assert res.objective >= res.bound
    # the policies' schedules are off the grid: the hint is one on the grid's rounded data
    assert res.info["hint"] in ("rigid-fcfs on the grid", "rigid-list on the grid")


def test_time_limited_solve(tmp_path, monkeypatch):
    toml = tmp_path / "solvers.toml"
    toml.write_text("[default]\ntime_limit = 0.2\nrel_gap = 0\nthreads = 1\nseed = 0\n")
    monkeypatch.setenv("IOSCHED_SOLVERS", str(toml))
    inst = generate(5, 14, "grid")
    res = solve("malleable", inst, "cpsat", segments=3)
    assert res.status == Status.TIME_LIMIT and res.wall_time_s < 10
    assert res.info["model_status"] == "time_limit"
    assert res.evaluation.feasible and res.objective >= res.bound  # CP-SAT's incumbent, or the hint


def test_cpsat_without_a_solution_of_its_own_keeps_its_hint(monkeypatch):
    real = models.solve_cpsat  # neither the whole model nor any neighbourhood gets time to find a schedule
    monkeypatch.setattr(models, "solve_cpsat", lambda m, prof: real(m, replace(prof, time_limit=1e-9)))
    monkeypatch.setattr(driver, "solve_cpsat", lambda m, prof: real(m, replace(prof, time_limit=1e-9)))
    inst = generate(2, 8, "grid")
    res = solve("malleable", inst, "cpsat", segments=3, profile="quick")
    assert res.status == Status.TIME_LIMIT and res.info["model_bound"] is None
    assert res.info["search"]["improved"] == 0 and "large-neighbourhood search" in res.info["message"]
    assert res.evaluation.feasible and res.objective >= res.bound
    policies = [evaluate(inst, simulate(inst, *p).schedule).mean_completion for p in (("dmr",), ("rigid", "fcfs"))]
    assert res.objective <= min(policies) + 1e-9  # the best of the schedules it starts from


@pytest.mark.parametrize("method, params, name", [
    ("cpsat", {"segments": 0}, "segments"), ("cpsat", {"segments": "3"}, "segments"),
    ("cpsat", {"segments": 51}, "segments"), ("cpsat", {"unit": -1}, "unit"), ("cpsat", {"unit": 3}, "unit"),
    ("cpsat", {"unit": math.nan}, "unit"), ("cpsat", {"objective": "mean_wait"}, "objective"),
    ("cpsat", {"profile": "nope"}, "nope"), ("cpsat", {"hint": "yes"}, "hint"),
    ("rigid-optimal", {"unit": 0}, "unit"), ("milp", {"objective": "x"}, "objective"), ("milp", {"unit": 5}, "unit"),
    # within the declared range but not for this instance: longer than the 8 s period, or too fine to scale
    ("cpsat", {"unit": 1e9}, "unit must divide every period"), ("milp", {"unit": 16}, "unit must divide"),
    ("cpsat", {"unit": 1e-320}, "horizon"), ("rigid-optimal", {"unit": 1e-300}, "horizon"),
])
def test_bad_parameters(method, params, name):
    with pytest.raises(ParameterError, match=name):
        solve("malleable", generate(0, 2, "grid"), method, **params)


def test_too_large_for_the_milp():
    with pytest.raises(ParameterError, match="horizon"):
        build_milp(generate(0, 200, "paper"))


def test_builders_return_models():
    inst = generate(0, 3, "grid")
    cp = build_cpsat(inst, segments=2)
    assert len(cp.Proto().variables) > 0 and cp.Proto().objective.vars
    mi = build_milp(inst)
    assert mi.name == "malleable-milp" and len(list(mi.component_data_objects())) > 0


def test_milp_as_pyomo_has_the_same_optimum():
    """``build_milp`` renders the arrays HiGHS solves as a Pyomo model (for ``iosched model``): solved
    through Pyomo it reaches the method's optimum, in the model's units (sum of end slots)."""
    from iosched.solvers import load_profile, solve_pyomo

    inst = generate(2, 2, "grid")
    mi = solve("malleable", inst, "milp", profile="quick")
    out = solve_pyomo(build_milp(inst), load_profile("quick"), load=False)
    assert mi.info["model_status"] == out.status.value == "optimal"
    grid = make_grid(inst)
    assert out.objective * grid.unit == pytest.approx(mi.info["model_objective"] * 2 + sum(
        j.arrival for j in inst.jobs), abs=1e-6)


@pytest.mark.parametrize("seed, n", [(0, 3), (1, 5)])
def test_milp_variable_count_is_the_models(seed, n):
    import iosched.models.malleable_milp as mm

    inst = generate(seed, n, kind="grid")
    grid = make_grid(inst, None, max_slots=mm.MAX_SLOTS_MILP)
    assert mm.milp_variables(inst, grid) == mm.milp_model(inst, grid, "mean_completion")[0].columns
    assert mm.milp_model(inst, grid, "makespan")[0].columns == mm.milp_variables(inst, grid) + 1


def test_milp_start_is_a_checked_solution():
    """The MILP starts from a schedule on the grid only when it satisfies every row: the rigid list's runs
    do (their objective in the model is their sum of end slots); a run cut short of its work does not."""
    import iosched.models.malleable_milp as mm
    from iosched.models.malleable_grid import _list_plans
    from iosched.solvers import Deadline

    inst = generate(3, 3, "grid")
    grid = make_grid(inst, None, max_slots=mm.MAX_SLOTS_MILP)
    m, cols = mm.milp_model(inst, grid, "mean_completion")
    plans = _list_plans(inst, grid, Deadline(60))
    x = mm.milp_start(m, inst, grid, cols, plans)
    assert x is not None and m.arrays()[3] @ x == sum(runs[-1][1] for runs in plans)
    short = [[(rs, re - 1, p) for rs, re, p in runs] for runs in plans]
    assert mm.milp_start(m, inst, grid, cols, short) is None


def test_milp_refuses_beyond_its_column_cap(monkeypatch):
    """Columns are counted before anything is built; beyond MAX_MILP_COLUMNS (HiGHS's presolve overruns
    its time limit there) the method ends time_limit, naming the count."""
    import iosched.models.malleable_milp as mm

    def never(*args):
        raise AssertionError("built")

    monkeypatch.setattr(mm, "milp_model", never)
    monkeypatch.setattr(mm, "MAX_MILP_COLUMNS", 100)
    res = solve("malleable", "random:0:3:grid", "milp", profile="quick")
    assert res.status == Status.TIME_LIMIT and res.solution is None and "columns, beyond the 100" in res.info["error"]

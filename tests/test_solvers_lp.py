"""The array LP (:class:`iosched.solvers.lp.LP`) on every backend, and the LPs built on it: malleable's
interval, completion-order and Lagrangian bounds, periodic's compaction LP in trace-compact."""

import math
import shutil
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import iosched
from iosched.core import Status
from iosched.instances.malleable_presets import generate
from iosched.models import malleable_bounds as mb
from iosched.models import malleable_lp as mlp
from iosched.solvers import BACKENDS, LicenceLimit, SolverMissing
from iosched.solvers.backends import cbc
from iosched.solvers.lp import ALGORITHMS, LP

ALL = [name for name in BACKENDS if name != "cbc" or shutil.which("cbc")]  # see test_solvers_backends's
LIMITED = [(name, b.size_limit + 1) for name, b in BACKENDS.items() if b.size_limit]  # size-limited licences

warnings.filterwarnings("ignore", message=".*[Ll]icense.*")  # Xpress's community licence notice


def random_lp(seed: int, rows: int, cols: int, empty: tuple[int, int] = (0, 0)):
    """min c x, c > 0, over rows of each kind (<=, >=, =) all satisfied by a known x0 >= 0: feasible, bounded.
    ``empty`` (r, k): no entries in rows r.. of columns ..k."""
    rng = np.random.default_rng(seed)
    A = sp.random(rows, cols, density=0.5, random_state=rng, data_rvs=lambda k: rng.uniform(-1, 2, k)).tolil()
    A[empty[0]:, :empty[1]] = 0
    A = A.tocsc()
    x0 = rng.uniform(0, 1, cols)
    ax = A @ x0
    kind = rng.integers(0, 3, rows)  # 0: <=, 1: >=, 2: =
    lo = np.where(kind == 0, -np.inf, ax - np.where(kind == 1, rng.uniform(0, 1, rows), 0))
    hi = np.where(kind == 1, np.inf, ax + np.where(kind == 0, rng.uniform(0, 1, rows), 0))
    return rng.uniform(0.1, 1, cols), A, lo, hi


def check_optimal(res, c, A, lo, hi, tol=1e-6):
    """The values are feasible, the duals dual feasible (the convention of iosched.solvers.lp: reduced costs
    c - A'y >= 0 at x >= 0; y <= 0 on <= rows, >= 0 on >= rows) and the two objectives equal."""
    assert res.status == Status.OPTIMAL
    ax = A @ res.x
    assert (res.x >= -tol).all() and (ax >= lo - tol).all() and (ax <= hi + tol).all()
    y = res.duals
    assert (c - A.T @ y >= -tol).all()
    assert (y[np.isinf(lo)] <= tol).all() and (y[np.isinf(hi)] >= -tol).all()
    dual_value = np.where(np.isinf(lo), hi, lo) @ y
    assert res.value == pytest.approx(c @ res.x, rel=tol, abs=tol)
    assert res.value == pytest.approx(dual_value, rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("solver", ALL)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_backend_solves_an_lp_with_duals_in_one_convention(solver, algorithm):
    c, A, lo, hi = random_lp(3, 12, 20)
    lp = LP(solver, algorithm)
    lp.add_rows(lo, hi)
    lp.add_cols(c, 0.0, np.inf, A)
    res = lp.solve(30)
    check_optimal(res, c, A, lo, hi)
    ref = LP("highs")
    ref.add_rows(lo, hi)
    ref.add_cols(c, 0.0, np.inf, A)
    assert res.value == pytest.approx(ref.solve(30).value, rel=1e-7)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(ALL))
def test_columns_added_after_a_solve_give_the_whole_lps_optimum(seed, solver):
    """Column generation's pattern: solve, add columns (and a row), solve again from the last basis: the optimum
    of the whole LP, built at once."""
    c, A, lo, hi = random_lp(seed, 8, 16, empty=(6, 10))  # the first columns have no entries in the later rows
    lp = LP(solver, "primal")
    lp.add_rows(lo[:6], hi[:6])
    lp.add_cols(c[:10], 0.0, np.inf, A[:6, :10])
    first = lp.solve(30)
    lp.add_rows(lo[6:], hi[6:])
    lp.add_cols(c[10:], 0.0, np.inf, A[:, 10:])
    lp.add_cols([], 0.0, np.inf, sp.csc_matrix((8, 0)))  # an empty batch is no column
    assert lp.columns == 16 and lp.rows == 8
    res = lp.solve(30)
    check_optimal(res, c, A, lo, hi)
    if first.status == Status.OPTIMAL:  # more rows may make it infeasible, or costlier; fewer columns never cheaper
        assert first.x.shape == (10,)


@pytest.mark.parametrize("solver,n", LIMITED)
def test_an_lp_past_the_licence_is_a_clear_error(solver, n):
    lp = LP(solver)
    lp.add_rows([1.0], [np.inf])
    lp.add_cols(np.ones(n), 0.0, 1.0, sp.csc_matrix(np.ones((1, n))))
    with pytest.raises(LicenceLimit, match=rf"{solver} refused the model \({n} variables, 1 constraints\)"):
        lp.solve(10)


def test_a_missing_backend_names_its_package(monkeypatch):
    monkeypatch.setattr(BACKENDS["gurobi"], "version", lambda: None)
    with pytest.raises(SolverMissing, match="pip install gurobipy"):
        LP("gurobi")
    monkeypatch.setattr(cbc.shutil, "which", lambda name: None)  # no cbc program on PATH
    with pytest.raises(SolverMissing, match="the cbc program must be on PATH .apt-get install coinor-cbc"):
        LP("cbc")
    with pytest.raises(ValueError, match="algorithm"):
        LP("highs", "simplex")
    with pytest.raises(ValueError, match="bounds"):
        LP("highs").add_rows([0.0], [1.0])  # a range row


def test_an_infeasible_lp_is_a_status_not_a_value():
    for solver in ALL:
        lp = LP(solver)
        lp.add_rows([2.0, -np.inf], [np.inf, 1.0])  # x >= 2 and x <= 1
        lp.add_cols([1.0], 0.0, np.inf, sp.csc_matrix(np.ones((2, 1))))
        res = lp.solve(10)
        assert res.status != Status.OPTIMAL and res.value is None and res.duals is None, solver


# --- malleable's LP bounds -------------------------------------------------------------------------------

@pytest.fixture
def fresh(monkeypatch):
    """No LP bound remembered from another test."""
    monkeypatch.setattr(mlp, "_LPS", {})
    monkeypatch.setattr(mb, "_BOUNDS", {})
    mlp.order_lp_bound.cache_clear()
    mlp.lagrangian_bound.cache_clear()
    yield
    mlp.order_lp_bound.cache_clear()
    mlp.lagrangian_bound.cache_clear()


@pytest.mark.parametrize("solver", ALL)
def test_malleable_lp_bounds_agree_on_every_backend(solver, fresh):
    """The interval LP (on a grid within every licence) and the order LP have one optimum: every backend finds
    HiGHS's. The Lagrangian bound depends on the prices the column generation went through (the master's duals are
    not unique), so each backend's is only a valid bound: at least the closed-form one, at most the value of a
    schedule (dmr's), and within 1 % of HiGHS's."""
    inst = generate(2, 4)
    for objective in ("mean_completion", "makespan"):
        ref = mlp.interval_lp_bound(inst, objective, intervals=12)
        assert mlp.interval_lp_bound(inst, objective, intervals=12, solver=solver) == pytest.approx(ref, rel=1e-6)
        ref = mlp.order_lp_bound(inst, objective)
        assert mlp.order_lp_bound(inst, objective, solver=solver) == pytest.approx(ref, rel=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mlp.LicenceWarning)  # a grid past the licence is coarsened: said elsewhere
        priced = mlp.lagrangian_bound(inst, solver=solver)
    closed = mb.closed_form_bounds(inst)["mean_completion"]
    assert closed <= priced <= iosched.solve("malleable", inst, "dmr").objective
    assert priced == pytest.approx(mlp.lagrangian_bound(inst), rel=1e-2)


def test_a_grid_past_the_licence_is_coarsened_with_a_warning(fresh):
    """Gurobi's pip licence (2,000 variables) refuses the interval LP's first grid on 6 jobs; the grid is halved
    until the LP fits, the bound is that grid's (as HiGHS finds it on the same grid) and a warning says so."""
    inst = generate(1, 6)
    first = mlp.intervals_for(inst)
    with pytest.warns(mlp.LicenceWarning, match=rf"interval LP on {first} intervals: gurobi refused .*solved on"):
        value = mlp.interval_lp_bound(inst, "mean_completion", solver="gurobi")
    k = next(k for (_, _, k, s), v in mlp._LPS.items() if s == "gurobi" and isinstance(v, tuple))
    assert k < first and value == pytest.approx(mlp.interval_lp_bound(inst, "mean_completion", intervals=k), rel=1e-6)
    assert isinstance(mlp._LPS[(inst, "mean_completion", first, "gurobi")], LicenceLimit)  # not tried again


def test_a_refused_master_keeps_the_lagrangian_rounds_bound(fresh, monkeypatch):
    """Any prices give a bound: where the backend refuses the growing master LP, the best round's bound stays."""
    inst = generate(1, 6)
    calls = []
    real = LP.solve

    def refuse_the_third(self, time_limit):
        if self.algorithm == "primal":
            calls.append(1)
            if len(calls) == 3:
                raise LicenceLimit("refused for the test")
        return real(self, time_limit)

    monkeypatch.setattr(LP, "solve", refuse_the_third)
    with pytest.warns(mlp.LicenceWarning, match="the best bound of the rounds so far is kept"):
        value = mlp.lagrangian_bound(inst)
    assert len(calls) == 3 and mb.closed_form_bounds(inst)["mean_completion"] < value
    assert value <= mlp.order_lp_bound(inst, "mean_completion") * (1 + 1e-6)


@pytest.fixture
def built_on(monkeypatch):
    """The backend of every LP built during the test, in order."""
    seen = []
    real = LP.__init__

    def spy(self, backend="highs", algorithm="dual"):
        seen.append(backend)
        real(self, backend, algorithm)

    monkeypatch.setattr(LP, "__init__", spy)
    return seen


@pytest.mark.parametrize("solver", ["scip", "xpress"])
def test_a_malleable_method_and_its_attached_bound_run_their_lps_on_the_profiles_solver(solver, fresh, built_on):
    seen = built_on
    res = iosched.solve("malleable", "random:0:2:grid", "milp", unit=2.0, profile=f"quick:{solver}")
    assert res.status in (Status.OPTIMAL, Status.FEASIBLE) and res.bound is not None and res.bound <= res.objective
    assert seen and set(seen) == {solver}
    assert f"(solved by {solver})" in res.info["gap_against"] or "closed form" in res.info["gap_against"]
    seen.clear()
    res = iosched.solve("malleable", "random:0:2:grid", "dmr")  # a method with no profile: HiGHS
    assert set(seen) <= {"highs"}


# --- periodic's compaction LP ----------------------------------------------------------------------------

@pytest.mark.parametrize("solver", ALL)
def test_the_compaction_lp_gives_one_period_on_every_backend(solver):
    from iosched.instances.periodic import paper_set
    from iosched.models.periodic_trace import compaction_lp

    inst = paper_set(9)
    found = iosched.solve("periodic", inst, "persched")
    ref = compaction_lp(inst, found.solution, 30)
    other = compaction_lp(inst, found.solution, 30, solver)
    assert ref is not None and other is not None
    assert other.period == pytest.approx(ref.period, rel=1e-6) and other.period <= found.solution.period * (1 + 1e-9)


def test_trace_compact_runs_its_lps_on_the_profiles_solver_and_says_what_was_refused(monkeypatch):
    import iosched.models.periodic_trace as pt

    seen = []

    def refusing(instance, pattern, time_limit, solver="highs"):
        seen.append(solver)
        raise LicenceLimit(f"{solver} refused the model (test)")

    monkeypatch.setattr(pt, "compaction_lp", refusing)
    res = iosched.solve("periodic", "paper:set9", "trace-compact", profile="quick:scip", candidates=3)
    assert set(seen) == {"scip"} and res.solution is not None  # PerSched's own pattern remains
    assert res.info["refused"].startswith(f"{len(seen)} compaction LPs refused by scip, the first: scip refused")
    assert not math.isnan(res.objective)


def test_each_solve_gets_its_own_time_limit():
    """HiGHS counts its time limit over every run of one model: each solve must still get the limit it is given
    (column generation solves one LP hundreds of times). Eight solves from scratch of about 0.2 s each, each
    given 1 s: more than 1 s in all on HiGHS's clock. On a busy machine one solve may itself take more than its
    second: a time limit is then right, so a solve is judged by the time it got (a clock counting every run
    would stop a later solve at once, far inside its own second)."""
    c, A, lo, hi = random_lp(5, 150, 600)
    lp = LP("highs", "primal")
    lp.add_rows(lo, hi)
    lp.add_cols(c, 0.0, np.inf, A)
    for _ in range(8):
        start = time.perf_counter()
        status = lp.solve(1.0).status
        own = time.perf_counter() - start
        assert status == Status.OPTIMAL or (status == Status.TIME_LIMIT and own >= 0.9), (status, own)
        lp.model.clearSolver()  # from scratch each time, so that HiGHS's run clock grows
    assert lp.model.getRunTime() > 1.0


def test_a_free_row_is_no_constraint_on_any_backend():
    for solver in ALL:
        lp = LP(solver)
        lp.add_rows([-np.inf, 1.0], [np.inf, np.inf])  # a free row, then x0 + x1 >= 1
        lp.add_cols([1.0, 2.0], 0.0, np.inf, sp.csc_matrix(np.array([[5.0, -3.0], [1.0, 1.0]])))
        res = lp.solve(10)
        assert res.status == Status.OPTIMAL and res.value == pytest.approx(1.0), solver
        assert res.duals[0] == pytest.approx(0.0, abs=1e-9), solver


def test_the_bound_command_solves_the_lps_on_the_solver_named(fresh, built_on, capsys):
    import json

    from iosched.cli import main

    seen = built_on
    assert main(["bound", "malleable", "random:0:3", "--solver", "xpress", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["bounds"]
    assert set(seen) == {"xpress"} and out["mean_completion_lp"] == pytest.approx(525.4909930005, rel=1e-6)
    with pytest.raises(SystemExit) as stop:
        main(["bound", "malleable", "random:0:3", "--solver", "glpk"])
    assert stop.value.code == 2 and "invalid choice: 'glpk'" in capsys.readouterr().err

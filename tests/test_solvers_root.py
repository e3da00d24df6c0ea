"""LP relaxations and root bounds on every installed backend (issue 50 item 3, for issue 48's formulation
study): the LP relaxation of a knapsack is its greedy fraction (hand-computable), and the dual bound after
the root node lies between the LP relaxation and the optimum, for a Pyomo model and for an array model."""

import shutil

import numpy as np
import pyomo.environ as pe
import pytest

from iosched.models.matrix import Matrix
from iosched.models.matrix import solve as solve_matrix
from iosched.solvers import BACKENDS, Profile, Stop, solve_pyomo, solve_relaxation
from iosched.status import Status

ALL = [name for name in BACKENDS if name != "cbc" or shutil.which("cbc")]  # see test_solvers_backends

VALUES = [10, 13, 7, 8, 2, 9, 11, 4, 6, 5]
WEIGHTS = [5, 7, 4, 5, 1, 6, 8, 3, 5, 4]
CAPACITY = 20


def _greedy_fraction() -> float:
    """The LP relaxation of the 0/1 knapsack: items by value per weight, the last one cut (Dantzig's bound)."""
    left, value = CAPACITY, 0.0
    for v, w in sorted(zip(VALUES, WEIGHTS), key=lambda vw: -vw[0] / vw[1]):
        take = min(1.0, left / w)
        value, left = value + take * v, left - take * w
    return value


def _knapsack():
    m = pe.ConcreteModel()
    m.x = pe.Var(range(len(VALUES)), domain=pe.Binary)
    m.c = pe.Constraint(expr=sum(w * m.x[i] for i, w in enumerate(WEIGHTS)) <= CAPACITY)
    m.o = pe.Objective(expr=sum(v * m.x[i] for i, v in enumerate(VALUES)), sense=pe.maximize)
    return m


def _profile(solver: str) -> Profile:
    return Profile("test", 30.0, 0.0, 1, 0, solver=solver)


@pytest.mark.parametrize("solver", ALL)
def test_the_lp_relaxation_of_a_knapsack_is_its_greedy_fraction(solver):
    expected = _greedy_fraction()  # 42.75: items 4, 0, 2, 1 whole (ratios 2, 2, 1.75, 1.857), then 3/5 of item 3
    m = _knapsack()
    out = solve_relaxation(m, _profile(solver))
    assert out.status == Status.OPTIMAL and out.objective == pytest.approx(expected, rel=1e-7), solver
    assert out.wall_time_s > 0 and all(v.is_binary() and v.value is None for v in m.x.values())  # m untouched
    best = solve_pyomo(m, _profile(solver))
    assert best.objective < expected and best.objective == pytest.approx(36.0)  # brute force: see below
    mat = Matrix()
    cols = mat.cols(len(VALUES), 0, 1, integer=True, cost=-np.array(VALUES, dtype=float))
    mat.row(cols, WEIGHTS, hi=CAPACITY)
    out, x = solve_matrix(mat, _profile(solver), relax=True)
    assert out.status == Status.OPTIMAL and out.objective == pytest.approx(-expected, rel=1e-7), solver
    assert x is not None and 0 < (x % 1).max()  # a fractional item


def test_the_knapsacks_optimum_by_brute_force():
    from itertools import product

    best = max(sum(v for v, t in zip(VALUES, take) if t) for take in product((0, 1), repeat=len(VALUES))
               if sum(w for w, t in zip(WEIGHTS, take) if t) <= CAPACITY)
    assert best == 36


def _three_rows(n=60, seed=3):
    """A 0/1 knapsack with three resources (each at a third of its total), hard enough that every backend
    works a root node before it is done."""
    rng = np.random.default_rng(seed)
    w, v = rng.integers(20, 60, (3, n)), rng.integers(10, 50, n)
    return w, v, w.sum(axis=1) / 3.0


def _lp_value(w, v, cap) -> float:
    """The LP relaxation by scipy's linprog, a solver apart from the backends (minimising -value)."""
    from scipy.optimize import linprog

    res = linprog(-v, A_ub=w, b_ub=cap, bounds=[(0, 1)] * len(v), method="highs")
    assert res.status == 0
    return res.fun


@pytest.mark.parametrize("solver", ALL)
def test_the_root_bound_lies_between_the_lp_relaxation_and_the_optimum(solver):
    """Minimised (-value) as an array model and maximised as a Pyomo model: lp <= root <= optimum for the
    minimum, optimum <= root <= lp for the maximum; the optimum HiGHS's."""
    w, v, cap = _three_rows()
    lp = _lp_value(w, v, cap)
    b = BACKENDS[solver]
    assert b.root_bound, f"{solver}: {b.root_why}"  # every MILP backend here reports one
    mat = Matrix()
    cols = mat.cols(len(v), 0, 1, integer=True, cost=-v.astype(float))
    for k in range(3):
        mat.row(cols, w[k], hi=cap[k])
    ref, _ = solve_matrix(mat, _profile("highs"))
    out, _ = solve_matrix(mat, _profile(solver), root=True)
    assert out.status == Status.OPTIMAL and out.objective == pytest.approx(ref.objective, rel=1e-9), solver
    assert out.root_bound is not None, (solver, out.root_why)
    assert lp - 1e-6 <= out.root_bound <= out.objective + 1e-6, (solver, lp, out.root_bound, out.objective)

    m = pe.ConcreteModel()
    m.x = pe.Var(range(len(v)), domain=pe.Binary)
    m.c = pe.Constraint(range(3), rule=lambda m, k: sum(int(w[k, i]) * m.x[i] for i in range(len(v))) <= cap[k])
    m.o = pe.Objective(expr=sum(int(v[i]) * m.x[i] for i in range(len(v))), sense=pe.maximize)
    out = solve_pyomo(m, _profile(solver), root=True)
    assert out.status == Status.OPTIMAL and out.objective == pytest.approx(-ref.objective, rel=1e-9), solver
    assert out.root_bound is not None, (solver, out.root_why)
    assert out.objective - 1e-6 <= out.root_bound <= -lp + 1e-6, (solver, -lp, out.root_bound, out.objective)


def test_a_root_bound_not_asked_for_is_not_read_and_an_lp_has_none():
    m = _knapsack()
    out = solve_pyomo(m, _profile("highs"))
    assert out.root_bound is None and out.root_why == ""
    for v in m.x.values():
        v.domain = pe.UnitInterval  # an LP: no root node to report
    out = solve_pyomo(m, _profile("highs"), root=True)
    assert out.stop is Stop.OPTIMAL and out.root_bound is None and "no root node" in out.root_why

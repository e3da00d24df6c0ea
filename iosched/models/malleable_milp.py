"""The time-indexed MILP over malleable-job schedules, a cross-check of :mod:`iosched.models.malleable_cpsat`
on the grid and in the scope of :mod:`iosched.models.malleable_grid` (no segment limit).

``build_milp``: numpy arrays handed to HiGHS (as a Pyomo model to write), one slot per unit: per
job, slot and size a run state, start and finish arcs, and resize arcs p -> q that
leave a run at a check (slot start S + k period, S the start slot) and enter the run at
q after the cost, holding max(p, q) meanwhile.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from iosched.core import MethodOutput, RunContext, Status, register
from iosched.instances.malleable import MalleableInstance
from iosched.models.covers import cardinality_cuts
from iosched.models.malleable_bounds import BOUND_SHARE, bound
from iosched.models.malleable_grid import (
    Grid,
    Objective,
    Unit,
    check_model_params,
    describe,
    grid_output,
    grid_run,
    make_grid,
    start_plans,
)
from iosched.models.matrix import Matrix
from iosched.models.matrix import solve as solve_matrix
from iosched.solvers import Deadline, load_profile

MAX_SLOTS_MILP = 5_000
# columns the milp method hands to HiGHS: beyond, its presolve overruns the time limit (benchmarks/speed.md,
# constants)
MAX_MILP_COLUMNS = 300_000


def build_milp(instance: MalleableInstance, unit: float | None = None, objective: str = "mean_completion"):
    """The time-indexed cross-check (module docstring) as a Pyomo ``ConcreteModel`` (one variable
    ``x[k]`` per column of :func:`milp_model`'s arrays), to inspect or write as LP or MPS."""
    check_model_params(1, unit, objective)
    grid = make_grid(instance, unit, max_slots=MAX_SLOTS_MILP)
    return milp_model(instance, grid, objective)[0].pyomo("malleable-milp")


def milp_variables(instance: MalleableInstance, grid: Grid) -> int:
    """The number of columns :func:`_milp` builds for the mean completion time: y, s, f per run slot
    and size, g per resize, z per check slot (the makespan adds one)."""
    runs = arcs = checks = 0
    for j, job in enumerate(instance.jobs):
        runs += max(grid.horizon - grid.arrival[j], 0) * len(job.sizes)
        first = grid.arrival[j] + grid.period[j]  # resizes and checks at slots first <= t < H (- cost)
        checks += max(grid.horizon - first, 0)
        arcs += sum(max(grid.horizon - c - first, 0) for (p, q), c in grid.cost[j].items() if p != q)
    return 3 * runs + arcs + checks


def milp_model(instance: MalleableInstance, grid: Grid, objective: str, covers: bool = False,
               earliest: bool = False) -> tuple[Matrix, list[dict]]:
    """The time-indexed MILP as arrays, and per job its columns: ``y``, ``s``, ``f`` (slots from its
    arrival x sizes), ``z`` (its check slots a + P ...) and ``g`` ((p, q) -> slots from its arrival,
    columns). ``covers`` and ``earliest`` add valid inequalities (:func:`add_covers`, :func:`add_earliest`).

    Per job j, slot t >= a_j and size p: y (runs at p in slot t), s (starts at p with slot t),
    f (ends at p with slot t), binary; per resize p -> q at slot t (t - a_j >= P_j, t + cost < H)
    a binary g, holding max(p, q) nodes for its cost. Rows: flow y_t = y_(t-1) - f_(t-1) + s_t
    - g out + g in; leave f_t + g out of t+1 <= y_t; one start, one end; the work; N nodes per
    slot; a resize only at a check: g at t <= z_t, where z_t = z_(t-P) + sum_p s_(t-P) counts the
    starts P, 2P, ... slots before t (a continuous column per slot; one start per job makes it
    0 or 1). Built from numpy blocks: random:1:8 (1.1 million columns) in about a second.
    """
    H, M = grid.horizon, Matrix()
    cols: list[dict[str, Any]] = []  # per job: its column blocks y, s, f, z and g[(p, q)] = (slots, columns)
    capacity = M.rows(H, hi=instance.nodes)
    ends = []  # per job: its f columns and their slot + 1
    for j, job in enumerate(instance.jobs):
        a, P, S, sizes = grid.arrival[j], grid.period[j], len(job.sizes), np.array(job.sizes)
        T = H - a
        slot = np.repeat(np.arange(a, H) + 1, S).reshape(T, S)
        y, s = M.cols(T * S, 0, 1).reshape(T, S), M.cols(T * S, 0, 1).reshape(T, S)
        f = M.cols(T * S, 0, 1, cost=slot.ravel() if objective != "makespan" else 0.0).reshape(T, S)
        cols.append({"y": y, "s": s, "f": f, "z": np.zeros(0, dtype=np.int64), "g": {}})
        ends.append((f, slot))
        flow, leave = M.rows(T * S, 0, 0).reshape(T, S), M.rows(T * S, hi=0).reshape(T, S)
        M.add(flow, y, 1)
        M.add(flow, s, -1)
        M.add(flow[1:], y[:-1], -1)
        M.add(flow[1:], f[:-1], 1)
        M.add(leave, f, 1)
        M.add(leave, y, -1)
        M.add(M.rows(1, 1, 1), s.ravel(), 1)
        M.add(M.rows(1, 1, 1), f.ravel(), 1)
        M.add(M.rows(1, lo=grid.work[j]), y, np.array(grid.rate[j])[None, :])
        M.add(capacity[a:, None], y, sizes[None, :])
        L = H - a - P  # check slots a + P .. H - 1
        if L <= 0:
            continue
        z, count, check = M.cols(L, 0, 1, integer=False), M.rows(L, 0, 0), M.rows(L, hi=0)
        cols[-1]["z"] = z
        M.add(count, z, 1)
        M.add(count[P:], z[:-P], -1)
        M.add(count[:, None], s[:L], -1)  # s at slot (a + P + k) - P
        M.add(check, z, -1)
        for (p, q), c in grid.cost[j].items():
            k = np.arange(P, T - c)  # slot a + k, with a + k + c < H
            if p == q or not len(k):
                continue
            i, i2 = job.sizes.index(p), job.sizes.index(q)
            g = M.cols(len(k), 0, 1)
            cols[-1]["g"][(p, q)] = (k, g)
            M.add(flow[k, i], g, 1)
            M.add(flow[k + c, i2], g, -1)
            M.add(leave[k - 1, i], g, 1)
            M.add(check[k - P], g, 1)
            for tau in range(c):
                M.add(capacity[a + k + tau], g, max(p, q))
    if objective == "makespan":
        span = M.cols(1, 0, math.inf, integer=False, cost=1.0)
        for f, slot in ends:
            row = M.rows(1, lo=0)
            M.add(row, span, 1)
            M.add(row, f, -slot)
    if covers:
        add_covers(M, capacity, instance.nodes)
    if earliest:
        add_earliest(M, instance, grid, cols)
    return M, cols


def add_covers(M: Matrix, capacity: np.ndarray, nodes: int) -> int:
    """The cover inequalities (:func:`iosched.models.covers.cardinality_cuts`) of each slot's node row
    Σ p y + Σ max(p, q) g <= N: per slot and size w, the runs and resizes holding at least w nodes there
    number at most floor(N / w). Valid for every schedule of the model (the row's binaries are a knapsack).
    Returns how many rows were added."""
    _, _, _, _, _, _, rows, cols, vals = M.arrays()
    added = 0
    inside = np.isin(rows, capacity)
    order = np.argsort(rows[inside], kind="stable")
    r, c, v = rows[inside][order], cols[inside][order], vals[inside][order]
    for row in np.unique(r):
        at = slice(np.searchsorted(r, row), np.searchsorted(r, row, side="right"))
        for items, most in cardinality_cuts(v[at], nodes):
            M.row(c[at][items], np.ones(len(items)), hi=most)
            added += 1
    return added


def add_earliest(M: Matrix, instance: MalleableInstance, grid: Grid, cols: list[dict]) -> int:
    """Per job j, no end before its shortest run: a job that ends with slot a_j + k has run in at most
    k + 1 slots at no more than its fastest rate, so k + 1 >= ceil(W_j / max rate); the row sets its f
    columns of earlier slots to 0. Valid for every schedule of the model. Returns the rows added."""
    added = 0
    for j, c in enumerate(cols):
        shortest = math.ceil(grid.work[j] / max(grid.rate[j]))
        early = c["f"][:shortest - 1].ravel()
        if len(early):
            M.row(early, np.ones(len(early)), hi=0)
            added += 1
    return added


def milp_plans(x: np.ndarray, instance: MalleableInstance, grid: Grid, cols) -> list[list[tuple[int, int, int]]]:
    plans: list[list[tuple[int, int, int]]] = []
    for j, (job, c) in enumerate(zip(instance.jobs, cols)):
        runs: list[list[int]] = []
        for k, i in zip(*np.nonzero(x[c["y"]] > 0.5)):  # slot by slot
            t, p = grid.arrival[j] + int(k), job.sizes[i]
            if runs and runs[-1][2] == p and runs[-1][1] == t:
                runs[-1][1] = t + 1
            else:
                runs.append([t, t + 1, p])
        plans.append([(s, e, p) for s, e, p in runs])
    return plans


def milp_start(m: Matrix, instance: MalleableInstance, grid: Grid, cols, plans) -> np.ndarray | None:
    """The MILP's columns for per-job runs (start, end, size) on the grid, or None where they are not
    a solution of its rows (a policy's schedule off the rounded rates, say): checked on the arrays."""
    x = np.zeros(m.columns)
    for j, (job, c, runs) in enumerate(zip(instance.jobs, cols, plans)):
        a, P, first = grid.arrival[j], grid.period[j], runs[0][0]
        for n, (rs, re, p) in enumerate(runs):
            x[c["y"][rs - a:re - a, job.sizes.index(p)]] = 1
            if n:
                k, g = c["g"].get((runs[n - 1][2], p), (np.zeros(0, dtype=np.int64), None))
                at = np.flatnonzero(k == runs[n - 1][1] - a)
                if not len(at):
                    return None
                x[g[at[0]]] = 1
        x[c["s"][first - a, job.sizes.index(runs[0][2])]] = 1
        x[c["f"][runs[-1][1] - 1 - a, job.sizes.index(runs[-1][2])]] = 1
        since = a + P + np.arange(len(c["z"])) - first  # the starts P, 2P, ... slots before each check slot
        x[c["z"]] = (since >= P) & (since % P == 0)
    lo, hi, _, _, row_lo, row_hi, rows, ent_cols, vals = m.arrays()
    activity = np.bincount(rows, weights=vals * x[ent_cols], minlength=m.row_count)
    ok = (activity >= row_lo - 1e-9).all() and (activity <= row_hi + 1e-9).all()
    return x if ok and (x >= lo).all() and (x <= hi).all() else None


@register("malleable", "milp", objective="mean_completion", exact_over="a time grid, one size per grid step")
def milp(instance: MalleableInstance, unit: Unit = None, objective: Objective = "mean_completion",
         profile: str = "default", *, context: RunContext | None = None) -> MethodOutput:
    """Time-indexed MILP (arrays handed to HiGHS, started from the best schedule on the grid that is a
    solution of it), a cross-check of cpsat for small workloads (at most MAX_MILP_COLUMNS columns).
    ``info["start"]``: that schedule (``heuristic``), its evaluated objective (``value``) and the model's
    (``model_value``, slots), and whether the backend took it and at what value (``solver_taken``,
    ``solver_value``, slots); absent without one. The result is the better of the solver's schedule and it."""
    run = grid_run(instance, load_profile(profile), objective, context)  # the whole method: grid, build and solve
    grid = make_grid(instance, unit, max_slots=MAX_SLOTS_MILP)
    describe(run, grid, objective, None, "milp")
    bound(instance, objective, Deadline(BOUND_SHARE * run.deadline.remaining()), run.profile.solver)  # for solve
    columns = milp_variables(instance, grid)
    if columns > MAX_MILP_COLUMNS:
        return MethodOutput(None, Status.TIME_LIMIT, info={"error": (
            f"the MILP was not solved: {columns:,} columns, beyond the {MAX_MILP_COLUMNS:,} within which the solver "
            f"keeps its time limit (measured on HiGHS; cpsat solves the same scope; build_milp still writes the "
            f"model)")})
    m, cols = milp_model(instance, grid, objective)
    x0 = None
    for start in start_plans(instance, grid, MAX_SLOTS_MILP, objective, run.deadline):
        x0 = milp_start(m, instance, grid, cols, start.plans)
        if x0 is not None:
            run.begin(start)  # value: the evaluator's; model_value: the model's objective (slots), as the backend's
            run.info["start"]["model_value"] = float(m.arrays()[3] @ x0)
            break
    outcome, x = solve_matrix(m, run.deadline.limit(run.profile), x0)
    plans = milp_plans(x, instance, grid, cols) if outcome.has_solution and x is not None else None  # (x with it)
    return grid_output(instance, grid, run, outcome, plans, objective)

"""CP-SAT over malleable-job schedules of at most ``segments`` segments per job, on the grid and in the
scope of :mod:`iosched.models.malleable_grid`; ``rigid-optimal`` is its one-segment case.

``build_cpsat``: per job and segment, an optional interval per ladder size
(demand: the size), consecutive sizes different; per resize a fixed-size optional
interval per (p, q) pair (demand max(p, q)); one cumulative of capacity N; segment ends
on the check clock (integer multiples of the period); work sum_k,p rate_p len_kp >= W_j;
starts at or after the arrival; jobs identical but for their arrival start in arrival order
(:func:`identical_jobs`). Minimise the sum of completions (mean completion time)
or the makespan. With one segment it is ``rigid-optimal``: each job at one size of its
ladder, no reconfiguration. Hinted (the default), the methods give the whole model half the
time left after the hint; unless CP-SAT proves the scope's optimum in it, a
large-neighbourhood search (:func:`_lns`, :func:`_searched`) goes on from its best schedule
for the rest (the same scope: a better schedule, the bound CP-SAT proved). From LNS_MIN_JOBS
jobs the whole model finds little beyond its hint in the profile's time: the search alone.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Annotated, Any

import numpy as np

from iosched.core import MethodOutput, RunContext, Status, register
from iosched.instances.malleable import MalleableInstance
from iosched.models import driver
from iosched.models.malleable_bounds import BOUND_SHARE, bound
from iosched.models.malleable_grid import (
    Grid,
    GridStart,
    Objective,
    Unit,
    check_model_params,
    describe,
    grid_output,
    grid_run,
    make_grid,
    start_plans,
)
from iosched.solvers import Deadline, SolveOutcome, load_profile, solve_cpsat
from iosched.validate import Boolean, Integer

Segments = Annotated[int, Integer(1, 50)]
Hint = Annotated[bool, Boolean()]


def cpsat_model(instance: MalleableInstance, grid: Grid, segments: int, objective: str, fixed=()):
    """The model (module docstring); ``fixed``: (start, end, nodes) blocks in grid units held by jobs
    outside it (the large-neighbourhood search's fixed part)."""
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    m.name = f"malleable-cpsat-{segments}"
    H = grid.horizon
    intervals, demands, ends, jobvars = [], [], [], []
    for j, job in enumerate(instance.jobs):
        P, sizes = grid.period[j], job.sizes
        used = [m.new_constant(1)] + [m.new_bool_var(f"used_{j}_{k}") for k in range(1, segments)]
        x = [{p: m.new_bool_var(f"x_{j}_{k}_{p}") for p in sizes} for k in range(segments)]
        rs = [m.new_int_var(grid.arrival[j] if k == 0 else 0, H, f"rs_{j}_{k}") for k in range(segments)]
        re = [m.new_int_var(0, H, f"re_{j}_{k}") for k in range(segments)]
        ln = [{p: m.new_int_var(0, H, f"len_{j}_{k}_{p}") for p in sizes} for k in range(segments)]
        steps = [m.new_int_var(0, H // P + 1, f"m_{j}_{k}") for k in range(segments)]
        y: list[dict[tuple[int, int], cp_model.IntVar]] = [{} for _ in range(segments)]
        for k in range(segments):
            m.add(sum(x[k].values()) == used[k])
            if k:
                m.add_implication(used[k], used[k - 1])
            for p in sizes:
                m.add(ln[k][p] == 0).only_enforce_if(x[k][p].Not())
                intervals.append(m.new_optional_interval_var(rs[k], ln[k][p], re[k], x[k][p], f"run_{j}_{k}_{p}"))
                demands.append(p)
            m.add(re[k] - rs[k] == sum(ln[k].values()))
            if k:
                m.add(re[k] - rs[k] >= 1).only_enforce_if(used[k])
        for k in range(segments - 1):
            nxt = used[k + 1]
            y[k] = {(p, q): m.new_bool_var(f"y_{j}_{k}_{p}_{q}") for p in sizes for q in sizes if p != q}
            m.add(sum(y[k].values()) == nxt)
            for (p, q), v in y[k].items():
                m.add_implication(v, x[k][p])
                m.add_implication(v, x[k + 1][q])
                c = grid.cost[j][(p, q)]
                if c:
                    intervals.append(m.new_optional_fixed_size_interval_var(re[k], c, v, f"reconf_{j}_{k}_{p}_{q}"))
                    demands.append(max(p, q))
            cost = sum(grid.cost[j][pq] * v for pq, v in y[k].items())
            m.add(rs[k + 1] == re[k] + cost).only_enforce_if(nxt)
            m.add(re[k] == rs[0] + P + P * steps[k]).only_enforce_if(nxt)  # at a check
            m.add(rs[k + 1] == re[k]).only_enforce_if(nxt.Not())
            m.add(re[k + 1] == re[k]).only_enforce_if(nxt.Not())
        m.add(sum(grid.rate[j][i] * ln[k][p] for k in range(segments) for i, p in enumerate(sizes))
              >= grid.work[j])
        shortest = math.ceil(grid.work[j] / max(grid.rate[j]))  # redundant: no run is faster than the fastest size
        m.add(re[-1] >= rs[0] + shortest)
        m.add(sum(ln[k][p] for k in range(segments) for p in sizes) >= shortest)
        ends.append(re[-1])
        jobvars.append((used, x, rs, re, ln, steps, y))
    for start, end, nodes in fixed:
        intervals.append(m.new_fixed_size_interval_var(start, end - start, "fixed"))
        demands.append(nodes)
    m.add_cumulative(intervals, demands, instance.nodes)
    for group in identical_jobs(instance, grid):  # symmetry: starts in arrival order (see identical_jobs)
        for i, k in zip(group, group[1:]):
            m.add(jobvars[i][2][0] <= jobvars[k][2][0])
    if objective == "makespan":
        span = m.new_int_var(0, H, "makespan")
        m.add_max_equality(span, ends)
        m.minimize(span)
    else:
        m.minimize(sum(ends))
    return m, jobvars


def identical_jobs(instance: MalleableInstance, grid: Grid) -> list[list[int]]:
    """Groups (two jobs or more) of jobs identical on the grid but for their arrival: same sizes, period,
    rates, work and costs; each group in order of arrival (then index).

    CP-SAT starts a group's jobs in that order, which keeps an optimum of its scope: in any
    schedule, give the group's plans (runs, resizes; all relative to the plan's start) to its
    jobs by start, the j-th earliest start to the j-th earliest arrival. A plan is valid for any
    job of the group; the j-th earliest start s is at or after the j-th earliest arrival (the j
    plans starting by s belong to j jobs arrived by then). The nodes used at every instant, the
    ends (so their sum) and the makespan are unchanged."""
    key: dict[tuple, list[int]] = {}
    for j, job in enumerate(instance.jobs):
        same = (job.sizes, grid.period[j], tuple(grid.rate[j]), grid.work[j], tuple(sorted(grid.cost[j].items())))
        key.setdefault(same, []).append(j)
    return [sorted(g, key=lambda j: (grid.arrival[j], j)) for g in key.values() if len(g) > 1]


def _symmetric_plans(instance: MalleableInstance, grid: Grid, plans: list) -> list:
    """``plans`` with each group of identical jobs' plans given to them by start (:func:`identical_jobs`),
    so that a hint meets CP-SAT's symmetry rows."""
    out = list(plans)
    for group in identical_jobs(instance, grid):
        for j, plan in zip(group, sorted((plans[j] for j in group), key=lambda runs: runs[0][0])):
            out[j] = plan
    return out


def build_cpsat(instance: MalleableInstance, segments: int = 3, unit: float | None = None,
                objective: str = "mean_completion"):
    """The CP-SAT model (module docstring) as a ``CpModel``; ``model.named``: its grid (``grid``) and per job
    its variables (``jobs``: used, x, rs, re, len, m, y by segment, as :func:`cpsat_model` names them)."""
    check_model_params(segments, unit, objective)
    grid = make_grid(instance, unit)
    model, jobvars = cpsat_model(instance, grid, segments, objective)
    model.named = {"grid": grid, "jobs": jobvars}
    return model


def _hint(m, instance: MalleableInstance, grid: Grid, jobvars, plans, segments: int) -> None:
    for j, (job, runs) in enumerate(zip(instance.jobs, plans)):
        used, x, rs, re, ln, steps, y = jobvars[j]
        P = grid.period[j]
        for k in range(segments):
            run = runs[min(k, len(runs) - 1)]
            active = k < len(runs)
            if k:
                m.add_hint(used[k], active)
            for p in job.sizes:
                m.add_hint(x[k][p], active and run[2] == p)
                m.add_hint(ln[k][p], run[1] - run[0] if active and run[2] == p else 0)
            m.add_hint(rs[k], run[0] if active else run[1])
            m.add_hint(re[k], run[1])
            if k + 1 < len(runs):
                m.add_hint(steps[k], (run[1] - runs[0][0] - P) // P)
            if k < segments - 1:
                for (p, q), v in y[k].items():
                    m.add_hint(v, k + 1 < len(runs) and run[2] == p and runs[k + 1][2] == q)


def cpsat_plans(solver, instance: MalleableInstance, jobvars) -> list[list[tuple[int, int, int]]]:
    """Per job its runs (start, end, size) in grid units, from a solved :func:`cpsat_model`."""
    plans = []
    for job, (used, x, rs, re, *_) in zip(instance.jobs, jobvars):
        runs = []
        for k in range(len(x)):
            if solver.value(used[k]):
                p = next(p for p in job.sizes if solver.value(x[k][p]))
                runs.append((solver.value(rs[k]), solver.value(re[k]), p))
        plans.append(runs)
    return plans


def _bound_units(instance: MalleableInstance, grid: Grid, objective: str, deadline: Deadline, solver: str) -> int:
    """The problem's bound (valid for every schedule, so for the model's) on its objective in units:
    the sum of ends (mean completion) or the makespan, rounded up; computed in BOUND_SHARE of what
    ``deadline`` leaves, its LPs on backend ``solver``."""
    b = bound(instance, objective, Deadline(BOUND_SHARE * deadline.remaining()), solver)
    assert b is not None  # (None only for an objective outside MODEL_OBJECTIVES; the closed form at least)
    total = b if objective == "makespan" else b * len(instance.jobs) + sum(j.arrival for j in instance.jobs)
    return max(0, math.ceil(total / grid.unit - 1e-6))


LNS_MIN_JOBS = 13  # from this many jobs cpsat searches neighbourhoods of its start instead of the whole model
LNS_JOBS = 3  # jobs freed per neighbourhood at first; one more after a neighbourhood solved to optimality,
LNS_MAX_JOBS = 16  # one fewer after one that ran out of time (between 2 and LNS_MAX_JOBS)
LNS_STEP_S = 0.5  # s per neighbourhood at most (0.5 s and 3 jobs beat longer, larger neighbourhoods on most
#                   instances tried: benchmarks/speed.md, constants)
LNS_LEAST_S = 0.2  # s: no neighbourhood started with less time left
WHOLE_SHARE = 0.5  # of the time left after the hint: the whole model's, below LNS_MIN_JOBS jobs (the proof)
RIGID_SHARE = 0.5  # of the search's time: rigid neighbourhoods first, from a schedule without resizes (a better
#                    mean completion on every instance tried: benchmarks/speed.md, constants)


def _blocks(plans) -> list[tuple[int, int, int]]:
    """(start, end, nodes) in grid units of per-job runs and the resizes between them."""
    out = []
    for runs in plans:
        for k, (rs, re, p) in enumerate(runs):
            out.append((rs, re, p))
            if k + 1 < len(runs) and runs[k + 1][0] > re:
                out.append((re, runs[k + 1][0], max(p, runs[k + 1][2])))
    return out


def _plans_key(plans, objective: str) -> tuple[int, int]:
    """The model's objective of per-job runs in grid units (sum of ends, or makespan), then the sum of ends."""
    ends = [runs[-1][1] for runs in plans]
    return (max(ends) if objective == "makespan" else sum(ends)), sum(ends)


def _neighbourhood(rng: np.random.Generator, plans, k: int, by_time: bool) -> list[int]:
    """The jobs to free: the k whose plans lie nearest an instant drawn between the first start and the
    last end (``by_time``), or k jobs drawn at random."""
    n = len(plans)
    if not by_time:
        return sorted(rng.choice(n, size=min(k, n), replace=False).tolist())
    t = int(rng.integers(min(r[0][0] for r in plans), max(r[-1][1] for r in plans)))
    far = [max(r[0][0] - t, t - r[-1][1] + 1, 0) for r in plans]
    return sorted(np.argsort(far, kind="stable")[:k].tolist())


def _lns(instance: MalleableInstance, grid: Grid, segments: int, objective: str, plans: list,
         deadline: Deadline, prof) -> tuple[list, dict]:
    """Large-neighbourhood search from ``plans`` (a schedule of the scope): free a few jobs (those
    nearest an instant, or drawn at random, in turn), keep the others' runs as fixed blocks of nodes,
    solve the model of the freed jobs with CP-SAT (hinted with their runs, at most LNS_STEP_S s) and
    keep its schedule where the objective falls (ties: where the sum of ends falls), until the
    deadline. Seeded by the profile's seed; a schedule of the scope, never a proof."""
    rng, n = np.random.default_rng(prof.seed), len(plans)
    k, best = min(LNS_JOBS, n), _plans_key(plans, objective)
    tried = improved = 0
    while deadline.remaining() > LNS_LEAST_S:
        free = _neighbourhood(rng, plans, k, tried % 2 == 0)
        tried += 1
        sub = MalleableInstance(instance.nodes, tuple(instance.jobs[j] for j in free), instance.name)
        picked: dict[str, Any] = {f: [getattr(grid, f)[j] for j in free]
                                  for f in ("arrival", "period", "durations", "rate", "work", "cost")}
        sub_grid = replace(grid, **picked)
        m, jobvars = cpsat_model(sub, sub_grid, segments, objective,
                                 _blocks(plans[j] for j in range(n) if j not in free))
        _hint(m, sub, sub_grid, jobvars, _symmetric_plans(sub, sub_grid, [plans[j] for j in free]), segments)
        step = replace(deadline.limit(prof), time_limit=min(LNS_STEP_S, deadline.remaining()))
        outcome, solver = solve_cpsat(m, step)
        k = min(k + 1, n, LNS_MAX_JOBS) if outcome.message == "OPTIMAL" else max(2, k - 1)
        if outcome.has_solution:
            new = list(plans)
            for j, runs in zip(free, cpsat_plans(solver, sub, jobvars)):
                new[j] = runs
            key = _plans_key(new, objective)
            if key < best:
                plans, best, improved = new, key, improved + 1
    return plans, {"neighbourhoods": tried, "improved": improved, "last_size": k}


def _searched(instance, grid, segments, objective, run: driver.ExactRun, plans, whole=None) -> MethodOutput:
    """:func:`_lns` from ``plans`` until the deadline, after CP-SAT's ``whole``-model outcome if any (its
    bound is the scope's, which the search keeps). Where the scope allows resizes and ``plans`` has none,
    rigid neighbourhoods (one segment) take the first RIGID_SHARE of the time: CP-SAT solves those to
    optimality, so they grow to LNS_MAX_JOBS jobs, where neighbourhoods with segments mostly run out of
    time at 2 or 3."""
    prof, deadline = run.profile, run.deadline
    start, rigid = time.perf_counter(), {"neighbourhoods": 0, "improved": 0}
    if segments > 1 and all(len(runs) == 1 for runs in plans):
        plans, rigid = _lns(instance, grid, 1, objective, plans, Deadline(RIGID_SHARE * deadline.remaining()), prof)
    plans, search = _lns(instance, grid, segments, objective, plans, deadline, prof)
    search = {**search, "neighbourhoods": search["neighbourhoods"] + rigid["neighbourhoods"],
              "improved": search["improved"] + rigid["improved"], "rigid_neighbourhoods": rigid["neighbourhoods"]}
    value = _plans_key(plans, objective)[0]
    first = "" if whole is None else f"CP-SAT on the whole model: {whole.message} in {whole.wall_time_s:.3g} s; then "
    outcome = SolveOutcome(Status.TIME_LIMIT, value, None if whole is None else whole.bound, None,
                           time.perf_counter() - start + (0 if whole is None else whole.wall_time_s), True,
                           f"{first}large-neighbourhood search: {search['neighbourhoods']} neighbourhoods "
                           f"({search['rigid_neighbourhoods']} rigid first), {search['improved']} improved the "
                           "schedule")
    run.info["search"] = search
    run.engine = "cpsat"
    return grid_output(instance, grid, run, outcome, plans, objective)


def _solve_cpsat(instance, segments, unit, objective, profile, hint, context: RunContext | None) -> MethodOutput:
    run = grid_run(instance, load_profile(profile), objective, context)
    prof, deadline = run.profile, run.deadline
    grid = make_grid(instance, unit)
    describe(run, grid, objective, segments, "cpsat")
    run.info["hint"] = None
    if hint and len(instance.jobs) >= LNS_MIN_JOBS:  # the whole model finds little there: the search alone
        bound(instance, objective, Deadline(BOUND_SHARE * deadline.remaining()), prof.solver)  # for solve to attach
        _begin(run, start_plans(instance, grid, segments, objective, deadline)[0])
        assert isinstance(run.start, GridStart)
        return _searched(instance, grid, segments, objective, run, run.start.plans)
    m, jobvars = cpsat_model(instance, grid, segments, objective)
    m.add(m.proto.objective.offset + sum(  # the problem's bound: CP-SAT's own is weak on sums of completions
        c * m.get_int_var_from_proto_index(v) for v, c in zip(m.proto.objective.vars, m.proto.objective.coeffs))
        >= _bound_units(instance, grid, objective, deadline, prof.solver))
    hinted_plans = None
    if hint:
        start = start_plans(instance, grid, segments, objective, deadline)[0]
        _begin(run, start)
        hinted_plans = _symmetric_plans(instance, grid, start.plans)
        _hint(m, instance, grid, jobvars, hinted_plans, segments)
    limit = deadline.limit(prof)
    if hint:  # a share for the proof; the search from the best schedule found gets the rest
        limit = replace(limit, time_limit=max(0.01, WHOLE_SHARE * limit.time_limit))
    outcome, solver = run.solve_cpsat(m, limit)
    plans = cpsat_plans(solver, instance, jobvars) if outcome.has_solution else None
    if hint and outcome.status == Status.TIME_LIMIT:
        return _searched(instance, grid, segments, objective, run, plans or hinted_plans, outcome)
    return grid_output(instance, grid, run, outcome, plans, objective)


def _begin(run: driver.ExactRun, start: GridStart) -> None:
    """Start from ``start``, CP-SAT's hint (``info["hint"]``: its name)."""
    run.begin(start)
    run.info["hint"] = start.heuristic


@register("malleable", "cpsat", objective="mean_completion", exact_over="a time grid, at most `segments` runs per job")
def cpsat(instance: MalleableInstance, segments: Segments = 3, unit: Unit = None,
          objective: Objective = "mean_completion", profile: str = "default", hint: Hint = True,
          *, context: RunContext | None = None) -> MethodOutput:
    """CP-SAT over schedules of at most ``segments`` segments per job (optimal for that scope only; from
    LNS_MIN_JOBS jobs a large-neighbourhood search in that scope, without proof)."""
    return _solve_cpsat(instance, segments, unit, objective, profile, hint, context)


@register("malleable", "rigid-optimal", objective="mean_completion",
          exact_over="a time grid, one size per job and no resize")
def rigid_optimal(instance: MalleableInstance, unit: Unit = None, objective: Objective = "mean_completion",
                  profile: str = "default", hint: Hint = True, *, context: RunContext | None = None) -> MethodOutput:
    """The best rigid schedule: each job at one ladder size, no reconfiguration (CP-SAT, one segment)."""
    return _solve_cpsat(instance, 1, unit, objective, profile, hint, context)

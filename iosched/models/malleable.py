"""Exact models of malleable-job schedules, and bounds valid for every schedule.

**Bounds** (closed form, :func:`closed_form_bounds`; the problem's ``bound`` is the largest of
these, the interval LP's, on up to six jobs the completion-order LP's and, for the mean
completion, the Lagrangian one, :mod:`iosched.models.malleable_lp`): a job needs at least Tmin_j
= min_p runtime_j(p) seconds and min_p p runtime_j(p) node-seconds (a job's area at p nodes is p
runtime(p) for the whole work; any mix of sizes and costs takes at least the smallest). So C_j
>= a_j + Tmin_j; and the nodes form one machine of speed N on which every schedule is a
preemptive schedule of the areas, so the sum of completions is at least that of SRPT on the
areas with the release dates (optimal for 1|r_j, pmtn|ΣC_j), and the makespan at least max_t (t
+ area released from t on / N).

**Scope of the exact models.** Both work on a time grid of ``unit`` seconds: arrivals
and costs rounded up to it, and progress per unit at p nodes rounded down to an integer
multiple of 1/W_j (exact when every run time is a whole number of units: W_j is then
the lcm of the run times in units), so that a model's schedule is a valid schedule; the
converter ends each job exactly when its work is done. A job runs in at most
``segments`` segments, each at one ladder size; between two, a resize at one of the job's
checks (start + k period, k >= 1; a run of at least one unit follows every resize, so
the checks during a resize are skipped, as the evaluator requires), holding max(p, q)
nodes for its cost; jobs end by the horizon H (the
longest of a serial rigid schedule after the last arrival and the DMR and rigid FCFS
schedules). Within that scope a proven optimum is optimal, for that scope only: the
optimum over every schedule may be lower. The methods put the model's own bound in
``info`` beside its scope; the Result's bound is the problem's (valid for every schedule).

* ``build_cpsat``: CP-SAT. Per job and segment, an optional interval per ladder size
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
* ``build_milp``: the time-indexed cross-check (numpy arrays handed to HiGHS; as a Pyomo model
  to write), one slot per unit: per
  job, slot and size a run state, start and finish arcs, and resize arcs p -> q that
  leave a run at a check (slot start S + k period, S the start slot) and enter the run at
  q after the cost, holding max(p, q) meanwhile. No segment limit.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Annotated

import numpy as np

from iosched.core import BOUND_END, MethodOutput, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.malleable import Interval, Schedule
from iosched.heuristics.malleable_sim import simulate
from iosched.instances.malleable import MalleableInstance, Runtime
from iosched.models.matrix import Matrix
from iosched.models.matrix import solve as solve_matrix
from iosched.solvers import Deadline, SolveOutcome, load_profile, solve_cpsat
from iosched.validate import Boolean, Integer, Number, OneOf, choice, integer, number

MAX_SLOTS_CPSAT = 2_000_000
MAX_SLOTS_MILP = 5_000
# columns the milp method hands to HiGHS: beyond, its presolve overruns the time limit (limit 10 s, measured
# 2026-11-25: 288,871 columns ran 10.8 s, 670,104 columns 25.4 s, 1,140,674 columns 54 s with a 20 s limit)
MAX_MILP_COLUMNS = 300_000
MAX_LCM = 10**9
INEXACT_SCALE = 1 << 20
MODEL_OBJECTIVES = ("mean_completion", "makespan")

Segments = Annotated[int, Integer(1, 50)]
Unit = Annotated[float | None, Number(0, 1e9, lo_open=True)]  # seconds per grid step; None: default_unit
Objective = Annotated[str, OneOf(MODEL_OBJECTIVES)]
Hint = Annotated[bool, Boolean()]

# --- bounds ---------------------------------------------------------------------------------------


def job_minima(instance: MalleableInstance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per job: arrival (s), shortest run time (s), smallest area (node-seconds)."""
    a = np.array([j.arrival for j in instance.jobs], dtype=float)
    t = np.array([min(j.times) for j in instance.jobs], dtype=float)
    area = np.array([min(p * x for p, x in zip(j.sizes, j.times)) for j in instance.jobs], dtype=float)
    return a, t, area


def srpt_completions(release: np.ndarray, work: np.ndarray) -> np.ndarray:
    """Completion times of preemptive SRPT on one unit-speed machine (optimal for the sum)."""
    order = np.argsort(release, kind="stable")
    done = np.zeros(len(work))
    heap: list[tuple[float, int]] = []
    t, i, n = 0.0, 0, len(work)
    while i < n or heap:
        if not heap:
            t = max(t, release[order[i]])
        while i < n and release[order[i]] <= t:
            heapq.heappush(heap, (work[order[i]], order[i]))
            i += 1
        left, j = heapq.heappop(heap)
        horizon = release[order[i]] if i < n else math.inf
        if t + left <= horizon:
            t += left
            done[j] = t
        else:
            heapq.heappush(heap, (left - (horizon - t), j))
            t = horizon
    return done


def closed_form_bounds(instance: MalleableInstance) -> dict:
    """Lower bounds (s) valid for every schedule: per-job and area bounds (module docstring)."""
    a, t, area = job_minima(instance)
    n, N = len(a), instance.nodes
    per_job = float(np.mean(t))
    srpt = float(np.mean(srpt_completions(a, area / N) - a))
    order = np.argsort(a)
    tail = np.cumsum((area[order] / N)[::-1])[::-1]  # area released from each arrival on
    area_makespan = float(np.max(a[order] + tail))
    return {"mean_completion": max(per_job, srpt), "mean_completion_per_job": per_job,
            "mean_completion_srpt_area": srpt, "makespan": max(float(np.max(a + t)), area_makespan),
            "makespan_per_job": float(np.max(a + t)), "makespan_area": area_makespan, "jobs": n}


_BOUNDS: dict = {}  # (instance, objectives) -> (bounds, the seconds they had: inf without a deadline); the last 16
BOUND_SHARE = 0.25  # of its budget: the problem's bound that cpsat, rigid-optimal and milp compute first (to
#                     bound their own models; solve then attaches it, remembered, as the Result's)


def bounds(instance: MalleableInstance, objectives: tuple[str, ...] = MODEL_OBJECTIVES,
           deadline: Deadline | None = None) -> dict:
    """Every lower bound (s) valid for every schedule: the closed-form ones, the interval LP's,
    (up to ORDER_MAX_JOBS jobs) the completion-order LP's for ``objectives`` and, for the mean
    completion, the Lagrangian one (:mod:`iosched.models.malleable_lp`; None where HiGHS did not
    finish, the LP would be too large or ``deadline`` came first), and under ``mean_completion`` /
    ``makespan`` the largest, its name under ``..._from``. Remembered: bounds already computed for the
    instance with at least as much time are returned as they are."""
    from iosched.models.malleable_lp import interval_lp_bound, lagrangian_bound, order_lp_bound

    key = (instance, tuple(objectives))
    budget = math.inf if deadline is None else deadline.remaining()
    known = _BOUNDS.get(key)
    if known is not None and known[1] >= budget:
        return dict(known[0])
    out = closed_form_bounds(instance)
    for objective in objectives:
        out[f"{objective}_from"] = "closed form (per job, area)"
        lp = out[f"{objective}_lp"] = interval_lp_bound(instance, objective, deadline=deadline)
        order = out[f"{objective}_order_lp"] = order_lp_bound(instance, objective, deadline)
        priced = None
        if objective == "mean_completion":  # none for the makespan
            priced = out["mean_completion_lagrangian"] = lagrangian_bound(instance, deadline=deadline)
        for value, name in ((lp, "interval LP"), (order, "completion-order LP"), (priced, "Lagrangian")):
            if value is not None and value > out[objective]:
                out[objective], out[f"{objective}_from"] = value, name
    if len(_BOUNDS) >= 16:
        del _BOUNDS[next(iter(_BOUNDS))]
    _BOUNDS[key] = (dict(out), budget)
    return out


def bound(instance: MalleableInstance, objective: str, deadline: Deadline | None = None) -> float | None:
    """The largest lower bound on ``objective`` valid for every schedule (None where there is none),
    computed by ``deadline`` (default: by the end of the running method's budget when
    :func:`iosched.solve` attaches it, else without one)."""
    if objective not in MODEL_OBJECTIVES:
        return None
    if deadline is None and BOUND_END.get() is not None:
        deadline = Deadline(0.0, BOUND_END.get())
    return bounds(instance, (objective,), deadline)[objective]


def gap_reference(instance: MalleableInstance, objective: str) -> str:
    """What the problem's bound on ``objective`` is, in words (the one :func:`bound` last computed)."""
    if objective not in MODEL_OBJECTIVES:
        return ""
    known = _BOUNDS.get((instance, (objective,)))
    which = (known[0] if known is not None else bounds(instance, (objective,)))[f"{objective}_from"]
    return f"the {which} bound on the {objective.replace('_', ' ')}, valid for every schedule"


# --- the grid both models share --------------------------------------------------------------------


@dataclass
class Grid:
    """An instance on a grid of ``unit`` seconds: every quantity in whole units (see the module docstring)."""

    unit: float
    horizon: int  # H: units
    arrival: list[int]
    period: list[int]
    durations: list[list[float]]  # run time in units, per job and ladder size
    rate: list[list[int]]  # progress per unit, per job and size (of W_j in all)
    work: list[int]  # W_j
    cost: list[dict[tuple[int, int], int]]  # (p, q) -> units
    exact: bool  # whether rates and costs are exact (nothing rounded)
    schedules: dict[str, Schedule]  # DMR's and rigid FCFS's, on the instance
    fallback: Schedule  # rigid FCFS on the rounded data: on the grid, in the models' scope

    def scope(self, segments: int | None) -> str:
        count = "any number of segments" if segments is None else f"at most {segments} segment(s)"
        return (f"schedules of {count} per job on a {self.unit:g} s grid ending by "
                f"{self.horizon * self.unit:g} s" + ("" if self.exact else ", run times and costs rounded up"))


def _micro(x: float) -> Fraction:
    return Fraction(round(x * 1_000_000), 1_000_000)


def _gcd(values) -> Fraction:
    g = Fraction(0)
    for v in values:
        if v:
            g = Fraction(math.gcd(g.numerator * v.denominator, v.numerator * g.denominator),
                         g.denominator * v.denominator)
    return g


def default_unit(instance: MalleableInstance, schedules: dict[str, Schedule] | None = None) -> float:
    """The largest grid dividing every period; also every arrival, cost, run time and every
    time in ``schedules`` (default: DMR's and rigid FCFS's, so that the models hold them) when
    that keeps the horizon under the CP-SAT limit (to a microsecond)."""
    periods = _gcd(_micro(j.period) for j in instance.jobs)
    rest = [_micro(j.arrival) for j in instance.jobs]
    for j in instance.jobs:
        rest += [_micro(t) for t in j.times]
        rest += [_micro(j.cost(p, q)) for p in j.sizes for q in j.sizes if p != q]
    for sched in (_schedules(instance) if schedules is None else schedules).values():
        rest += [_micro(t) for ivs in sched.jobs.values() for iv in ivs for t in (iv.start, iv.end)]
    fine = _gcd([periods, *rest])
    span = max(j.arrival for j in instance.jobs) + sum(min(j.times) for j in instance.jobs)
    return float(fine) if span / float(fine) <= MAX_SLOTS_CPSAT / 10 else float(periods)


def _schedules(instance: MalleableInstance) -> dict[str, Schedule]:
    return {"dmr": simulate(instance, "dmr", "easy").schedule,
            "rigid-fcfs": simulate(instance, "rigid", "fcfs").schedule}


def _makespan(schedule: Schedule) -> float:
    return max(ivs[-1].end for ivs in schedule.jobs.values())


def make_grid(instance: MalleableInstance, unit: float | None = None, max_slots: int = MAX_SLOTS_CPSAT) -> Grid:
    """Scale ``instance`` to a grid of ``unit`` seconds (default: :func:`default_unit`)."""
    schedules = _schedules(instance)
    u = default_unit(instance, schedules) if unit is None else unit
    eps = 1e-9
    serial = max(j.arrival for j in instance.jobs) + sum(min(j.times) for j in instance.jobs)
    if not serial / u <= max_slots:  # the horizon is at least this: refused before anything is scaled (or overflows)
        raise ParameterError(f"the horizon is at least {serial / u:.3g} units of {u:g} s, beyond {max_slots}: the "
                             f"instance is too large for this exact model (a coarser unit, or fewer jobs)")
    for j in instance.jobs:
        steps = j.period / u  # a whole number >= 1 (a unit longer than a period does not divide it)
        if not math.isfinite(steps) or round(steps) < 1 or abs(steps - round(steps)) > 1e-6:
            raise ParameterError(f"unit must divide every period: job {j.id} has period {j.period:g} s, "
                                 f"unit = {u!r}")
    exact = True
    durations, rates, works, costs = [], [], [], []
    for j in instance.jobs:
        d = [t / u for t in j.times]
        durations.append(d)
        whole = [round(x) for x in d]
        if all(abs(x - w) <= 1e-9 * max(1.0, x) and w >= 1 for x, w in zip(d, whole)) and math.lcm(*whole) <= MAX_LCM:
            w = math.lcm(*whole)
            works.append(w)
            rates.append([w // x for x in whole])
        else:
            exact = False
            works.append(INEXACT_SCALE)
            rates.append([max(1, math.floor(INEXACT_SCALE / x)) for x in d])
        c = {}
        for p in j.sizes:
            for q in j.sizes:
                if p != q:
                    raw = j.cost(p, q) / u
                    c[(p, q)] = math.ceil(raw - eps)
                    exact &= abs(raw - round(raw)) <= 1e-9
        costs.append(c)
    arrival = [math.ceil(j.arrival / u - eps) for j in instance.jobs]
    exact &= all(abs(j.arrival / u - a) <= 1e-9 for j, a in zip(instance.jobs, arrival))
    period = [round(j.period / u) for j in instance.jobs]
    # rigid FCFS on the model's own (rounded) data: a schedule on the grid whatever the instance, to hint with
    rounded = MalleableInstance(instance.nodes, tuple(
        replace(j, arrival=a * u, runtime=Runtime("table", seconds=tuple(
            (p, math.ceil(w / r) * u) for p, r in zip(j.sizes, rs))))
        for j, a, w, rs in zip(instance.jobs, arrival, works, rates)), instance.name)
    fallback = simulate(rounded, "rigid", "fcfs").schedule
    horizon = math.ceil(max([serial, _makespan(fallback), *map(_makespan, schedules.values())]) / u - eps) + 1
    if horizon > max_slots:
        raise ParameterError(f"the horizon is {horizon} units of {u:g} s, beyond {max_slots}: the instance is too "
                             f"large for this exact model (a coarser unit, or fewer jobs)")
    return Grid(u, horizon, arrival, period, durations, rates, works, costs, exact, schedules, fallback)


def plan_schedule(instance: MalleableInstance, grid: Grid, plans: list[list[tuple[int, int, int]]]) -> Schedule:
    """A schedule from per-job runs (start unit, end unit, size), resizes between them.

    Runs keep their grid times, except that the job ends exactly when its work is done
    (with rounded rates it may finish before the model says; later runs are dropped).
    """
    u, out = grid.unit, {}
    for job, runs in zip(instance.jobs, plans):
        ivs, done = [], 0.0
        for k, (rs, re, p) in enumerate(runs):
            if k:
                prev = runs[k - 1]
                if rs > prev[1]:
                    ivs.append(Interval(prev[1] * u, rs * u, max(prev[2], p), "reconfig"))
            start, end = rs * u, re * u
            step = (end - start) / job.time(p)
            if done + step >= 1 - 1e-12 or k == len(runs) - 1:
                ivs.append(Interval(start, start + (1 - done) * job.time(p), p, "run"))
                break
            ivs.append(Interval(start, end, p, "run"))
            done += step
        out[job.id] = tuple(ivs)
    return Schedule(out)


def schedule_plans(instance: MalleableInstance, grid: Grid, schedule: Schedule, segments: int):
    """The runs of ``schedule`` in grid units, if it lies on the grid with at most ``segments``
    runs per job (no stalls); else None. Used to hint the models."""
    u, plans = grid.unit, []
    for job in instance.jobs:
        ivs = schedule.jobs[job.id]
        runs = []
        for iv in ivs:
            if iv.kind == "stall":
                return None
            if iv.kind == "run":
                if runs and runs[-1][2] == iv.nodes and abs(runs[-1][1] - iv.start) < 1e-9:
                    runs[-1][1] = iv.end
                else:
                    runs.append([iv.start, iv.end, iv.nodes])
        if len(runs) > segments:
            return None
        grid_runs = []
        for s, e, p in runs:
            gs, ge = round(s / u), math.ceil(e / u - 1e-6)
            if abs(gs * u - s) > 1e-6 or ge > grid.horizon:
                return None
            grid_runs.append((gs, ge, p))
        plans.append(grid_runs)
    return plans


# --- CP-SAT ---------------------------------------------------------------------------------------


def _cpsat(instance: MalleableInstance, grid: Grid, segments: int, objective: str, fixed=()):
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
        y = [{} for _ in range(segments)]
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
    key = {}
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
    """The CP-SAT model (module docstring) as a ``CpModel``."""
    _check_model_params(segments, unit, objective)
    return _cpsat(instance, make_grid(instance, unit), segments, objective)[0]


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


def _plans_from(solver, instance: MalleableInstance, jobvars) -> list[list[tuple[int, int, int]]]:
    plans = []
    for job, (used, x, rs, re, *_) in zip(instance.jobs, jobvars):
        runs = []
        for k in range(len(x)):
            if solver.value(used[k]):
                p = next(p for p in job.sizes if solver.value(x[k][p]))
                runs.append((solver.value(rs[k]), solver.value(re[k]), p))
        plans.append(runs)
    return plans


def _check_model_params(segments, unit, objective) -> None:
    """The builders' checks (the registered methods state the same in their signatures)."""
    integer("segments", segments, 1, 50, error=ParameterError)
    if unit is not None:
        number("unit", unit, 0, 1e9, lo_open=True, error=ParameterError)
    choice("objective", objective, MODEL_OBJECTIVES, error=ParameterError)


def _scope_values(instance: MalleableInstance, grid: Grid, objective: str, value: float | None) -> float | None:
    """A model objective (units) as the problem's objective (s)."""
    if value is None:
        return None
    if objective == "makespan":
        return value * grid.unit
    return (value * grid.unit - sum(j.arrival for j in instance.jobs)) / len(instance.jobs)


def _exact_output(instance, grid, outcome, plans, objective, segments, model_name) -> MethodOutput:
    info = {"model": model_name, "scope": grid.scope(segments), "minimised": objective,
            "scope_status": outcome.status.value, "solver_status": outcome.message,
            "scope_objective": _scope_values(instance, grid, objective, outcome.objective),
            "scope_bound": _scope_values(instance, grid, objective, outcome.bound), "unit_s": grid.unit,
            "horizon_s": grid.horizon * grid.unit, "rates_exact": grid.exact,
            "solver_wall_s": outcome.wall_time_s}
    if plans is None:
        status = Status.TIME_LIMIT if outcome.status == Status.TIME_LIMIT else Status.ERROR
        info["error"] = f"no schedule: {outcome.message}"
        return MethodOutput(None, status, info=info)
    status = Status.TIME_LIMIT if outcome.status == Status.TIME_LIMIT else Status.FEASIBLE
    return MethodOutput(plan_schedule(instance, grid, plans), status, info=info)


LIST_SHARE = 0.1  # of the budget: the rigid list search on the grid that hints CP-SAT
LIST_ITERATIONS = 1000  # moves per search, LIST_RESTARTS searches (rigid-list's defaults)
LIST_RESTARTS = 10


def _list_plans(instance: MalleableInstance, grid: Grid, deadline: Deadline):
    """Rigid list scheduling with its local search (:mod:`iosched.heuristics.malleable_list`) on
    the grid's own data (arrivals and run times in whole units): one run per job, on the grid."""
    from iosched.heuristics.malleable_list import initial, restarted

    runs = [{p: math.ceil(w / r) for p, r in zip(j.sizes, rs)}
            for j, w, rs in zip(instance.jobs, grid.work, grid.rate)]
    share = Deadline(LIST_SHARE * deadline.remaining())
    _, starts, sizes, _, _ = restarted(instance.nodes, grid.arrival, runs, initial(instance), LIST_ITERATIONS,
                                       LIST_RESTARTS, 0, share)
    return [[(int(s), int(s) + runs[j][p], p)] for j, (s, p) in enumerate(zip(starts, sizes))]


def _start_plans(instance: MalleableInstance, grid: Grid, segments: int, objective: str,
                 deadline: Deadline) -> list[tuple[str, list]]:
    """Schedules on the grid to start a model from, best first by ``objective`` (evaluated): DMR's and
    rigid FCFS's where they lie on the grid in at most ``segments`` runs per job (else rigid FCFS on
    the rounded data), and the rigid list search on the grid (one run per job, its run lengths the
    rounded data's: feasible in both models)."""
    from iosched.evaluate.malleable import evaluate

    candidates = []
    for name, sched in grid.schedules.items():
        plans = schedule_plans(instance, grid, sched, segments)
        if plans is not None:
            candidates.append((getattr(evaluate(instance, sched), objective), name, plans))
    if not candidates:  # nothing the policies did is on the grid: rigid FCFS on the rounded data is
        candidates.append((getattr(evaluate(instance, grid.fallback), objective), "rigid-fcfs on the grid",
                           schedule_plans(instance, grid, grid.fallback, segments)))
    listed = _list_plans(instance, grid, deadline)
    candidates.append((getattr(evaluate(instance, plan_schedule(instance, grid, listed)), objective),
                       "rigid-list on the grid", listed))
    return [(name, plans) for _, name, plans in sorted(candidates, key=lambda c: c[0])]


def _bound_units(instance: MalleableInstance, grid: Grid, objective: str, deadline: Deadline) -> int:
    """The problem's bound (valid for every schedule, so for the model's) on its objective in units:
    the sum of ends (mean completion) or the makespan, rounded up; computed in BOUND_SHARE of what
    ``deadline`` leaves."""
    b = bound(instance, objective, Deadline(BOUND_SHARE * deadline.remaining()))
    total = b if objective == "makespan" else b * len(instance.jobs) + sum(j.arrival for j in instance.jobs)
    return max(0, math.ceil(total / grid.unit - 1e-6))


LNS_MIN_JOBS = 13  # from this many jobs cpsat searches neighbourhoods of its start instead of the whole model
LNS_JOBS = 3  # jobs freed per neighbourhood at first; one more after a neighbourhood solved to optimality,
LNS_MAX_JOBS = 16  # one fewer after one that ran out of time (between 2 and LNS_MAX_JOBS)
LNS_STEP_S = 0.5  # s per neighbourhood at most (0.5 s and 3 jobs beat 2 s and 8 jobs, or 1 s and 4, on 3 of
#                   paper:50, paper:100, random:1:50, random:2:50: 60 s each, 2026-11-27)
LNS_LEAST_S = 0.2  # s: no neighbourhood started with less time left
WHOLE_SHARE = 0.5  # of the time left after the hint: the whole model's, below LNS_MIN_JOBS jobs (the proof)
RIGID_SHARE = 0.5  # of the search's time: rigid neighbourhoods first, from a schedule without resizes (quick
#                    profile: paper:50 1,475.0 -> 1,459.7 s, random:5:50 1,450.4 -> 1,407.8, random:7:50
#                    1,470.0 -> 1,437.2; default: random:1:50 1,540.3 -> 1,466.8; 2026-11-27)


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
        sub_grid = replace(grid, **{f: [getattr(grid, f)[j] for j in free]
                                    for f in ("arrival", "period", "durations", "rate", "work", "cost")})
        m, jobvars = _cpsat(sub, sub_grid, segments, objective, _blocks(plans[j] for j in range(n) if j not in free))
        _hint(m, sub, sub_grid, jobvars, _symmetric_plans(sub, sub_grid, [plans[j] for j in free]), segments)
        step = replace(deadline.limit(prof), time_limit=min(LNS_STEP_S, deadline.remaining()))
        outcome, solver = solve_cpsat(m, step)
        k = min(k + 1, n, LNS_MAX_JOBS) if outcome.message == "OPTIMAL" else max(2, k - 1)
        if outcome.has_solution:
            new = list(plans)
            for j, runs in zip(free, _plans_from(solver, sub, jobvars)):
                new[j] = runs
            key = _plans_key(new, objective)
            if key < best:
                plans, best, improved = new, key, improved + 1
    return plans, {"neighbourhoods": tried, "improved": improved, "last_size": k}


def _searched(instance, grid, segments, objective, prof, deadline, plans, hinted, whole=None) -> MethodOutput:
    """:func:`_lns` from ``plans`` until the deadline, after CP-SAT's ``whole``-model outcome if any (its
    bound is the scope's, which the search keeps). Where the scope allows resizes and ``plans`` has none,
    rigid neighbourhoods (one segment) take the first RIGID_SHARE of the time: CP-SAT solves those to
    optimality, so they grow to LNS_MAX_JOBS jobs, where neighbourhoods with segments mostly run out of
    time at 2 or 3."""
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
    out = _exact_output(instance, grid, outcome, plans, objective, segments, "cpsat")
    out.info.update(hint=hinted, search=search)
    return out


def _solve_cpsat(instance, segments, unit, objective, profile, hint) -> MethodOutput:
    prof = load_profile(profile)
    deadline = Deadline.for_method(prof.time_limit)
    grid = make_grid(instance, unit)
    if hint and len(instance.jobs) >= LNS_MIN_JOBS:  # the whole model finds little there: the search alone
        bound(instance, objective, Deadline(BOUND_SHARE * deadline.remaining()))  # for solve to attach
        hinted, plans = _start_plans(instance, grid, segments, objective, deadline)[0]
        return _searched(instance, grid, segments, objective, prof, deadline, plans, hinted)
    m, jobvars = _cpsat(instance, grid, segments, objective)
    m.add(m.proto.objective.offset + sum(  # the problem's bound: CP-SAT's own is weak on sums of completions
        c * m.get_int_var_from_proto_index(v) for v, c in zip(m.proto.objective.vars, m.proto.objective.coeffs))
        >= _bound_units(instance, grid, objective, deadline))
    hinted = hinted_plans = None
    if hint:
        hinted, hinted_plans = _start_plans(instance, grid, segments, objective, deadline)[0]
        hinted_plans = _symmetric_plans(instance, grid, hinted_plans)
        _hint(m, instance, grid, jobvars, hinted_plans, segments)
    limit = deadline.limit(prof)
    if hint:  # a share for the proof; the search from the best schedule found gets the rest
        limit = replace(limit, time_limit=max(0.01, WHOLE_SHARE * limit.time_limit))
    outcome, solver = solve_cpsat(m, limit)
    plans = _plans_from(solver, instance, jobvars) if outcome.has_solution else None
    if hint and outcome.status == Status.TIME_LIMIT:
        return _searched(instance, grid, segments, objective, prof, deadline, plans or hinted_plans, hinted, outcome)
    out = _exact_output(instance, grid, outcome, plans, objective, segments, "cpsat")
    out.info["hint"] = hinted
    return out


@register("malleable", "cpsat", objective="mean_completion")
def cpsat(instance: MalleableInstance, segments: Segments = 3, unit: Unit = None,
          objective: Objective = "mean_completion", profile: str = "default", hint: Hint = True) -> MethodOutput:
    """CP-SAT over schedules of at most ``segments`` segments per job (optimal for that scope only; from
    LNS_MIN_JOBS jobs a large-neighbourhood search in that scope, without proof)."""
    return _solve_cpsat(instance, segments, unit, objective, profile, hint)


@register("malleable", "rigid-optimal", objective="mean_completion")
def rigid_optimal(instance: MalleableInstance, unit: Unit = None, objective: Objective = "mean_completion",
                  profile: str = "default", hint: Hint = True) -> MethodOutput:
    """The best rigid schedule: each job at one ladder size, no reconfiguration (CP-SAT, one segment)."""
    return _solve_cpsat(instance, 1, unit, objective, profile, hint)


# --- the time-indexed MILP ----------------------------------------------------------------------------


def build_milp(instance: MalleableInstance, unit: float | None = None, objective: str = "mean_completion"):
    """The time-indexed cross-check (module docstring) as a Pyomo ``ConcreteModel`` (one variable
    ``x[k]`` per column of :func:`_milp`'s arrays), to inspect or write as LP or MPS."""
    _check_model_params(1, unit, objective)
    return _milp(instance, make_grid(instance, unit, max_slots=MAX_SLOTS_MILP), objective)[0].pyomo("malleable-milp")


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


def _milp(instance: MalleableInstance, grid: Grid, objective: str) -> tuple[Matrix, list[dict]]:
    """The time-indexed MILP as arrays, and per job its columns: ``y``, ``s``, ``f`` (slots from its
    arrival x sizes), ``z`` (its check slots a + P ...) and ``g`` ((p, q) -> slots from its arrival,
    columns).

    Per job j, slot t >= a_j and size p: y (runs at p in slot t), s (starts at p with slot t),
    f (ends at p with slot t), binary; per resize p -> q at slot t (t - a_j >= P_j, t + cost < H)
    a binary g, holding max(p, q) nodes for its cost. Rows: flow y_t = y_(t-1) - f_(t-1) + s_t
    - g out + g in; leave f_t + g out of t+1 <= y_t; one start, one end; the work; N nodes per
    slot; a resize only at a check: g at t <= z_t, where z_t = z_(t-P) + sum_p s_(t-P) counts the
    starts P, 2P, ... slots before t (a continuous column per slot; one start per job makes it
    0 or 1). Built from numpy blocks: random:1:8 (1.1 million columns) in about a second.
    """
    H, M, cols = grid.horizon, Matrix(), []
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
    return M, cols


def _milp_plans(x: np.ndarray, instance: MalleableInstance, grid: Grid, cols) -> list[list[tuple[int, int, int]]]:
    plans = []
    for j, (job, c) in enumerate(zip(instance.jobs, cols)):
        runs: list[list[int]] = []
        for k, i in zip(*np.nonzero(x[c["y"]] > 0.5)):  # slot by slot
            t, p = grid.arrival[j] + int(k), job.sizes[i]
            if runs and runs[-1][2] == p and runs[-1][1] == t:
                runs[-1][1] = t + 1
            else:
                runs.append([t, t + 1, p])
        plans.append([tuple(r) for r in runs])
    return plans


def _milp_start(m: Matrix, instance: MalleableInstance, grid: Grid, cols, plans) -> np.ndarray | None:
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


@register("malleable", "milp", objective="mean_completion")
def milp(instance: MalleableInstance, unit: Unit = None, objective: Objective = "mean_completion",
         profile: str = "default") -> MethodOutput:
    """Time-indexed MILP (arrays handed to HiGHS, started from the best schedule on the grid that is a
    solution of it), a cross-check of cpsat for small workloads (at most MAX_MILP_COLUMNS columns)."""
    prof = load_profile(profile)
    deadline = Deadline.for_method(prof.time_limit)  # the whole method: grid, build and solve
    grid = make_grid(instance, unit, max_slots=MAX_SLOTS_MILP)
    bound(instance, objective, Deadline(BOUND_SHARE * deadline.remaining()))  # for solve to attach
    columns = milp_variables(instance, grid)
    if columns > MAX_MILP_COLUMNS:
        return MethodOutput(None, Status.TIME_LIMIT, info={"error": (
            f"the MILP was not solved: {columns:,} columns, beyond the {MAX_MILP_COLUMNS:,} within which HiGHS "
            f"keeps its time limit (cpsat solves the same scope; build_milp still writes the model)")})
    m, cols = _milp(instance, grid, objective)
    started = start = None
    for name, plans in _start_plans(instance, grid, MAX_SLOTS_MILP, objective, deadline):
        start = _milp_start(m, instance, grid, cols, plans)
        if start is not None:
            started = name
            break
    outcome, x = solve_matrix(m, deadline.limit(prof), start)
    plans = _milp_plans(x, instance, grid, cols) if outcome.has_solution else None
    out = _exact_output(instance, grid, outcome, plans, objective, None, "milp")
    out.info["start"] = started
    return out

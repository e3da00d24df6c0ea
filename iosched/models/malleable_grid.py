"""The time grid both exact models of malleable-job schedules share (:mod:`iosched.models.malleable_cpsat`,
:mod:`iosched.models.malleable_milp`): their scope, the schedules they start from and their output.

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Annotated

from iosched.core import MethodOutput, RunContext, Status
from iosched.errors import ParameterError
from iosched.evaluate.malleable import Interval, Schedule, evaluate
from iosched.heuristics.malleable_sim import SimResult, simulate
from iosched.instances.malleable import MalleableInstance, Runtime, RuntimeModel
from iosched.models import driver
from iosched.models.malleable_bounds import MODEL_OBJECTIVES
from iosched.models.malleable_polish import polish
from iosched.solvers import Deadline, Profile, SolveOutcome
from iosched.validate import Number, OneOf, choice, integer, number

MAX_SLOTS_CPSAT = 2_000_000
MAX_LCM = 10**9
INEXACT_SCALE = 1 << 20

Unit = Annotated[float | None, Number(0, 1e9, lo_open=True)]  # seconds per grid step; None: default_unit
Objective = Annotated[str, OneOf(MODEL_OBJECTIVES)]


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
    return {"dmr": _whole(simulate(instance, "dmr", "easy")),
            "rigid-fcfs": _whole(simulate(instance, "rigid", "fcfs"))}


def _whole(result: SimResult) -> Schedule:
    """The schedule of a simulation run without a deadline (so never stopped short of one)."""
    assert result.schedule is not None
    return result.schedule


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
        replace(j, arrival=a * u, runtime=Runtime(RuntimeModel.TABLE, seconds=tuple(
            (p, math.ceil(w / r) * u) for p, r in zip(j.sizes, rs))))
        for j, a, w, rs in zip(instance.jobs, arrival, works, rates)), instance.name)
    fallback = _whole(simulate(rounded, "rigid", "fcfs"))
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
        runs: list[list[float]] = []  # [start, end, nodes]
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


def check_model_params(segments, unit, objective) -> None:
    """The builders' checks (the registered methods state the same in their signatures)."""
    integer("segments", segments, 1, 50, error=ParameterError)
    if unit is not None:
        number("unit", unit, 0, 1e9, lo_open=True, error=ParameterError)
    choice("objective", objective, MODEL_OBJECTIVES, error=ParameterError)


def scope_value(instance: MalleableInstance, grid: Grid, objective: str, value: float | None) -> float | None:
    """A model objective (units) as the problem's objective (s): the makespan's slots, or the sum of the
    completion slots made the mean completion time."""
    if value is None:
        return None
    if objective == "makespan":
        return value * grid.unit
    return (value * grid.unit - sum(j.arrival for j in instance.jobs)) / len(instance.jobs)


def grid_run(instance: MalleableInstance, profile: Profile, objective: str,
             context: RunContext | None = None) -> driver.ExactRun:
    """The driver of a grid model's method (:mod:`iosched.models.driver`): its deadline from ``profile`` and
    the run's ``context``, schedules scored by the evaluator's ``objective``."""
    return driver.ExactRun(profile, lambda schedule: getattr(evaluate(instance, schedule), objective),
                           context=context)


def describe(run: driver.ExactRun, grid: Grid, objective: str, segments: int | None, model_name: str) -> None:
    """What the grid model is, in ``run.info``: its name, its scope, the objective it minimises, the grid."""
    run.info.update({"model": model_name, "scope": grid.scope(segments), "minimised": objective,
                     "unit_s": grid.unit, "horizon_s": grid.horizon * grid.unit, "rates_exact": grid.exact})


def grid_output(instance: MalleableInstance, grid: Grid, run: driver.ExactRun, outcome: SolveOutcome,
                plans: list | None, objective: str) -> MethodOutput:
    """The method's result from the model's ``outcome`` and its runs (``plans``, None without a schedule):
    the outcome in the shared info keys (objective and bound in the problem's units: see
    :func:`scope_value`), then the driver's settle step against the start. The scope's optimum is
    ``feasible`` (``time_limit`` where the solver stopped at its limit). For the mean completion the schedule
    is then polished off the grid (:func:`iosched.models.malleable_polish.polish`: what the grid's rounding
    left, never worse), ``info["polished"]`` saying from what to what: the model's own values stay in the
    ``model_*`` keys. The polish (one LP) may end up to POLISH_GRACE of the budget past it where the solver used
    all of it."""
    run.record(outcome, scope_value(instance, grid, objective, outcome.objective),
               scope_value(instance, grid, objective, outcome.bound))
    stopped = outcome.status == Status.TIME_LIMIT
    if plans is None:
        run.info["error"] = f"no schedule: {outcome.message}"
        return run.settle(None, Status.TIME_LIMIT, stopped, what="schedule")
    out = run.settle(plan_schedule(instance, grid, plans), Status.TIME_LIMIT if stopped else Status.FEASIBLE,
                     stopped, what="schedule")
    if objective == "mean_completion" and out.solution is not None:
        grace = Deadline(max(run.deadline.remaining(), POLISH_GRACE * run.profile.time_limit))
        polished = polish(instance, out.solution, run.profile.solver, grace)
        if polished is not out.solution:
            run.info["polished"] = {"from": evaluate(instance, out.solution).mean_completion,
                                    "to": evaluate(instance, polished).mean_completion,
                                    "how": "off the grid in continuous time: the same sizes, checks and block order "
                                           "(iosched.models.malleable_polish)"}
            out.solution = polished
    return out


POLISH_GRACE = 0.05  # of the budget: what the polish may take past it (one LP: milliseconds on 10 jobs)


@dataclass
class GridStart(driver.Start[Schedule]):
    """A schedule to start a grid model from (``solution``, scored by the evaluator in ``value``) and its runs
    on the grid (``plans``: per job, its runs as (start unit, end unit, size))."""

    plans: list = field(default_factory=list)


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


def start_plans(instance: MalleableInstance, grid: Grid, segments: int, objective: str,
                deadline: Deadline) -> list[GridStart]:
    """Schedules on the grid to start a model from, best first by ``objective`` (evaluated): DMR's and
    rigid FCFS's where they lie on the grid in at most ``segments`` runs per job (else rigid FCFS on
    the rounded data), and the rigid list search on the grid (one run per job, its run lengths the
    rounded data's: feasible in both models)."""

    candidates = []
    for name, sched in grid.schedules.items():
        plans = schedule_plans(instance, grid, sched, segments)
        if plans is not None:
            candidates.append(GridStart(name, sched, getattr(evaluate(instance, sched), objective), plans))
    if not candidates:  # nothing the policies did is on the grid: rigid FCFS on the rounded data is
        plans = schedule_plans(instance, grid, grid.fallback, segments)
        assert plans is not None  # (rigid FCFS on the rounded data lies on the grid, one run per job)
        candidates.append(GridStart("rigid-fcfs on the grid", grid.fallback,
                                    getattr(evaluate(instance, grid.fallback), objective), plans))
    listed = _list_plans(instance, grid, deadline)
    schedule = plan_schedule(instance, grid, listed)
    candidates.append(GridStart("rigid-list on the grid", schedule, getattr(evaluate(instance, schedule), objective),
                                listed))
    return sorted(candidates, key=lambda c: c.value)

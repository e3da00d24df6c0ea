"""Compaction: the shortest pattern that keeps the cyclic order of a pattern's compute starts
and ends (an LP), and PerSched's patterns compacted (``persched-compact``)."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from iosched import lazy
from iosched.core import MethodOutput, RunContext, Status, register
from iosched.errors import InstanceError, ParameterError
from iosched.evaluate.periodic import Instance as PatternInstance
from iosched.evaluate.periodic import Pattern
from iosched.heuristics.periodic_kernel import compile_kernel
from iosched.heuristics.periodic_persched import Eps, KPrime, Plan, Seconds, Workers
from iosched.instances.periodic import PeriodicInstance
from iosched.models.periodic_bounds import as_profile
from iosched.solvers import Deadline, Profile, SolveOutcome, load_profile, pyomo_highs, solve_pyomo, solve_pyomo_within
from iosched.validate import integer

if TYPE_CHECKING:
    from pyomo.environ import ConcreteModel

pe = lazy.module("pyomo.environ")

Spans = list[list[tuple[int, int]]]  # per application, per instance: (its compute start's event, its end's)
Intervals = list[tuple[int, list[int]]]  # per instance: (its application, the interval indices it spans)

# What one run may build: the compaction LP's memory, its build time in Pyomo and its handover to HiGHS
# (outside HiGHS's own time limit) per variable, measured in benchmarks/speed.md, constants.
MAX_LP_VARIABLES = 500_000  # compaction LP: K x 2 x the most instances a pattern of K' t_min can hold
SEARCH_SHARE = 0.5  # of an exact method's budget, at most this much goes to the PerSched search before it
SECONDS_PER_LP_VARIABLE = 6e-4  # building the compaction LP and loading it into HiGHS
HANDOVER_LP = 2.5  # Pyomo hands the LP to HiGHS in this multiple of its build time (a margin over the measured)


def warm_solver() -> None:
    """Import the solver layer (its first import takes seconds): methods call it inside their budget,
    before they measure what is left."""
    pyomo_highs().available()  # imports highspy


def pattern_events(instance: PeriodicInstance, pattern: Pattern) -> tuple[list[float], Spans]:
    """The compute starts and ends of ``pattern`` in cyclic order, and each instance's event indices.

    Returns (times, per application a list of (start index, end index) by compute start).
    Ends sort before starts at equal times.
    """
    T = pattern.period
    raw: list[tuple[float, int, int, int]] = []
    for k, insts in enumerate(pattern.applications):
        w = instance.applications[k].work
        for i, inst in enumerate(sorted(insts, key=lambda x: x.compute_start)):
            raw.append((inst.compute_start % T, 1, k, i))
            raw.append(((inst.compute_start + w) % T, 0, k, i))
    raw.sort()
    index = {(kind, k, i): j for j, (_, kind, k, i) in enumerate(raw)}
    spans = [[(index[1, k, i], index[0, k, i]) for i in range(len(insts))]
             for k, insts in enumerate(pattern.applications)]
    return [t for t, *_ in raw], spans


def _cyclic(a: int, b: int, n: int) -> list[int]:
    """Interval indices a, a+1, ..., b-1 (mod n); the whole cycle when a == b."""
    return [(a + j) % n for j in range((b - a) % n or n)]


def spans_to_intervals(spans: Spans, n: int) -> tuple[Intervals, Intervals]:
    """Per instance (application k, interval indices): its compute, and the window up to the next
    instance of k in which its transfer must happen (cyclically over the n intervals)."""
    computes: Intervals = []
    windows: Intervals = []
    for k, sp in enumerate(spans):
        for i, (a, b) in enumerate(sp):
            computes.append((k, _cyclic(a, b, n)))
            windows.append((k, _cyclic(b, sp[(i + 1) % len(sp)][0], n)))
    return computes, windows


def build_compaction_model(instance: PeriodicInstance, pattern: Pattern) -> ConcreteModel:
    """The compaction LP: keep the cyclic order of every compute start and end of ``pattern``
    and choose the lengths t_j (s) of the elementary intervals and the volume v_kj each
    application moves in each interval of its I/O windows; minimise the period Σ t_j.

    Rate change points need not be events: volumes are free within an interval, so a
    finer subdivision would not help. Both objectives improve as the period shrinks with
    the instance counts fixed, so one LP serves SysEfficiency and Dilation.
    """
    times, spans = pattern_events(instance, pattern)
    n = len(times)
    apps = instance.applications
    B = instance.platform.bandwidth
    m = pe.ConcreteModel(name="periodic-compaction")
    m.J = pe.RangeSet(0, n - 1)
    m.t = pe.Var(m.J, domain=pe.NonNegativeReals, doc="length of interval j (s)")
    computes, windows = spans_to_intervals(spans, n)
    io_index = sorted({(k, j) for k, js in windows for j in js})
    m.IO = pe.Set(initialize=io_index, dimen=2)
    m.v = pe.Var(m.IO, domain=pe.NonNegativeReals, doc="volume moved by k in interval j")
    m.compute = pe.Constraint(range(len(computes)), rule=lambda m, c: (
        sum(m.t[j] for j in computes[c][1]) == apps[computes[c][0]].work))
    m.volume = pe.Constraint(range(len(windows)), rule=lambda m, c: (
        sum(m.v[windows[c][0], j] for j in windows[c][1]) == apps[windows[c][0]].io_volume))
    m.rate = pe.Constraint(m.IO, rule=lambda m, k, j: m.v[k, j] <= instance.max_rate(k) * m.t[j])
    users: dict[int, list[int]] = {}
    for k, j in io_index:
        users.setdefault(j, []).append(k)
    m.capacity = pe.Constraint(sorted(users), rule=lambda m, j: (
        sum(m.v[k, j] for k in users[j]) <= B * m.t[j]))
    m.period = pe.Objective(expr=sum(m.t[j] for j in m.J), sense=pe.minimize)
    m._spans = spans  # kept for reading the solution back
    return m


def compaction_pattern(instance: PeriodicInstance, model: ConcreteModel) -> Pattern:
    """The pattern of a solved compaction model (see :func:`assemble_pattern`)."""
    t = [max(pe.value(model.t[j]), 0.0) for j in range(len(model.t))]
    return assemble_pattern(instance, model._spans, t, {(k, j): pe.value(model.v[k, j]) for k, j in model.IO})


def assemble_pattern(instance: PeriodicInstance, spans: Spans, t: list[float],
                     volumes: dict[tuple[int, int], float]) -> Pattern:
    """The pattern of compaction interval lengths ``t`` (s) and ``volumes`` {(k, j): data moved by
    k in interval j}, starting the period at the first event; ``spans`` as :func:`pattern_events` gives.

    Rates are v / t, clipped to β_k b and scaled so their sum stays within B (solver
    tolerances); intervals shorter than 1e-12 of the period carry nothing.
    """
    n = len(t)
    t = [max(float(x), 0.0) for x in t]
    T = sum(t)
    starts = [0.0]
    for j in range(n - 1):
        starts.append(starts[-1] + t[j])
    rates: dict[tuple[int, int], float] = {}
    for (k, j), v in volumes.items():
        if t[j] > 1e-12 * T:
            rates[k, j] = min(max(v, 0.0) / t[j], instance.max_rate(k))
    load: dict[int, float] = {}
    for (_, j), r in rates.items():
        load[j] = load.get(j, 0.0) + r
    B = instance.platform.bandwidth
    apps = []
    for k, sp in enumerate(spans):
        insts = []
        for i, (a, b) in enumerate(sp):
            nxt = sp[(i + 1) % len(sp)][0]
            segs = tuple((starts[j], starts[j] + t[j], rates[k, j] * min(1.0, B / load[j]))
                         for j in _cyclic(b, nxt, n) if rates.get((k, j), 0.0) > 0)
            insts.append(PatternInstance(starts[a] % T, segs))
        apps.append(tuple(insts))
    return Pattern(T, tuple(apps))


def compact(instance: PeriodicInstance, pattern: Pattern,
            profile: Profile | None = None) -> tuple[Pattern | None, SolveOutcome]:
    """Solve the compaction LP of ``pattern``; returns (the shortest pattern, the solver outcome).

    The input pattern is feasible for the LP, so the result is never longer; the
    pattern is None when the solver proves nothing (it then says why).
    """
    m = build_compaction_model(instance, pattern)
    out = solve_pyomo(m, profile or load_profile("default"))
    if not out.has_solution:
        return None, out
    return compaction_pattern(instance, m), out


def compaction_size(instance: PeriodicInstance, pattern: Pattern) -> int:
    """The number of volume variables of ``pattern``'s compaction LP, without building it."""
    times, spans = pattern_events(instance, pattern)
    n = len(times)
    cells: set[tuple[int, int]] = set()
    for k, sp in enumerate(spans):
        for i, (_, b) in enumerate(sp):
            cells.update((k, j) for j in _cyclic(b, sp[(i + 1) % len(sp)][0], n))
    return len(cells)


def check_compaction(instance: PeriodicInstance, plan: Plan) -> None:
    """Refuse, before anything runs, a search whose patterns could give a compaction LP above
    MAX_LP_VARIABLES: K applications x 2 N intervals, N the most instances a pattern of
    K' t_min can hold."""
    from iosched.heuristics.periodic_persched import largest_k_prime

    apps = instance.applications
    cycles = [a.work + instance.time_io(k) for k, a in enumerate(apps)]

    def size(T: float) -> int:
        return 2 * len(apps) * sum(math.floor(T / c) for c in cycles)

    if size(plan.t_max) <= MAX_LP_VARIABLES:
        return
    if size(plan.t_min) <= MAX_LP_VARIABLES:
        fit = largest_k_prime(plan.t_min, plan.t_max / plan.t_min, lambda T: size(T) <= MAX_LP_VARIABLES)
        raise ParameterError(
            f"k_prime = {plan.k_prime!r}: the compaction LP of a pattern as long as {plan.t_max:.6g} s (K' t_min, at "
            f"most the period cap) "
            f"could have up to {size(plan.t_max):.4g} variables, above the limit of {MAX_LP_VARIABLES}; "
            f"k_prime <= {fit:.4g} fits (or run persched)")
    raise InstanceError(
        f"applications: {len(apps)} applications whose patterns hold up to {size(plan.t_min) // (2 * len(apps))} "
        f"instances already at t_min = {plan.t_min:.6g} s give a compaction LP of up to {size(plan.t_min):.4g} "
        f"variables, above persched-compact's limit of {MAX_LP_VARIABLES} (run persched)")


def _compacted(instance: PeriodicInstance, objective: str, profile: Profile | str, k_prime: KPrime, eps: Eps,
               t_min: Seconds, workers: Workers, context: RunContext | None) -> MethodOutput:
    from iosched.heuristics.periodic_kernel import method_deadline
    from iosched.heuristics.periodic_persched import plan_search, run_search

    entry = time.perf_counter()
    prof = as_profile(profile)
    plan = plan_search(instance, k_prime, eps, t_min)  # every parameter checked before anything runs
    integer("workers", workers, 1, 256, error=ParameterError)
    check_compaction(instance, plan)
    deadline = method_deadline(prof.time_limit, entry, context)  # the whole method: search, LP build and solve
    warm_solver()
    # the search gets at most half of what is left: the LP needs the rest
    start = run_search(instance, objective, Deadline(SEARCH_SHARE * deadline.remaining()), k_prime, eps, t_min, None,
                       workers)
    if start.solution is None:
        return start
    info = {**start.info, "period_before": start.solution.period}
    size = compaction_size(instance, start.solution)
    needed = size * SECONDS_PER_LP_VARIABLE
    notes: dict[str, str] = {}
    model, out = None, None
    if needed < deadline.remaining():
        model, out, note = solve_pyomo_within(lambda: build_compaction_model(instance, start.solution), prof,
                                              deadline, HANDOVER_LP)
        if note:
            notes["skipped"] = f"the compaction LP: {note}"
    if out is None:
        info["error"] = notes.get("skipped") or (
            f"the compaction LP ({size} variables, about {needed:.3g} s to build and hand over) was not run: "
            f"{deadline.remaining():.3g} s of the {prof.time_limit:g} s limit left")
        return MethodOutput(start.solution, Status.TIME_LIMIT, info=info)
    pattern = compaction_pattern(instance, model) if out.has_solution else None
    info.update(lp_status=out.status.value, lp_time_s=out.wall_time_s, lp_variables=size)
    timed_out = start.status == Status.TIME_LIMIT or out.status == Status.TIME_LIMIT
    if pattern is None:
        info["error"] = f"the compaction LP gave no solution ({out.message})"
        return MethodOutput(start.solution, Status.TIME_LIMIT if timed_out else Status.FEASIBLE, info=info)
    # optimal for the fixed order of events only: a heuristic value overall
    return MethodOutput(pattern, Status.TIME_LIMIT if timed_out else Status.FEASIBLE, info=info)


@register("periodic", "persched-compact", objective="sys_efficiency",
          exact_over="PerSched's pattern with its order of events kept", prepare=compile_kernel)
def persched_compact(instance: PeriodicInstance, profile: str = "default", k_prime: KPrime = None,
                     eps: Eps = 0.01, t_min: Seconds = None, workers: Workers = 1,
                     *, context: RunContext | None = None) -> MethodOutput:
    """PerSched's pattern shortened by the compaction LP (event order kept, exact for that order)."""
    return _compacted(instance, "sys_efficiency", profile, k_prime, eps, t_min, workers, context)


@register("periodic", "persched-mindil-compact", objective="dilation",
          exact_over="PerSched's pattern with its order of events kept", prepare=compile_kernel)
def persched_mindil_compact(instance: PeriodicInstance, profile: str = "default", k_prime: KPrime = None,
                            eps: Eps = 0.01, t_min: Seconds = None, workers: Workers = 1,
                            *, context: RunContext | None = None) -> MethodOutput:
    """PerSched-MinDil's pattern shortened by the compaction LP (event order kept)."""
    return _compacted(instance, "dilation", profile, k_prime, eps, t_min, workers, context)

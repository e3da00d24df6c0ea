"""Trace-ordered compaction: patterns cut from a fluid online run, shortened by the compaction LP.

A fluid run with a priority rule and staggered first starts settles into a near-periodic
steady state. A window of it from one compute start of the longest application (largest
w_k + time_io_k) to its n-th next one fixes a cyclic order of compute starts and ends;
the compaction LP (:func:`iosched.models.periodic_compaction.build_compaction_model`, solved here
from sparse arrays, which is much faster than through Pyomo for the thousands of events
such windows hold) gives the shortest pattern with that order. The search runs over the
priority rule, the stagger, the window start and n; every candidate goes through the
evaluator, and PerSched's compacted pattern is one of the candidates, so the result is
never worse than ``persched-compact`` (same parameters and time). Every candidate is within the
instance's period cap (the evaluator rejects the others); a window whose counts need a longer
period than the cap (max_k n_k c_k or Σ_k n_k vol_k / B above it) is not compacted at all.
"""

from __future__ import annotations

import bisect
import math
import time
from typing import Annotated

from iosched.core import CERTIFIED_GAP, HEURISTIC, MethodOutput, RunContext, Status, register
from iosched.errors import InstanceError, ParameterError
from iosched.evaluate.periodic import Instance as PatternInstance
from iosched.evaluate.periodic import Pattern, evaluate
from iosched.fluid import priority_fill
from iosched.heuristics.periodic_kernel import compile_kernel, method_deadline
from iosched.heuristics.periodic_persched import Eps, KPrime, Seconds, Workers, plan_search, run_search
from iosched.instances.periodic import PeriodicInstance
from iosched.models.periodic_bounds import as_profile, best_bound, capped
from iosched.models.periodic_compaction import assemble_pattern, pattern_events, spans_to_intervals
from iosched.solvers import Deadline, LicenceLimit, Profile
from iosched.solvers.lp import LP
from iosched.validate import Integer, ListOf, Number, OneOf, integer

PRIORITIES = ("syseff", "fcfs", "dilation")
MAX_EVENTS = 200_000  # compute starts and ends in one window (the LP's intervals)
MAX_TRACE_EVENTS = 2_000_000  # events of one fluid run
MISMATCH_PENALTY = 0.01  # windows are ranked by their value x (1 - this x mismatch): measured on sets 3, 4, 6
AT_CAP_FIRST = 4  # windows as long as the period where the capped bound is attained, compacted first
LP_GROWTH = 1.5  # the compaction LP's time grows about as (instances in the window) ** this (measured)
PERSCHED_SHARE = 0.3  # of the budget, at most this much goes to PerSched's search (the first candidate)

MULTIPLES = ListOf(Integer(1, 1000), 50, scalar=True)  # window lengths, in cycles of the longest application
WARMUPS = ListOf(Integer(0, 1000), 50, scalar=True)  # cycles of the longest application before the window
STAGGERS = ListOf(Number(0, 1), 50, scalar=True)  # fractions of a cycle between identical applications' starts
PRIORITY_LIST = ListOf(OneOf(PRIORITIES), len(PRIORITIES), scalar=True)
Multiples = Annotated[list | tuple | int, MULTIPLES]
Warmups = Annotated[list | tuple | int, WARMUPS]
Staggers = Annotated[list | tuple | float, STAGGERS]
Priorities = Annotated[list | tuple | str, PRIORITY_LIST]
Candidates = Annotated[int, Integer(1, 10_000)]  # windows handed to the LP, best at their own period first
Matched = Annotated[int, Integer(0, 60)]  # extra multiples in [1, 60] with the nearest-integer counts
MaxInstances = Annotated[int, Integer(1, MAX_EVENTS // 2)]  # larger windows are not compacted


# --- the fluid run -------------------------------------------------------------------------------


def _groups(instance: PeriodicInstance) -> list[tuple[int, int]]:
    """Per application: (its index among identical applications (same w, vol, β), how many there are)."""
    key = [(a.work, a.io_volume, a.processors) for a in instance.applications]
    return [(key[:k].count(key[k]), key.count(key[k])) for k in range(len(key))]


def fluid_starts(instance: PeriodicInstance, priority: str, stagger: float, cycles: int,
                 deadline: Deadline | None = None) -> list[list[float]] | None:
    """Compute start times (s) per application in a fluid run until the longest application
    (largest w_k + time_io_k) has started ``cycles`` + 1 instances.

    Application k first starts at ``stagger`` × i × (w_k + time_io_k) / m, i its index among
    the m identical applications, and computes w_k; then it requests vol_k. Waiting requests
    are served in ``priority`` order, each at min(β_k b, what is left of B): "syseff" largest
    β_k w_k / vol_k first, "fcfs" earliest request first, "dilation" largest current Dilation
    ρ_k t / (w_k (instances done + 1)) first; ties by request time, then index. Rates hold
    until the next event. None when the run exceeds MAX_TRACE_EVENTS or ``deadline``.
    """
    apps = instance.applications
    K = len(apps)
    B = instance.platform.bandwidth
    caps = [instance.max_rate(k) for k in range(K)]
    cyc = [a.work + instance.time_io(k) for k, a in enumerate(apps)]
    rho = [instance.rho(k) for k in range(K)]
    longest = max(range(K), key=cyc.__getitem__)
    static = [-a.processors * a.work / a.io_volume for a in apps]
    groups = _groups(instance)
    first = [stagger * i * cyc[k] / m for k, (i, m) in enumerate(groups)]
    compute_end = [f + a.work for f, a in zip(first, apps)]
    starts = [[f] for f in first]
    remaining = [0.0] * K
    requested = [math.inf] * K
    done = [0] * K
    t, events = 0.0, 0
    while len(starts[longest]) <= cycles:
        events += 1
        if events > MAX_TRACE_EVENTS or (deadline is not None and events % 256 == 0 and deadline.expired()):
            return None
        waiting = [k for k in range(K) if remaining[k] > 0]
        if priority == "syseff":
            waiting.sort(key=lambda k: (static[k], requested[k], k))
        elif priority == "fcfs":
            waiting.sort(key=lambda k: (requested[k], k))
        else:
            waiting.sort(key=lambda k: (-rho[k] * t / (apps[k].work * (done[k] + 1)), requested[k], k))
        rates = priority_fill(caps, waiting, B)
        step = min([e - t for e in compute_end if e < math.inf]
                   + [remaining[k] / rates[k] for k in waiting if rates[k] > 0])
        step = max(step, 0.0)
        for k in waiting:
            remaining[k] -= rates[k] * step
        t += step
        was_waiting = set(waiting)
        for k in range(K):
            if compute_end[k] <= t:
                compute_end[k] = math.inf
                remaining[k], requested[k] = apps[k].io_volume, t
            elif k in was_waiting and remaining[k] <= 1e-12 * apps[k].io_volume:
                remaining[k], requested[k] = 0.0, math.inf
                done[k] += 1
                starts[k].append(t)
                compute_end[k] = t + apps[k].work
    return starts


def window(instance: PeriodicInstance, starts: list[list[float]], warmup: int, n: int,
           stretch: bool = False) -> Pattern | None:
    """The window of a run from the longest application's ``warmup``-th compute start to its
    (``warmup`` + n)-th, as a pattern holding only compute starts (no I/O).

    An application's last compute in the window may overlap its first one a period later;
    then it is dropped, or with ``stretch`` the period is lengthened until it fits (the LP
    sets the real lengths: only the cyclic order counts). None when the run is too short or
    some application has no start in the window.
    """
    apps = instance.applications
    cyc = [a.work + instance.time_io(k) for k, a in enumerate(apps)]
    longest = max(range(len(apps)), key=cyc.__getitem__)
    if warmup + n >= len(starts[longest]):
        return None
    t0, t1 = starts[longest][warmup], starts[longest][warmup + n]
    T = t1 - t0
    kept = []
    for k, a in enumerate(apps):
        s = [x - t0 for x in starts[k] if t0 <= x < t1]
        if k == longest:
            s = s[:n]
        while not stretch and len(s) > 1 and s[-1] + a.work > s[0] + T:
            s.pop()
        if not s:
            return None
        kept.append(s)
    if stretch:
        T = max([T] + [s[-1] + a.work - s[0] for s, a in zip(kept, apps)]) * (1 + 1e-9)
    return Pattern(T, tuple(tuple(PatternInstance(x, ()) for x in s) for s in kept))


def mismatch(instance: PeriodicInstance, starts: list[list[float]], warmup: int, n: int) -> float:
    """How far the run's state at the window's end is from its state at the start: the largest,
    over applications, change in time since the last compute start, in cycles of that
    application (0 when the window repeats exactly; then the LP keeps its period)."""
    cyc = [a.work + instance.time_io(k) for k, a in enumerate(instance.applications)]
    longest = max(range(len(cyc)), key=cyc.__getitem__)
    t0, t1 = starts[longest][warmup], starts[longest][warmup + n]
    worst = 0.0
    for s, c in zip(starts, cyc):
        i0, i1 = bisect.bisect_right(s, t0) - 1, bisect.bisect_right(s, t1) - 1
        if i0 < 0:
            return 1.0
        d = abs((t0 - s[i0]) - (t1 - s[i1])) / c % 1
        worst = max(worst, min(d, 1 - d))
    return worst


def matched_multiples(instance: PeriodicInstance, count: int, most: int = 60) -> list[int]:
    """The ``count`` window lengths n in [1, ``most``] (cycles of the longest application) whose
    instance counts n c_L / c_k are closest to integers for every application k (largest
    relative rounding error, smallest first): windows where no application loses much of
    an instance to the cut."""
    cyc = [a.work + instance.time_io(k) for k, a in enumerate(instance.applications)]
    ratios = [max(cyc) / c for c in cyc]

    def error(n: int) -> float:
        return max(min(n * r % 1, 1 - n * r % 1) / (n * r) for r in ratios)

    return sorted(range(1, most + 1), key=lambda n: (error(n), n))[:count]


# --- the compaction LP from sparse arrays ---------------------------------------------------------


def compaction_lp(instance: PeriodicInstance, pattern: Pattern, time_limit: float,
                  solver: str = "highs") -> Pattern | None:
    """The compaction LP of ``pattern`` (see :func:`iosched.models.periodic_compaction.build_compaction_model`:
    same variables and constraints), built as sparse arrays and solved by an interior point method on
    backend ``solver`` (:class:`iosched.solvers.lp.LP`); the shortest pattern with ``pattern``'s cyclic
    order of compute starts and ends, or None when the backend finds none within ``time_limit`` (s).
    LicenceLimit where the backend refuses the LP for its licence's size."""
    import numpy as np
    from scipy.sparse import coo_matrix, vstack

    times, spans = pattern_events(instance, pattern)
    n = len(times)
    apps = instance.applications
    B = instance.platform.bandwidth
    computes, windows = spans_to_intervals(spans, n)
    cells = sorted({(k, j) for k, js in windows for j in js})
    col = {c: n + i for i, c in enumerate(cells)}
    nv = n + len(cells)
    eq_r: list[int] = []
    eq_c: list[int] = []
    b_eq: list[float] = []
    for r, (k, js) in enumerate(computes):
        eq_r += [r] * len(js)
        eq_c += js
        b_eq.append(apps[k].work)
    for r, (k, js) in enumerate(windows, start=len(computes)):
        eq_r += [r] * len(js)
        eq_c += [col[k, j] for j in js]
        b_eq.append(apps[k].io_volume)
    ub_r: list[int] = []
    ub_c: list[int] = []
    ub_v: list[float] = []
    for r, (k, j) in enumerate(cells):  # v_kj <= β_k b t_j (at most B)
        ub_r += [r, r]
        ub_c += [col[k, j], j]
        ub_v += [1.0, -instance.max_rate(k)]
    users: dict[int, list[int]] = {}
    for k, j in cells:
        users.setdefault(j, []).append(k)
    for r, j in enumerate(sorted(users), start=len(cells)):  # Σ_k v_kj <= B t_j
        ub_r += [r] * (len(users[j]) + 1)
        ub_c += [col[k, j] for k in users[j]] + [j]
        ub_v += [1.0] * len(users[j]) + [-B]
    A_eq = coo_matrix((np.ones(len(eq_r)), (eq_r, eq_c)), shape=(len(b_eq), nv)).tocsr()
    A_ub = coo_matrix((ub_v, (ub_r, ub_c)), shape=(len(cells) + len(users), nv)).tocsr()
    cost = np.zeros(nv)
    cost[:n] = 1.0
    lp = LP(solver, "barrier")
    lp.add_rows(np.append(np.full(A_ub.shape[0], -np.inf), b_eq), np.append(np.zeros(A_ub.shape[0]), b_eq))
    lp.add_cols(cost, 0.0, np.inf, vstack([A_ub, A_eq]))
    res = lp.solve(time_limit)
    if res.status != Status.OPTIMAL:
        return None
    assert res.x is not None  # (LP.solve's at OPTIMAL)
    x = np.maximum(res.x, 0.0)
    return assemble_pattern(instance, spans, list(x[:n]), {c: float(x[col[c]]) for c in cells})


# --- the search ----------------------------------------------------------------------------------


def _value(instance: PeriodicInstance, pattern: Pattern, objective: str) -> float:
    ev = evaluate(instance, pattern)
    if not ev.feasible:
        return -math.inf
    return ev.sys_efficiency if objective == "sys_efficiency" else -ev.dilation


def _raw_score(instance: PeriodicInstance, pattern: Pattern, objective: str) -> float:
    """A window's value at its own period (the LP only shortens it): ranks windows before any LP."""
    from iosched.evaluate.periodic import dilation, sys_efficiency

    counts = pattern.counts()
    if objective == "sys_efficiency":
        return sys_efficiency(instance, counts, pattern.period)
    return -dilation(instance, counts, pattern.period)


def _as_list(name: str, value: object, check: ListOf) -> list:
    """``value`` checked by its declared ListOf, as a list."""
    value = check(name, value, ParameterError)
    return value if isinstance(value, list) else [value]


def _search(instance: PeriodicInstance, objective: str, profile: Profile | str, k_prime: KPrime, eps: Eps,
            t_min: Seconds, workers: Workers, priorities: Priorities, staggers: Staggers, warmups: Warmups,
            multiples: Multiples, matched: Matched, candidates: Candidates, max_instances: MaxInstances,
            context: RunContext | None) -> MethodOutput:
    entry = time.perf_counter()
    prof = as_profile(profile)
    priorities = _as_list("priorities", priorities, PRIORITY_LIST)
    staggers = _as_list("staggers", staggers, STAGGERS)
    warmups = _as_list("warmups", warmups, WARMUPS)
    multiples = _as_list("multiples", multiples, MULTIPLES)
    matched = integer("matched", matched, 0, 60, error=ParameterError)
    candidates = integer("candidates", candidates, 1, 10_000, error=ParameterError)
    max_instances = integer("max_instances", max_instances, 1, MAX_EVENTS // 2, error=ParameterError)
    apps = instance.applications
    cyc = [a.work + instance.time_io(k) for k, a in enumerate(apps)]
    # the problem's bound, within a tenth of the budget (a search cut short still gives a valid bound)
    cap = capped(instance, Deadline(0.1 * prof.time_limit, entry)) if objective == "sys_efficiency" else None
    # the window length where the period-capped bound peaks: its best windows go first, so that the
    # bound gets its best chance of being met
    at_cap = [max(round(cap["period"] / max(cyc)), 1)] if cap is not None and cap["period"] else []
    t_cap, B = instance.period_cap(), instance.platform.bandwidth
    vols = [a.io_volume for a in apps]

    def within_cap(p: Pattern) -> bool:
        """Whether the window's counts fit some period within the cap (else no compaction helps)."""
        n = p.counts()
        return max(max(m * c for m, c in zip(n, cyc)), sum(m * v for m, v in zip(n, vols)) / B) <= t_cap
    # windows too large to compact are not even cut (their instance count, contention aside)
    multiples = sorted(n for n in set(multiples) | set(matched_multiples(instance, matched)) | set(at_cap)
                       if sum(n * max(cyc) / c for c in cyc) <= max_instances) or [1]
    if sum((max(warmups) + max(multiples)) * max(cyc) / c for c in cyc) > MAX_TRACE_EVENTS / 4:
        raise InstanceError(f"applications: a run of {max(warmups) + max(multiples)} cycles of the longest "
                            f"application ({max(cyc):.6g} s) takes more than {MAX_TRACE_EVENTS} events; "
                            f"fewer warmups or a smaller max_instances fit")
    plan_search(instance, k_prime, eps, t_min)  # PerSched's parameters checked before anything runs
    integer("workers", workers, 1, 256, error=ParameterError)
    deadline = method_deadline(prof.time_limit, entry, context)
    # PerSched's pattern compacted first (persched-compact's pattern, the same LP solved here without
    # Pyomo): the result is never worse than persched-compact's with the same parameters and time
    found = run_search(instance, objective, Deadline(PERSCHED_SHARE * deadline.remaining()), k_prime, eps, t_min,
                       None, workers)
    refused: list[str] = []  # what the backend said of the LPs it refused for its licence's size

    def compacted_by_lp(p: Pattern) -> Pattern | None:
        try:
            return compaction_lp(instance, p, deadline.remaining(), prof.solver)
        except LicenceLimit as e:
            refused.append(str(e))
            return None

    lp_start = time.perf_counter()
    base = found.solution and compacted_by_lp(found.solution)
    # seconds per (instances ** LP_GROWTH) of a compaction LP, as measured (the largest seen)
    rate = (time.perf_counter() - lp_start) / sum(found.solution.counts()) ** LP_GROWTH if base else 0.0
    best: Pattern | None = None
    best_value = -math.inf
    best_from: str | dict | None = None

    def consider(candidate: Pattern, value: float, name: str | dict) -> None:
        nonlocal best, best_value, best_from
        if value > best_value:  # the evaluator's verdict: -inf for a pattern past the cap
            best, best_value, best_from = candidate, value, name

    for candidate, name in ((found.solution, "persched"), (base, "persched-compact")):
        if candidate is not None:
            consider(candidate, _value(instance, candidate, objective), name)
    # every window of every run, ranked by its value at its own period (the LP shortens it when the
    # window repeats, and may lengthen it when it does not: hence the mismatch penalty)
    windows: list[tuple[float, tuple[str, float, int, int, bool], Pattern]] = []
    for priority in priorities:
        for stagger in staggers:
            starts = fluid_starts(instance, priority, stagger, max(warmups) + max(multiples), deadline)
            if starts is None:
                continue
            for w0 in warmups:
                for n in multiples:
                    for stretch in (False, True):
                        p = window(instance, starts, w0, n, stretch)
                        if p is not None and sum(p.counts()) <= max_instances and within_cap(p):
                            raw = _raw_score(instance, p, objective)
                            score = raw - MISMATCH_PENALTY * abs(raw) * mismatch(instance, starts, w0, n)
                            windows.append((score, (priority, stagger, w0, n, stretch), p))
    windows.sort(key=lambda x: -x[0])
    first = [w for w in windows if w[1][3] in at_cap][:AT_CAP_FIRST]
    windows = first + [w for w in windows if not any(w is f for f in first)]
    tried, skipped, stopped = 0, 0, False
    best_possible = cap["value"] if cap is not None else -best_bound(instance, objective)
    for _, params, p in windows[:candidates]:
        if best_value >= best_possible - CERTIFIED_GAP * abs(best_possible):  # meets the problem's bound
            break
        if deadline.remaining() < 0.05:
            stopped = True
            break
        size = sum(p.counts()) ** LP_GROWTH
        if rate * size > deadline.remaining():  # it would not finish in the time left: a smaller one may
            skipped += 1
            continue
        lp_start = time.perf_counter()
        compacted = compacted_by_lp(p)
        rate = max(rate, (time.perf_counter() - lp_start) / size)
        tried += 1
        if compacted is not None:
            value = _value(instance, compacted, objective)  # the evaluator's verdict, not the LP's
            consider(compacted, value, dict(zip(("priority", "stagger", "warmup", "n", "stretch"), params)))
    base_value = _value(instance, base, objective) if base is not None else None
    info = {"windows": len(windows), "compacted": tried, "skipped": skipped, "best_from": best_from,
            "multiples": multiples,
            "persched_compact": None if base_value is None else abs(base_value)}
    if refused:
        info["refused"] = f"{len(refused)} compaction LPs refused by {prof.solver}, the first: {refused[0]}"
    if best is None:
        return MethodOutput(None, Status.TIME_LIMIT if stopped else Status.INFEASIBLE, info=info)
    if stopped or skipped:
        stopped = True
        info["stopped"] = (f"time limit {prof.time_limit:g} s: {tried} of {min(len(windows), candidates)} windows "
                           f"compacted, {skipped} skipped as too large for the time left")
    status = Status.TIME_LIMIT if stopped else Status.FEASIBLE
    if cap is not None:  # iosched.solve calls the result optimal where it meets this bound
        info["capped_bound"] = cap["value"]
        info["period_cap_s"] = t_cap
    return MethodOutput(best, status, info=info)


@register("periodic", "trace-compact", objective="sys_efficiency", exact_over=HEURISTIC, prepare=compile_kernel)
def trace_compact(instance: PeriodicInstance, profile: str = "default", k_prime: KPrime = None, eps: Eps = 0.01,
                  t_min: Seconds = None, workers: Workers = 1, priorities: Priorities = ("syseff", "fcfs"),
                  staggers: Staggers = (0.0, 1.0), warmups: Warmups = (2, 3),
                  multiples: Multiples = (1, 2, 3, 4, 5, 6), matched: Matched = 3, candidates: Candidates = 40,
                  max_instances: MaxInstances = 3000, *, context: RunContext | None = None) -> MethodOutput:
    """Windows of fluid online runs, each compacted by the LP, beside PerSched's compacted pattern."""
    return _search(instance, "sys_efficiency", profile, k_prime, eps, t_min, workers, priorities, staggers,
                   warmups, multiples, matched, candidates, max_instances, context)


@register("periodic", "trace-compact-dilation", objective="dilation", exact_over=HEURISTIC, prepare=compile_kernel)
def trace_compact_dilation(instance: PeriodicInstance, profile: str = "default", k_prime: KPrime = None,
                           eps: Eps = 0.01, t_min: Seconds = None, workers: Workers = 1,
                           priorities: Priorities = ("dilation", "fcfs"), staggers: Staggers = (0.0, 1.0),
                           warmups: Warmups = (2, 3), multiples: Multiples = (1, 2, 3, 4, 5, 6),
                           matched: Matched = 3, candidates: Candidates = 40,
                           max_instances: MaxInstances = 3000, *, context: RunContext | None = None) -> MethodOutput:
    """The same search minimising Dilation (PerSched-MinDil's compacted pattern as first candidate)."""
    return _search(instance, "dilation", profile, k_prime, eps, t_min, workers, priorities, staggers, warmups,
                   multiples, matched, candidates, max_instances, context)

"""Exact file domains: the modelled time of :mod:`iosched.evaluate.filedomain`, minimised.

The region's data is cut into lock units (stripes with extent locking, blocks with tokens;
weights w_u = data bytes in unit u, units without data dropped). Each lock sequence (a
server's units in object order, or all units in file order with tokens) is an ordered list
of units. Every formulation minimises T (module docstring of the evaluator) over its scope:

* ``segments`` (arrays on the profile's backend, :mod:`iosched.models.filedomain_segments`): scope =
  every solution; clean segments of whole units x bins at a fixed time, searched over the lock
  levels; its infeasible tests are bounds for every solution. ``auto`` (the default) takes it
  where its model fits (MAX_COLUMNS there), else ``milp``.
* ``milp`` (Pyomo + HiGHS, :mod:`iosched.models.filedomain_milp`) and ``cpsat`` (OR-Tools
  CP-SAT, :mod:`iosched.models.filedomain_cpsat`), granularity ``byte``: scope =
  every solution. Per (unit, aggregator): q bytes (integer), y present, f first, l last
  in the unit; per consecutive units u, v of a sequence and aggregator a: m <= l_ua, f_va
  (the run goes on across the two units). Runs of a sequence = Σ y - Σ m; false sharing =
  Σ_u (Σ_a y_ua - 1); a unit with two or more owners has f != l. Any solution can be
  rearranged inside each unit (an owner's bytes of a unit made contiguous, the first and
  last owners chosen to continue the neighbours' runs) without raising any cost, so this
  is exact for every solution, with ``io = extent`` (which never costs more than ``stripe``).
* the same with granularity ``unit``: scope = whole lock units to aggregators (y only).
* ``aggregated`` (:mod:`iosched.models.filedomain_aggregated`, with the relaxation): extent
  locking, every stripe full (equal stripes): counts c_as of server s's stripes given to
  aggregator a and u_as = [c_as > 0]; runs on s = Σ_a u_as (each aggregator's stripes on a
  server are made consecutive in object order). Scope = whole stripes; its size P x S does not
  grow with the file. The engine first solves the relaxation below and lays its loads out per
  server (one block per aggregator in object order); it also lays out the column split over P'
  <= P writers (the servers' data taken server by server and cut into P' byte-balanced chunks)
  for each P'; and it returns the best of these and the count model's solution with the
  relaxation's bound: when one meets the bound it is optimal over every solution.
* ``relaxation``: loads q_as >= 0 (continuous bytes of server s to aggregator a; the model
  holds the shares q_as / Σ_a q_as), u_as = [q_as > 0], runs >= Σ_a u_as, false sharing
  dropped (tokens: runs >= aggregators used).
  Every solution gives such q and u, so its optimum (or its solver bound) is a lower bound
  valid for every solution.
* ``dp`` (:mod:`iosched.models.filedomain_dp`): contiguous domains in aggregator order
  (aggregator 0 first), boundaries on unit boundaries (``unit``) or at any byte (``byte``), lock
  costs ignored: min over the boundaries of the fluid time, by a parametric search (bisection on
  T with the greedy fill, each aggregator taking the most units within T b_a; exact to 10^-12
  relative). Needs one aggregator per node when nodes are capacities. With zero lock costs and
  ``byte`` it is globally optimal (only loads matter and contiguous domains realise any).

Bounds for every solution: :func:`time_bound` (the problem's bound, in
:mod:`iosched.models.filedomain_relax`), computed in the evaluator's own arithmetic so that it can
equal an evaluated time exactly: the cheap counting bounds of :mod:`iosched.models.filedomain_bounds`
(the data in whole bytes over the aggregators' and nodes' capacities; each server's load plus one
grant; P' writing aggregators make P' runs, so some server holds ⌈P'/S⌉ of them, min over P')
raised by the count relaxation's search on T (runs, split units and bytes per aggregator in
integers) where the instance fits it — and the solver's bound for byte granularity, the
relaxation's for the other engines. Every engine first tries the heuristics' domains (and domains
laid out from the count relaxation's last point, on equal stripes) against ``time_bound``
(``early``; no model is solved when one meets it), then returns the best of its own solutions and
the heuristics' (Pyomo's HiGHS interface takes no MIP start, so they are a start after the fact;
the one returned is named in ``info["chosen"]``), OPTIMAL when it meets a bound within the
profile's gap.

Times inside the HiGHS models are in microseconds (bytes per µs = 1000 x GB/s). HiGHS's
integrality tolerance (10^-6) lets q <= w y put up to w 10^-6 bytes (4 bytes of a 4 MiB
stripe) on an owner with y ~ 0, uncharged: the reader gives such bytes to the unit's owner
with the most bytes, so the domains' time may exceed the model's objective by those bytes
over a bandwidth (nanoseconds), and the bound stays valid (the leak only relaxes). HiGHS's
bounds are reported 10^-6 (relative) lower than it gives them: its tolerances put them up
to ~10^-8 above the true optimum. CP-SAT works in whole nanoseconds with each time per byte
rounded down to a fraction of denominator <= 1000 and lock costs rounded down to whole
nanoseconds, so each of its constraints is a relaxation of the true one and its bound less
1 ns is valid; its optimum is declared optimal only if its true time meets that bound. Such a
deflated bound never meets a solution within 10^-9: where time is left (a quarter of the profile's
limit at most), the best value is then checked by the certificate in integers of
:mod:`iosched.models.filedomain_certify` (no partition takes less, proved by CP-SAT on integer rows),
which makes that value itself the bound, or finds better domains.

This module is the ``exact`` method (the engine's choice, the heuristics' starts, the best of the
candidates); importing it registers the method, and the engines' public names are importable from
here as before.
"""

from __future__ import annotations

import time
from typing import Annotated

import numpy as np

from iosched.core import EVERY_SOLUTION, MethodOutput, RunContext, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.filedomain import Domains, evaluate
from iosched.instances.filedomain import FileDomainInstance
from iosched.models import driver
from iosched.models import filedomain_segments as segments
from iosched.models.filedomain_aggregated import (  # noqa: F401  (the public names stay importable from here)
    build_aggregated,
    build_relaxation,
    column_split,
    layout,
    relaxation_bound,
    run_aggregated,
    server_stripes,
    writer_counts,
)
from iosched.models.filedomain_bounds import cheap_bound, counting_bound, data_bound  # noqa: F401
from iosched.models.filedomain_cpsat import build_cpsat, cpsat_model, cpsat_true_optimum, read_cpsat  # noqa: F401
from iosched.models.filedomain_dp import dp_partition
from iosched.models.filedomain_milp import build_milp, read_milp
from iosched.models.filedomain_relax import relaxation_point, time_bound
from iosched.models.filedomain_units import (  # noqa: F401  (the public names stay importable from here)
    BOUND_SLACK,
    BUILD_S_PER_CELL,
    HANDOVER,
    MAX_CELLS,
    US,
    OutOfTime,
    Units,
    aggregator_classes,
    data_below,
    from_sequence,
    lock_units,
    model_units,
    pyomo_in_time,
    scaled,
    ticking,
)
from iosched.solvers import Deadline, Profile, load_profile
from iosched.validate import Boolean, OneOf

ENGINES = ("auto", "segments", "milp", "cpsat", "aggregated", "dp")


SCOPES = {
    ("segments", "byte"): "every solution",
    ("milp", "byte"): "every solution",
    ("cpsat", "byte"): "every solution (time in whole ns; times per byte and lock costs rounded down)",
    ("milp", "unit"): "whole lock units (stripes, or blocks with tokens) to aggregators",
    ("cpsat", "unit"): "whole lock units to aggregators (time in whole ns)",
    ("aggregated", "unit"): "whole stripes to aggregators, and the relaxation's loads laid out per server "
                            "(equal stripes, extent locking); bound: the relaxation (every solution)",
    ("dp", "unit"): "contiguous domains in aggregator order on unit boundaries, lock costs ignored",
    ("dp", "byte"): "contiguous domains in aggregator order, lock costs ignored",
}


@register("filedomain", "exact", objective="time", exact_over=EVERY_SOLUTION)
def exact(instance: FileDomainInstance, engine: Annotated[str, OneOf(ENGINES)] = "auto",
          granularity: Annotated[str | None, OneOf(("byte", "unit"))] = None, profile: str = "default",
          early: Annotated[bool, Boolean()] = True, *, context: RunContext | None = None) -> MethodOutput:
    """Minimise the modelled time: segments and levels (auto: where it fits, else milp), milp / cpsat
    (any split, or whole units), aggregated counts, or the dp."""
    if engine == "aggregated" and granularity == "byte":
        raise ParameterError("engine=aggregated counts whole stripes: granularity must be unit")
    if engine == "segments" and granularity == "unit":
        raise ParameterError("engine=segments splits at any byte: granularity must be byte (or use engine=milp)")
    return solve_exact(instance, engine, granularity, load_profile(profile), early, context)


def solve_exact(instance: FileDomainInstance, engine: str = "auto", granularity: str | None = None,
                profile: Profile | None = None, early: bool = True, context: RunContext | None = None) -> MethodOutput:
    """:func:`exact` under a :class:`Profile` (its time limit is the whole method's budget, counted
    from when :func:`iosched.solve` started the method: ``context``, None when called directly).

    ``auto``: the segment model where it fits (MAX_COLUMNS), else the unit MILP where it fits
    (MAX_CELLS), else the heuristics' best beside :func:`time_bound`. With ``early`` (not for the
    dp) no model is solved when a heuristic's domains already meet :func:`time_bound` within the
    profile's gap: they are optimal."""
    prof = profile or load_profile("default")
    run = driver.ExactRun(prof, context=context)
    deadline, info = run.deadline, run.info
    bound: float | None  # valid for every solution where not None
    asked = engine
    if engine == "auto":
        engine = "segments" if granularity in (None, "byte") else "milp"
        try:
            segments.check_size(instance)
        except ParameterError as e:
            info["auto"] = f"engine=segments refused: {e}"
            engine = "milp"
    elif engine == "segments":
        segments.check_size(instance)  # refuses before the heuristics run
    gran = granularity or ("byte" if engine in ("milp", "cpsat", "segments") else "unit")
    info.update(engine=engine, granularity=gran, scope=SCOPES[engine, gran])
    starts, times, skipped = timed_starts(instance, deadline, context) if engine != "dp" else ([], {}, 0)
    if skipped:
        info["heuristics_skipped"] = (f"{skipped} heuristic(s) not run: the time left would not hold another "
                                      f"and the evaluation of the answer")
    if starts:
        name, domains = min(starts, key=lambda c: times[c[0]])
        run.begin(driver.Start(name, domains, times[name]))
    if early and engine != "dp":
        starts, times = _with_relaxation_layout(instance, starts, times, deadline)
        name, domains = min(starts, key=lambda c: times[c[0]])
        bound = time_bound(instance, times[name], deadline)
        if times[name] - bound <= max(prof.rel_gap, 2 * BOUND_SLACK) * times[name]:
            name, domains, bound = _certified(instance, name, domains, times, bound, prof, deadline, info)
            info.update(chosen=name, candidates={name: times[name]}, bound_is="valid for every solution",
                        certified_by="the certificate in integers (filedomain_certify): no model solved"
                        if bound == times[name] and info.get("certificate") else
                        "the counting bound (time_bound): no model solved")
            return MethodOutput(domains, Status.OPTIMAL, bound, info)
    if engine == "segments":
        name, incumbent = min(starts, key=lambda c: times[c[0]])
        try:
            domains, bound, proved = segments.search(instance, prof, deadline, incumbent, info, times[name])
            return _best_of(instance, run, [("segments", domains)], bound, not proved, starts=starts, times=times)
        except ParameterError as e:
            if asked != "auto":
                raise
            info.update(auto=f"engine=segments refused: {e}", engine="milp", scope=SCOPES["milp", "byte"])
            engine = "milp"
    if engine == "dp":
        domains, fluid, finished = dp_partition(instance, gran, deadline)
        info.update(model_status=(Status.OPTIMAL if finished else Status.TIME_LIMIT).value, model_objective=fluid,
                    model_objective_is="the fluid time (lock costs ignored) of contiguous domains")
        if not finished:
            return MethodOutput(domains, Status.TIME_LIMIT, None, info)
        proven = instance.acquire_s == 0 and instance.revoke_s == 0 and gran == "byte"
        return MethodOutput(domains, Status.OPTIMAL if proven else Status.FEASIBLE, fluid if proven else None, info)
    if engine == "aggregated":
        candidates, bound, timed_out = run_aggregated(instance, run)
        return _best_of(instance, run, candidates, bound, timed_out, starts=starts, times=times)
    if engine == "milp":
        try:
            cells = len(model_units(instance, gran)[3]) * instance.aggregators
        except ParameterError as e:
            if asked != "auto":
                raise
            info["auto"] = f"{info.get('auto', '')}; engine=milp refused: {e}: the heuristics' best".lstrip("; ")
            return _best_of(instance, run, [], None, bool(skipped), starts=starts, times=times)
        model, out, note = pyomo_in_time(run, lambda: build_milp(instance, gran), cells, gran)
        if out is None:
            info["skipped"] = f"the MILP was not solved: {note}"
            return _best_of(instance, run, [], None, True, starts=starts, times=times)
        domains = read_milp(instance, model, gran) if out.has_solution else None
        value, bound = scaled(out, US)
    else:
        try:
            model, v = cpsat_model(instance, gran, deadline=deadline)
        except OutOfTime:
            info["skipped"] = "the CP-SAT model was not solved: its build reached the time limit"
            return _best_of(instance, run, [], None, True, starts=starts, times=times)
        out, solver = run.solve_cpsat(model)
        domains = read_cpsat(instance, solver, v, gran) if out.has_solution else None
        value, bound = scaled(out, 1e9)
        if bound is not None:
            bound = max(0.0, bound - 1e-9)
    run.record(out, value, bound)  # with unit granularity the model's optimum and bound are its scope's
    candidates = [] if domains is None else [("solver", domains)]
    if gran == "unit":  # scope-limited: the solver's bound is not a bound for every solution
        bound = None
        if deadline.remaining() > 0.05:
            bound, info["relaxation_status"] = relaxation_bound(instance, prof, deadline)
    proven = gran == "byte" and out.status == Status.OPTIMAL and (engine == "milp" or cpsat_true_optimum(
        instance, domains, bound, prof, info))
    return _best_of(instance, run, candidates, bound, out.status == Status.TIME_LIMIT, proven, starts, times)


def heuristic_starts(instance: FileDomainInstance, deadline: Deadline | None = None) -> list[tuple[str, Domains]]:
    """The heuristics' domains (those that run on this instance), as starting points: all of them, or
    with ``deadline`` those that finish before it (the first, ROMIO's even, always)."""
    return timed_starts(instance, deadline)[0]


def timed_starts(instance: FileDomainInstance, deadline: Deadline | None = None, context: RunContext | None = None):
    """(:func:`heuristic_starts`, each one's evaluated time (s) by name, how many were not run). With
    ``deadline`` a heuristic is started only while the time left holds twice the longest heuristic and
    evaluation so far (it, and solve's evaluation of the answer: on 10^6 aggregators each takes seconds).
    Each runs with the run's ``context`` (its budget counts from the run's start)."""
    from iosched.core import METHODS

    heuristics = [m for m in METHODS.values() if m.problem == "filedomain" and m.name != "exact"]
    starts: list[tuple[str, object]] = []
    times: dict[str, float] = {}
    slowest = 0.0
    for k, method in enumerate(heuristics):
        if starts and deadline is not None and deadline.remaining() < 2 * slowest:
            return starts, times, len(heuristics) - k
        began = time.perf_counter()
        try:
            domains = method.run(instance, **({"context": context} if method.takes_context else {})).solution
        except ParameterError:  # e.g. too many extents for a cyclic method
            continue
        if domains is not None:
            name = f"heuristic {method.name}"
            starts.append((name, domains))
            times[name] = evaluate(instance, domains).time
        slowest = max(slowest, time.perf_counter() - began)
    return starts, times, 0


def _best_of(instance: FileDomainInstance, run: driver.ExactRun, candidates: list, bound: float | None,
             timed_out: bool, proven: bool = False, starts: list | None = None,
             times: dict | None = None) -> MethodOutput:
    """The driver's settle step over every candidate: the engine's (listed first: a tie within TIE goes to
    them) and the heuristics' domains (``starts``, computed here when not given; ``times``: those already
    evaluated, by name), certified where time is left (:func:`_certified`); OPTIMAL when the solver proved
    its scope is every solution (``proven``) or the best meets the bound (one for every solution) within
    the profile's gap (at least twice the bound's deflation)."""
    prof, deadline, info = run.profile, run.deadline, run.info
    candidates = candidates + (heuristic_starts(instance) if starts is None else starts)
    times = dict(times or {})
    times.update({name: evaluate(instance, d).time for name, d in candidates if name not in times})
    name, domains = candidates[driver.pick([times[c[0]] for c in candidates])]
    bound = max(time_bound(instance, times[name], deadline), bound if bound is not None else 0.0)
    name, domains, bound = _certified(instance, name, domains, times, bound, prof, deadline, info)
    info["candidates"] = {k: v for k, v in times.items() if not k.startswith("heuristic") or k == name}
    info["chosen"] = name
    info["bound_is"] = "valid for every solution" if bound is not None else "none proven"
    tolerance = max(prof.rel_gap, 2 * BOUND_SLACK)
    if proven or (bound is not None and times[name] - bound <= tolerance * times[name]):
        return MethodOutput(domains, Status.OPTIMAL, bound, info)
    return MethodOutput(domains, Status.TIME_LIMIT if timed_out else Status.FEASIBLE, bound, info)


CERTIFY_SHARE = 0.25  # of the profile's time limit, at most, for the certificates of one run


def _certified(instance: FileDomainInstance, name: str, domains: Domains, times: dict, bound: float,
               prof: Profile, deadline: Deadline, info: dict) -> tuple[str, Domains, float]:
    """(name, domains, bound) after the certificate in integers (:func:`filedomain_certify.certify`) at
    the best value, where it lies above the bound by more than CERTIFIED_GAP (a float solver's bound, or
    a relaxation's): "infeasible" makes the value itself the bound (gap 0); "feasible" gives better
    domains (evaluated; named ``certificate N``), tried again at their value. Within the time left and
    CERTIFY_SHARE of the profile's limit; each attempt in ``info["certificate"]``."""
    from iosched.core import CERTIFIED_GAP
    from iosched.models.filedomain_certify import certify

    budget = Deadline(min(deadline.remaining(), CERTIFY_SHARE * prof.time_limit))
    value, attempts = times[name], []
    while value - bound > CERTIFIED_GAP * value and budget.remaining() > 0.01:
        began = time.perf_counter()
        result, better = certify(instance, value, budget.remaining(), budget)
        attempts.append({"below_s": value, "result": result, "wall_s": round(time.perf_counter() - began, 3)})
        if result == "infeasible":
            bound = value
        if result != "feasible":
            break
        t = evaluate(instance, better).time
        if t >= value:  # the model's point is no better once evaluated: stop (it should not happen)
            break
        name, domains, value = f"certificate {len(attempts)}", better, t
        times[name] = t
    if attempts:
        info["certificate"] = attempts
    return name, domains, bound


def _with_relaxation_layout(instance: FileDomainInstance, starts: list, times: dict, deadline: Deadline):
    """The heuristics' starts, and domains laid out from the count relaxation's last point where
    :func:`time_bound` found one on equal stripes (its loads per server and aggregator, one block per
    aggregator on each server: at most the point's runs, so its time where no stripe is split)."""
    time_bound(instance, min(times.values()), deadline)
    point = relaxation_point(instance)
    if point is None or instance.locking != "extent":
        return starts, times
    loads = np.zeros((instance.aggregators, instance.stripe_count))
    for row, server in zip(point.loads, point.servers):
        loads[:, server] = row
    try:
        server_stripes(instance)  # equal stripes
    except ParameterError:
        return starts, times
    laid = layout(instance, loads)
    name = "count relaxation layout"
    return starts + [(name, laid)], {**times, name: evaluate(instance, laid).time}

"""The time-indexed MILP for a given period (``milp``, ``milp-dilation``): compute starts on a
grid of slots, rates per slot, over PerSched's best periods or the ones given."""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from iosched import lazy
from iosched.core import MethodOutput, RunContext, Sense, Status, register
from iosched.errors import InstanceError, ParameterError
from iosched.evaluate.periodic import Instance as PatternInstance
from iosched.evaluate.periodic import Pattern, dilation, sys_efficiency
from iosched.heuristics.periodic_kernel import compile_kernel
from iosched.heuristics.periodic_persched import Eps, KPrime
from iosched.instances.periodic import PeriodicInstance
from iosched.models import driver
from iosched.models.periodic_bounds import as_profile
from iosched.models.periodic_compaction import SEARCH_SHARE, warm_solver
from iosched.solvers import Deadline, Profile, SolveOutcome, load_profile, solve_pyomo_within
from iosched.validate import Integer, ListOf, Number, choice, integer, number, positive

pe = lazy.module("pyomo.environ")
if TYPE_CHECKING:
    from pyomo.environ import ConcreteModel

# What one run may build: the time-indexed MILP (3 K S variables, about 5 K S constraints), its build
# time and its handover to HiGHS (outside HiGHS's own time limit) per cell, measured in benchmarks/speed.md,
# constants.
MAX_MILP_CELLS = 20_000  # time-indexed MILP: applications x slots
MAX_MILP_TERMS = 2_000_000  # ... and Σ_k slots x the slots a compute covers (its compute constraints' terms)
MAX_PERIODS = 100  # periods given to the MILP
SECONDS_PER_MILP_CELL = 1.3e-3  # building one time-indexed model and loading it into HiGHS (the first)
HANDOVER_MILP = 6.0  # Pyomo hands the MILP to HiGHS in this multiple of its build time (the most measured)

MILP_SCOPE = "a time grid at the given periods (by default PerSched's three best, all <= K' t_min)"
Slots = Annotated[int | None, Integer(2)]
PERIODS_CHECK = ListOf(Number(0, lo_open=True), MAX_PERIODS, scalar=True)
Periods = Annotated[list | float | None, PERIODS_CHECK]  # s


def default_slots(instance: PeriodicInstance, period: float) -> int:
    """ceil(20 T / min_k w_k) slots (a compute loses at most 5 % to rounding), at most about
    2000 binaries in all and at least 12. With fewer than T / min_k w_k slots there is no
    relaxation (it needs δ <= min_k w_k) and the restriction is coarse."""
    ratio = period / min(a.work for a in instance.applications)
    return max(min(math.ceil(min(20 * ratio, 1e9)), 2000 // len(instance.applications)), 12)


def build_milp(instance: PeriodicInstance, period: float, slots: int | None = None,
               kind: str = "restriction", objective: str = "sys_efficiency") -> ConcreteModel:
    """A time-indexed MILP over S equal slots of the period T (s): which slots start a compute,
    how much each application moves in each slot.

    x[k,s] = 1 when an instance of k starts computing at slot s; the compute blocks c_k
    slots; v[k,s] is k's volume in slot s (at most β_k b δ, none while blocked), all
    together at most B δ; u[k,s] is the volume moved for k's current instance when slot s
    begins: u[k,s+1] = u[k,s] + v[k,s] - vol_k x[k,s+1] and u[k,s] <= vol_k (1 - x[k,s]),
    so exactly vol_k moves between two compute starts. n_k = Σ_s x[k,s] >= 1. Two cuts
    valid for every pattern of period T: n_k (w_k + time_io_k) <= T and Σ_k n_k vol_k <= B T,
    so the relaxation's optimum never exceeds the long-run LP bound.

    ``kind`` "restriction": c_k = ceil(w_k / δ); every solution is a real pattern (the
    compute starts on a slot boundary, rates are constant per slot).
    ``kind`` "relaxation": c_k = floor(w_k / δ) - 1 (a compute starting anywhere covers at
    least that many whole slots) and requires δ <= min_k w_k; its optimum bounds every
    pattern of period T, because any pattern maps to a solution: starts rounded up to the
    next slot boundary, volumes summed per slot.
    Objective: SysEfficiency Σ β_k w_k n_k / (N T), or "dilation": maximise z <= n_k
    (w_k + time_io_k) / T, the inverse of the Dilation. Slot 0 starts an instance of the
    first application (rotating a pattern by whole slots keeps it feasible).
    """
    choice("kind", kind, ("restriction", "relaxation"), error=ParameterError)
    choice("objective", objective, ("sys_efficiency", "dilation"), error=ParameterError)
    period = positive("period", period, error=ParameterError)
    S = default_slots(instance, period) if slots is None else integer("slots", slots, 2, error=ParameterError)
    check_milp_size(instance, S, period)
    apps = instance.applications
    delta = period / S
    if kind == "relaxation" and delta > min(a.work for a in apps) * (1 + 1e-12):
        raise ParameterError(f"the relaxation needs slots >= T / min_k w_k = {period / min(a.work for a in apps):.4g}"
                             f", got {S}")
    if kind == "restriction":
        blocks = [math.ceil(a.work / delta - 1e-9) for a in apps]
    else:
        blocks = [max(math.floor(a.work / delta + 1e-9) - 1, 0) for a in apps]
    B, N = instance.platform.bandwidth, instance.platform.processors
    m = pe.ConcreteModel(name=f"periodic-{kind}-T{period:g}-S{S}")
    m.K = pe.RangeSet(0, len(apps) - 1)
    m.S = pe.RangeSet(0, S - 1)
    m.x = pe.Var(m.K, m.S, domain=pe.Binary, doc="an instance of k starts computing at slot s")
    m.v = pe.Var(m.K, m.S, domain=pe.NonNegativeReals, doc="volume k moves in slot s")
    m.u = pe.Var(m.K, m.S, domain=pe.NonNegativeReals, doc="volume moved for k's current instance")

    def blocked(m, k, s):
        return sum(m.x[k, (s - j) % S] for j in range(blocks[k]))

    m.one_compute = pe.Constraint(m.K, m.S, rule=lambda m, k, s: blocked(m, k, s) <= 1 if blocks[k] > 1
                                  else pe.Constraint.Skip)
    m.rate = pe.Constraint(m.K, m.S, rule=lambda m, k, s: (
        m.v[k, s] <= instance.max_rate(k) * delta * (1 - blocked(m, k, s))))
    m.capacity = pe.Constraint(m.S, rule=lambda m, s: sum(m.v[k, s] for k in m.K) <= B * delta)
    m.flow = pe.Constraint(m.K, m.S, rule=lambda m, k, s: (
        m.u[k, (s + 1) % S] == m.u[k, s] + m.v[k, s] - apps[k].io_volume * m.x[k, (s + 1) % S]))
    m.reset = pe.Constraint(m.K, m.S, rule=lambda m, k, s: m.u[k, s] <= apps[k].io_volume * (1 - m.x[k, s]))
    m.n = pe.Expression(m.K, rule=lambda m, k: sum(m.x[k, s] for s in m.S))
    m.at_least_one = pe.Constraint(m.K, rule=lambda m, k: m.n[k] >= 1)
    # valid for every pattern of period T; they tie the relaxation to the long-run LP bound
    m.alone = pe.Constraint(m.K, rule=lambda m, k: m.n[k] * (apps[k].work + instance.time_io(k)) <= period)
    m.total_volume = pe.Constraint(expr=sum(m.n[k] * apps[k].io_volume for k in m.K) <= B * period)
    m.x[0, 0].fix(1)
    if objective == "sys_efficiency":
        m.obj = pe.Objective(expr=sum(apps[k].processors * apps[k].work * m.n[k] for k in m.K) / (N * period),
                             sense=pe.maximize)
    else:
        m.z = pe.Var(domain=pe.NonNegativeReals, doc="1 / Dilation")
        m.worst = pe.Constraint(m.K, rule=lambda m, k: (
            m.z <= m.n[k] * (apps[k].work + instance.time_io(k)) / period))
        m.obj = pe.Objective(expr=m.z, sense=pe.maximize)
    m._period, m._slots, m._kind, m._blocks = period, S, kind, blocks
    return m


def milp_pattern(instance: PeriodicInstance, model: ConcreteModel) -> Pattern:
    """The pattern of a solved restriction: computes on slot boundaries, a rate per slot.

    Volumes below 1e-9 of vol_k are solver tolerance, not transfers, and are dropped, as
    is anything in a slot the compute blocks.
    """
    T, S = model._period, model._slots
    delta = T / S
    B = instance.platform.bandwidth
    apps_ = instance.applications
    rate = {(k, s): (min(pe.value(model.v[k, s]) / delta, instance.max_rate(k))
                     if pe.value(model.v[k, s]) > 1e-9 * apps_[k].io_volume else 0.0)
            for k in model.K for s in model.S}
    load = [sum(rate[k, s] for k in model.K) for s in model.S]
    apps = []
    for k in model.K:
        starts = [s for s in model.S if pe.value(model.x[k, s]) > 0.5]
        insts = []
        for i, s0 in enumerate(starts):
            s1 = starts[(i + 1) % len(starts)] + (S if i + 1 == len(starts) else 0)
            segs = tuple(((s % S) * delta, (s % S + 1) * delta, rate[k, s % S] * min(1.0, B / load[s % S]))
                         for s in range(s0 + model._blocks[k], s1) if rate[k, s % S] > 0)
            insts.append(PatternInstance(s0 * delta, segs))
        apps.append(tuple(insts))
    return Pattern(T, tuple(apps))


def pattern_start(instance: PeriodicInstance, model: ConcreteModel, pattern: Pattern) -> str | None:
    """Set the restriction ``model``'s variables to ``pattern`` (same period), rotated so that the first
    instance of application 0 starts at slot 0, as a MIP start: computes on slot boundaries, each slot's
    volume the pattern's transfers inside it, u the volume moved since the instance began. Returns None
    when every constraint then holds (1e-6 relative), else why the pattern is not on the model's grid
    (the variables are then left unset: no start)."""
    T, S = model._period, model._slots
    if not math.isclose(pattern.period, T, rel_tol=1e-12):
        return f"the pattern's period {pattern.period!r} s is not the model's {T!r} s"
    delta, apps = T / S, instance.applications
    shift = pattern.applications[0][0].compute_start
    x = {(k, q): 0 for k in model.K for q in model.S}
    v = {(k, q): 0.0 for k in model.K for q in model.S}
    for k, insts in enumerate(pattern.applications):
        for inst in insts:
            at = ((inst.compute_start - shift) % T) / delta
            q = round(at) % S
            if abs(at - round(at)) > 1e-6:
                return (f"an instance of application {apps[k].name} starts computing {at % S:.6g} slots after the "
                        f"first of application {apps[0].name}, not on a slot boundary ({S} slots of {delta:.6g} s)")
            x[k, q] = 1
            for a, b, rate in inst.io:
                a, b = (a - shift) % T, (a - shift) % T + (b - a)  # may run past T: wraps to slot 0
                for q in range(math.floor(a / delta), math.ceil(b / delta)):
                    v[k, q % S] += rate * max(min(b, (q + 1) * delta) - max(a, q * delta), 0.0)
    u = {}
    for k in model.K:
        first = next((q for q in model.S if x[k, q]), None)
        if first is None:
            return f"application {apps[k].name} has no instance"
        u[k, first] = 0.0
        for i in range(first, first + S - 1):
            u[k, (i + 1) % S] = u[k, i % S] + v[k, i % S] - apps[k].io_volume * x[k, (i + 1) % S]
    if hasattr(model, "z"):  # the dilation's objective: 1 / Dilation
        u_z = min(sum(x[k, q] for q in model.S) * (apps[k].work + instance.time_io(k)) / T for k in model.K)
        model.z.set_value(u_z)
    for var, values in ((model.x, x), (model.v, v), (model.u, u)):
        for key, value in values.items():
            if not var[key].fixed:
                var[key].set_value(value, skip_validation=True)
    for con in model.component_data_objects(pe.Constraint, active=True):
        body, lo, hi = pe.value(con.body), pe.value(con.lower), pe.value(con.upper)
        if (lo is not None and body < lo - 1e-6 * max(1.0, abs(lo))) or (
                hi is not None and body > hi + 1e-6 * max(1.0, abs(hi))):
            for var in (model.x, model.v, model.u, getattr(model, "z", model.u)):
                for d in var.values():
                    if not d.fixed:
                        d.set_value(None)
            return f"it breaks the model's constraint {con.name} (slots of {delta:.6g} s)"
    return None


def check_milp_size(instance: PeriodicInstance, slots: int, period: float | None = None,
                    where: str = "period") -> None:
    """Refuse a time-indexed model above MAX_MILP_CELLS applications x slots, or with more than
    MAX_MILP_TERMS terms in its compute constraints (Σ_k slots x the slots a compute covers), or
    of a ``period`` shorter than some application's work (no pattern of it holds that application)."""
    apps = instance.applications
    cells = len(apps) * slots
    if cells > MAX_MILP_CELLS:
        raise ParameterError(f"slots = {slots}: {len(apps)} applications x {slots} slots = {cells} "
                             f"cells, above the MILP's limit of {MAX_MILP_CELLS}; slots <= "
                             f"{MAX_MILP_CELLS // len(apps)} fits")
    if period is None:
        return
    longest = max(range(len(apps)), key=lambda k: apps[k].work)
    if apps[longest].work > period:
        raise ParameterError(f"{where} = {period!r} s is shorter than applications[{apps[longest].name}].work = "
                             f"{apps[longest].work!r} s: no pattern of that period holds an instance of it")
    terms = sum(slots * math.ceil(a.work / (period / slots)) for a in apps)
    if terms > MAX_MILP_TERMS:
        raise ParameterError(f"slots = {slots} at {where} = {period:.6g} s: computes cover {terms} slot terms in "
                             f"all, above the MILP's limit of {MAX_MILP_TERMS}; fewer slots fit")


def _solve_kind(instance: PeriodicInstance, period: float, S: int, kind: str, objective: str, run: driver.ExactRun,
                notes: dict[str, Any], cost: dict[str, float], pattern: Pattern | None = None,
                timed: bool = True) -> tuple[ConcreteModel | None, SolveOutcome | None]:
    """Build and solve one time-indexed model within ``run``'s deadline (``timed``: else no time check).

    ``cost`` holds the seconds per cell that building and handing over took last time (or the
    constant), so that a model that cannot make it is not even built. ``pattern`` (of this period):
    a MIP start where it lies on the model's grid (:func:`pattern_start`); ``notes["start"]`` says
    whether it did, its model value, and whether the solver took it."""
    cells = len(instance.applications) * S
    if timed and (late := run.too_slow(cells, cost["per_cell"], f"{kind} ({cells} cells)")) is not None:
        notes.setdefault("skipped", late)
        return None, None
    start: dict[str, Any] = {"heuristic": "persched", "solver": run.profile.solver}

    def fits(model) -> bool:
        assert pattern is not None
        start["skipped"] = pattern_start(instance, model, pattern)
        if start["skipped"] is None:
            del start["skipped"]
            start["value"] = pe.value(model.obj)
        return "skipped" not in start

    model, out, note = solve_pyomo_within(lambda: build_milp(instance, period, S, kind, objective), run.profile,
                                          run.deadline if timed else None, HANDOVER_MILP,
                                          load=kind == "restriction", warm=fits if pattern is not None else False)
    if pattern is not None:
        notes["start"] = {**start, **{f"solver_{k}": v for k, v in ((out and out.start) or {}).items()}}
    if note:
        notes.setdefault("skipped", f"{kind}: {note}")
    cost["per_cell"] = (1 + HANDOVER_MILP) * model._build_s / cells
    return model, out


def solve_period(instance: PeriodicInstance, period: float, slots: int | None = None,
                 objective: str = "sys_efficiency", profile: Profile | None = None,
                 deadline: Deadline | None = None, kinds=("restriction", "relaxation"),
                 cost: dict | None = None, pattern: Pattern | None = None) -> dict:
    """Solve the restriction (from ``pattern``, of this period, where it is on the grid: ``start``
    says) and (when δ <= min w) the relaxation at one period.

    Returns the restriction's pattern (or None) and both solver outcomes; the relaxation's
    bound holds for every pattern of this period. With a ``deadline`` each solve gets what
    is left of it once the model is built and handed to the solver; a model that would not be
    built and handed over in that time is not solved (its outcome is None and ``skipped``
    says why). ``kinds`` limits which of the two are solved.
    """
    profile = profile or load_profile("default")
    run = driver.ExactRun(profile, deadline=deadline or Deadline(profile.time_limit))
    return _solve_period(instance, period, slots, objective, run, kinds, cost, pattern, timed=deadline is not None)


def _solve_period(instance: PeriodicInstance, period: float, slots: int | None, objective: str, run: driver.ExactRun,
                  kinds, cost: dict | None, pattern: Pattern | None, timed: bool = True) -> dict:
    S = default_slots(instance, period) if slots is None else slots
    cost = {"per_cell": SECONDS_PER_MILP_CELL} if cost is None else cost
    result: dict[str, Any] = {"period": period, "slots": S, "pattern": None, "restriction": None,
                              "relaxation": None}
    if "restriction" in kinds:
        model, out = _solve_kind(instance, period, S, "restriction", objective, run, result, cost, pattern, timed)
        result["restriction"] = out
        result["pattern"] = milp_pattern(instance, model) if model is not None and out is not None and \
            out.has_solution else None
    if "relaxation" in kinds and period / S <= min(a.work for a in instance.applications):
        result["relaxation"] = _solve_kind(instance, period, S, "relaxation", objective, run, result, cost,
                                           timed=timed)[1]
    return result


def _persched_pattern(instance: PeriodicInstance, period: float) -> Pattern | None:
    """PerSched's pattern at ``period`` (s), a start for the restriction; None where PerSched refuses it."""
    from iosched.heuristics.periodic_persched import build_pattern

    try:
        return build_pattern(instance, period)
    except (ParameterError, InstanceError):
        return None


def _same(pattern: Pattern | None) -> Pattern | None:
    return pattern


def _objective_bound(outcome, objective):
    """A solver bound on SysEfficiency, or the Dilation bound it implies (1 / z)."""
    if outcome is None or outcome.bound is None:
        return None
    if objective == "sys_efficiency":
        return outcome.bound
    return math.inf if outcome.bound <= 0 else 1.0 / outcome.bound


def _periods(periods) -> list[float] | None:
    """None, or the list of periods (s) that ``periods`` (one or a list) gives, checked as declared."""
    if periods is None:
        return None
    checked = PERIODS_CHECK("periods", periods, ParameterError)
    return checked if isinstance(checked, list) else [checked]


def _milp(instance: PeriodicInstance, objective: str, periods, slots, profile, k_prime, eps,
          context: RunContext | None) -> MethodOutput:
    from iosched.evaluate.periodic import evaluate
    from iosched.heuristics.periodic_kernel import method_deadline
    from iosched.heuristics.periodic_persched import plan_search, search

    entry = time.perf_counter()
    prof = as_profile(profile)
    periods = _periods(periods)
    if periods is None:
        plan = plan_search(instance, k_prime, eps)
    else:  # not searched, but checked all the same
        if k_prime is not None:
            number("k_prime", k_prime, 1, error=ParameterError)
        number("eps", eps, 0, 1, lo_open=True, hi_open=True, error=ParameterError)
        cap = instance.period_cap()
        for i, T in enumerate(periods):
            if T > cap:
                raise ParameterError(f"periods[{i}] = {T!r} s is above the instance's period cap K' t_min = "
                                     f"{instance.k_prime!r} x {instance.search_t_min()!r} s = {cap!r} s")
    if slots is not None:
        slots = integer("slots", slots, 2, error=ParameterError)
        check_milp_size(instance, slots)
    if periods is not None:
        for i, T in enumerate(periods):
            check_milp_size(instance, slots or default_slots(instance, T), T, f"periods[{i}]")
    sense = Sense.MAX if objective == "sys_efficiency" else Sense.MIN  # (its two methods' objectives)
    def evaluated(pattern: Pattern) -> float:
        return getattr(evaluate(instance, pattern), objective)

    # the whole method's deadline: the search and every solve
    run = driver.ExactRun(prof, evaluated, sense, MILP_SCOPE, method_deadline(prof.time_limit, entry, context))
    deadline, info = run.deadline, run.info
    warm_solver()
    if periods is None:  # the best PerSched periods of the search
        found = search(instance, k_prime=plan.k_prime, eps=plan.eps, objective=objective,  # within the cap
                       deadline=Deadline(SEARCH_SHARE * deadline.remaining()))  # the MILPs need the rest
        if found["stopped"]:
            info["search"] = f"PerSched's search stopped by the time limit after {len(found['trace'])} periods"
        score = {T: sys_efficiency(instance, c, T) if objective == "sys_efficiency" else -dilation(instance, c, T)
                 for T, c in found["trace"] if min(c) > 0}
        periods = []
        for T in sorted(score, key=score.__getitem__, reverse=True):  # three, at least eps apart
            if all(abs(T - p) > plan.eps * p for p in periods):
                periods.append(T)
            if len(periods) == 3:
                break
        if not periods:
            status = Status.TIME_LIMIT if found["stopped"] else Status.INFEASIBLE
            return MethodOutput(None, status, info={**info, "error": "no candidate period"})
        for T in periods:
            check_milp_size(instance, slots or default_slots(instance, T), T)
    patterns = {T: _persched_pattern(instance, T) for T in periods}
    # restrictions first (they give patterns), in PerSched's order of preference; then the
    # relaxations (bounds for their own period only) with whatever time is left
    cost = {"per_cell": SECONDS_PER_MILP_CELL}
    patterns = {T: _persched_pattern(instance, T) for T in periods}  # each its period's MIP start where on the grid
    solved = [_solve_period(instance, T, slots, objective, run, ("restriction",), cost, patterns[T]) for T in periods]
    for r in solved:
        r["relaxation"] = _solve_period(instance, r["period"], r["slots"], objective, run, ("relaxation",),
                                        cost, None)["relaxation"] if "skipped" not in r else None
    runs, best, best_value, timed_out = [], None, None, "search" in info
    for r in solved:
        run_: dict[str, Any] = {"period": r["period"], "slots": r["slots"], "restriction": None, "relaxation": None}
        runs.append(run_)
        if r["relaxation"] is not None:
            run_["relaxation"] = {"status": r["relaxation"].status.value,
                                  "bound": _objective_bound(r["relaxation"], objective),
                                  "time_s": r["relaxation"].wall_time_s}
        if "start" in r:
            run_["start"] = r["start"]
        if "skipped" in r:
            run_["skipped"] = r["skipped"]
            timed_out = True
        if r["restriction"] is None:
            continue
        value = r["restriction"].objective
        if objective == "dilation" and value:
            value = 1 / value
        run_["restriction"] = {"status": r["restriction"].status.value, "objective": value,
                               "bound": _objective_bound(r["restriction"], objective),
                               "time_s": r["restriction"].wall_time_s}
        timed_out = timed_out or r["restriction"].status == Status.TIME_LIMIT
        better = r["pattern"] is not None and (
            best_value is None or (value > best_value if objective == "sys_efficiency" else value < best_value))
        if better:
            best, best_value = r, value
    # the relaxations bound patterns of their own period only: they stay in info, and the
    # Result's bound is the problem's, valid for every pattern within the period cap
    info["periods"] = runs
    # the start: PerSched's best pattern among those on their period's grid (in the scope, each its period's
    # MIP start); one off the grid is outside the scope and is not returned
    on_grid: list[tuple[str, Callable[[], Pattern | None]]] = [
        (f"persched at {r['period']:.6g} s", functools.partial(_same, patterns[r["period"]])) for r in solved
        if "start" in r and "skipped" not in r["start"]]
    starts = driver.ranked(on_grid, evaluated, sense=sense)
    run.begin(starts[0] if starts else None)
    if best is None and run.start is None:
        return MethodOutput(None, Status.TIME_LIMIT if timed_out else Status.INFEASIBLE, info=info)
    if best is not None:  # the model's words: the chosen period's restriction, and its MIP start
        run.record(best["restriction"], best_value, _objective_bound(best["restriction"], objective),
                   period=best["period"])
        if "start" in best:  # value: the model's (SysEfficiency, or 1 / Dilation), as the backend's
            info["start"] = best["start"]
    status = Status.TIME_LIMIT if timed_out else Status.FEASIBLE
    return run.settle(None if best is None else best["pattern"], status, timed_out, what="pattern")


@register("periodic", "milp", objective="sys_efficiency",
          exact_over=MILP_SCOPE, prepare=compile_kernel)
def milp(instance: PeriodicInstance, periods: Periods = None, slots: Slots = None,
         profile: str = "default", k_prime: KPrime = None, eps: Eps = 0.01,
         *, context: RunContext | None = None) -> MethodOutput:
    """Time-indexed MILP (restriction) at the best PerSched periods or the given ones (at most the period cap).

    The best restriction's pattern, or PerSched's pattern at a period where it lies on the grid (in the scope:
    its MIP start there) where that scores better (``info["incumbent"]`` then says so)."""
    return _milp(instance, "sys_efficiency", periods, slots, profile, k_prime, eps, context)


@register("periodic", "milp-dilation", objective="dilation",
          exact_over=MILP_SCOPE, prepare=compile_kernel)
def milp_dilation(instance: PeriodicInstance, periods: Periods = None, slots: Slots = None,
                  profile: str = "default", k_prime: KPrime = None, eps: Eps = 0.01,
                  *, context: RunContext | None = None) -> MethodOutput:
    """The time-indexed MILP minimising Dilation."""
    return _milp(instance, "dilation", periods, slots, profile, k_prime, eps, context)

"""``periodic/exact``: the best pattern within the instance's period cap, by branch and bound over
instance counts (:mod:`iosched.models.periodic_counts`) with each leaf's shortest period solved exactly
(:mod:`iosched.models.periodic_leaf`).

Exact over every periodic pattern of period at most K' t_min (the problem), up to the solvers' tolerances:

* Every pattern has counts n (n_k >= 1) and a period T >= T*(n), the shortest period of any pattern with
  those counts, so its SysEfficiency is at most A(n) / T*(n) <= U(n) = A(n) / T_lb(n) (the relaxation's
  rows hold for every pattern). The search hands out count vectors in decreasing U; once no vector left
  has U above the incumbent (times 1 + ``gap``), no pattern is better by more than ``gap``.
* A type's total is split among its identical copies in every way whose per-application bound beats the
  incumbent (the relaxation over types holds for every split).
* A leaf n is closed when its value A(n) / T*(n) is known: where the peak demand fits, T*(n) = max_k n_k
  c_k and the back-to-back pattern attains it; with one contender, the leaf MILP finds T*(n), or proves no
  pattern with counts n has a period below A(n) / (N x incumbent) (then n cannot win). A leaf the MILP
  does not finish keeps the bound of its MILP; a leaf of any other instance keeps U(n): both stay in the
  bound reported, which is then above the incumbent, and the status is ``time_limit`` or ``feasible``.
* The incumbent starts from ``trace-compact`` (a share of the budget, ``info["start"]``: 30 %, or 95 % and a
  wider search where no leaf can be solved) and improves with every leaf solved; every pattern goes through
  the evaluator.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Annotated, Any

import numpy as np

from iosched.core import MethodOutput, RunContext, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.periodic import evaluate
from iosched.heuristics.periodic_kernel import compile_kernel, method_deadline
from iosched.instances.periodic import PeriodicInstance
from iosched.models.periodic_bounds import as_profile
from iosched.models.periodic_counts import CountSearch, relaxation, upper
from iosched.models.periodic_leaf import back_to_back, contender, solve_leaf
from iosched.validate import Number, number

START_SHARE = 0.3  # of the budget, at most this much goes to trace-compact for the first incumbent ...
OPEN_SHARE = 0.95  # ... or this much where no leaf can be solved (the rest of the method is then instant)
WIDE_SEARCH = {"priorities": ("syseff", "fcfs", "dilation"), "staggers": (0.0, 0.5, 1.0), "warmups": (2, 3, 5),
               "multiples": tuple(range(1, 13)), "matched": 20, "candidates": 400}
MAX_SPLITS = 10_000  # splits of one type's total among its copies tried per leaf
Gap = Annotated[float, Number(0, 0.1)]
# the problem's solutions are the patterns within the period cap (the evaluator rejects the others); info["exact_over"]
# names the case of the instance at hand
EXACT_OVER = ("every pattern of period <= K' t_min where the peak demand fits B or one application alone contends "
              "(else its bound holds over them and its pattern is trace-compact's)")


def _splits(total: int, parts: int, most: int):
    """Non-increasing tuples of ``parts`` integers in [1, most] summing to ``total``."""
    if parts == 1:
        if 1 <= total <= most:
            yield (total,)
        return
    for first in range(min(most, total - parts + 1), 0, -1):
        if first * parts < total:
            break
        for rest in _splits(total - first, parts - 1, first):
            yield (first, *rest)


def _per_app(rel_types, rel_apps, m: tuple, floor: float) -> list[tuple[float, tuple]] | None:
    """Every split of the type counts m among the copies whose per-application bound exceeds ``floor``: (U,
    counts per application), best first; None where a type has more than MAX_SPLITS splits."""
    options = []
    for t, members in enumerate(rel_types.members):
        most = int(np.floor(rel_types.t_max / rel_types.cycle[t] * (1 + 1e-12)))
        if floor > 0:  # a copy with more than gain m / (floor c) instances needs too long a period
            most = min(most, int(rel_types.gain @ np.asarray(m, float) / floor / rel_types.cycle[t] + 1))
        splits = []
        for s in _splits(int(m[t]), len(members), most):
            splits.append(s)
            if len(splits) > MAX_SPLITS:
                return None
        options.append(splits)
    out = []
    for combo in _product(options):
        counts = [0] * rel_apps.units
        for members, split in zip(rel_types.members, combo):
            for k, c in zip(members, split):
                counts[k] = c
        value, _ = upper(rel_apps, counts)
        if value > floor:
            out.append((value, tuple(counts)))
    return sorted(out, reverse=True)


def _balanced(rel, m: tuple) -> list[int]:
    """Per application, the type counts m split as evenly as possible among each type's copies."""
    counts = [0] * sum(len(ks) for ks in rel.members)
    for t, members in enumerate(rel.members):
        q, r = divmod(int(m[t]), len(members))
        for i, k in enumerate(members):
            counts[k] = q + (i < r)
    return counts


def _product(options):
    if not options:
        yield ()
        return
    for first in options[0]:
        for rest in _product(options[1:]):
            yield (first, *rest)


def _exact(instance: PeriodicInstance, profile, gap: float, context: RunContext | None) -> MethodOutput:
    entry = time.perf_counter()
    prof = as_profile(profile)
    gap = number("gap", gap, 0, 0.1, error=ParameterError)
    deadline = method_deadline(prof.time_limit, entry, context)
    rel = relaxation(instance)
    rel_apps = relaxation(instance, merged=False)
    fits, b = rel.peak_fits, contender(instance)
    exact_over = ("every pattern within the period cap (peak demand within B: back-to-back leaves)" if fits else
                  "every pattern within the period cap (one contender: leaf MILPs)" if b is not None else
                  "every pattern within the period cap for its bound; leaves are not solved (more than one "
                  "application's transfers compete): the incumbent is trace-compact's")
    best, best_value = None, 0.0
    info: dict[str, Any] = {"exact_over": exact_over, "leaves": 0, "leaves_solved": 0, "milps": 0,
                            "solver_time_s": 0.0}

    def consider(pattern, how):
        nonlocal best, best_value
        if pattern is None:
            return
        ev = evaluate(instance, pattern)
        if ev.feasible and ev.sys_efficiency > best_value:
            best, best_value = pattern, ev.sys_efficiency
            info["best_from"] = how

    if not fits:  # the first incumbent: trace-compact under a share of the budget
        from iosched.models.periodic_trace import trace_compact
        from iosched.solvers import Profile

        part = START_SHARE if b is not None else OPEN_SHARE
        share = Profile("exact-start", max(part * deadline.remaining(), 0.01), prof.rel_gap, prof.threads, prof.seed,
                        solver=prof.solver)
        # where no leaf can be solved, the incumbent is all there is: a wider search (it found a better pattern on
        # set 4: benchmarks/speed.md, constants)
        wide = {} if b is not None else WIDE_SEARCH
        found = trace_compact(instance, profile=share, **wide)
        consider(found.solution, "trace-compact")
        info["start"] = {"heuristic": "trace-compact", "value": best_value if best is not None else None,
                         "status": found.status.value}
    search = CountSearch(rel, deadline)
    open_bound = 0.0  # the largest bound of a leaf handed out but not closed
    stopped = False
    while True:
        leaf = search.next_leaf(best_value * (1 + gap))
        if leaf is None:
            stopped = deadline.expired()
            break
        m, leaf_bound, _ = leaf
        info["leaves"] += 1
        if fits:  # the balanced split runs back to back in T_lb(m) = max_t ceil(m_t / q_t) c_t: the leaf's bound
            consider(back_to_back(instance, _balanced(rel, m)), "back to back")
            info["leaves_solved"] += 1
            continue
        splits = None if b is None else _per_app(rel, rel_apps, m, best_value * (1 + gap))
        if splits is None:  # no leaf solver here (or too many splits): the leaf stays open at its bound
            open_bound = max(open_bound, leaf_bound)
            info["open_leaf"] = {"counts": list(m), "bound": leaf_bound}
            break
        for value, counts in splits:
            if value <= best_value * (1 + gap):
                continue
            if deadline.expired():
                open_bound = max(open_bound, value)
                stopped = True
                continue
            gain = float(rel_apps.gain @ np.asarray(counts, float))
            t_lo = upper(rel_apps, counts)[1] * rel.scale
            t_up = min(gain / (best_value * (1 + gap)) if best_value > 0 else np.inf, rel.t_max) * rel.scale
            leaf_prof = replace(prof, time_limit=max(deadline.remaining(), 0.01))
            out = solve_leaf(instance, list(counts), t_lo, max(t_up, t_lo), leaf_prof)
            info["milps"] += 1
            info["solver_time_s"] += out.get("solver_time_s", 0.0)
            consider(out["pattern"], f"leaf MILP {list(counts)}")
            if out["status"] in ("optimal", "infeasible"):
                info["leaves_solved"] += 1
            else:
                open_bound = max(open_bound, gain / (out["period_lb"] / rel.scale) if out["period_lb"] > 0 else value)
                stopped = stopped or out["status"] == "time_limit"
    bound = max(best_value, open_bound, search.bound())  # what is left in the search is below the incumbent
    info.update(model_bound=bound, nodes=search.nodes)
    if best is None:
        status = Status.TIME_LIMIT if stopped else Status.INFEASIBLE
        return MethodOutput(None, status, bound=bound if bound > 0 else None, info=info)
    optimal = bound <= best_value * (1 + gap)
    info["model_status"] = "optimal" if optimal else ("time_limit" if stopped else "feasible")
    status = Status.OPTIMAL if optimal else Status.TIME_LIMIT if stopped else Status.FEASIBLE
    if optimal:
        info["optimal"] = f"no count vector's bound exceeds the pattern's value by more than gap = {gap:g}"
    return MethodOutput(best, status, bound=bound, info=info)


@register("periodic", "exact", objective="sys_efficiency", exact_over=EXACT_OVER, prepare=compile_kernel)
def exact(instance: PeriodicInstance, profile: str = "default", gap: Gap = 1e-9,
          *, context: RunContext | None = None) -> MethodOutput:
    """Branch and bound over instance counts, each leaf's shortest period solved exactly (peak within B, or
    one contender); exact over every pattern within the period cap, up to ``gap`` (relative)."""
    return _exact(instance, profile, gap, context)

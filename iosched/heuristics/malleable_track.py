"""Fluid tracking: plan the workload as a fluid, then follow the plan with real jobs (method ``fluid-track``).

**The fluid plan.** Relax the checks, the resize costs and the run's contiguity, keep the ladder sizes and the
nodes: a *free* schedule. For a fixed order of events (the arrivals at their times and the completions in a
given order, merged) the best free schedule is an LP over node configurations (:mod:`iosched.models.malleable_fluid`,
whose search over every order bounds the problem; here one order per round). Its value is the free optimum *for
that order only*: not a bound on the problem, and ``info`` says so.

**Tracking.** An event simulation of the real rules (:mod:`iosched.evaluate.malleable`): a job starts when its
plan starts it and its plan's size (or a share of it) fits in the free nodes; at each of its checks
(start + k period) it shrinks to the smallest size its plan gives it over the next period or part of it (so
that the nodes are free when a job the plan starts needs them) or expands to the plan's size as far as the free
nodes allow, paying the resize's cost; it runs until its work is done. A few such rules (VARIANTS) follow each
plan; the best is kept. The schedule is then polished off the simulation's choices
(:func:`iosched.models.malleable_polish.polish`) and scored by the evaluator.

**Rounds.** The realised schedule's completion order is the next round's event order (the first comes from
DMR's policy and the rigid list, the better of the two); where it was planned before, a random neighbour of the
best round's order instead, one swap away, or more where those were all planned (an iterated local search over
orders); rounds stop after ``rounds``, at the time limit, where every order drawn was planned before, or where
the best meets the problem's bound (computed first, in BOUND_SHARE of the budget). The best schedule of any round
is returned: a heuristic, certified only where it meets the problem's bound.
"""

from __future__ import annotations

import heapq
import math
import random
import time
from collections.abc import Sequence
from typing import Annotated, Any

from iosched.core import CERTIFIED_GAP, HEURISTIC, MethodOutput, RunContext, Status, register
from iosched.evaluate.malleable import Interval, Schedule, evaluate
from iosched.heuristics.malleable import dmr
from iosched.heuristics.malleable_list import rigid_list
from iosched.instances.malleable import MalleableInstance
from iosched.models.malleable_bounds import BOUND_SHARE, bound
from iosched.models.malleable_fluid import ARRIVAL, COMPLETION, Event, Free
from iosched.models.malleable_polish import polish
from iosched.solvers import Deadline, load_profile
from iosched.validate import Integer

VARIANTS = tuple((share, ahead) for share in (0.25, 0.5, 0.75, 1.0) for ahead in (0.0, 0.5, 1.0))  # tracking rules
#   tried per plan: a job starts once this share of its plan's size fits; a shrink looks this many periods ahead
NEIGHBOURS = 200  # random neighbours drawn at each distance (swaps) before the search moves one swap further


def _size_at(plan: list[tuple[float, float, int]], t: float) -> int:
    """The plan's size at time t (the pieces of one interval are laid end to end from its start)."""
    for start, end, p in plan:
        if start <= t < end:
            return p
    return 0


class _Tracker:
    """The event simulation of the module docstring."""

    def __init__(self, instance: MalleableInstance, plans: list[list[tuple[float, float, int]]], share: float,
                 ahead: float):
        self.jobs, self.nodes, self.plans = instance.jobs, instance.nodes, plans
        self.share, self.ahead = share, ahead
        n = len(self.jobs)
        self.size, self.work, self.since = [0] * n, [0.0] * n, [0.0] * n  # since: the current run's progress start
        self.run_start, self.start = [0.0] * n, [math.nan] * n
        self.version = [0] * n
        self.intervals: list[list[tuple[float, float, int, str]]] = [[] for _ in range(n)]
        self.held = 0
        self.releases: list[tuple[float, int]] = []  # (time, nodes) of shrinks not yet over
        self.events: list[tuple[float, int, int, int]] = []  # (time, kind, job, version): 0 completion, 1 ready,
        #                                                      2 check, 3 release
        self.waiting: list[int] = []
        self.finished = 0

    def free(self, t: float) -> int:
        while self.releases and self.releases[0][0] <= t:
            self.held -= heapq.heappop(self.releases)[1]
        return self.nodes - self.held

    def ends(self, j: int, t: float) -> None:
        self.version[j] += 1
        remaining = (1 - self.work[j]) * self.jobs[j].times[self.jobs[j].sizes.index(self.size[j])]
        heapq.heappush(self.events, (max(t, self.since[j]) + remaining, 0, j, self.version[j]))

    def progress(self, j: int, t: float) -> None:
        if t > self.since[j]:
            self.work[j] += (t - self.since[j]) / self.jobs[j].times[self.jobs[j].sizes.index(self.size[j])]
            self.since[j] = t

    def check(self, j: int, t: float) -> None:
        job, plan, p = self.jobs[j], self.plans[j], self.size[j]
        ahead = [q for q in (_size_at(plan, t + x * self.ahead * job.period / 4) for x in range(5)) if q]
        now = _size_at(plan, t)
        q = p
        if ahead and min(ahead) < p:
            q = max([s for s in job.sizes if s <= min(ahead)], default=job.sizes[0])
        elif now > p:
            free = self.free(t)
            q = max([s for s in job.sizes if p < s <= now and s - p <= free], default=p)
        self.progress(j, t)
        cost = job.reconfig_s + job.redistribute_s / min(p, q) if q != p else 0.0
        if q != p and (1 - self.work[j]) * job.times[job.sizes.index(p)] > cost:
            self.intervals[j].append((self.run_start[j], t, p, "run"))
            if cost > 0:
                self.intervals[j].append((t, t + cost, max(p, q), "reconfig"))
            if q > p:
                self.held += q - p
            else:
                heapq.heappush(self.releases, (t + cost, p - q))
                heapq.heappush(self.events, (t + cost, 3, j, 0))
            self.size[j], self.since[j], self.run_start[j] = q, t + cost, t + cost
            self.ends(j, t)
            k = math.floor((t + cost - self.start[j]) / job.period) + 1  # checks during the resize are skipped
            heapq.heappush(self.events, (self.start[j] + k * job.period, 2, j, 0))
        else:
            heapq.heappush(self.events, (t + job.period, 2, j, 0))

    def start_waiting(self, t: float) -> None:
        free, still = self.free(t), []
        for j in sorted(self.waiting, key=lambda j: (self.plans[j][0][0] if self.plans[j] else 0.0, j)):
            job = self.jobs[j]
            want = _size_at(self.plans[j], t) or (self.plans[j][0][2] if self.plans[j] else job.sizes[0])
            fits = [s for s in job.sizes if s <= min(want, free)]
            if fits and max(fits) >= self.share * want:
                p = max(fits)
                self.start[j], self.size[j], self.since[j], self.run_start[j] = t, p, t, t
                self.held += p
                free -= p
                self.ends(j, t)
                heapq.heappush(self.events, (t + job.period, 2, j, 0))
            else:
                still.append(j)
        self.waiting = still

    def run(self, deadline: Deadline) -> Schedule | None:
        for j, (job, plan) in enumerate(zip(self.jobs, self.plans)):
            heapq.heappush(self.events, (max(job.arrival, plan[0][0] if plan else job.arrival), 1, j, 0))
        steps = 0
        while self.events:
            steps += 1
            if steps % 4096 == 0 and deadline.expired():
                return None
            t, kind, j, version = heapq.heappop(self.events)
            if kind == 0:
                if version != self.version[j]:
                    continue
                self.intervals[j].append((self.run_start[j], t, self.size[j], "run"))
                self.held -= self.size[j]
                self.size[j], self.finished = 0, self.finished + 1
            elif kind == 1:
                self.waiting.append(j)
            elif kind == 2:
                if self.size[j]:
                    self.check(j, t)
                continue
            self.start_waiting(t)
        if self.finished < len(self.jobs):
            return None
        return Schedule({job.id: tuple(Interval(*iv) for iv in ivs if iv[1] > iv[0])
                         for job, ivs in zip(self.jobs, self.intervals)})


def completion_order(instance: MalleableInstance, schedule: Schedule) -> list[Event]:
    """The arrivals and the schedule's completions merged in time order (arrivals first at equal times)."""
    events = [(job.arrival, ARRIVAL, ARRIVAL, j) for j, job in enumerate(instance.jobs)]
    events += [(schedule.jobs[job.id][-1].end, COMPLETION, COMPLETION, j) for j, job in enumerate(instance.jobs)]
    return [(kind, j) for _, _, kind, j in sorted(events)]


def swapped(order: Sequence[Event], rng: random.Random) -> list[Event]:
    """``order`` with two adjacent events swapped where that keeps every completion after its arrival (two
    completions, or a completion and another job's arrival)."""
    out = list(order)
    places = [k for k in range(len(out) - 1)
              if out[k][1] != out[k + 1][1] and COMPLETION in (out[k][0], out[k + 1][0])]
    if places:  # (a single job has none)
        k = rng.choice(places)
        out[k], out[k + 1] = out[k + 1], out[k]
    return out


@register("malleable", "fluid-track", objective="mean_completion", exact_over=HEURISTIC, randomized=True)
def fluid_track(instance: MalleableInstance, rounds: Annotated[int, Integer(1, 10**6)] = 1000,
                profile: str = "default", seed: Annotated[int | None, Integer(0)] = 0, *,
                context: RunContext | None = None) -> MethodOutput:
    """Plan the workload as a fluid for an order of events (an LP over configurations), follow the plan with
    real jobs at their checks, polish; the realised completion order is the next round's (module docstring);
    where an order comes back, a random neighbour of the best one (two adjacent events swapped, from ``seed``);
    the best of at most ``rounds`` rounds within the profile's time limit, its LPs on the profile's backend."""
    prof = load_profile(profile)
    deadline, solver = Deadline.for_method(prof.time_limit, context=context), prof.solver
    # the problem's bound first (remembered for solve to attach, as cpsat does): the search stops where it is met
    lower = bound(instance, "mean_completion", Deadline(BOUND_SHARE * deadline.remaining()), solver)
    begun = time.perf_counter()
    best = None
    history: list[dict[str, Any]] = []
    for name, start in (("dmr", dmr(instance, time_limit=prof.time_limit, context=context)),
                        ("rigid-list", rigid_list(instance, iterations=100, restarts=2, time_limit=prof.time_limit,
                                                  context=context))):
        if start.solution is not None:
            value = evaluate(instance, start.solution).mean_completion
            if best is None or value < best[0]:
                best = (value, start.solution, name)
    if best is None:
        return MethodOutput(None, Status.TIME_LIMIT if deadline.expired() else Status.ERROR,
                            info={"error": "no start schedule"})
    order = completion_order(instance, best[1])
    best_order, rng, stopped, seen = order, random.Random(seed), False, set()
    free = Free(instance, solver)  # (its pool of configurations serves every round's LP)
    for _ in range(rounds):
        if deadline.expired():
            stopped = True
            break
        for draw in range(NEIGHBOURS * len(best_order)):  # the realised order was planned before: a neighbour
            if tuple(order) not in seen:  # of the best one, further away (more swaps) as the near ones run out
                break
            order = best_order
            for _ in range(1 + draw // NEIGHBOURS):
                order = swapped(order, rng)
        else:
            break  # (every order drawn was planned before: a small workload is done)
        seen.add(tuple(order))
        planned = free.schedule(tuple(order), deadline)
        if planned is None:  # (its column generation did not converge by the deadline)
            stopped = True
            break
        plans: list[list[tuple[float, float, int]]] = [[] for _ in instance.jobs]
        for start, end, configuration in planned.runs:
            for j, p in configuration.items():
                plans[j].append((start, end, p))
        runs = [_Tracker(instance, plans, share, ahead).run(deadline) for share, ahead in VARIANTS]
        tracked = [t for t in runs if t is not None]
        if len(tracked) < len(runs):
            stopped = True
            break
        scored = [(e.mean_completion, k) for k, e in enumerate(evaluate(instance, t) for t in tracked) if e.feasible]
        if not scored:  # (the simulation follows the evaluator's rules: a violation would be a bug, said here)
            history.append({"plan": planned.value / len(instance.jobs), "tracked": None,
                            "violation": str(evaluate(instance, tracked[0]).violations[0])})
            continue
        followed, k = min(scored)
        polished = polish(instance, tracked[k], solver, deadline)
        value = evaluate(instance, polished).mean_completion
        history.append({"plan": planned.value / len(instance.jobs), "tracked": followed, "rule": list(VARIANTS[k]),
                        "polished": value})
        order = completion_order(instance, polished)
        if value < best[0]:
            best, best_order = (value, polished, "fluid tracking"), order
        if lower is not None and best[0] <= lower + CERTIFIED_GAP * abs(lower):
            break  # (optimal: nothing to search for)
    info = {"rounds": history, "from": best[2], "time_s": time.perf_counter() - begun,
            "plan_is": "the best free schedule (no checks, costs or contiguity) for that round's order only: "
                       "not a bound"}
    return MethodOutput(best[1], Status.TIME_LIMIT if stopped else Status.FEASIBLE, info=info)

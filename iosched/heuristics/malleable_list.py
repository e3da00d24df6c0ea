"""Rigid list scheduling with a local search over sizes and priorities (``rigid-list``).

Every job runs once, at one ladder size, from start to end. :func:`list_schedule` is greedy
list scheduling without reservations: at every arrival and every end, the waiting jobs are
started in priority order whenever their nodes are free. The method starts from the job's
smallest-area size (and, as alternatives, its second size and its preferred size), smallest
area first (the preemptive optimum's order on one machine), then tries ``iterations`` random
moves (one job's size, or its place in the priority order) and keeps a move that does not
make the mean completion time worse; it does so ``restarts`` times from the same start, each
with its own random stream, and keeps the best (a single search stalls in local optima: on
``paper:50``, seeds 0-7, one search of 1,000 moves ends at 1,466-1,488.5 s, the best of 10 at
1,466-1,478 s). A baseline that knows the run times, as the exact models
do (DMR and the rigid policies only see requests and checks); it gives CP-SAT its hints.
"""

from __future__ import annotations

import heapq
from bisect import insort
from collections.abc import Mapping, Sequence
from typing import Annotated

import numpy as np
import numpy.typing as npt

from iosched.core import HEURISTIC, MethodOutput, RunContext, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.malleable import Interval, Schedule
from iosched.instances.malleable import Job, MalleableInstance
from iosched.solvers import Deadline
from iosched.validate import Integer, TimeLimit, integer


def list_schedule(nodes: int, arrival, sizes, durations, priority) -> np.ndarray:
    """Start times of greedy list scheduling on ``nodes`` nodes: job j arrives at ``arrival[j]``
    and runs at ``sizes[j]`` nodes for ``durations[j]``; at every arrival and every end the waiting
    jobs are started in ``priority`` order (smaller first) whenever their nodes are free. Event
    times are sums of arrivals and durations (on a grid when they are)."""
    n = len(arrival)
    arrivals = sorted(range(n), key=lambda i: arrival[i])
    start = np.zeros(n)
    free, nxt = nodes, 0
    waiting: list[tuple[float, int]] = []  # (priority, job), sorted
    running: list[tuple[float, int]] = []  # heap of (end, nodes)
    t = arrival[arrivals[0]]
    while nxt < n or waiting:
        while nxt < n and arrival[arrivals[nxt]] <= t:
            i = arrivals[nxt]
            insort(waiting, (priority[i], i))
            nxt += 1
        while running and running[0][0] <= t:
            free += heapq.heappop(running)[1]
        if waiting and free:
            kept = []
            for key, i in waiting:
                if sizes[i] <= free:
                    start[i] = t
                    free -= sizes[i]
                    heapq.heappush(running, (t + durations[i], sizes[i]))
                else:
                    kept.append((key, i))
            waiting = kept
        t = min(arrival[arrivals[nxt]] if nxt < n else np.inf, running[0][0] if running else np.inf)
    return start


Searched = tuple[float, np.ndarray, list[int], int, int]  # (mean completion, starts, sizes, moves tried, kept)


def search(nodes: int, arrival: npt.ArrayLike, durations: Sequence[Mapping[int, float]],
           initial: Sequence[tuple[list[int], np.ndarray]], iterations: int,
           seed: int | np.random.SeedSequence | None, deadline: Deadline) -> Searched:
    """Local search from the best of ``initial`` (sizes, priorities) pairs: a random job's size
    (``durations[j]`` maps each of its sizes to a run time) or its priority, kept when the mean
    completion (end - arrival) does not grow. Returns (mean, starts, sizes, moves tried, kept)."""
    arrival = np.asarray(arrival, dtype=float)
    n = len(arrival)

    def mean(sizes, priority):
        run = [durations[j][p] for j, p in enumerate(sizes)]
        starts = list_schedule(nodes, arrival, sizes, run, priority)
        return float(np.mean(starts + run - arrival)), starts

    value, starts, sizes, priority = min(((*mean(s, p), s, p) for s, p in initial), key=lambda c: c[0])
    rng = np.random.default_rng(seed)
    tried = kept = 0
    while tried < iterations and not deadline.expired():
        tried += 1
        i = int(rng.integers(n))
        s2, p2 = list(sizes), priority.copy()
        if rng.random() < 0.5:
            s2[i] = int(rng.choice(list(durations[i])))
        else:
            p2[i] *= rng.uniform(0.5, 1.5)
        v, st = mean(s2, p2)
        if v <= value:
            value, starts, sizes, priority, kept = v, st, s2, p2, kept + 1
    return value, starts, sizes, tried, kept


def restarted(nodes: int, arrival: npt.ArrayLike, durations: Sequence[Mapping[int, float]],
              initial: Sequence[tuple[list[int], np.ndarray]], iterations: int, restarts: int,
              seed: int | None, deadline: Deadline) -> Searched:
    """The best of ``restarts`` :func:`search` runs, each with its own random stream spawned from ``seed``
    (the same result as :func:`search`, moves tried and kept summed over the runs)."""
    integer("restarts", restarts, 1, error=ParameterError)
    first, *others = np.random.SeedSequence(seed).spawn(restarts)
    best = search(nodes, arrival, durations, initial, iterations, first, deadline)
    tried, kept = best[3], best[4]
    for stream in others:
        if deadline.expired():
            break
        out = search(nodes, arrival, durations, initial, iterations, stream, deadline)
        tried, kept = tried + out[3], kept + out[4]
        if out[0] < best[0]:
            best = out
    return (*best[:3], tried, kept)


def _smallest_area(job: Job) -> int:
    """The job's ladder size of least area (nodes x run time), the first on a tie."""
    return min(job.sizes, key=lambda p: p * job.time(p))


def initial(instance: MalleableInstance) -> list[tuple[list[int], np.ndarray]]:
    """Sizes (smallest area, second size, preferred) with the smallest-area-first order."""
    jobs = instance.jobs
    smallest = [_smallest_area(j) for j in jobs]
    second = [j.sizes[min(1, len(j.sizes) - 1)] for j in jobs]
    preferred = [j.preferred or j.sizes[0] for j in jobs]
    return [(sizes, np.array([p * j.time(p) for j, p in zip(jobs, sizes)])) for sizes in (smallest, second, preferred)]


@register("malleable", "rigid-list", objective="mean_completion", exact_over=HEURISTIC, randomized=True)
def rigid_list(instance: MalleableInstance, iterations: Annotated[int, Integer(0, 10**7)] = 1000,
               restarts: Annotated[int, Integer(1, 10**4)] = 10, seed: Annotated[int | None, Integer(0)] = 0,
               time_limit: TimeLimit = None, *, context: RunContext | None = None) -> MethodOutput:
    """Rigid list scheduling (smallest area first), then ``restarts`` local searches of ``iterations``
    moves over sizes and order (random streams spawned from ``seed``); the best is kept."""
    deadline = Deadline.for_method(time_limit, context=context)
    jobs = instance.jobs
    _, starts, sizes, tried, kept = restarted(instance.nodes, [j.arrival for j in jobs],
                                              [dict(zip(j.sizes, j.times)) for j in jobs], initial(instance),
                                              iterations, restarts, seed, deadline)
    schedule = Schedule({j.id: (Interval(float(s), float(s) + j.time(p), p, "run"),)
                         for j, s, p in zip(jobs, starts, sizes)})
    status = Status.TIME_LIMIT if tried < iterations * restarts else Status.FEASIBLE
    return MethodOutput(schedule, status, info={"moves_tried": tried, "moves_kept": kept,
                                                "sizes": dict(zip((j.id for j in jobs), sizes))})

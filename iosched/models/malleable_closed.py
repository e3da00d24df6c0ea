"""Closed-form lower bounds on malleable-job schedules, valid for every schedule: what the problem's bound
(:mod:`iosched.models.malleable_bounds`) and the interval LP (:mod:`iosched.models.malleable_lp`) build on.

A job needs at least Tmin_j = min_p runtime_j(p) seconds and min_p p runtime_j(p) node-seconds
(a job's area at p nodes is p runtime(p) for the whole work; any mix of sizes and costs takes
at least the smallest). So C_j >= a_j + Tmin_j; and the nodes form one machine of speed N on
which every schedule is a preemptive schedule of the areas, so the sum of completions is at
least that of SRPT on the areas with the release dates (optimal for 1|r_j, pmtn|ΣC_j), and the
makespan at least max_t (t + area released from t on / N).
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from iosched.instances.malleable import MalleableInstance


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

"""Improving an allocation one job at a time, exactly for that job: the exact method's incumbent
(:mod:`iosched.models.forwarding_exact`) before its bound is asked to meet it.

**One move.** Take job j out of an allocation and freeze every other job u's I/O time T_u (running jobs
included). Put j back on any nodes, in any groups, such that no other user's part time exceeds its job's
frozen time: no other job then gets slower, so the score changes by T_j' - T_j only. The least T_j' is a
one-threshold problem: on a node, j's part time and every other user's part time are non-decreasing in
j's compute nodes c there (:mod:`iosched.models.forwarding_configs`), so within a threshold theta j may
have the first c_f(theta) of them, and the least theta whose nodes hold n_j is found by bisection over
j's part times. j's current groups are within theta = T_j, so the move never loses; times are the
evaluator's own, so the new score is what the evaluator says.

:func:`polish` repeats the move over the jobs, the slowest against their own best first, until a round
improves nothing or the deadline passes.
"""

from __future__ import annotations

import math

import numpy as np

from iosched.evaluate.forwarding import Allocation, machine_times
from iosched.instances.forwarding import ForwardingInstance, Job
from iosched.models.forwarding_configs import NodeClass, part_times, users
from iosched.solvers import Deadline

SLACK = 1e-12  # the relative allowance of a time comparison (rounding: see forwarding_exact)
Groups = tuple[tuple[int, int], ...]  # a job's (forwarding node, compute nodes there), as Allocation.mapping holds


def _users_by_node(instance: ForwardingInstance, mapping: dict[str, Groups]) -> dict[int, dict[str, int]]:
    """Per node, its users' compute nodes there: the running jobs and the jobs to place in ``mapping``."""
    on: dict[int, dict[str, int]] = {}
    for j, groups in [(r.id, instance.groups(r)) for r in instance.running] + list(mapping.items()):
        for f, c in groups:
            on.setdefault(f, {})
            on[f][j] = on[f].get(j, 0) + c
    return on


def _times(instance: ForwardingInstance, mapping: dict[str, Groups]) -> dict[str, float]:
    """Every running job's and every job in ``mapping``'s I/O time."""
    placed = [j for j in instance.jobs if j.id in mapping]
    return machine_times(instance, {**{r.id: instance.groups(r) for r in instance.running}, **mapping},
                         list(instance.running) + placed)


def best_move(instance: ForwardingInstance, mapping: dict[str, Groups], job: Job, usable: list[int],
              times: dict[str, float], limit: float) -> tuple[float, Groups] | None:
    """Job ``job``'s least time, at most ``limit``, and groups reaching it, beside the jobs of ``mapping`` (its
    own entry ignored) with every other user's time frozen at ``times`` (module docstring); None if none."""
    by_id = {j.id: j for j in list(instance.running) + list(instance.jobs)}
    on = _users_by_node(instance, {k: v for k, v in mapping.items() if k != job.id})
    classes: dict[tuple[float, tuple[tuple[str, int], ...]], list[int]] = {}
    for f in usable:
        others = tuple(sorted(on.get(f, {}).items()))
        classes.setdefault((instance.capacity(f), others), []).append(f)
    counts = np.arange(1, job.nodes + 1)[:, None]
    table = instance.interference.slowdown
    mine: list[np.ndarray] = []
    allowed: list[np.ndarray] = []
    nodes: list[list[int]] = []
    for (capacity, others), fs in classes.items():
        cls = NodeClass(capacity, tuple((by_id[u], c) for u, c in others), tuple(fs))
        t = part_times(users(instance, [job], cls), capacity, table, counts)
        frozen = np.array([times[u] for u, _ in others]) * (1 + SLACK)
        allowed.append(np.cumprod(~(t[:, 1:] > frozen).any(axis=1)).astype(bool))
        mine.append(t[:, 0])
        nodes.append(fs)
    values = np.unique(np.concatenate([t[ok] for t, ok in zip(mine, allowed)]))
    values = values[values <= limit]

    def held(theta: float) -> list[int]:  # compute nodes each class's nodes may hold within theta
        return [int(np.cumprod(ok & ~(t > theta * (1 + SLACK))).sum()) for t, ok in zip(mine, allowed)]

    if not len(values) or sum(h * len(fs) for h, fs in zip(held(values[-1]), nodes)) < job.nodes:
        return None
    lo, hi = 0, len(values) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if sum(h * len(fs) for h, fs in zip(held(values[mid]), nodes)) >= job.nodes:
            hi = mid
        else:
            lo = mid + 1
    left, groups = job.nodes, []
    for h, fs in sorted(zip(held(values[lo]), nodes), key=lambda x: -x[0]):
        for f in fs:
            if left and h:
                groups.append((f, min(h, left)))
                left -= min(h, left)
    return float(values[lo]), tuple(groups)


def make_room(instance: ForwardingInstance, mapping: dict[str, Groups], job: Job, usable: list[int],
              deadline: Deadline) -> dict[str, Groups] | None:
    """Job ``job`` on the nodes of its best placement among the running jobs alone (their times frozen), the
    jobs to place found there moved elsewhere (smallest links first: the large ones fill what is left), every
    other time frozen; a moved job may end slower than it was by what ``job`` gained less what the moved ones
    before it lost. The new mapping, or None when ``job`` gains nothing or a moved job finds no room. No other
    time rises and the moved jobs lose less than ``job`` gains, so the score falls."""
    times = _times(instance, mapping)
    found = best_move(instance, {}, job, usable, times, times[job.id] * (1 - SLACK))
    if found is None:
        return None
    gain = times[job.id] - found[0]
    there = {f for f, _ in found[1]}
    moved = [e for e in instance.jobs if e.id != job.id and any(f in there for f, _ in mapping[e.id])]
    trial = {k: v for k, v in mapping.items() if k not in {e.id for e in moved}}
    trial[job.id] = found[1]
    for e in sorted(moved, key=lambda e: e.io_nodes * e.node_bandwidth):
        if deadline.expired():
            return None
        limit = times[e.id] + gain * (1 - 1e-6)
        placed = best_move(instance, trial, e, usable, _times(instance, trial), limit)
        if placed is None:
            return None
        gain -= max(0.0, placed[0] - times[e.id])
        trial[e.id] = placed[1]
    return trial


def insert_rest(instance: ForwardingInstance, mapping: dict[str, Groups], usable: list[int],
                deadline: Deadline) -> Allocation | None:
    """``mapping`` (some of the jobs to place) completed with the others, smallest links first, each at its least
    time with every time already there frozen (:func:`best_move`); None when one finds no room or time is up."""
    mapping = dict(mapping)
    for j in sorted((j for j in instance.jobs if j.id not in mapping), key=lambda j: j.io_nodes * j.node_bandwidth):
        if deadline.expired():
            return None
        placed = best_move(instance, mapping, j, usable, _times(instance, mapping), math.inf)
        if placed is None:
            return None
        mapping[j.id] = placed[1]
    avoid = not any(instance.node[f].anomalous for g in mapping.values() for f, _ in g)
    return Allocation(mapping, frozenset(), avoid)


def usable_nodes(instance: ForwardingInstance) -> list[int]:
    """Every forwarding node but those dedicated to a running job."""
    return [f.id for f in instance.forwarding_nodes if f.id not in instance.reserved]


def polish(instance: ForwardingInstance, allocation: Allocation, own: dict[str, float] | None,
           deadline: Deadline) -> tuple[Allocation, int]:
    """``allocation`` improved by moves (module docstring), then by making room for the jobs still above their
    own best (:func:`make_room`), until neither improves; returns it and the moves made."""
    usable = usable_nodes(instance)
    mapping = {j.id: tuple(allocation.mapping[j.id]) for j in instance.jobs}
    floor = own or {}
    moves, improved = 0, True
    while improved and not deadline.expired():
        improved = False
        times = _times(instance, mapping)
        late = sorted((j for j in instance.jobs if times[j.id] > floor.get(j.id, 0.0) * (1 + SLACK)),
                      key=lambda j: -(times[j.id] - floor.get(j.id, 0.0)))
        for j in late:
            if deadline.expired():
                break
            found = best_move(instance, mapping, j, usable, times, times[j.id] * (1 - SLACK))
            if found is not None:
                mapping[j.id] = found[1]
                times = _times(instance, mapping)
                moves, improved = moves + 1, True
        for j in ([] if improved else late):
            if deadline.expired():
                break
            trial = make_room(instance, mapping, j, usable, deadline)
            if trial is not None:
                mapping, moves, improved = trial, moves + 1, True
                break
    avoid = not any(instance.node[f].anomalous for g in mapping.values() for f, _ in g)
    return Allocation(mapping, frozenset(), avoid), moves

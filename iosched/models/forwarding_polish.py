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

import numpy as np

from iosched.evaluate.forwarding import Allocation, machine_times
from iosched.instances.forwarding import ForwardingInstance, Job
from iosched.models.forwarding_configs import NodeClass, part_times, users
from iosched.solvers import Deadline

SLACK = 1e-12  # the relative allowance of a time comparison (rounding: see forwarding_exact)


def _users_by_node(instance: ForwardingInstance, mapping: dict) -> dict[int, dict[str, int]]:
    on: dict[int, dict[str, int]] = {}
    for j in list(instance.running) + list(instance.jobs):
        for f, c in (mapping[j.id] if j.id in mapping else instance.groups(j)):
            on.setdefault(f, {})
            on[f][j.id] = on[f].get(j.id, 0) + c
    return on


def best_move(instance: ForwardingInstance, mapping: dict, job: Job, usable: list[int],
              times: dict[str, float]) -> tuple[float, tuple] | None:
    """Job ``job``'s least time, and groups reaching it, with every other job's time frozen at ``times``
    (module docstring); None when it cannot beat its current time."""
    by_id = {j.id: j for j in list(instance.running) + list(instance.jobs)}
    on = _users_by_node(instance, mapping)
    classes: dict[tuple, list[int]] = {}
    for f in usable:
        others = tuple(sorted((u, c) for u, c in on.get(f, {}).items() if u != job.id))
        classes.setdefault((instance.capacity(f), others), []).append(f)
    counts = np.arange(1, job.nodes + 1)[:, None]
    table = instance.interference.slowdown
    mine, allowed, nodes = [], [], []
    for (capacity, others), fs in classes.items():
        cls = NodeClass(capacity, tuple((by_id[u], c) for u, c in others), tuple(fs))
        t = part_times(users(instance, [job], cls), capacity, table, counts)
        frozen = np.array([times[u] for u, _ in others]) * (1 + SLACK)
        allowed.append(np.cumprod(~(t[:, 1:] > frozen).any(axis=1)).astype(bool))
        mine.append(t[:, 0])
        nodes.append(fs)
    values = np.unique(np.concatenate([t[ok] for t, ok in zip(mine, allowed)]))
    values = values[values < times[job.id] * (1 - SLACK)]

    def held(theta):  # compute nodes each class's nodes may hold within theta
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


def polish(instance: ForwardingInstance, allocation: Allocation, own: dict[str, float] | None,
           deadline: Deadline) -> tuple[Allocation, int]:
    """``allocation`` improved by moves (module docstring) until none improves; returns it and the moves made."""
    banned = {f for r in instance.running if r.dedicated for f, _ in r.forwarding}
    usable = [f.id for f in instance.forwarding_nodes if f.id not in banned]
    mapping = {j.id: tuple(g) for j, g in ((j, allocation.mapping[j.id]) for j in instance.jobs)}
    everyone = list(instance.running) + list(instance.jobs)
    moves, improved = 0, True
    while improved and not deadline.expired():
        improved = False
        full = {**{r.id: instance.groups(r) for r in instance.running}, **mapping}
        times = machine_times(instance, full, everyone)
        floor = own or {}
        order = sorted(instance.jobs, key=lambda j: -(times[j.id] - floor.get(j.id, 0.0)))
        for j in order:
            if deadline.expired():
                break
            if times[j.id] <= floor.get(j.id, 0.0) * (1 + SLACK):
                continue
            found = best_move(instance, full, j, usable, times)
            if found is not None:
                mapping[j.id] = full[j.id] = found[1]
                times = machine_times(instance, full, everyone)
                moves, improved = moves + 1, True
    avoid = not any(instance.node[f].anomalous for g in mapping.values() for f, _ in g)
    return Allocation(mapping, frozenset(), avoid), moves

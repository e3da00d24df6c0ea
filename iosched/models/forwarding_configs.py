"""Node configurations of the forwarding problem, in bulk: the evaluator's part times for many
configurations of one forwarding node at once, the node classes, and the per-class tables the exact
method (:mod:`iosched.models.forwarding_exact`) searches.

**A configuration** of a forwarding node is how many compute nodes c_j each job to place has on it
(0: absent); the node's running users are fixed. :func:`part_times` computes, for a whole array of
configurations, every user's part time with the same floating-point operations, in the same order, as
:func:`iosched.evaluate.forwarding.node_times` (max-min fair shares by progressive filling, the
slowdown, ``volume * c / nodes / rate``), so every time equals the evaluator's bit for bit (the tests
check it). An absent job is a consumer of cap 0 in the progressive filling, which takes nothing and
changes no share, and it is left out of the interference traits: the same rates as leaving it out.

**Monotonicity** (what every pruning rule of the exact method rests on). On one node, adding a user
or raising a user's c never shortens any user's part time. Proof: raising a cap (or adding a consumer,
a cap raised from 0) never raises the max-min fair level (progressive filling: every share
left / len(todo) is computed from less or equal capacity left), so every other user's rate min(cap,
level) does not rise; the slowdown is a maximum over the traits of the others, which only grows
with more users; and the user's own time volume c / n / min(c cap1, level) with cap1 = io B_c / n
is volume / n / min(cap1, level / c), non-decreasing in c. Hence the configurations within given
time thresholds form a down-set: lowering any c_j (to 0 included) keeps them within.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from iosched.evaluate.forwarding import trait_indices
from iosched.instances.forwarding import TRAITS, ForwardingInstance, Job
from iosched.models.forwarding_every import node_groups


@dataclass(frozen=True)
class NodeClass:
    """Interchangeable forwarding nodes: one capacity (GB/s) and the same running users (job, compute
    nodes on the node) on each; nodes dedicated to a running job are in no class."""

    capacity: float
    running: tuple[tuple[Job, int], ...]
    nodes: tuple[int, ...]


def node_classes(instance: ForwardingInstance) -> list[NodeClass]:
    """The usable forwarding nodes (all but those dedicated to a running job) in classes of interchangeable
    ones, in the instance's order of their first node: the every-allocation MILP's classes
    (:func:`iosched.models.forwarding_every.node_groups`) with the running jobs themselves."""
    by_id = {r.id: r for r in instance.running}
    return [NodeClass(cap, tuple((by_id[r], c) for r, c in running), tuple(nodes))
            for (cap, running), nodes in node_groups(instance).items()]


@dataclass
class Users:
    """The jobs to place and one class's running users, as arrays for :func:`part_times`."""

    volume: np.ndarray  # GB per user
    nodes: np.ndarray  # compute nodes of the whole job
    io: np.ndarray
    bandwidth: np.ndarray  # GB/s per I/O node
    traits: list[tuple[int, ...]]
    running_c: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # running users' c


def users(instance: ForwardingInstance, jobs: list[Job], cls: NodeClass) -> Users:
    """The jobs to place (``jobs``, in that order) followed by ``cls``'s running users."""
    every = list(jobs) + [r for r, _ in cls.running]
    return Users(np.array([j.volume for j in every], dtype=float), np.array([j.nodes for j in every]),
                 np.array([j.io_nodes for j in every]), np.array([j.node_bandwidth for j in every], dtype=float),
                 [trait_indices(instance, j) for j in every], np.array([c for _, c in cls.running], dtype=np.int64))


def part_times(u: Users, capacity: float, table: tuple[tuple[float, ...], ...], configs: np.ndarray) -> np.ndarray:
    """Every user's part time (s) in each configuration: ``configs`` is M x k (compute nodes of each job to
    place, 0 absent); the result is M x (k + running users), NaN where a job is absent. Bit for bit the
    evaluator's :func:`~iosched.evaluate.forwarding.node_times` (module docstring)."""
    configs = np.asarray(configs, dtype=np.int64)
    m = configs.shape[0]
    c = np.concatenate([configs, np.broadcast_to(u.running_c, (m, len(u.running_c)))], axis=1)
    caps = c * u.io / u.nodes * u.bandwidth  # part_cap: c * io / n * B_c, in that order
    present = c > 0
    # max_min_fair: progressive filling over the caps in ascending order; a row stops at its first cap above
    # the share left / len(todo), and every user then gets min(cap, that share)
    ordered = np.sort(caps, axis=1)
    users_n = caps.shape[1]
    left = np.full(m, float(capacity))
    level = np.full(m, np.inf)
    filling = np.ones(m, dtype=bool)
    for p in range(users_n):
        share = left / (users_n - p)
        cap = ordered[:, p]
        stop = filling & (cap > share)
        level[stop] = share[stop]
        filling &= ~stop
        left = np.where(filling, left - cap, left)
    rates = np.minimum(caps, level[:, None])
    # the slowdown: the largest table[v][a] over the user's traits v and the traits a of the other users present
    count = np.zeros((m, len(TRAITS)), dtype=np.int64)
    for k, ts in enumerate(u.traits):
        for a in ts:
            count[:, a] += present[:, k]
    factor = np.ones((m, users_n))
    for k, ts in enumerate(u.traits):
        for a in range(len(TRAITS)):
            others = count[:, a] - (present[:, k] if a in ts else 0) > 0
            worst = max(table[v][a] for v in ts)
            factor[:, k] = np.where(others, np.maximum(factor[:, k], worst), factor[:, k])
    effective = rates / factor
    with np.errstate(invalid="ignore", divide="ignore"):
        times = u.volume * c / u.nodes / effective  # part_time: volume * c / n / rate
    times[~present] = np.nan
    return times

"""Forwarding allocation: DFRA's rules (the seed), the fixed and round-robin mappings, and MCKP.

Every method maps each job to place either onto its default forwarding nodes or onto
dedicated healthy idle nodes (its compute nodes split evenly, in order), except
``round-robin``, which remaps every job onto the default-service nodes in groups of k.
Jobs are decided in the instance's order (their dispatch order).
"""

from __future__ import annotations

import math
from typing import Annotated

import numpy as np

from iosched.core import HEURISTIC, MethodOutput, RunContext, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.forwarding import Allocation, alone_time, dedicated_time, machine_times, node_times
from iosched.instances.forwarding import MAX_COMPUTE_NODES, ForwardingInstance, Job, even_groups
from iosched.solvers import Deadline
from iosched.validate import Integer, Number, OneOf, TimeLimit, integer

RULES = ("seed", "pairs")


def allocation(instance: ForwardingInstance, dedicated: dict[str, list[int]]) -> Allocation:
    """Jobs in ``dedicated`` on their nodes (split evenly), the others on their default mapping; the
    allocation claims to avoid anomalous nodes whenever no job to place uses one."""
    mapping = {j.id: even_groups(j.nodes, dedicated[j.id]) if j.id in dedicated else instance.default_groups(j)
               for j in instance.jobs}
    return Allocation(mapping, frozenset(dedicated), instance.avoids_anomalous(mapping))


def _status(deadline: Deadline) -> Status:
    """time_limit once the method's deadline has passed (the allocation is still whole), else feasible."""
    return Status.TIME_LIMIT if deadline.expired() else Status.FEASIBLE


@register("forwarding", "fixed", objective="total_io_time", exact_over=HEURISTIC)
def fixed(instance: ForwardingInstance, time_limit: TimeLimit = None,
          *, context: RunContext | None = None) -> MethodOutput:
    """The default mapping (512:1 blocks on TaihuLight), as the machine does without DFRA."""
    deadline = Deadline.for_method(time_limit, context=context)
    out = allocation(instance, {})
    return MethodOutput(out, _status(deadline))


@register("forwarding", "round-robin", objective="total_io_time", exact_over=HEURISTIC)
def round_robin(instance: ForwardingInstance, k: Annotated[int, Integer(1, MAX_COMPUTE_NODES)] = 32,
                time_limit: TimeLimit = None, *, context: RunContext | None = None) -> MethodOutput:
    """Groups of k contiguous compute nodes dealt in turn to the default-service nodes (the seed's RR 32-1);
    past ``time_limit`` s the jobs not dealt yet keep their default mapping (status time_limit)."""
    deadline = Deadline.for_method(time_limit, context=context)
    integer("k", k, 1, instance.compute_nodes, error=ParameterError)  # this instance's limit
    serving = [f.id for f in instance.forwarding_nodes if f.service == "default"]
    mapping = {}
    for j in instance.jobs:
        if deadline.expired():
            mapping[j.id] = instance.default_groups(j)
            continue
        groups: list[tuple[int, int]] = []
        for g in range(j.start // k, (j.end - 1) // k + 1):
            n = min(j.end, (g + 1) * k) - max(j.start, g * k)
            f = serving[g % len(serving)]
            if groups and groups[-1][0] == f:
                groups[-1] = (f, groups[-1][1] + n)
            else:
                groups.append((f, n))
        mapping[j.id] = tuple(groups)
    return MethodOutput(Allocation(mapping, frozenset(), instance.avoids_anomalous(mapping)), _status(deadline),
                        info={"k": k, "forwarding_nodes": len(serving)})


# --- DFRA ------------------------------------------------------------------------------------------


def _heavy(instance: ForwardingInstance, job: Job, w_meta: float, own: bool) -> bool:
    """Metadata-heavy: a job to place by its history, a neighbour by what it does now."""
    wait = job.history.metadata_wait if own and job.history is not None else job.metadata_wait
    return wait > w_meta


def interference_likely(instance: ForwardingInstance, a: Job, b: Job, w_meta: float, rule: str = "seed") -> bool:
    """DFRA's check (Section 5.2) between job ``a`` and neighbour ``b``.

    ``seed``: either is N-1, metadata-heavy, high-bandwidth or high-IOPS (the seed's three
    criteria, "either A or the neighbour"); ``pairs``: either is N-1 or metadata-heavy, or one
    is high-bandwidth and the other high-IOPS (the issue's reading, closer to Table 3).
    """
    disruptive = (a.mode == "N-1" or b.mode == "N-1" or _heavy(instance, a, w_meta, True)
                  or _heavy(instance, b, w_meta, False))
    if rule == "seed":
        return disruptive or "high" in (a.bandwidth, a.iops, b.bandwidth, b.iops)
    return disruptive or (a.bandwidth == "high" and b.iops == "high") or (a.iops == "high" and b.bandwidth == "high")


@register("forwarding", "dfra", objective="total_io_time", exact_over=HEURISTIC)
def dfra(instance: ForwardingInstance, v_min: Annotated[float, Number(0)] = 20.0,
         n_min: Annotated[int, Integer(0)] = 32, w_meta: Annotated[float, Number(0)] = 32.0,
         f: Annotated[float, Number(0, lo_open=True)] = 32.0, rule: Annotated[str, OneOf(RULES)] = "seed",
         time_limit: TimeLimit = None, *, context: RunContext | None = None) -> MethodOutput:
    """DFRA (Ji et al., FAST'19): scale eligible jobs to ceil(N_io / F) idle nodes, isolate interference-prone ones.

    Per job, in dispatch order: (1) eligible if its history shows volume > ``v_min`` GB,
    I/O nodes >= ``n_min`` and metadata wait < ``w_meta``: it gets S = ceil(N_io / ``f``)
    dedicated idle healthy nodes, or all that are left if fewer; (2) a job whose default
    mapping uses an anomalous node gets as many dedicated healthy nodes instead (DFRA screens
    anomalous nodes out); (3) no history (a new application): default mapping; (4) if a
    neighbour on its default nodes (running, or placed before it) makes interference likely
    (``rule``, see :func:`interference_likely`), as many dedicated idle nodes as its default
    mapping uses; (5) otherwise the default mapping. Never an anomalous node from the pool. Past
    ``time_limit`` s the jobs not decided yet keep their default mapping (status time_limit).
    """
    deadline = Deadline.for_method(time_limit, context=context)
    idle = list(instance.idle_healthy)
    running = {r.id: r for r in instance.running}
    on_node: dict[int, list[Job]] = {f: [running[jid] for jid in on] for f, on in instance.running_users.items()}
    dedicated: dict[str, list[int]] = {}
    rules: dict[str, str] = {}
    for j in instance.jobs:
        if deadline.expired():
            rules[j.id] = "time limit: not decided, default mapping"
            continue
        default = [fid for fid, _ in instance.default_groups(j)]
        size = len(set(default))
        h = j.history
        if h is not None and h.volume > v_min and h.io_nodes >= n_min and h.metadata_wait < w_meta:
            ratio = h.io_nodes / f  # inf when f is subnormal: as many nodes as there are
            s = math.ceil(ratio) if math.isfinite(ratio) else math.inf
            k = int(min(s, len(idle), j.nodes))  # finite: len(idle) is
            if k:
                dedicated[j.id] = [idle.pop(0) for _ in range(k)]
                rules[j.id] = f"scale: {k} dedicated nodes (S = {s})"
                continue
            rules[j.id] = f"scale: no idle healthy node left (S = {s}), default mapping"
        elif instance.anomalous_nodes.intersection(default):
            k = min(size, len(idle))
            if k:
                dedicated[j.id] = [idle.pop(0) for _ in range(k)]
                rules[j.id] = f"anomaly: its default mapping uses an anomalous node, {k} dedicated nodes instead"
                continue
            rules[j.id] = "anomaly: its default mapping uses an anomalous node, no idle healthy node left"
        elif h is None:
            rules[j.id] = "new: no history, default mapping"
        else:
            culprit = next((b for fid in dict.fromkeys(default) for b in on_node.get(fid, [])
                            if interference_likely(instance, j, b, w_meta, rule)), None)
            if culprit is not None and idle:
                k = min(size, len(idle))
                dedicated[j.id] = [idle.pop(0) for _ in range(k)]
                rules[j.id] = f"isolate: interference likely with {culprit.id}, {k} dedicated nodes"
                continue
            rules[j.id] = (f"isolate: interference likely with {culprit.id} but no idle node left, default mapping"
                           if culprit is not None else "default: not eligible, no interference expected")
        for fid in dict.fromkeys(default):
            on_node.setdefault(fid, []).append(j)
    alloc = allocation(instance, dedicated)
    counts: dict[str, int] = {}
    for text in rules.values():  # by the rule that fired: scale, anomaly, new, isolate, default
        counts[text.split(":")[0]] = counts.get(text.split(":")[0], 0) + 1
    return MethodOutput(alloc, _status(deadline), info={"rules": rules, "rule_counts": counts,
                                                        "idle_left": len(idle)})


# --- MCKP (Bez et al., IPDPS'21) -------------------------------------------------------------------


def mckp_choices(instance: ForwardingInstance, pool: int) -> tuple[list[list[int]], list[list[float]], float]:
    """Per job: the node counts {0, 1, 2, 4, ...} (up to the pool and its compute nodes) and each one's
    bandwidth (GB/s): 0 is the job's bandwidth when every job keeps its default mapping, k its bandwidth
    alone on k nodes of the pool's slowest healthy bandwidth. Also that bandwidth."""
    bw = min((instance.node[f].bandwidth for f in instance.idle_healthy), default=instance.nominal_bandwidth)
    mapping = {**instance.running_groups, **{j.id: instance.default_groups(j) for j in instance.jobs}}
    fixed_times = machine_times(instance, mapping, list(instance.running) + list(instance.jobs))
    counts, values = [], []
    for j in instance.jobs:
        ks = [0] + [2 ** e for e in range(40) if 2 ** e <= min(pool, j.nodes)]
        counts.append(ks)
        values.append([j.volume / (fixed_times[j.id] if k == 0 else dedicated_time(j, k, bw)) for k in ks])
    return counts, values, bw


def mckp_solve(weights: list[list[int]], values: list[list[float]], capacity: int,
               deadline: Deadline | None = None) -> tuple[list[int], float]:
    """Multiple-choice knapsack by dynamic programming over the capacity: one choice per item (its
    weight and value), total weight <= ``capacity``, most total value. Returns the chosen index per
    item and the value; exact (O(items x capacity x choices)); TimeoutError once ``deadline`` has passed."""
    best = np.zeros(capacity + 1)  # best[c]: most value of the items so far within weight c
    picks: list[np.ndarray] = []
    for w, v in zip(weights, values):
        if deadline is not None and deadline.expired():
            raise TimeoutError(f"the knapsack had {len(picks)} of {len(weights)} items when the time limit of "
                               f"{deadline.seconds:g} s was reached")
        new = np.full(capacity + 1, -np.inf)
        pick = np.zeros(capacity + 1, dtype=np.int64)
        for i, (wi, vi) in enumerate(zip(w, v)):
            if wi > capacity:
                continue
            cand = np.full(capacity + 1, -np.inf)
            cand[wi:] = best[:capacity + 1 - wi] + vi
            better = cand > new
            new[better], pick[better] = cand[better], i
        best = new
        picks.append(pick)
    c = int(np.argmax(best))
    value = float(best[c])
    chosen = []
    for w, pick in zip(reversed(weights), reversed(picks)):
        i = int(pick[c])
        chosen.append(i)
        c -= w[i]
    return chosen[::-1], value


@register("forwarding", "mckp", objective="total_io_time",
          exact_over="0, 1, 2, 4 ... dedicated nodes per job, most total bandwidth (Bez et al.'s arbitration)")
def mckp(instance: ForwardingInstance, time_limit: TimeLimit = None,
         *, context: RunContext | None = None) -> MethodOutput:
    """Bez et al.'s arbitration: 0, 1, 2, 4, ... dedicated nodes per job, most total bandwidth, exact DP.

    Each job takes that many idle healthy nodes (0 keeps its default mapping), the sum within the
    pool; the dynamic program maximises the total bandwidth exactly (for its own objective, not the
    I/O time the evaluator scores). Past ``time_limit`` s: the default mapping (status time_limit)."""
    deadline = Deadline.for_method(time_limit, context=context)
    pool = len(instance.idle_healthy)
    counts, values, bw = mckp_choices(instance, pool)
    try:
        chosen, value = mckp_solve(counts, values, pool, deadline)
    except TimeoutError as e:
        return MethodOutput(allocation(instance, {}), Status.TIME_LIMIT, info={"error": str(e), "pool": pool})
    idle = list(instance.idle_healthy)
    dedicated = {}
    for j, ks, i in zip(instance.jobs, counts, chosen):
        if ks[i]:
            dedicated[j.id] = [idle.pop(0) for _ in range(ks[i])]
    info = {"total_bandwidth": value, "dedicated_nodes": {jid: len(n) for jid, n in dedicated.items()},
            "pool": pool, "pool_bandwidth": bw}
    if len({instance.node[f].bandwidth for f in instance.idle_healthy}) > 1:
        info["note"] = "the pool's bandwidths differ: the program valued every node at the slowest"
    return MethodOutput(allocation(instance, dedicated), _status(deadline), info=info)


# --- local search over every allocation --------------------------------------------------------------


class _State:
    """An allocation being improved: every node's users and every job's part times, re-evaluated node by
    node with the evaluator's own :func:`node_times` (so a move's change is exactly the evaluator's)."""

    def __init__(self, instance: ForwardingInstance, mapping: dict[str, dict[int, int]], weight: dict[str, float]):
        self.instance = instance
        self.jobs = {j.id: j for j in instance.running + instance.jobs}
        self.weight = weight
        self.users: dict[int, dict[str, int]] = {f: dict(on) for f, on in instance.running_users.items()}
        for jid, groups in mapping.items():
            for f, c in groups.items():
                self.users.setdefault(f, {})[jid] = c
        self.part: dict[str, dict[int, float]] = {jid: {} for jid in self.jobs}
        for f, on in self.users.items():
            for jid, t in self._node(f, on).items():
                self.part[jid][f] = t
        self.time = {jid: max(p.values()) for jid, p in self.part.items()}

    def _node(self, f: int, on: dict[str, int]) -> dict[str, float]:
        ids = list(on)
        return dict(zip(ids, node_times(self.instance, f, [(self.jobs[u], on[u]) for u in ids])))

    def groups(self, jid: str) -> dict[int, int]:
        return {f: self.users[f][jid] for f in self.part[jid]}

    def move(self, jid: str, groups: dict[int, int], apply: bool = False) -> float:
        """The change of the weighted total time when job ``jid`` takes ``groups`` (node -> compute nodes)
        instead of its own; made if ``apply``."""
        touched = set(self.part[jid]) | set(groups)
        new_on, new_part = {}, {}
        for f in touched:
            on = {u: c for u, c in self.users.get(f, {}).items() if u != jid}
            if f in groups:
                on[jid] = groups[f]
            new_on[f] = on
            new_part[f] = self._node(f, on) if on else {}
        affected = {u for f in touched for u in new_on[f]} | {u for f in touched for u in self.users.get(f, {})}
        delta, times = 0.0, {}
        for u in affected:
            t = max([p for f, p in self.part[u].items() if f not in touched]
                    + [new_part[f][u] for f in touched if u in new_part[f]], default=0.0)
            times[u] = t
            delta += self.weight[u] * (t - self.time[u])
        if apply:
            for f in touched:
                for u in self.users.get(f, {}):
                    self.part[u].pop(f, None)
                if new_on[f]:
                    self.users[f] = new_on[f]
                    for u, t in new_part[f].items():
                        self.part[u][f] = t
                else:
                    self.users.pop(f, None)
            self.time.update(times)
        return delta


def _search_moves(state: _State, job: Job, nodes: list[int], default: dict[int, int]) -> list[dict[int, int]]:
    """Candidate mappings of ``job``: its default one, each usable node alone, and its compute nodes split
    evenly over the k best single nodes (k = 2, 4, ... up to what its I/O links can fill)."""
    singles = sorted(nodes, key=lambda f: state.move(job.id, {f: job.nodes}))
    out = [default] + [{f: job.nodes} for f in singles]
    need = job.io_nodes * job.node_bandwidth / min(state.instance.capacity(f) for f in nodes)
    k = 2
    while k <= min(job.nodes, len(nodes)) and k < 2 * need:
        out.append(dict(even_groups(job.nodes, singles[:k])))
        k *= 2
    return out


@register("forwarding", "search", objective="total_io_time", exact_over=HEURISTIC)
def search(instance: ForwardingInstance, start: Annotated[str, OneOf(("best", "fixed", "dfra", "mckp"))] = "best",
           objective: Annotated[str, OneOf(("total_io_time", "total_slowdown"))] = "total_io_time",
           time_limit: TimeLimit = None, *, context: RunContext | None = None) -> MethodOutput:
    """Local search over every allocation: from ``start`` (``best``: the best of fixed, DFRA and MCKP), move
    one job at a time to the mapping that lowers ``objective`` most -- its default mapping, any single
    forwarding node (shared or idle, default or pool), or an even split over its best k nodes -- until no
    move improves or ``time_limit`` s have passed (status time_limit, the best allocation found).

    Nodes dedicated to a running job are never used; moves are scored exactly as the evaluator scores
    them (node by node with :func:`node_times`). The result claims no dedicated node."""
    deadline = Deadline.for_method(time_limit, context=context)
    starts = {"fixed": fixed, "dfra": dfra, "mckp": mckp}
    names = list(starts) if start == "best" else [start]
    weight = {j.id: 1.0 if objective == "total_io_time" else 1 / alone_time(instance, j)
              for j in instance.running + instance.jobs}
    best: _State | None = None
    best_value, origin = math.inf, names[0]
    for name in names:
        alloc = starts[name](instance, time_limit=time_limit, context=context).solution
        mapping = {jid: _merged(groups) for jid, groups in alloc.mapping.items()}
        state = _State(instance, mapping, weight)
        value = sum(weight[u] * t for u, t in state.time.items())
        if best is None or value < best_value:
            best, best_value, origin = state, value, name
        if deadline.expired():
            break
    assert best is not None  # names holds at least one start
    state = best
    nodes = [f.id for f in instance.forwarding_nodes if f.id not in instance.reserved]
    defaults = {j.id: _merged(instance.default_groups(j)) for j in instance.jobs}
    moves, rounds, status = 0, 0, Status.FEASIBLE
    improved = True
    while improved and status == Status.FEASIBLE:
        improved, rounds = False, rounds + 1
        for j in sorted(instance.jobs, key=lambda j: -weight[j.id] * state.time[j.id]):
            if deadline.expired():
                status = Status.TIME_LIMIT
                break
            here = state.groups(j.id)
            cands = [g for g in _search_moves(state, j, nodes, defaults[j.id]) if g != here]
            if not cands:
                continue
            deltas = [state.move(j.id, g) for g in cands]
            k = min(range(len(cands)), key=deltas.__getitem__)
            if deltas[k] < -1e-9 * max(1.0, abs(best_value)):
                state.move(j.id, cands[k], apply=True)
                moves, improved = moves + 1, True
    final = {j.id: tuple(state.groups(j.id).items()) for j in instance.jobs}
    return MethodOutput(Allocation(final, frozenset(), instance.avoids_anomalous(final)), status,
                        info={"start": origin, "moves": moves, "rounds": rounds, "objective": objective})


def _merged(groups) -> dict[int, int]:
    out: dict[int, int] = {}
    for f, c in groups:
        out[f] = out.get(f, 0) + c
    return out

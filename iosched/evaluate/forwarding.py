"""The one checker of forwarding allocations, in the fluid bandwidth model.

An :class:`Allocation` maps every job to place: its compute nodes, in order, in groups
(forwarding node, compute nodes), whether it claims its forwarding nodes to itself
(``dedicated``), and whether the method claims to avoid anomalous nodes.

**Model** (one I/O phase of every job at once, in the steady state):

* a job's I/O is spread evenly over its compute nodes: with c of its n compute nodes on
  forwarding node f, its part there is volume x c / n GB, at most c x io_nodes / n x
  node_bandwidth GB/s (each I/O node's own link);
* forwarding node f delivers its bandwidth (times ``anomalous_fraction`` if anomalous),
  shared max-min fairly among the jobs on it (:func:`iosched.fluid.max_min_fair`), each job
  capped by its part's rate above;
* each job's share is then divided by its interference slowdown on f: the largest
  ``slowdown[victim trait][aggressor trait]`` over the other jobs on f and over the trait
  pairs (1 when alone);
* a job's I/O time is the time of its slowest part (parallel I/O ends at a barrier, which is
  how the seed explains a whole job slowed by one shared or anomalous node); its bandwidth
  is volume / time. Rates stay fixed for the whole phase (no redistribution when a part ends).

Running jobs are users of their forwarding nodes like any other and have an I/O time too.

**Interference defaults** (victim row, aggressor column; factors beyond the fair share, which
alone already gives two bandwidth-bound jobs the seed's "about 2x with its own kind"). Traits:
N-1 mode (``n1``), metadata-heavy (``metadata_wait`` above the instance's threshold, 32 as
DFRA's W_meta), ``bandwidth`` and ``iops`` class high, otherwise ``low``. Assumptions read from
the seed (Section 5, Table 3's fragment and Figure 4):

* aggressor N-1 (AWP: "average of 38.4x to other applications"): low victims 50 (WRF1 50x,
  CAM 100x), bandwidth victims 12.5 (WRF N and Shentu 12.5x), IOPS and metadata victims 12.5
  (not measured: assumed as bandwidth), N-1 victims 2.0 (AWP with AWP, 2.0x);
* aggressor metadata-heavy (DNDC: "2.4x to 33.3x" to all others): 2.4 to every victim, the
  lower end (assumption), 2.0 to its own kind;
* aggressor high bandwidth: high-IOPS victims 10 (APT beside MPI-IO N "almost 10x"), N-1
  victims 1.3 (AWP beside WRF N, 1.3x), others 1.0 (the share does it);
* aggressor high IOPS: 2.0 to its own kind, 1.0 to the rest ("not vice versa");
* aggressor low: 1.0 (low jobs "do not introduce ... significant slowdown").

A user's table in the instance replaces any of them.

**Feasibility**: every job to place mapped (known forwarding nodes, positive integer group
sizes summing to its compute nodes, all numbers finite); running jobs keep their mapping;
a node claimed as dedicated (by a placed or running job) serves no one else; no anomalous
node used by a job to place when the allocation claims to avoid them. Capacities hold by
construction of the shares.

**Objectives** (seconds unless said): ``total_io_time`` = I/O time of the jobs placed plus the
I/O time they add to the running jobs (each running job's time minus its time without the
jobs placed); ``max_io_time`` over the jobs placed; ``total_slowdown`` = the same sum as
``total_io_time`` with each job's time divided by its time alone on as many dedicated healthy
nodes as its default mapping uses (the seed's solo run); ``forwarding_nodes_used`` by any job.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from iosched.errors import InstanceError
from iosched.evaluate import Violation
from iosched.fluid import max_min_fair
from iosched.instances.fields import Field, Fields
from iosched.instances.forwarding import TRAITS, ForwardingInstance, Job
from iosched.validate import boolean, finite_numbers

OBJECTIVES = ("total_io_time", "max_io_time", "total_slowdown", "forwarding_nodes_used")


@dataclass(frozen=True)
class Allocation:
    """Per job to place: its groups (forwarding node id, compute nodes) in order; the jobs that claim
    their forwarding nodes to themselves; whether the method claims to avoid anomalous nodes."""

    mapping: dict
    dedicated: frozenset = frozenset()
    avoid_anomalous: bool = False

    def to_dict(self, instance: ForwardingInstance | None = None) -> dict:
        return {"jobs": {jid: {"mapping": [list(g) for g in groups], "dedicated": jid in self.dedicated}
                         for jid, groups in self.mapping.items()},
                "avoid_anomalous": self.avoid_anomalous}

    @classmethod
    def from_dict(cls, d) -> Allocation:
        if not isinstance(d, dict) or not isinstance(d.get("jobs"), dict):
            raise InstanceError(f"an allocation is {{'jobs': {{id: {{'mapping': [[node, count], ...]}}}}}}, "
                                f"got {str(d)[:200]}")
        SOLUTION_FIELDS.check(d)
        mapping, dedicated = {}, set()
        for jid, entry in d["jobs"].items():
            if not isinstance(entry, dict) or not isinstance(entry.get("mapping"), list):
                raise InstanceError(f"allocation jobs[{jid}] must have a 'mapping' list, got {str(entry)[:200]}")
            SOLUTION_FIELDS.check(entry, "jobs{}", f"allocation jobs[{jid}]")
            mapping[jid] = tuple(tuple(g) if isinstance(g, list) else g for g in entry["mapping"])
            if boolean(f"allocation jobs[{jid}].dedicated", SOLUTION_FIELDS.get(entry, "jobs{}.dedicated")):
                dedicated.add(jid)
        avoid = boolean("allocation avoid_anomalous", SOLUTION_FIELDS.get(d, "avoid_anomalous"))
        return cls(mapping, frozenset(dedicated), avoid)


# The JSON of a forwarding solution; Allocation.from_dict checks its keys against it.
SOLUTION_FIELDS = Fields(
    "forwarding allocation",
    Field("jobs", "object", "", "per id of a job to place, its forwarding nodes (every job to place; running jobs "
          "keep theirs)"),
    Field("jobs{}", "object", "", "one job's allocation"),
    Field("jobs{}.mapping", "list", "", "[forwarding node id, compute nodes] groups over the job's compute nodes in "
          "order, summing to its nodes"),
    Field("jobs{}.dedicated", "boolean", "", "the job has these forwarding nodes to itself (checked: no other job "
          "on them)", False),
    Field("avoid_anomalous", "boolean", "", "the method claims no job to place uses an anomalous node (checked)",
          False),
)


@dataclass
class Evaluation:
    feasible: bool
    violations: list[Violation] = field(default_factory=list)
    total_io_time: float = math.inf
    max_io_time: float = math.inf
    total_slowdown: float = math.inf
    forwarding_nodes_used: int = 0
    placed_io_time: float = math.inf  # sum over the jobs placed (s)
    running_delay: float = math.inf  # I/O time added to the running jobs (s)
    neighbour_slowdown: float = math.inf  # largest ratio of a running job's time to its time without the jobs placed
    pool_nodes_used: int = 0  # pool nodes serving a job placed
    job_times: dict = field(default_factory=dict)  # job placed -> I/O time (s)

    def to_dict(self) -> dict:
        return {"feasible": self.feasible, "violations": [v.__dict__ for v in self.violations],
                "total_io_time": self.total_io_time, "max_io_time": self.max_io_time,
                "total_slowdown": self.total_slowdown, "forwarding_nodes_used": self.forwarding_nodes_used,
                "placed_io_time": self.placed_io_time, "running_delay": self.running_delay,
                "neighbour_slowdown": self.neighbour_slowdown, "pool_nodes_used": self.pool_nodes_used,
                "job_times": self.job_times}


# --- the fluid model: one forwarding node, one job, the whole machine ------------------------------


def part_cap(job: Job, c: int) -> float:
    """The rate cap (GB/s) of ``c`` of ``job``'s compute nodes: their share of its I/O nodes' links."""
    return c * job.io_nodes / job.nodes * job.node_bandwidth


def part_time(job: Job, c: int, rate: float) -> float:
    """The I/O time (s) of ``c`` of ``job``'s compute nodes moving their share of its volume at ``rate`` GB/s."""
    return job.volume * c / job.nodes / rate


def trait_indices(instance: ForwardingInstance, job: Job) -> tuple[int, ...]:
    """The job's interference traits as indices into TRAITS (rows and columns of the slowdown table)."""
    return tuple(TRAITS.index(t) for t in sorted(instance.traits(job), key=TRAITS.index))


def effective_rates(caps: list[float], traits: list[tuple[int, ...]], capacity: float,
                    table: tuple[tuple[float, ...], ...]) -> list[float]:
    """The rate (GB/s) of each part on one forwarding node of ``capacity`` GB/s: its max-min fair share (capped
    at its ``caps``) divided by its slowdown, the largest ``table[v][a]`` over its traits v and the traits a of
    the other parts (1 when alone). The one formula of the model: every method that predicts a score uses it."""
    rates = max_min_fair(caps, capacity)
    count = [0] * len(TRAITS)  # parts with each trait
    for ts in traits:
        for a in ts:
            count[a] += 1
    out = []
    for u, ts in enumerate(traits):
        others = [a for a in range(len(TRAITS)) if count[a] - (a in ts) > 0]  # traits among the others
        out.append(rates[u] / max((table[v][a] for v in ts for a in others), default=1.0))
    return out


def node_rates(instance: ForwardingInstance, f: int, users: list[tuple[Job, int]]) -> list[float]:
    """Effective rate (GB/s) of each (job, compute nodes on f) part on forwarding node ``f`` with exactly
    these users (:func:`effective_rates`)."""
    return effective_rates([part_cap(j, c) for j, c in users], [trait_indices(instance, j) for j, _ in users],
                           instance.capacity(f), instance.interference.slowdown)


def node_times(instance: ForwardingInstance, f: int, users: list[tuple[Job, int]]) -> list[float]:
    """I/O time (s) of each (job, compute nodes on f) part on forwarding node ``f`` with exactly these users."""
    return [part_time(j, c, r) for (j, c), r in zip(users, node_rates(instance, f, users))]


def machine_times(instance: ForwardingInstance, mapping: Mapping[str, tuple[tuple[int, int], ...]],
                  jobs: list[Job]) -> dict[str, float]:
    """I/O time (s) of every job in ``jobs`` (mapped by ``mapping``) together: the slowest of its parts."""
    users: dict[int, dict[str, int]] = {}
    for j in jobs:
        for f, c in mapping[j.id]:
            users.setdefault(f, {})
            users[f][j.id] = users[f].get(j.id, 0) + c
    by_id = {j.id: j for j in jobs}
    times = {j.id: 0.0 for j in jobs}
    for f, on in users.items():
        part = [(by_id[jid], c) for jid, c in on.items()]
        for (j, _), t in zip(part, node_times(instance, f, part)):
            times[j.id] = max(times[j.id], t)
    return times


def dedicated_time(job: Job, k: int, bandwidth: float) -> float:
    """I/O time (s) of ``job`` alone on k healthy forwarding nodes of ``bandwidth`` GB/s, compute nodes
    split evenly (the largest part, ceil(n / k) nodes, is the slowest)."""
    c = -(-job.nodes // k)
    return job.volume * c / job.nodes / min(c * job.io_nodes / job.nodes * job.node_bandwidth, bandwidth)


def alone_time(instance: ForwardingInstance, job: Job) -> float:
    """The seed's solo run: ``job`` alone on as many dedicated healthy nodes as its default mapping uses."""
    return dedicated_time(job, len({f for f, _ in instance.default_groups(job)}), instance.nominal_bandwidth)


@lru_cache(maxsize=32)
def running_alone(instance: ForwardingInstance) -> dict[str, float]:
    """Each running job's I/O time without the jobs to place."""
    return machine_times(instance, instance.running_groups, list(instance.running))


# --- the checker ---------------------------------------------------------------------------------


def _groups(instance: ForwardingInstance, job: Job, groups, bad: list[Violation]) -> bool:
    where = f"jobs[{job.id}]"
    if not isinstance(groups, (list, tuple)) or not groups:
        bad.append(Violation("mapping", f"{where}: not a non-empty list of [node, count]", 1))
        return False
    total, ok = 0, True
    for k, g in enumerate(groups):
        if (not isinstance(g, (list, tuple)) or len(g) != 2 or not finite_numbers(list(g))
                or any(isinstance(x, bool) or not isinstance(x, int) for x in g)):
            bad.append(Violation("mapping", f"{where}[{k}]: {str(g)[:60]} is not [node id, count] in integers", 1))
            ok = False
            continue
        f, c = g
        if f not in instance.node:
            bad.append(Violation("unknown_forwarding_node", f"{where}[{k}]: {f!r}", 1))
            ok = False
        if c < 1:
            bad.append(Violation("mapping", f"{where}[{k}]: group of {c} compute nodes", 1 - c))
            ok = False
        total += c
    if ok and total != job.nodes:
        bad.append(Violation("compute_nodes", f"{where}: maps {total} of its {job.nodes} compute nodes",
                             abs(total - job.nodes)))
        ok = False
    return ok


def evaluate(instance: ForwardingInstance, allocation: Allocation) -> Evaluation:
    """Check ``allocation`` and score it in the fluid model of the module docstring."""
    bad: list[Violation] = []
    if not isinstance(allocation, Allocation) or not isinstance(allocation.mapping, dict):
        return Evaluation(False, [Violation("allocation", f"not an Allocation: {type(allocation).__name__}", 1)])
    placed = {j.id: j for j in instance.jobs}
    running = {j.id for j in instance.running}
    for jid in allocation.mapping:
        if jid in running:
            bad.append(Violation("running_job_remapped", f"{jid!r}: running jobs keep their mapping", 1))
        elif jid not in placed:
            bad.append(Violation("unknown_job", f"{str(jid)[:60]!r}", 1))
    try:
        claimed = set(allocation.dedicated)
    except TypeError:
        return Evaluation(False, bad + [Violation("allocation", "dedicated must be a set of job ids", 1)])
    for jid in claimed - set(allocation.mapping):
        bad.append(Violation("unknown_job", f"dedicated: {str(jid)[:60]!r} is not mapped", 1))
    mapping = dict(instance.running_groups)
    well_formed = True
    for j in instance.jobs:
        if j.id not in allocation.mapping:
            bad.append(Violation("missing_job", f"jobs[{j.id}] is not mapped", 1))
            well_formed = False
        elif _groups(instance, j, allocation.mapping[j.id], bad):
            mapping[j.id] = tuple(tuple(g) for g in allocation.mapping[j.id])
        else:
            well_formed = False
    if not isinstance(allocation.avoid_anomalous, bool):
        bad.append(Violation("allocation", f"avoid_anomalous must be true or false, got "
                                           f"{str(allocation.avoid_anomalous)[:30]}", 1))
    if not well_formed:
        return Evaluation(False, bad)
    users: dict[int, set] = {}
    for jid, groups in mapping.items():
        for f, _ in groups:
            users.setdefault(f, set()).add(jid)
    claims = (claimed & set(mapping)) | {j.id for j in instance.running if j.dedicated}
    for jid in sorted(claims):
        for f in sorted({f for f, _ in mapping[jid]}):
            others = users[f] - {jid}
            if others:
                bad.append(Violation("dedicated", f"forwarding node {f} of {jid} also serves "
                                                  f"{', '.join(sorted(others)[:3])}", len(others)))
    if allocation.avoid_anomalous is True:
        for j in instance.jobs:
            for f in sorted({f for f, _ in mapping[j.id]} & instance.anomalous_nodes):
                bad.append(Violation("anomalous", f"jobs[{j.id}] uses anomalous forwarding node {f}", 1))
    times = machine_times(instance, mapping, list(instance.running) + list(instance.jobs))
    before = running_alone(instance)
    placed_times = {j.id: times[j.id] for j in instance.jobs}
    delay = {r.id: max(0.0, times[r.id] - before[r.id]) for r in instance.running}
    slowdown = sum(placed_times[j.id] / alone_time(instance, j) for j in instance.jobs)
    slowdown += sum(delay[r.id] / alone_time(instance, r) for r in instance.running)
    pool = {f for j in instance.jobs for f, _ in mapping[j.id] if instance.node[f].service == "pool"}
    ev = Evaluation(not bad, bad)
    ev.placed_io_time = sum(placed_times.values())
    ev.running_delay = sum(delay.values())
    ev.total_io_time = ev.placed_io_time + ev.running_delay
    ev.max_io_time = max(placed_times.values())
    ev.total_slowdown = slowdown
    ev.forwarding_nodes_used = len(users)
    ev.neighbour_slowdown = max((times[r] / before[r] for r in before), default=1.0)
    ev.pool_nodes_used = len(pool)
    ev.job_times = placed_times
    return ev

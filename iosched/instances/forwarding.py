"""Instances of I/O forwarding node allocation (Ji et al., DFRA, FAST 2019).

A machine of ``compute_nodes`` compute nodes reaches storage through forwarding nodes
(``bandwidth`` GB/s each; an ``anomalous`` one delivers only ``anomalous_fraction`` of it).
Forwarding nodes are either in default ``service`` or in the idle ``pool``. By default the
compute nodes are cut into contiguous blocks of ``default_ratio`` (512 on TaihuLight) and
block b goes to ``default_mapping[b]`` (the default-service nodes in the order listed,
unless given).

``running`` jobs (the neighbours) keep their mapping (``forwarding``: groups of their
compute nodes, in order, with the forwarding node serving each; default mapping if
absent). ``jobs`` are to be placed now. Every job occupies compute nodes
[start, start + nodes), has ``io_nodes`` of them doing I/O at ``node_bandwidth`` GB/s each,
moves ``volume`` GB per I/O phase in ``mode`` N-N, N-1 or 1-1, has a mean of
``metadata_wait`` metadata operations waiting at a forwarding node, and an ``iops`` and a
``bandwidth`` class (high/low). A placed job's optional ``history`` is what monitoring
recorded of its previous run (what DFRA decides from); none means a new application.

The interference model is data (``interference``): above ``metadata_wait`` a job is
metadata-heavy; ``slowdown[victim][aggressor]`` by trait (see :mod:`iosched.evaluate.forwarding`
for the defaults and where each comes from). Units: GB, GB/s, seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from types import MappingProxyType

from iosched.errors import InstanceError
from iosched.instances import JsonInstance, check_fields
from iosched.instances.fields import Field, Fields
from iosched.validate import boolean, choice, integer, number, text


class Mode(StrEnum):
    """How a job's processes share its files (the JSON holds the strings)."""

    N_N = "N-N"  # a file per process
    N_1 = "N-1"  # one file shared by every process
    ONE = "1-1"  # one process does the I/O


class Level(StrEnum):
    """A job's IOPS or bandwidth class."""

    HIGH = "high"
    LOW = "low"


class Service(StrEnum):
    """A forwarding node serves its blocks by default, or waits idle in the pool for DFRA to grant it."""

    DEFAULT = "default"
    POOL = "pool"


TRAITS = ("n1", "metadata", "bandwidth", "iops", "low")  # interference traits, victim rows / aggressor columns
MAX_COMPUTE_NODES = 10_000_000
MAX_ITEMS = 100_000  # forwarding nodes, jobs, mapping groups
# Least bandwidths (GB/s: 1 kB/s), volume (GB: 1 byte) and anomalous fraction: below them I/O times leave the
# range a MILP solver represents (a node_bandwidth of 1e-300 gave HiGHS coefficients of 1e300)
MIN_BANDWIDTH, MIN_VOLUME, MIN_FRACTION = 1e-6, 1e-9, 1e-6

# Slowdown of a victim (row) by an aggressor (column) sharing a forwarding node, BEYOND the
# max-min fair bandwidth share (which already halves two bandwidth-bound jobs). Sources in
# iosched.evaluate.forwarding's docstring.
DEFAULT_SLOWDOWN = {
    "n1": {"n1": 2.0, "metadata": 2.4, "bandwidth": 1.3, "iops": 1.0, "low": 1.0},
    "metadata": {"n1": 12.5, "metadata": 2.0, "bandwidth": 1.0, "iops": 1.0, "low": 1.0},
    "bandwidth": {"n1": 12.5, "metadata": 2.4, "bandwidth": 1.0, "iops": 1.0, "low": 1.0},
    "iops": {"n1": 12.5, "metadata": 2.4, "bandwidth": 10.0, "iops": 2.0, "low": 1.0},
    "low": {"n1": 50.0, "metadata": 2.4, "bandwidth": 1.0, "iops": 1.0, "low": 1.0},
}


@dataclass(frozen=True)
class ForwardingNode:
    """A forwarding node: ``bandwidth`` GB/s, anomalous or not, in default service or in the idle pool."""

    id: int
    bandwidth: float
    anomalous: bool = False
    service: Service = Service.DEFAULT

    def __post_init__(self):
        integer("forwarding_nodes[].id", self.id, 0, 10**9)
        where = f"forwarding_nodes[{self.id}]"
        number(f"{where}.bandwidth", self.bandwidth, MIN_BANDWIDTH, 1e6)
        boolean(f"{where}.anomalous", self.anomalous)
        object.__setattr__(self, "service", Service(choice(f"{where}.service", self.service, tuple(Service))))


@dataclass(frozen=True)
class History:
    """What monitoring recorded of a job's previous run: volume (GB), I/O nodes, metadata wait."""

    volume: float
    io_nodes: int
    metadata_wait: float

    def check(self, where: str) -> None:
        number(f"{where}.volume", self.volume, 0, 1e12)
        integer(f"{where}.io_nodes", self.io_nodes, 0, MAX_COMPUTE_NODES)
        number(f"{where}.metadata_wait", self.metadata_wait, 0, 1e12)


@dataclass(frozen=True)
class Job:
    """A job on compute nodes [start, start + nodes); see the module docstring for each field.

    ``forwarding`` and ``dedicated`` describe a running job's mapping (None: the default
    mapping; ``dedicated``: no other job may use its forwarding nodes); ``history`` is for
    jobs to place.
    """

    id: str
    start: int
    nodes: int
    io_nodes: int
    node_bandwidth: float
    volume: float
    mode: Mode = Mode.N_N
    metadata_wait: float = 0.0
    iops: Level = Level.LOW
    bandwidth: Level = Level.LOW
    history: History | None = None
    forwarding: tuple[tuple[int, int], ...] | None = None
    dedicated: bool = False

    def __post_init__(self):
        text("job id", self.id)
        where = f"jobs[{self.id}]"
        integer(f"{where}.start", self.start, 0, MAX_COMPUTE_NODES)
        integer(f"{where}.nodes", self.nodes, 1, MAX_COMPUTE_NODES)
        integer(f"{where}.io_nodes", self.io_nodes, 1, self.nodes)
        number(f"{where}.node_bandwidth", self.node_bandwidth, MIN_BANDWIDTH, 1e6)
        number(f"{where}.volume", self.volume, MIN_VOLUME, 1e12)
        object.__setattr__(self, "mode", Mode(choice(f"{where}.mode", self.mode, tuple(Mode))))
        if self.mode == "1-1" and self.io_nodes != 1:
            raise InstanceError(f"{where}.io_nodes must be 1 in mode 1-1 (one process does the I/O), "
                                f"got {self.io_nodes!r}")
        number(f"{where}.metadata_wait", self.metadata_wait, 0, 1e12)
        object.__setattr__(self, "iops", Level(choice(f"{where}.iops", self.iops, tuple(Level))))
        object.__setattr__(self, "bandwidth", Level(choice(f"{where}.bandwidth", self.bandwidth, tuple(Level))))
        boolean(f"{where}.dedicated", self.dedicated)
        if self.history is not None:
            self.history.check(f"{where}.history")
        if self.forwarding is not None:
            check_groups(f"{where}.forwarding", self.forwarding, self.nodes)
        if self.dedicated and self.forwarding is None:
            raise InstanceError(f"{where}.dedicated needs {where}.forwarding (the nodes it has to itself)")

    @property
    def end(self) -> int:
        return self.start + self.nodes

    def to_dict(self) -> dict:
        d = {"id": self.id, "start": self.start, "nodes": self.nodes, "io_nodes": self.io_nodes,
             "node_bandwidth": self.node_bandwidth, "volume": self.volume, "mode": self.mode,
             "metadata_wait": self.metadata_wait, "iops": self.iops, "bandwidth": self.bandwidth}
        if self.history is not None:
            d["history"] = {"volume": self.history.volume, "io_nodes": self.history.io_nodes,
                            "metadata_wait": self.history.metadata_wait}
        if self.forwarding is not None:
            d["forwarding"] = [list(g) for g in self.forwarding]
        if self.dedicated:
            d["dedicated"] = True
        return d


def check_groups(where: str, groups, nodes: int) -> None:
    """Mapping groups: a non-empty list of [forwarding node id, compute nodes >= 1] summing to ``nodes``."""
    if not isinstance(groups, (list, tuple)) or not groups:
        raise InstanceError(f"{where} must be a non-empty list of [forwarding node, compute nodes], got {groups!r}")
    if len(groups) > MAX_ITEMS:
        raise InstanceError(f"{where} has {len(groups)} groups, more than {MAX_ITEMS}")
    total = 0
    for k, g in enumerate(groups):
        if not isinstance(g, (list, tuple)) or len(g) != 2:
            shown = list(g) if isinstance(g, tuple) else g
            raise InstanceError(f"{where}[{k}] must be [forwarding node, compute nodes], got {shown!r}")
        integer(f"{where}[{k}][0]", g[0], 0, 10**9)
        integer(f"{where}[{k}][1]", g[1], 1, MAX_COMPUTE_NODES)
        total += g[1]
    if total != nodes:
        raise InstanceError(f"{where} maps {total} compute nodes, the job has {nodes}")


@dataclass(frozen=True)
class Interference:
    """Metadata-heavy threshold (mean waiting metadata operations) and the slowdown table by trait.

    ``slowdown`` is a tuple of rows (victim trait) of factors (aggressor trait), in TRAITS order.
    """

    metadata_wait: float = 32.0
    slowdown: tuple[tuple[float, ...], ...] = tuple(tuple(DEFAULT_SLOWDOWN[v][a] for a in TRAITS) for v in TRAITS)

    def __post_init__(self):
        number("interference.metadata_wait", self.metadata_wait, 0, 1e12)
        if len(self.slowdown) != len(TRAITS) or any(len(r) != len(TRAITS) for r in self.slowdown):
            raise InstanceError(f"interference.slowdown must be {len(TRAITS)} x {len(TRAITS)}")
        for v, row in zip(TRAITS, self.slowdown):
            for a, x in zip(TRAITS, row):
                number(f"interference.slowdown.{v}.{a}", x, 1, 1e6)

    def factor(self, victim: frozenset, aggressor: frozenset) -> float:
        """The slowdown of a job with traits ``victim`` beside one with traits ``aggressor``."""
        return max(self.slowdown[TRAITS.index(v)][TRAITS.index(a)] for v in victim for a in aggressor)

    def to_dict(self) -> dict:
        return {"metadata_wait": self.metadata_wait,
                "slowdown": {v: dict(zip(TRAITS, row)) for v, row in zip(TRAITS, self.slowdown)}}

    @classmethod
    def from_dict(cls, d) -> Interference:
        """A full or partial table: missing entries keep their defaults."""
        FIELDS.check(d, "interference")
        table = {v: dict(DEFAULT_SLOWDOWN[v]) for v in TRAITS}
        given = FIELDS.get(d, "interference.slowdown")
        check_fields(given, "interference.slowdown", (), TRAITS)
        for v, row in given.items():
            check_fields(row, f"interference.slowdown.{v}", (), TRAITS)
            table[v].update(row)
        return cls(FIELDS.get(d, "interference.metadata_wait"), tuple(tuple(table[v][a] for a in TRAITS)
                                                                     for v in TRAITS))


@dataclass(frozen=True)
class ForwardingInstance(JsonInstance):
    """The forwarding layer, the running jobs and the jobs to place (see the module docstring).

    ``provenance``: where the instance came from (imported logs: names, SHA-256, what was
    assumed); methods ignore it."""

    compute_nodes: int
    default_ratio: int
    forwarding_nodes: tuple[ForwardingNode, ...]
    jobs: tuple[Job, ...]
    running: tuple[Job, ...] = ()
    name: str = "forwarding"
    default_mapping: tuple[int, ...] | None = None
    anomalous_fraction: float = 0.1
    interference: Interference = field(default_factory=Interference)
    provenance: dict | None = field(default=None, compare=False)

    def __post_init__(self):
        text("name", self.name)
        if self.provenance is not None and not isinstance(self.provenance, dict):
            raise InstanceError(f"provenance must be an object, got {self.provenance!r:.80}")
        integer("compute_nodes", self.compute_nodes, 1, MAX_COMPUTE_NODES)
        integer("default_ratio", self.default_ratio, 1, self.compute_nodes)
        number("anomalous_fraction", self.anomalous_fraction, MIN_FRACTION, 1)
        if not self.forwarding_nodes:
            raise InstanceError("forwarding_nodes must be a non-empty list, got []")
        for what, items in (("forwarding_nodes", self.forwarding_nodes), ("jobs", self.jobs),
                            ("running", self.running)):
            if len(items) > MAX_ITEMS:
                raise InstanceError(f"{what} has {len(items)} entries, more than {MAX_ITEMS}")
        if not self.jobs:
            raise InstanceError("jobs must be a non-empty list, got []")
        ids = [f.id for f in self.forwarding_nodes]
        if len(set(ids)) != len(ids):
            raise InstanceError(f"forwarding node ids must be unique, {_first_duplicate(ids)!r} appears twice")
        services = {f.id: f.service for f in self.forwarding_nodes}
        blocks = self.blocks
        if self.default_mapping is None:
            serving = [f.id for f in self.forwarding_nodes if f.service == "default"]
            if len(serving) < blocks:
                raise InstanceError(f"forwarding_nodes: {len(serving)} default-service nodes cannot serve the "
                                    f"{blocks} blocks of default_ratio={self.default_ratio} compute nodes "
                                    f"(give default_mapping or more default nodes)")
        else:
            if len(self.default_mapping) != blocks:
                raise InstanceError(f"default_mapping must list {blocks} forwarding nodes (one per block of "
                                    f"{self.default_ratio} compute nodes), got {len(self.default_mapping)}")
            for b, f in enumerate(self.default_mapping):
                integer(f"default_mapping[{b}]", f, 0, 10**9)
                if services.get(f) != "default":
                    raise InstanceError(f"default_mapping[{b}] = {f!r} is not a forwarding node in default service")
        jids = [j.id for j in self.running + self.jobs]
        if len(set(jids)) != len(jids):
            raise InstanceError(f"job ids must be unique across jobs and running, {_first_duplicate(jids)!r} "
                                f"appears twice")
        for j in self.running + self.jobs:
            if j.end > self.compute_nodes:
                raise InstanceError(f"jobs[{j.id}] occupies compute nodes [{j.start}, {j.end}), beyond the "
                                    f"machine's {self.compute_nodes}")
        spans = sorted((j.start, j.end, j.id) for j in self.running + self.jobs)
        for (_, e1, a), (s2, _, b) in zip(spans, spans[1:]):
            if s2 < e1:
                raise InstanceError(f"jobs[{b}] overlaps jobs[{a}] on compute node {s2}")
        for j in self.jobs:
            if j.forwarding is not None or j.dedicated:
                raise InstanceError(f"jobs[{j.id}].forwarding: a job to place has no mapping yet (running jobs do)")
        dedicated: dict[int, str] = {}
        for j in self.running:
            if j.history is not None:
                raise InstanceError(f"running[{j.id}].history: history is for jobs to place")
            for f, _ in j.forwarding or ():
                if f not in services:
                    raise InstanceError(f"running[{j.id}].forwarding names forwarding node {f!r}, which does not "
                                        f"exist")
            if j.dedicated:
                for f, _ in j.forwarding:
                    if services[f] != "pool":
                        raise InstanceError(f"running[{j.id}] is dedicated on forwarding node {f}, which is not in "
                                            f"the idle pool")
                    if f in dedicated and dedicated[f] != j.id:
                        raise InstanceError(f"forwarding node {f} is dedicated to both running[{dedicated[f]}] "
                                            f"and running[{j.id}]")
                    dedicated[f] = j.id
        for j in self.running:
            if not j.dedicated:
                for f, _ in self.groups(j):
                    if f in dedicated:
                        raise InstanceError(f"running[{j.id}] uses forwarding node {f}, dedicated to "
                                            f"running[{dedicated[f]}]")

    # --- derived data ---------------------------------------------------------------------------

    @property
    def blocks(self) -> int:
        return -(-self.compute_nodes // self.default_ratio)

    @cached_property
    def node(self) -> dict[int, ForwardingNode]:
        return {f.id: f for f in self.forwarding_nodes}

    @cached_property
    def block_nodes(self) -> tuple[int, ...]:
        """The forwarding node of each block of ``default_ratio`` compute nodes."""
        if self.default_mapping is not None:
            return self.default_mapping
        return tuple(f.id for f in self.forwarding_nodes if f.service == "default")[:self.blocks]

    def capacity(self, f: int) -> float:
        """What forwarding node ``f`` delivers (GB/s): its bandwidth, times the fraction if anomalous."""
        node = self.node[f]
        return node.bandwidth * (self.anomalous_fraction if node.anomalous else 1.0)

    def default_groups(self, job: Job) -> tuple[tuple[int, int], ...]:
        """The default mapping of ``job``'s compute nodes: (forwarding node, compute nodes) per block crossed."""
        r, out = self.default_ratio, []
        for b in range(job.start // r, (job.end - 1) // r + 1):
            n = min(job.end, (b + 1) * r) - max(job.start, b * r)
            f = self.block_nodes[b]
            if out and out[-1][0] == f:
                out[-1] = (f, out[-1][1] + n)
            else:
                out.append((f, n))
        return tuple(out)

    def groups(self, job: Job) -> tuple[tuple[int, int], ...]:
        """A running job's mapping (its ``forwarding``, or the default one)."""
        return job.forwarding if job.forwarding is not None else self.default_groups(job)

    def traits(self, job: Job) -> frozenset:
        """The job's interference traits: N-1, metadata-heavy, high bandwidth, high IOPS, or low."""
        t = set()
        if job.mode == "N-1":
            t.add("n1")
        if job.metadata_wait > self.interference.metadata_wait:
            t.add("metadata")
        if job.bandwidth == "high":
            t.add("bandwidth")
        if job.iops == "high":
            t.add("iops")
        return frozenset(t or {"low"})

    @cached_property
    def running_groups(self) -> Mapping[str, tuple[tuple[int, int], ...]]:
        """Each running job's mapping (:meth:`groups`) by job id, read-only."""
        return MappingProxyType({j.id: self.groups(j) for j in self.running})

    @cached_property
    def running_users(self) -> Mapping[int, Mapping[str, int]]:
        """Per forwarding node serving a running job, those jobs (in the order of ``running``) and the compute
        nodes each has on it, read-only."""
        users: dict[int, dict[str, int]] = {}
        for jid, groups in self.running_groups.items():
            for f, c in groups:
                on = users.setdefault(f, {})
                on[jid] = on.get(jid, 0) + c
        return MappingProxyType({f: MappingProxyType(on) for f, on in users.items()})

    @cached_property
    def busy(self) -> frozenset:
        """Forwarding nodes that serve a running job."""
        return frozenset(self.running_users)

    @cached_property
    def reserved(self) -> frozenset:
        """Forwarding nodes dedicated to a running job: no other job may use them."""
        return frozenset(f for j in self.running if j.dedicated for f, _ in j.forwarding)

    @cached_property
    def anomalous_nodes(self) -> frozenset:
        """Ids of the anomalous forwarding nodes."""
        return frozenset(f.id for f in self.forwarding_nodes if f.anomalous)

    def avoids_anomalous(self, mapping: Mapping[str, Iterable[tuple[int, int]]]) -> bool:
        """Whether no job of ``mapping`` (job id -> its (forwarding node, compute nodes) groups) uses an anomalous
        node: what an allocation may claim as ``avoid_anomalous``."""
        return not any(f in self.anomalous_nodes for groups in mapping.values() for f, _ in groups)

    @cached_property
    def idle_healthy(self) -> tuple[int, ...]:
        """Pool nodes neither anomalous nor serving a running job, fastest first (then by id)."""
        idle = [f for f in self.forwarding_nodes if f.service == "pool" and not f.anomalous and f.id not in self.busy]
        return tuple(f.id for f in sorted(idle, key=lambda f: (-f.bandwidth, f.id)))

    @cached_property  # the evaluator asks once per job: recomputing it was quadratic (90,000 jobs: 88 s)
    def nominal_bandwidth(self) -> float:
        """The largest forwarding-node bandwidth (GB/s): what a job alone on dedicated healthy nodes sees."""
        return max(f.bandwidth for f in self.forwarding_nodes)

    # --- JSON -----------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        d = {"name": self.name, "compute_nodes": self.compute_nodes, "default_ratio": self.default_ratio,
             "anomalous_fraction": self.anomalous_fraction,
             "forwarding_nodes": [{"id": f.id, "bandwidth": f.bandwidth, "anomalous": f.anomalous,
                                   "service": f.service} for f in self.forwarding_nodes]}
        if self.default_mapping is not None:
            d["default_mapping"] = list(self.default_mapping)
        if self.interference != Interference():
            d["interference"] = self.interference.to_dict()
        d["running"] = [j.to_dict() for j in self.running]
        d["jobs"] = [j.to_dict() for j in self.jobs]
        if self.provenance is not None:
            d["provenance"] = self.provenance
        return d

    @classmethod
    def from_dict(cls, d: dict, name: str = "forwarding") -> ForwardingInstance:
        FIELDS.check(d)
        nodes = _list(d["forwarding_nodes"], "forwarding_nodes")
        fwd = []
        for k, f in enumerate(nodes):
            FIELDS.check(f, "forwarding_nodes[]", f"forwarding_nodes[{k}]")
            integer(f"forwarding_nodes[{k}].id", f["id"], 0, 10**9)
            fwd.append(ForwardingNode(f["id"], f["bandwidth"], FIELDS.get(f, "forwarding_nodes[].anomalous"),
                                      FIELDS.get(f, "forwarding_nodes[].service")))
        running = tuple(_job(j, f"running[{k}]", running=True)
                        for k, j in enumerate(_list(FIELDS.get(d, "running"), "running")))
        jobs = tuple(_job(j, f"jobs[{k}]", running=False) for k, j in enumerate(_list(d["jobs"], "jobs")))
        mapping = d.get("default_mapping")
        if mapping is not None:
            mapping = tuple(_list(mapping, "default_mapping"))
        interference = Interference.from_dict(FIELDS.get(d, "interference"))
        return cls(d["compute_nodes"], d["default_ratio"], tuple(fwd), jobs, running, name=d.get("name", name),
                   default_mapping=mapping, anomalous_fraction=FIELDS.get(d, "anomalous_fraction"),
                   interference=interference, provenance=d.get("provenance"))


# The JSON of a forwarding instance; ForwardingInstance.from_dict checks every object's keys against it.
FIELDS = Fields(
    "forwarding instance",
    Field("name", "string", "", "the instance's name (default: the file's name without .json)", None),
    Field("compute_nodes", "integer", "nodes", "the machine's compute nodes, 0..compute_nodes-1"),
    Field("default_ratio", "integer", "nodes", "compute nodes per default forwarding node: block b = [b r, (b+1) r) "
          "is served by default_mapping[b] (512 on TaihuLight)"),
    Field("forwarding_nodes", "list", "", "the forwarding nodes, ids unique"),
    Field("forwarding_nodes[].id", "integer", "", "the node's id"),
    Field("forwarding_nodes[].bandwidth", "number", "GB/s", "what it delivers (times anomalous_fraction if "
          "anomalous)"),
    Field("forwarding_nodes[].anomalous", "boolean", "", "a node delivering only a fraction of its bandwidth",
          False),
    Field("forwarding_nodes[].service", "string", "", "default (serves its blocks) or pool (idle, for DFRA to "
          "grant)", "default"),
    Field("default_mapping", "list of integers", "", "the forwarding node of each block of default_ratio compute "
          "nodes, in default service (absent: the default-service nodes in the order listed)", None),
    Field("anomalous_fraction", "number", "", "the share of its bandwidth an anomalous node delivers, in (0, 1]",
          0.1),
    Field("interference", "object", "", "the interference model (absent: the seed's; see the evaluator)", {}),
    Field("interference.metadata_wait", "number", "operations", "above this mean of waiting metadata operations "
          "a job is metadata-heavy", 32.0),
    Field("interference.slowdown", "object", "", "slowdown[victim][aggressor] >= 1 by trait (n1, metadata, "
          "bandwidth, iops, low) of two jobs sharing a node, beyond the fair share; missing entries keep the "
          "seed's", {}),
    Field("jobs", "list", "", "the jobs to place now (ids unique across jobs and running)"),
    Field("jobs[].id", "string", "", "the job's id"),
    Field("jobs[].start", "integer", "node", "its first compute node: it occupies [start, start + nodes)"),
    Field("jobs[].nodes", "integer", "nodes", "its compute nodes"),
    Field("jobs[].io_nodes", "integer", "nodes", "how many of them do I/O (1 in mode 1-1)"),
    Field("jobs[].node_bandwidth", "number", "GB/s", "B_c, each I/O node's link"),
    Field("jobs[].volume", "number", "GB", "what it moves per I/O phase"),
    Field("jobs[].mode", "string", "", "N-N (a file per process), N-1 (one shared file) or 1-1 (one process does "
          "the I/O)", "N-N"),
    Field("jobs[].metadata_wait", "number", "operations", "mean metadata operations waiting at a forwarding node",
          0.0),
    Field("jobs[].iops", "string", "", "high or low: its IOPS class", "low"),
    Field("jobs[].bandwidth", "string", "", "high or low: its bandwidth class", "low"),
    Field("jobs[].history", "object", "", "what monitoring recorded of its previous run, what DFRA decides from "
          "(absent: a new application)", None),
    Field("jobs[].history.volume", "number", "GB", "the volume it moved"),
    Field("jobs[].history.io_nodes", "integer", "nodes", "its I/O nodes"),
    Field("jobs[].history.metadata_wait", "number", "operations", "its mean waiting metadata operations"),
    Field("running", "list", "", "the running jobs (the neighbours), which keep their mapping; each has the fields "
          "of jobs[] but history, and those below", []),
    Field("running[].forwarding", "list", "", "its mapping: [forwarding node id, compute nodes] groups over its "
          "compute nodes in order, summing to nodes (absent: the default mapping)", None),
    Field("running[].dedicated", "boolean", "", "no other job may use its forwarding nodes (pool nodes only)",
          False),
    Field("provenance", "object", "", "where the instance came from (imported logs: names, SHA-256, what was "
          "assumed); methods ignore it", None),
)


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise InstanceError(f"{where} must be a list, got {value!r}"[:300])
    if len(value) > MAX_ITEMS:
        raise InstanceError(f"{where} has {len(value)} entries, more than {MAX_ITEMS}")
    return value


def _job(d, where: str, running: bool) -> Job:
    required, optional = FIELDS.keys("jobs[]")
    scalars = [f.key for f in FIELDS if f.parent == "jobs[]" and f.type != "object"]
    if running:  # a running job: the fields of a job to place but its history, and its mapping
        optional = tuple(k for k in optional if k != "history") + FIELDS.keys("running[]")[1]
    check_fields(d, where, required, optional)
    text(f"{where}.id", d["id"])
    kw = {k: FIELDS.get(d, f"jobs[].{k}") for k in scalars}
    if "history" in d:
        h = d["history"]
        FIELDS.check(h, "jobs[].history", f"{where}.history")
        kw["history"] = History(h["volume"], h["io_nodes"], h["metadata_wait"])
    if "forwarding" in d:
        groups = _list(d["forwarding"], f"{where}.forwarding")
        kw["forwarding"] = tuple(tuple(g) if isinstance(g, list) else g for g in groups)
    if "dedicated" in d:
        kw["dedicated"] = d["dedicated"]
    try:
        return Job(**kw)
    except InstanceError as e:  # a running job's fields are named running[...]
        if not running:
            raise
        raise InstanceError(str(e).replace(f"jobs[{d['id']}]", f"running[{d['id']}]", 1)) from None


def _first_duplicate(items):
    seen = set()
    for x in items:
        if x in seen:
            return x
        seen.add(x)
    return None


def even_groups(nodes: int, forwarding: list[int] | tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """``nodes`` compute nodes split evenly, in order, over ``forwarding`` (the first n mod k get one more)."""
    k = len(forwarding)
    q, rest = divmod(nodes, k)
    return tuple((f, q + (i < rest)) for i, f in enumerate(forwarding) if q + (i < rest) > 0)

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

import heapq
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from iosched.errors import InstanceError
from iosched.instances import JsonInstance, check_fields, check_top
from iosched.validate import boolean, choice, integer, number, text

MODES = ("N-N", "N-1", "1-1")
LEVELS = ("high", "low")
SERVICES = ("default", "pool")
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
    service: str = "default"

    def __post_init__(self):
        integer("forwarding_nodes[].id", self.id, 0, 10**9)
        where = f"forwarding_nodes[{self.id}]"
        number(f"{where}.bandwidth", self.bandwidth, MIN_BANDWIDTH, 1e6)
        boolean(f"{where}.anomalous", self.anomalous)
        choice(f"{where}.service", self.service, SERVICES)


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
    mode: str = "N-N"
    metadata_wait: float = 0.0
    iops: str = "low"
    bandwidth: str = "low"
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
        choice(f"{where}.mode", self.mode, MODES)
        if self.mode == "1-1" and self.io_nodes != 1:
            raise InstanceError(f"{where}.io_nodes must be 1 in mode 1-1 (one process does the I/O), "
                                f"got {self.io_nodes!r}")
        number(f"{where}.metadata_wait", self.metadata_wait, 0, 1e12)
        choice(f"{where}.iops", self.iops, LEVELS)
        choice(f"{where}.bandwidth", self.bandwidth, LEVELS)
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
        check_fields(d, "interference", (), ("metadata_wait", "slowdown"))
        table = {v: dict(DEFAULT_SLOWDOWN[v]) for v in TRAITS}
        given = d.get("slowdown", {})
        check_fields(given, "interference.slowdown", (), TRAITS)
        for v, row in given.items():
            check_fields(row, f"interference.slowdown.{v}", (), TRAITS)
            table[v].update(row)
        return cls(d.get("metadata_wait", 32.0), tuple(tuple(table[v][a] for a in TRAITS) for v in TRAITS))


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
    def busy(self) -> frozenset:
        """Forwarding nodes that serve a running job."""
        return frozenset(f for j in self.running for f, _ in self.groups(j))

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
        check_top(d, "forwarding instance", ("compute_nodes", "default_ratio", "forwarding_nodes", "jobs"),
                  ("name", "default_mapping", "anomalous_fraction", "interference", "running", "provenance"))
        nodes = _list(d["forwarding_nodes"], "forwarding_nodes")
        fwd = []
        for k, f in enumerate(nodes):
            check_fields(f, f"forwarding_nodes[{k}]", ("id", "bandwidth"), ("anomalous", "service"))
            integer(f"forwarding_nodes[{k}].id", f["id"], 0, 10**9)
            fwd.append(ForwardingNode(f["id"], f["bandwidth"], f.get("anomalous", False), f.get("service", "default")))
        running = tuple(_job(j, f"running[{k}]", running=True)
                        for k, j in enumerate(_list(d.get("running", []), "running")))
        jobs = tuple(_job(j, f"jobs[{k}]", running=False) for k, j in enumerate(_list(d["jobs"], "jobs")))
        mapping = d.get("default_mapping")
        if mapping is not None:
            mapping = tuple(_list(mapping, "default_mapping"))
        interference = Interference.from_dict(d["interference"]) if "interference" in d else Interference()
        return cls(d["compute_nodes"], d["default_ratio"], tuple(fwd), jobs, running, name=d.get("name", name),
                   default_mapping=mapping, anomalous_fraction=d.get("anomalous_fraction", 0.1),
                   interference=interference, provenance=d.get("provenance"))


JOB_REQUIRED = ("id", "start", "nodes", "io_nodes", "node_bandwidth", "volume")
JOB_OPTIONAL = ("mode", "metadata_wait", "iops", "bandwidth")


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise InstanceError(f"{where} must be a list, got {value!r}"[:300])
    if len(value) > MAX_ITEMS:
        raise InstanceError(f"{where} has {len(value)} entries, more than {MAX_ITEMS}")
    return value


def _job(d, where: str, running: bool) -> Job:
    extra = ("forwarding", "dedicated") if running else ("history",)
    check_fields(d, where, JOB_REQUIRED, JOB_OPTIONAL + extra)
    text(f"{where}.id", d["id"])
    kw = {k: d[k] for k in JOB_REQUIRED + JOB_OPTIONAL if k in d}
    if "history" in d:
        h = d["history"]
        check_fields(h, f"{where}.history", ("volume", "io_nodes", "metadata_wait"))
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
    seen: set = set()
    return next((x for x in items if x in seen or seen.add(x)), None)  # add() is None: a first sighting is kept


# --- TaihuLight: the generator ---------------------------------------------------------------------

TAIHULIGHT_COMPUTE_NODES = 40960
TAIHULIGHT_DEFAULT_NODES = 80  # in daily service, 512:1
TAIHULIGHT_POOL_NODES = 160  # reserved: backup and large runs
FORWARDING_BANDWIDTH = 2.5  # GB/s per forwarding node
PEAK_NODE_BANDWIDTH = FORWARDING_BANDWIDTH / 32  # GB/s per compute node: F = B_f / B_c = 32 in the seed


def taihulight_nodes(default_nodes: int = TAIHULIGHT_DEFAULT_NODES, pool_nodes: int = TAIHULIGHT_POOL_NODES,
                     anomalous: tuple[int, ...] = ()) -> tuple[ForwardingNode, ...]:
    """Forwarding nodes 0..default-1 in service, then the pool, 2.5 GB/s each; ``anomalous`` ids marked."""
    return tuple(ForwardingNode(i, FORWARDING_BANDWIDTH, i in anomalous, "default" if i < default_nodes else "pool")
                 for i in range(default_nodes + pool_nodes))


def draw_job(rng: np.random.Generator, jid: str, history_share: float, with_history: bool,
              decay: float = 0.5, nn: float = 0.09, n1: float = 0.03, volume: float = 5.0) -> Job:
    """One job profile, TaihuLight-like: power-of-two sizes 1..4096 with P(2^k) ~ 2^(-decay k); a share
    ``nn`` N-N and ``n1`` N-1 (half as many below 32 nodes), the rest 1-1; I/O volumes log-normal (median
    ``volume`` GB for N-N and N-1, 2 GB for 1-1, sigma 1.5); 3 % metadata-heavy, 5 % high IOPS."""
    weights = np.array([2.0 ** (-k * decay) for k in range(13)])
    nodes = int(2 ** rng.choice(13, p=weights / weights.sum()))
    u = rng.random()
    mode = "N-N" if u < nn else "N-1" if u < nn + n1 else "1-1"
    if nodes < 32 and mode != "1-1" and rng.random() < 0.5:
        mode = "1-1"
    io = 1 if mode == "1-1" else nodes
    node_bw = PEAK_NODE_BANDWIDTH * (1.0 if mode == "1-1" or rng.random() < 0.5 else 0.25)
    volume = float(rng.lognormal(math.log(volume if mode != "1-1" else 2.0), 1.5))
    heavy = rng.random() < 0.03
    meta = float(rng.uniform(40, 200) if heavy else rng.exponential(3.0))
    iops = "high" if rng.random() < 0.05 else "low"
    bandwidth = "high" if io * node_bw >= FORWARDING_BANDWIDTH else "low"
    history = None
    if with_history and rng.random() < history_share:  # the seed: most jobs recur within +-20 %
        history = History(round(volume * rng.uniform(0.8, 1.2), 3), io, round(meta * rng.uniform(0.8, 1.2), 3))
    return Job(jid, 0, nodes, io, node_bw, round(max(volume, 0.001), 3), mode, round(meta, 3), iops, bandwidth,
               history)


def generate(seed: int, n_jobs: int = 20, compute_nodes: int = TAIHULIGHT_COMPUTE_NODES,
             default_nodes: int = TAIHULIGHT_DEFAULT_NODES, pool_nodes: int = TAIHULIGHT_POOL_NODES,
             anomalous: int = 2, occupancy: float = 0.8, history: float = 0.9) -> ForwardingInstance:
    """A TaihuLight-like instance: ``n_jobs`` jobs to place among running jobs.

    The machine (40960 compute nodes, 80 forwarding nodes in service at 512:1, 160 in the
    pool, 2.5 GB/s each) holds the jobs to place and running jobs up to ``occupancy`` of its
    compute nodes, shuffled into contiguous ranges with idle gaps between (so jobs straddle
    blocks, as the seed found). Running jobs that DFRA would scale already hold dedicated pool
    nodes (up to half of the healthy pool). ``anomalous`` forwarding nodes, anywhere, deliver
    10 % of their bandwidth; a share ``history`` of the jobs to place have a history. Same
    seed, same instance.
    """
    integer("n_jobs", n_jobs, 1, MAX_ITEMS)
    integer("compute_nodes", compute_nodes, 1, MAX_COMPUTE_NODES)
    integer("default_nodes", default_nodes, 1, MAX_ITEMS)
    integer("pool_nodes", pool_nodes, 0, MAX_ITEMS)
    integer("anomalous", anomalous, 0, default_nodes + pool_nodes)
    number("occupancy", occupancy, 0, 1)
    number("history", history, 0, 1)
    if compute_nodes % default_nodes:
        raise InstanceError(f"compute_nodes ({compute_nodes}) must be a multiple of default_nodes ({default_nodes})")
    ratio = compute_nodes // default_nodes
    rng = np.random.default_rng(seed)
    jobs = [draw_job(rng, f"j{i + 1}", history, True) for i in range(n_jobs)]
    jobs = _fitted(jobs, compute_nodes)
    running, used = [], sum(j.nodes for j in jobs)
    while used < occupancy * compute_nodes:
        r = draw_job(rng, f"r{len(running) + 1}", 0.0, False)
        if used + r.nodes > compute_nodes:
            break
        running.append(r)
        used += r.nodes
    items = [("job", j) for j in jobs] + [("run", r) for r in running]
    order = rng.permutation(len(items))
    gaps = rng.multinomial(compute_nodes - used, np.ones(len(items) + 1) / (len(items) + 1))
    pos, placed, run = int(gaps[0]), [], []
    for k, idx in enumerate(order):
        kind, j = items[idx]
        j = _moved(j, pos)
        (placed if kind == "job" else run).append(j)
        pos += j.nodes + int(gaps[k + 1])
    bad = set(int(x) for x in rng.choice(default_nodes + pool_nodes, size=anomalous, replace=False))
    fwd = taihulight_nodes(default_nodes, pool_nodes, tuple(sorted(bad)))
    idle = [f.id for f in fwd if f.service == "pool" and not f.anomalous]
    idle = idle[:len(idle) // 2]  # running jobs hold at most half of the healthy pool
    run = [_granted(r, idle) for r in run]  # as DFRA would have scaled them at their dispatch
    placed.sort(key=lambda j: int(j.id[1:]))
    run.sort(key=lambda j: int(j.id[1:]))
    return ForwardingInstance(compute_nodes, ratio, fwd, tuple(placed), tuple(run),
                              name=f"random:{seed}:{n_jobs}")


def _fitted(jobs: list[Job], compute_nodes: int) -> list[Job]:
    """Halve the largest job (the first of equals) until the sizes sum to at most 95 % of ``compute_nodes``;
    a heap of sizes, each job rebuilt once at its final size (linear in the jobs and the halvings)."""
    sizes = [j.nodes for j in jobs]
    heap = [(-n, k) for k, n in enumerate(sizes)]
    heapq.heapify(heap)
    total = sum(sizes)
    while total > 0.95 * compute_nodes:
        _, k = heapq.heappop(heap)
        half = max(1, sizes[k] // 2)
        total -= sizes[k] - half
        sizes[k] = half
        heapq.heappush(heap, (-half, k))
        if heap[0][0] == -1:
            raise InstanceError(f"n_jobs={len(jobs)} one-node jobs do not fit compute_nodes={compute_nodes}")
    return [j if n == j.nodes else _resized(j, n) for j, n in zip(jobs, sizes)]


def _resized(j: Job, nodes: int) -> Job:
    io = 1 if j.mode == "1-1" else nodes
    hist = None if j.history is None else History(j.history.volume, io, j.history.metadata_wait)
    bw = "high" if io * j.node_bandwidth >= FORWARDING_BANDWIDTH else "low"
    return Job(j.id, j.start, nodes, io, j.node_bandwidth, j.volume, j.mode, j.metadata_wait, j.iops, bw, hist)


def _moved(j: Job, start: int) -> Job:
    return Job(j.id, start, j.nodes, j.io_nodes, j.node_bandwidth, j.volume, j.mode, j.metadata_wait, j.iops,
               j.bandwidth, j.history)


def _granted(r: Job, idle: list[int]) -> Job:
    """A running job that passes DFRA's scaling test (20 GB, 32 I/O nodes, metadata < 32) holds
    min(ceil(io / 32), what is left) dedicated pool nodes, its compute nodes split evenly."""
    if not (r.volume > 20 and r.io_nodes >= 32 and r.metadata_wait < 32) or not idle:
        return r
    k = min(-(-r.io_nodes // 32), len(idle), r.nodes)
    nodes = [idle.pop(0) for _ in range(k)]
    return Job(r.id, r.start, r.nodes, r.io_nodes, r.node_bandwidth, r.volume, r.mode, r.metadata_wait, r.iops,
               r.bandwidth, None, even_groups(r.nodes, nodes), True)


def even_groups(nodes: int, forwarding: list[int] | tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """``nodes`` compute nodes split evenly, in order, over ``forwarding`` (the first n mod k get one more)."""
    k = len(forwarding)
    q, rest = divmod(nodes, k)
    return tuple((f, q + (i < rest)) for i, f in enumerate(forwarding) if q + (i < rest) > 0)


# --- the seed's testbed applications ---------------------------------------------------------------

# name -> (nodes, mode, io_nodes, node_bandwidth GB/s, volume GB, metadata_wait, iops, bandwidth, seed's group)
# Seed values: nodes (Shentu, LAMMPS, Macdrp 1024; swDNN 512; the rest 256 -- Section 6), the modes
# given in the text (AWP N-1, WRF1 1-1, XCFD N-N), the classes it states (WRF1, CAM, AWP low in all
# three dimensions; DNDC the only metadata-heavy one; APT high IOPS with < 1 KB requests; Shentu,
# LAMMPS, MPI-IO N bandwidth-hungry), and the groups (APT, DNDC, WRF1, CAM fail eligibility).
# Assumptions: every volume, io_nodes and node_bandwidth, and the unstated modes and classes.
PEAK = PEAK_NODE_BANDWIDTH
APPS = {
    "cesm": (256, "N-N", 256, PEAK, 50.0, 2.0, "low", "high", "scaling"),
    "cam": (256, "N-N", 16, 0.005, 10.0, 2.0, "low", "low", "non-scaling"),
    "awp": (256, "N-1", 256, 0.001, 40.0, 2.0, "low", "low", "scaling"),
    "shentu": (1024, "N-N", 1024, PEAK, 200.0, 2.0, "low", "high", "scaling"),
    "lammps": (1024, "N-N", 1024, PEAK, 100.0, 2.0, "low", "high", "scaling"),
    "macdrp": (1024, "N-N", 1024, PEAK, 100.0, 2.0, "low", "high", "scaling"),
    "dndc": (256, "N-N", 256, 0.002, 30.0, 100.0, "low", "low", "non-scaling"),
    "wrf1": (256, "1-1", 1, PEAK, 5.0, 1.0, "low", "low", "non-scaling"),
    "apt": (256, "N-N", 256, 0.0003, 5.0, 2.0, "high", "low", "non-scaling"),
    "xcfd": (256, "N-N", 256, PEAK, 60.0, 2.0, "low", "high", "scaling"),
    "swdnn": (512, "N-N", 512, PEAK, 100.0, 2.0, "low", "high", "scaling"),
}
TABLE3_APPS = {  # two more programs of the pairwise study (Table 3), same conventions
    "wrfn": (256, "N-N", 256, PEAK, 40.0, 2.0, "low", "high", "scaling"),
    "mpiio-n": (256, "N-N", 256, PEAK, 40.0, 2.0, "low", "high", "scaling"),
}
# The seed's Section 6 results: I/O speed-up of DFRA over the fixed 512:1 mapping.
SEED_SPEEDUP = {"shentu": 18.9, "cam": 1.03}
SEED_MEAN_SPEEDUP, SEED_SCALING_MEAN_SPEEDUP, SEED_MAX_SPEEDUP = 3.5, 4.8, 18.9
# Table 3 (fragment in the seed's text): (slowdown of the first, slowdown of the second) when the two
# share one forwarding node, 256 compute nodes each.
SEED_TABLE3 = {
    ("wrf1", "wrf1"): (1.0, 1.0), ("wrf1", "wrfn"): (1.0, 1.0), ("wrf1", "shentu"): (1.0, 1.0),
    ("wrf1", "cam"): (1.0, 1.0), ("wrf1", "awp"): (50.0, 1.0), ("wrfn", "wrfn"): (2.1, 2.1),
    ("wrfn", "shentu"): (2.0, 2.3), ("wrfn", "cam"): (1.0, 1.0), ("wrfn", "awp"): (12.5, 1.3),
    ("shentu", "shentu"): (2.0, 2.0), ("shentu", "cam"): (1.0, 1.0), ("shentu", "awp"): (12.5, 1.1),
    ("cam", "cam"): (1.0, 1.0), ("cam", "awp"): (100.0, 1.0), ("awp", "awp"): (2.0, 2.0),
    ("apt", "mpiio-n"): (10.0, 1.0),
}


def app_job(app: str, jid: str, start: int, nodes: int | None = None, history: bool = True) -> Job:
    """A job of the testbed application ``app`` (``nodes`` overrides its size), with its own figures as history."""
    n, mode, io, bw, vol, meta, iops, band, _ = {**APPS, **TABLE3_APPS}[app]
    if nodes is not None:
        io = 1 if mode == "1-1" else max(1, io * nodes // n)
        n = nodes
    return Job(jid, start, n, io, bw, vol, mode, meta, iops, band, History(vol, io, meta) if history else None)


NEIGHBOUR = ("N-N", 1 / 8, 0.01, 5.0)  # a typical neighbour: mode, share of I/O nodes, B_c GB/s, volume GB


def neighbour(jid: str, start: int, nodes: int) -> Job:
    """A typical low-I/O running job (assumption): an eighth of its nodes write 5 GB at 10 MB/s each."""
    mode, share, bw, vol = NEIGHBOUR
    return Job(jid, start, nodes, max(1, int(nodes * share)), bw, vol, mode, 1.0, "low", "low")


TESTBED_START = 10 * 512 + 256  # half a block into block 10


def testbed(job: Job, name: str) -> ForwardingInstance:
    """``job`` (starting at TESTBED_START) alone to place on TaihuLight, misaligned as the seed found nearly
    every job, with typical low-I/O running jobs on the rest of the blocks it crosses; no anomalous node."""
    end = TESTBED_START + job.nodes
    tail = -end % 512
    running = [neighbour("before", 10 * 512, 256)] + ([neighbour("after", end, tail)] if tail else [])
    return ForwardingInstance(TAIHULIGHT_COMPUTE_NODES, 512, taihulight_nodes(), (job,), tuple(running), name=name)


def app_preset(app: str) -> ForwardingInstance:
    """``app`` at its Section 6 scale on the testbed (:func:`testbed`)."""
    return testbed(app_job(app, app, TESTBED_START), f"testbed:{app}")


def pair(first: str, second: str) -> ForwardingInstance:
    """Table 3's co-run: ``first`` and ``second`` on 256 compute nodes each, sharing one forwarding node
    (block 0 of an 8-block machine with an 8-node pool); both are jobs to place."""
    a = app_job(first, first, 0, 256)
    b = app_job(second, second if second != first else second + "-2", 256, 256)
    return ForwardingInstance(4096, 512, taihulight_nodes(8, 8), (a, b), (), name=f"pair:{first}:{second}")


def figure4() -> ForwardingInstance:
    """Figure 4's shared mode: Shentu (1024 nodes) with one forwarding node to itself and two shared,
    one with AWP (256 nodes) and one with LAMMPS (256 nodes); all three running as given."""
    shentu = app_job("shentu", "shentu", 256, 1024)
    awp, lammps = app_job("awp", "awp", 0, 256), app_job("lammps", "lammps", 1280, 256)
    return ForwardingInstance(2048, 512, taihulight_nodes(4, 4), (awp, shentu, lammps), (), name="figure4")


def load(spec: str) -> ForwardingInstance:
    """``testbed:APP``, ``pair:A:B``, ``figure4``, ``random:SEED[:N_JOBS]``, or a JSON file path."""
    if spec.startswith("testbed:"):
        app = spec.split(":", 1)[1]
        if app not in APPS:
            raise InstanceError(f"testbed application must be one of {', '.join(APPS)}, got {app!r}")
        return app_preset(app)
    if spec.startswith("pair:"):
        parts = spec.split(":")[1:]
        known = {**APPS, **TABLE3_APPS}
        if len(parts) != 2 or not all(p in known for p in parts):
            raise InstanceError(f"pairs are pair:A:B with A, B among {', '.join(known)}, got {spec!r}")
        return pair(*parts)
    if spec == "figure4":
        return figure4()
    if spec.startswith("random:"):
        parts = spec.split(":")[1:]
        if not 1 <= len(parts) <= 2 or not all(p.isdigit() for p in parts):
            raise InstanceError(f"random instances are random:SEED[:N_JOBS], got {spec!r}")
        return generate(*[int(p) for p in parts])
    if not Path(spec).is_file():
        raise InstanceError(f"no such instance file or built-in name: {spec!r}")
    return ForwardingInstance.from_json(Path(spec))


BUILTIN = [f"testbed:{a}" for a in APPS] + ["figure4", "pair:wrf1:awp", "random:0:20"]


# --- from Darshan logs ------------------------------------------------------------------------------

def from_darshan(logs, procs_per_node: int = 1, node_bandwidth: float = PEAK_NODE_BANDWIDTH,
                 forwarding_bandwidth: float = FORWARDING_BANDWIDTH, default_ratio: int = 512,
                 pool_nodes: int | None = None, name: str | None = None) -> ForwardingInstance:
    """A batch of jobs to place, one per Darshan log (a log or folder path, a read
    :class:`~iosched.importers.darshan.DarshanLog`, or a list of them), in the order they started.

    Per job, from the POSIX and STDIO counters (the layer that reaches the file system; MPI-IO
    sits above POSIX and would count the bytes twice; the terminal streams are left out):
    compute nodes = ceil(processes / ``procs_per_node``); I/O nodes from the ranks that moved bytes
    (a file Darshan reduced to rank -1 was opened by every rank); volume = bytes read + written
    (GB); mode 1-1 when one rank did the I/O, N-1 when files shared by several ranks carry at least
    half the bytes (N-M, several shared files, is run as N-1), else N-N; metadata_wait = the mean
    number of metadata operations in flight (Little's law: the summed F_META_TIME over the run
    time); iops high when more than half of the POSIX reads and writes are under 1 KiB. The log
    itself is the job's history (DFRA decides from the previous run). ``node_bandwidth`` (GB/s per
    compute node) is not in a log. The machine: the jobs side by side from node 0 in arrival
    order, one default forwarding node per ``default_ratio`` compute nodes, ``pool_nodes`` idle
    ones (default twice as many, TaihuLight's 160:80), ``forwarding_bandwidth`` GB/s each.

    A POSIX or STDIO module flagged partial (Darshan ran out of records) is summed as it is and
    named in ``assumed``. A log without file-system bytes through POSIX or STDIO is refused
    (InstanceError naming it); in a batch it is left out and listed in ``provenance["refused"]``.
    """
    from iosched.importers import darshan as dx

    integer("procs_per_node", procs_per_node, 1, MAX_COMPUTE_NODES)
    number("node_bandwidth", node_bandwidth, MIN_BANDWIDTH, 1e6)
    number("forwarding_bandwidth", forwarding_bandwidth, MIN_BANDWIDTH, 1e6)
    integer("default_ratio", default_ratio, 1, MAX_COMPUTE_NODES)
    profiles, refused = dx.each(logs, ("POSIX", "STDIO", "MPI-IO"),
                                lambda log: _darshan_profile(log, procs_per_node, node_bandwidth,
                                                             forwarding_bandwidth))
    profiles.sort(key=lambda p: p["arrival"])
    jobs, pos, seen = [], 0, {}
    for p in profiles:
        jid = str(p["job_id"])
        seen[jid] = seen.get(jid, 0) + 1
        jid = jid if seen[jid] == 1 else f"{jid}#{seen[jid]}"
        j = p.pop("job")
        jobs.append(Job(jid, pos, j.nodes, j.io_nodes, j.node_bandwidth, j.volume, j.mode, j.metadata_wait, j.iops,
                        j.bandwidth, j.history))
        p["id"] = jid
        pos += j.nodes
    blocks = -(-pos // default_ratio)
    pool = 2 * blocks if pool_nodes is None else integer("pool_nodes", pool_nodes, 0, MAX_ITEMS)
    fwd = tuple(ForwardingNode(i, forwarding_bandwidth, False, "default" if i < blocks else "pool")
                for i in range(blocks + pool))
    t0 = profiles[0]["arrival"]
    for p in profiles:
        p["arrival_s"] = round(p.pop("arrival") - t0, 6)
    partial = "; ".join(f"{p['log']} ({', '.join(p['partial'])})" for p in profiles if p.get("partial"))
    assumed = (f"{len(jobs)} jobs side by side on {blocks * default_ratio} compute nodes in arrival order "
               f"({procs_per_node} processes per node), {blocks} + {pool} forwarding nodes of {forwarding_bandwidth} "
               f"GB/s at {default_ratio}:1, node bandwidth {node_bandwidth} GB/s (not in a log), each log its job's "
               f"history" + (f"; partial modules summed as they are (Darshan's record limit: volume, I/O ranks and "
                             f"times are lower bounds): {partial}" if partial else "") + (f"; {len(refused)} logs "
                                                                                         f"refused" if refused else ""))
    provenance = {"source": "darshan", "assumed": assumed, "jobs": profiles}
    if refused:
        provenance["refused"] = [{"log": n, "reason": r} for n, r in refused]
    return ForwardingInstance(blocks * default_ratio, default_ratio, fwd, tuple(jobs), (),
                              name=name or f"darshan:{len(jobs)}-jobs", provenance=provenance)


def _darshan_profile(log, procs_per_node: int, node_bandwidth: float, forwarding_bandwidth: float) -> dict:
    """One log as a job to place (at node 0: the batch moves it) and its provenance entry."""
    from iosched.importers import darshan as dx

    io = dx.job_io(log)
    if io.io_procs == 1:
        mode, seen = "1-1", "1-1"
    elif 2 * io.shared_bytes >= io.bytes:
        mode, seen = "N-1", "N-1" if io.shared_files == 1 else f"N-M ({io.shared_files} shared files)"
    else:
        mode, seen = "N-N", "N-N"
    nodes = -(-io.nprocs // procs_per_node)
    io_nodes = 1 if mode == "1-1" else min(nodes, -(-io.io_procs // procs_per_node))
    meta_wait = io.meta_time_s / io.run_time_s
    iops = "high" if io.ops and 2 * io.small_ops > io.ops else "low"
    volume = io.bytes / 1e9  # GB
    job = Job("log", 0, nodes, io_nodes, node_bandwidth, volume, mode, round(meta_wait, 6), iops,
              "high" if io_nodes * node_bandwidth >= forwarding_bandwidth else "low",
              History(volume, io_nodes, round(meta_wait, 6)))
    share = (io.io_time_s + io.meta_time_s) / (io.nprocs * io.run_time_s)
    partial = {"partial": [m for m in io.modules if log.modules[m]["partial"]]}  # Darshan's record limit (1,024)
    return {"job": job, "arrival": log.start_s, **log.provenance(io.modules, dx.JOB_IO_COUNTERS, **partial),
            "files_per_process": seen, "io_processes": io.io_procs, "io_time_share": round(share, 6),
            "run_time_s": round(io.run_time_s, 6),
            "small_request_share": round(io.small_ops / io.ops, 6) if io.ops else None}

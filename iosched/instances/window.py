"""Instances of the window selection problem (Fan et al., BBSched, HPDC 2019).

At a scheduling instant a window of queued jobs (front first) competes for the free
nodes and the free shared burst buffer. Burst buffer is counted in integer units (GB in
the built-in data); a ``granularity`` > 1 rounds every request up to a multiple of it,
as DataWarp allocates in granules. The SSD extension adds, per job, the local SSD it
needs on every node (GB), and in the capacity the node classes by SSD size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iosched import validate
from iosched.errors import InstanceError
from iosched.instances import JsonInstance
from iosched.instances.fields import Field, Fields

MAX_NODES = 10**7  # nodes in a capacity, a class or a job: ten times the largest machines
MAX_JOBS = 100_000  # jobs in a window
MAX_UNITS = 2**62  # burst buffer units, SSD GB: sums of them stay within int64


def count(where: str, value, *, positive: bool = False, top: int = MAX_UNITS) -> None:
    """``value`` is a count of nodes, units or jobs: an integer in [0 (1 if ``positive``), ``top``]."""
    validate.integer(where, value, 1 if positive else 0, top)


@dataclass(frozen=True)
class SSDClass:
    """``nodes`` free nodes that each have ``ssd`` GB of local SSD."""

    ssd: int
    nodes: int

    def __post_init__(self):
        count("ssd_classes[].ssd", self.ssd, positive=True)
        count("ssd_classes[].nodes", self.nodes, top=MAX_NODES)


@dataclass(frozen=True)
class Capacity:
    """Free resources: nodes, burst buffer units, and optionally the SSD classes of the free nodes."""

    nodes: int
    burst_buffer: int
    ssd_classes: tuple[SSDClass, ...] = ()

    def __post_init__(self):
        count("capacity.nodes", self.nodes, top=MAX_NODES)
        count("capacity.burst_buffer", self.burst_buffer)
        if self.ssd_classes and sum(c.nodes for c in self.ssd_classes) != self.nodes:
            raise InstanceError(f"capacity.ssd_classes hold {sum(c.nodes for c in self.ssd_classes)} nodes, "
                                f"capacity.nodes is {self.nodes}")


@dataclass(frozen=True)
class Machine:
    """The whole machine, busy or free: its nodes and burst buffer units (for shares of the
    machine's total capacity, as a running system measures them)."""

    nodes: int
    burst_buffer: int

    def __post_init__(self):
        count("machine.nodes", self.nodes, positive=True, top=MAX_NODES)
        count("machine.burst_buffer", self.burst_buffer)


@dataclass(frozen=True)
class Job:
    """A queued job: nodes, burst buffer units, and local SSD GB per node (0: none)."""

    id: str
    nodes: int
    burst_buffer: int = 0
    ssd_per_node: int = 0

    def __post_init__(self):
        validate.text("job id", self.id)
        count(f"jobs[{self.id}].nodes", self.nodes, positive=True, top=MAX_NODES)
        count(f"jobs[{self.id}].burst_buffer", self.burst_buffer)
        count(f"jobs[{self.id}].ssd_per_node", self.ssd_per_node)


@dataclass(frozen=True)
class WindowInstance(JsonInstance):
    """A window of jobs (front first) and the free capacity; burst buffer rounded up to ``granularity``;
    optionally the whole ``machine`` (None: unknown)."""

    capacity: Capacity
    jobs: tuple[Job, ...]
    name: str = "window"
    granularity: int = 1
    machine: Machine | None = None

    def __post_init__(self):
        validate.text("name", self.name)
        if not self.jobs or len(self.jobs) > MAX_JOBS:
            raise InstanceError(f"jobs must be a non-empty list of at most {MAX_JOBS} jobs, got "
                                f"{list(self.jobs) if not self.jobs else f'{len(self.jobs)} jobs'}")
        ids = [j.id for j in self.jobs]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise InstanceError(f"job ids must be unique, {dup!r} appears twice")
        count("granularity", self.granularity, positive=True)
        for what, total in (("burst_buffer", sum(self.bb(i) for i in range(len(self.jobs)))),
                            ("ssd_per_node x nodes", sum(j.ssd_per_node * j.nodes for j in self.jobs))):
            if total > MAX_UNITS:
                raise InstanceError(f"the jobs' {what} sum to {total}, above 2^62: count in coarser units")
        m = self.machine
        if m is not None:
            if not isinstance(m, Machine):
                raise InstanceError(f"machine must be a Machine (nodes, burst_buffer), got {m!r}")
            for what in ("nodes", "burst_buffer"):
                if getattr(m, what) < getattr(self.capacity, what):
                    raise InstanceError(f"machine.{what} = {getattr(m, what)} is less than the free "
                                        f"capacity.{what} = {getattr(self.capacity, what)}")
        if self.capacity.ssd_classes:
            biggest = max(c.ssd for c in self.capacity.ssd_classes)
            for j in self.jobs:
                if j.ssd_per_node > biggest:
                    raise InstanceError(f"jobs[{j.id}].ssd_per_node = {j.ssd_per_node} exceeds every SSD class "
                                        f"(largest {biggest})")

    @property
    def trivial(self) -> str | None:
        """Why every selection scores the same hypervolume, 0 (so every method meets the bound and is called
        optimal), or None: no job fits the free nodes, or no selection holds any burst buffer."""
        cap = self.capacity
        smallest = min(j.nodes for j in self.jobs)
        if smallest > cap.nodes:
            return (f"capacity.nodes = {cap.nodes} and the smallest job needs {smallest} nodes: no job fits, "
                    f"the only selection is the empty one, and every method is optimal with hypervolume 0")
        if cap.burst_buffer == 0 or not any(j.burst_buffer for j in self.jobs):
            why = "capacity.burst_buffer = 0" if cap.burst_buffer == 0 else "no job requests burst buffer"
            return (f"{why}: every selection's burst-buffer share is 0, so its hypervolume is 0 and every method "
                    f"is optimal by it; compare the selections' node_utilization instead")
        return None

    @property
    def has_ssd(self) -> bool:
        return bool(self.capacity.ssd_classes)

    def bb(self, i: int) -> int:
        """Job i's burst buffer request rounded up to the granularity (units)."""
        g = self.granularity
        return -(-self.jobs[i].burst_buffer // g) * g

    def nodes(self) -> np.ndarray:
        return np.array([j.nodes for j in self.jobs], dtype=np.int64)

    def bbs(self) -> np.ndarray:
        return np.array([self.bb(i) for i in range(len(self.jobs))], dtype=np.int64)

    def to_dict(self) -> dict:
        cap = {"nodes": self.capacity.nodes, "burst_buffer": self.capacity.burst_buffer}
        if self.capacity.ssd_classes:
            cap["ssd_classes"] = [{"ssd": c.ssd, "nodes": c.nodes} for c in self.capacity.ssd_classes]
        jobs = []
        for j in self.jobs:
            d = {"id": j.id, "nodes": j.nodes, "burst_buffer": j.burst_buffer}
            if j.ssd_per_node:
                d["ssd_per_node"] = j.ssd_per_node
            jobs.append(d)
        d = {"name": self.name, "capacity": cap, "jobs": jobs}
        if self.granularity != 1:
            d["granularity"] = self.granularity
        if self.machine is not None:
            d["machine"] = {"nodes": self.machine.nodes, "burst_buffer": self.machine.burst_buffer}
        return d

    @classmethod
    def from_dict(cls, d: dict, name: str = "window") -> WindowInstance:
        FIELDS.check(d)
        cap = d["capacity"]
        FIELDS.check(cap, "capacity")
        classes = FIELDS.get(cap, "capacity.ssd_classes")
        if not isinstance(classes, list):
            raise InstanceError(f"capacity.ssd_classes must be a list, got {classes!r}")
        for i, c in enumerate(classes):
            FIELDS.check(c, "capacity.ssd_classes[]", f"capacity.ssd_classes[{i}]")
        capacity = Capacity(cap["nodes"], cap["burst_buffer"], tuple(SSDClass(c["ssd"], c["nodes"]) for c in classes))
        if not isinstance(d["jobs"], list):
            raise InstanceError(f"jobs must be a list, got {d['jobs']!r}")
        jobs = []
        for i, j in enumerate(d["jobs"]):
            FIELDS.check(j, "jobs[]", f"jobs[{i}]")
            jobs.append(Job(j["id"], j["nodes"], FIELDS.get(j, "jobs[].burst_buffer"),
                            FIELDS.get(j, "jobs[].ssd_per_node")))
        machine = None
        if d.get("machine") is not None:
            FIELDS.check(d["machine"], "machine")
            machine = Machine(d["machine"]["nodes"], d["machine"]["burst_buffer"])
        return cls(capacity, tuple(jobs), name=d.get("name", name), granularity=FIELDS.get(d, "granularity"),
                   machine=machine)


# The JSON of a window instance; WindowInstance.from_dict checks every object's keys against it.
FIELDS = Fields(
    "window instance",
    Field("name", "string", "", "the instance's name (default: the file's name without .json)", None),
    Field("capacity", "object", "", "the free resources at the scheduling instant"),
    Field("capacity.nodes", "integer", "nodes", "free nodes"),
    Field("capacity.burst_buffer", "integer", "BB units", "free shared burst buffer (GB in the built-in data)"),
    Field("capacity.ssd_classes", "list", "", "the free nodes by size of their local SSD, for the SSD extension "
          "(the classes' nodes sum to capacity.nodes)", []),
    Field("capacity.ssd_classes[].ssd", "integer", "GB", "local SSD of each node of the class (at least 1)"),
    Field("capacity.ssd_classes[].nodes", "integer", "nodes", "free nodes of the class"),
    Field("jobs", "list", "", "the window: queued jobs, front first, ids unique"),
    Field("jobs[].id", "string", "", "the job's id"),
    Field("jobs[].nodes", "integer", "nodes", "nodes it needs (at least 1)"),
    Field("jobs[].burst_buffer", "integer", "BB units", "burst buffer it requests", 0),
    Field("jobs[].ssd_per_node", "integer", "GB", "local SSD it needs on each of its nodes (0: none)", 0),
    Field("granularity", "integer", "BB units", "burst buffer is allocated in multiples of it: each request is "
          "rounded up (DataWarp's granules)", 1),
    Field("machine", "object", "", "the whole machine, busy or free, for shares of its total capacity (absent or "
          "null: unknown)", None),
    Field("machine.nodes", "integer", "nodes", "all its nodes (at least capacity.nodes)"),
    Field("machine.burst_buffer", "integer", "BB units", "all its burst buffer (at least capacity.burst_buffer)"),
)

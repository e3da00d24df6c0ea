"""Instances of the malleable-jobs problem (Iserte et al., DMR API, the seed `dmr-malleable-jobs`).

A cluster of ``nodes`` identical nodes; jobs arrive over time. A job does ``work``
(iterations) whose whole run time at p nodes is ``runtime(p)`` seconds, so it progresses
at work / runtime(p) per second while it holds p nodes. Its sizes are the *ladder*
``min_nodes * factor**k`` up to ``max_nodes`` (the seed's resizing factor: every size is a
multiple or divisor of every other). It is submitted at ``submit`` nodes (default: the top
of the ladder -- the seed launches every job with its maximum) and starts only when that
many are free. While it runs it checks with the resource manager every ``period`` seconds
(the seed's scheduling period, 15 s for CG and Jacobi: the application checks at every
iteration and the inhibitor ignores checks for a period after each one, so with short
iterations the checks are one period apart); at a check it may be resized, which costs
``reconfig_s + redistribute_s / min(old, new)`` seconds without progress (data moved in
smaller chunks when more processes share it, as the seed's Figure 3 shows). ``preferred``
(the seed's preferred number of processes) and ``request`` (a size the job strongly asks
for, section 4.1) select the policy's mode; ``timeout`` is how long a requested expansion
waits for nodes before it is abandoned.

Run-time models (``runtime``): ``amdahl`` T(p) = seconds_1 (serial + (1 - serial) / p);
``linear`` T(p) = seconds_1 / min(p, up_to) (linear speed-up up to a point, flat after);
``table`` T(p) given at every ladder size.

The seed's applications, the generators and the built-in names are in
:mod:`iosched.instances.malleable_presets`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from iosched.errors import InstanceError
from iosched.instances import JsonInstance, check_fields
from iosched.instances.fields import Field, Fields
from iosched.validate import integer, number, text

MAX_NODES = 10_000_000
MAX_JOBS = 1_000_000
MIN_RUN_S = 1e-3  # s: the shortest run time at any size (a shorter one rounds to empty intervals)
RUN_RESOLUTION = 1e-6  # every run time is at least this share of the last arrival: the evaluator
#                        compares times to 1e-9 of the largest, so a run keeps 1,000 of its tolerances
MAX_CHECKS = 100_000  # checks a job may make at its slowest size: bounds the simulator's work


class RuntimeModel(StrEnum):
    """How a job's run time depends on its nodes (see the module docstring; the JSON holds the strings)."""

    AMDAHL = "amdahl"
    LINEAR = "linear"
    TABLE = "table"


RUNTIME_MODELS = tuple(RuntimeModel)


@dataclass(frozen=True)
class Runtime:
    """The whole job's run time (s) as a function of its node count; see the module docstring."""

    model: RuntimeModel
    seconds_1: float = 0.0  # amdahl, linear: run time on one node (s)
    serial: float = 0.0  # amdahl: serial fraction in [0, 1]
    up_to: int = 0  # linear: speed-up stops growing beyond this many nodes
    seconds: tuple[tuple[int, float], ...] = ()  # table: (nodes, run time s), sorted by nodes

    def __post_init__(self):
        if self.model in RUNTIME_MODELS:  # anything else is named by check()
            object.__setattr__(self, "model", RuntimeModel(self.model))

    def time(self, p: int) -> float:
        if self.model == "amdahl":
            return self.seconds_1 * (self.serial + (1 - self.serial) / p)
        if self.model == "linear":
            return self.seconds_1 / min(p, self.up_to)
        return dict(self.seconds)[p]

    def to_dict(self) -> dict:
        if self.model == "amdahl":
            return {"model": "amdahl", "seconds_1": self.seconds_1, "serial": self.serial}
        if self.model == "linear":
            return {"model": "linear", "seconds_1": self.seconds_1, "up_to": self.up_to}
        return {"model": "table", "seconds": {str(p): t for p, t in self.seconds}}

    @classmethod
    def from_dict(cls, d, where: str) -> Runtime:
        if not isinstance(d, dict):
            raise InstanceError(f"{where} must be an object, got {d!r}")
        model = d.get("model")
        if model not in RUNTIME_MODELS:
            raise InstanceError(f"{where}.model must be one of {', '.join(RUNTIME_MODELS)}, got {model!r}")
        if model == "amdahl":
            check_fields(d, where, {"model", "seconds_1", "serial"})
            return cls("amdahl", seconds_1=d["seconds_1"], serial=d["serial"])
        if model == "linear":
            check_fields(d, where, {"model", "seconds_1", "up_to"})
            return cls("linear", seconds_1=d["seconds_1"], up_to=d["up_to"])
        check_fields(d, where, {"model", "seconds"})
        table = d["seconds"]
        if not isinstance(table, dict) or not table:
            raise InstanceError(f"{where}.seconds must be a non-empty object {{nodes: seconds}}, got {table!r}")
        pairs = []
        for key, value in table.items():
            if not (isinstance(key, str) and key.isdigit() and key == str(int(key))) or int(key) < 1:
                raise InstanceError(f"{where}.seconds keys must be node counts >= 1, got {key!r}")
            pairs.append((int(key), value))
        return cls("table", seconds=tuple(sorted(pairs)))

    def check(self, where: str) -> None:
        if self.model not in RUNTIME_MODELS:
            raise InstanceError(f"{where}.model must be one of {', '.join(RUNTIME_MODELS)}, got {self.model!r}")
        if self.model in ("amdahl", "linear"):
            number(f"{where}.seconds_1", self.seconds_1, 0, 1e12, lo_open=True)
        if self.model == "amdahl":
            number(f"{where}.serial", self.serial, 0, 1)
        if self.model == "linear":
            integer(f"{where}.up_to", self.up_to, 1, MAX_NODES)
        if self.model == "table":
            for p, t in self.seconds:
                number(f"{where}.seconds[{p}]", t, 0, 1e12, lo_open=True)


def ladder(min_nodes: int, max_nodes: int, factor: int) -> tuple[int, ...]:
    """The allowed sizes min_nodes * factor**k <= max_nodes, smallest first."""
    sizes, p = [], min_nodes
    while p <= max_nodes:
        sizes.append(p)
        p *= factor
    return tuple(sizes)


@dataclass(frozen=True)
class Job:
    """One job: arrival (s), work (iterations), run-time model, sizes, check period and costs (s).

    ``submit`` None means the top of the ladder (the seed's convention). ``preferred`` and
    ``request`` are ladder sizes or None.
    """

    id: str
    arrival: float
    work: float
    runtime: Runtime
    min_nodes: int
    max_nodes: int
    factor: int = 2
    submit: int | None = None
    preferred: int | None = None
    request: int | None = None
    period: float = 15.0
    reconfig_s: float = 0.0
    redistribute_s: float = 0.0
    timeout: float = 40.0
    app: str = "custom"
    sizes: tuple[int, ...] = field(init=False, repr=False, compare=False)
    times: tuple[float, ...] = field(init=False, repr=False, compare=False)  # run time (s) at each size

    def __post_init__(self):
        if not isinstance(self.id, str) or not self.id:
            raise InstanceError(f"job id must be a non-empty string, got {self.id!r}")
        w = f"jobs[{self.id}]"
        number(f"{w}.arrival", self.arrival, 0, 1e12)
        number(f"{w}.work", self.work, 0, 1e15, lo_open=True)
        if not isinstance(self.runtime, Runtime):
            raise InstanceError(f"{w}.runtime must be a run-time model, got {self.runtime!r}")
        self.runtime.check(f"{w}.runtime")
        integer(f"{w}.min_nodes", self.min_nodes, 1, MAX_NODES)
        integer(f"{w}.max_nodes", self.max_nodes, 1, MAX_NODES)
        integer(f"{w}.factor", self.factor, 2, 1024)
        if self.min_nodes > self.max_nodes:
            raise InstanceError(f"{w}.min_nodes = {self.min_nodes} exceeds {w}.max_nodes = {self.max_nodes}")
        sizes = ladder(self.min_nodes, self.max_nodes, self.factor)
        object.__setattr__(self, "sizes", sizes)
        if self.submit is None:
            object.__setattr__(self, "submit", sizes[-1])
        for name in ("submit", "preferred", "request"):
            value = getattr(self, name)
            if value is None:
                continue
            integer(f"{w}.{name}", value, 1, MAX_NODES)
            if value not in sizes:
                raise InstanceError(f"{w}.{name} = {value} is not on the job's ladder {list(sizes)} "
                                    f"(min_nodes * factor^k up to max_nodes)")
        if self.runtime.model == "table":
            given = [p for p, _ in self.runtime.seconds]
            missing = [p for p in sizes if p not in given]
            if missing:
                raise InstanceError(f"{w}.runtime.seconds is not defined at ladder size {missing[0]} "
                                    f"(ladder {list(sizes)})")
            extra = [p for p in given if p not in sizes]
            if extra:
                raise InstanceError(f"{w}.runtime.seconds gives size {extra[0]}, off the ladder {list(sizes)}")
        times = tuple(self.runtime.time(p) for p in sizes)
        object.__setattr__(self, "times", times)
        if min(times) < MIN_RUN_S:
            p = sizes[times.index(min(times))]
            raise InstanceError(f"{w}.runtime gives {min(times):.6g} s at {p} nodes: the run time at every ladder "
                                f"size must be at least {MIN_RUN_S:g} s")
        number(f"{w}.period", self.period, 0, 1e12, lo_open=True)
        if max(times) / self.period > MAX_CHECKS:
            raise InstanceError(f"{w}.period = {self.period!r} s would make more than {MAX_CHECKS} checks in the "
                                f"job's run time of {max(times):.6g} s at its slowest size")
        number(f"{w}.reconfig_s", self.reconfig_s, 0, 1e12)
        number(f"{w}.redistribute_s", self.redistribute_s, 0, 1e12)
        number(f"{w}.timeout", self.timeout, 0, 1e12)
        text(f"{w}.app", self.app)

    def time(self, p: int) -> float:
        """Run time (s) of the whole work at p nodes (p on the ladder)."""
        return self.times[self.sizes.index(p)]

    def cost(self, old: int, new: int) -> float:
        """Seconds without progress to resize from ``old`` to ``new`` nodes."""
        return self.reconfig_s + self.redistribute_s / min(old, new)

    def to_dict(self) -> dict:
        d = {"id": self.id, "app": self.app, "arrival": self.arrival, "work": self.work,
             "runtime": self.runtime.to_dict(), "min_nodes": self.min_nodes, "max_nodes": self.max_nodes,
             "factor": self.factor, "submit": self.submit}
        for name in ("preferred", "request"):
            if getattr(self, name) is not None:
                d[name] = getattr(self, name)
        d.update(period=self.period, reconfig_s=self.reconfig_s, redistribute_s=self.redistribute_s,
                 timeout=self.timeout)
        return d


@dataclass(frozen=True)
class MalleableInstance(JsonInstance):
    """A cluster of ``nodes`` nodes and the jobs submitted to it (in any order; ids unique)."""

    nodes: int
    jobs: tuple[Job, ...]
    name: str = "malleable"

    def __post_init__(self):
        integer("nodes", self.nodes, 1, MAX_NODES)
        if not isinstance(self.jobs, tuple) or not self.jobs:
            raise InstanceError(f"jobs must be a non-empty list, got {self.jobs!r}")
        if len(self.jobs) > MAX_JOBS:
            raise InstanceError(f"jobs must hold at most {MAX_JOBS} jobs, got {len(self.jobs)}")
        seen = set()
        for j in self.jobs:
            if not isinstance(j, Job):
                raise InstanceError(f"jobs must hold jobs, got {j!r}")
            if j.id in seen:
                raise InstanceError(f"job ids must be unique, {j.id!r} appears twice")
            seen.add(j.id)
            if j.max_nodes > self.nodes:
                raise InstanceError(f"jobs[{j.id}].max_nodes = {j.max_nodes} exceeds the cluster's nodes = "
                                    f"{self.nodes}")
        last = max(j.arrival for j in self.jobs)
        short = min(self.jobs, key=lambda j: min(j.times))
        if min(short.times) < RUN_RESOLUTION * last:
            raise InstanceError(f"jobs[{short.id}] runs {min(short.times):.6g} s at its fastest, below "
                                f"{RUN_RESOLUTION:g} of the last arrival ({last:.6g} s): times that far apart "
                                f"cannot be checked in floating point (move the arrivals closer to 0)")
        text("name", self.name)

    def to_dict(self) -> dict:
        return {"name": self.name, "nodes": self.nodes, "jobs": [j.to_dict() for j in self.jobs]}

    @classmethod
    def from_dict(cls, d: dict, name: str = "malleable") -> MalleableInstance:
        FIELDS.check(d)
        if not isinstance(d["jobs"], list) or not d["jobs"]:
            raise InstanceError(f"jobs must be a non-empty list, got {d['jobs']!r}")
        jobs = []
        job_fields = [f for f in FIELDS if f.parent == "jobs[]"]
        for i, jd in enumerate(d["jobs"]):
            where = f"jobs[{i}]"
            FIELDS.check(jd, "jobs[]", where)
            kw = {f.key: FIELDS.get(jd, f.path) for f in job_fields}
            kw["runtime"] = Runtime.from_dict(jd["runtime"], f"{where}.runtime")
            jobs.append(Job(**kw))
        return cls(d["nodes"], tuple(jobs), name=d.get("name", name))


# The JSON of a malleable instance; MalleableInstance.from_dict checks every job's keys against it and takes
# its defaults (the run-time model's keys depend on the model: Runtime.from_dict checks them).
FIELDS = Fields(
    "malleable instance",
    Field("name", "string", "", "the instance's name (default: the file's name without .json)", None),
    Field("nodes", "integer", "nodes", "the cluster's identical nodes"),
    Field("jobs", "list", "", "the jobs submitted, in any order, ids unique"),
    Field("jobs[].id", "string", "", "the job's id"),
    Field("jobs[].app", "string", "", "the application it runs (a label)", "custom"),
    Field("jobs[].arrival", "number", "s", "when it is submitted"),
    Field("jobs[].work", "number", "iterations", "its work: at p nodes it progresses at work / runtime(p) per "
          "second"),
    Field("jobs[].runtime", "object", "", "the whole work's run time as a function of its nodes p: model amdahl, "
          "linear or table"),
    Field("jobs[].runtime.model", "string", "", "amdahl: T(p) = seconds_1 (serial + (1 - serial) / p); linear: "
          "T(p) = seconds_1 / min(p, up_to); table: T(p) given at every ladder size"),
    Field("jobs[].runtime.seconds_1", "number", "s", "amdahl, linear: the run time on one node", None),
    Field("jobs[].runtime.serial", "number", "", "amdahl: the serial fraction, in [0, 1]", None),
    Field("jobs[].runtime.up_to", "integer", "nodes", "linear: the speed-up stops growing beyond it", None),
    Field("jobs[].runtime.seconds", "object", "s", "table: {nodes: run time} at every size of the ladder", None),
    Field("jobs[].min_nodes", "integer", "nodes", "the smallest size"),
    Field("jobs[].max_nodes", "integer", "nodes", "the largest size (at most nodes)"),
    Field("jobs[].factor", "integer", "", "the resize factor: the ladder of sizes is min_nodes * factor^k up to "
          "max_nodes", 2),
    Field("jobs[].submit", "integer", "nodes", "the size it starts at, when that many nodes are free (absent: "
          "the top of the ladder)", None),
    Field("jobs[].preferred", "integer", "nodes", "its preferred size, a ladder size (absent: none; the policy's "
          "wide optimisation decides)", None),
    Field("jobs[].request", "integer", "nodes", "a size it strongly asks for, a ladder size (absent: none)", None),
    Field("jobs[].period", "number", "s", "how often it checks with the resource manager while it runs", 15.0),
    Field("jobs[].reconfig_s", "number", "s", "a resize costs reconfig_s + redistribute_s / min(old, new) "
          "seconds without progress", 0.0),
    Field("jobs[].redistribute_s", "number", "s", "the data redistribution part of a resize's cost (see "
          "reconfig_s)", 0.0),
    Field("jobs[].timeout", "number", "s", "how long a requested expansion waits for nodes before it is "
          "abandoned", 40.0),
)

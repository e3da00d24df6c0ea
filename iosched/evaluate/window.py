"""The one checker of window selections, and the quality of an approximate Pareto front.

A :class:`Selection` names the jobs to start (and, for front methods, the whole front
found, each point with one subset achieving it). Feasibility: known, distinct job ids
whose nodes and (rounded) burst buffer fit the free capacity; every front point must be
feasible too and match its subset's sums. Objectives: node utilisation and burst buffer
utilisation (shares of the free capacity), and the hypervolume of the front in those
utilisations (reference point: zero utilisation), which is what single numbers compare.

Front quality against a reference front uses pymoo's GD, IGD and HV on the normalised
objectives (1 - utilisation, minimised; HV reference point (1, 1)).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from iosched import validate
from iosched.errors import InstanceError
from iosched.evaluate import Violation
from iosched.instances.fields import Field, Fields
from iosched.instances.window import WindowInstance


@dataclass(frozen=True)
class FrontPoint:
    """Total nodes and burst buffer units of one subset, and that subset's job ids; with SSD
    classes also the SSD the jobs request (GB) and the SSD their nodes waste (GB)."""

    nodes: int
    burst_buffer: int
    jobs: tuple[str, ...]
    ssd: int = 0
    wasted_ssd: int = 0

    def vector(self) -> tuple:
        return (self.nodes, self.burst_buffer, self.ssd, -self.wasted_ssd)


@dataclass(frozen=True)
class Selection:
    """The chosen job ids, and the front the choice was made from (empty for single-answer methods)."""

    selected: tuple[str, ...]
    front: tuple[FrontPoint, ...] = ()

    def to_dict(self, instance: WindowInstance | None = None) -> dict:
        ssd = instance is not None and instance.has_ssd
        return {"selected": list(self.selected),
                "front": [{"nodes": p.nodes, "burst_buffer": p.burst_buffer, "jobs": list(p.jobs),
                           **({"ssd": p.ssd, "wasted_ssd": p.wasted_ssd} if ssd else {})}
                          for p in self.front]}

    @classmethod
    def from_dict(cls, d: dict) -> Selection:
        """From its JSON: ``selected`` job ids and optional ``front`` points; InstanceError on anything else."""
        def ids(value, where):
            if not isinstance(value, list) or not all(isinstance(j, str) for j in value):
                raise InstanceError(f"not a window selection: {where} must be a list of job ids, got {value!r}")
            return tuple(value)

        required, optional = SOLUTION_FIELDS.keys()
        if not isinstance(d, dict) or not set(required) <= set(d) or not set(d) <= {*required, *optional}:
            raise InstanceError(f"not a window selection: expected {{'selected': [...], 'front': [...]}}, got {d!r}")
        front = SOLUTION_FIELDS.get(d, "front")
        if not isinstance(front, list):
            raise InstanceError(f"not a window selection: front must be a list, got {front!r}")
        points = []
        for k, p in enumerate(front):
            SOLUTION_FIELDS.check(p, "front[]", f"front[{k}]")
            extra = [SOLUTION_FIELDS.get(p, "front[].ssd"), SOLUTION_FIELDS.get(p, "front[].wasted_ssd")]
            for key, value in zip(("nodes", "burst_buffer", "ssd", "wasted_ssd"),
                                  [p["nodes"], p["burst_buffer"], *extra]):
                validate.integer(f"front[{k}].{key}", value, None, None)
            points.append(FrontPoint(p["nodes"], p["burst_buffer"], ids(p["jobs"], f"front[{k}].jobs"), *extra))
        return cls(ids(d["selected"], "selected"), tuple(points))


# The JSON of a window solution; Selection.from_dict reads it by this table.
SOLUTION_FIELDS = Fields(
    "window selection",
    Field("selected", "list of strings", "", "the ids of the jobs to start now"),
    Field("front", "list", "", "the Pareto front the choice was made from (empty for a method that returns one "
          "decision)", []),
    Field("front[].nodes", "integer", "nodes", "the point's total nodes"),
    Field("front[].burst_buffer", "integer", "BB units", "its total burst buffer, requests rounded up to the "
          "granularity"),
    Field("front[].jobs", "list of strings", "", "the ids of its jobs"),
    Field("front[].ssd", "integer", "GB", "with SSD classes: the local SSD its jobs request", 0),
    Field("front[].wasted_ssd", "integer", "GB", "with SSD classes: the local SSD its nodes hold beyond the "
          "requests", 0),
)


@dataclass
class Evaluation:
    feasible: bool
    violations: list[Violation] = field(default_factory=list)
    nodes: int = 0
    burst_buffer: int = 0
    node_utilization: float = 0.0
    bb_utilization: float = 0.0
    hypervolume: float = 0.0  # of the front (or of the selection alone), in utilisations
    ssd_utilization: float = 0.0  # SSD requested / SSD of the free nodes (SSD classes only)
    wasted_ssd: float = 0.0  # SSD on the assigned nodes beyond the requests / SSD of the free nodes

    def to_dict(self) -> dict:
        return {"feasible": self.feasible, "violations": [v.__dict__ for v in self.violations],
                "nodes": self.nodes, "burst_buffer": self.burst_buffer,
                "node_utilization": self.node_utilization, "bb_utilization": self.bb_utilization,
                "hypervolume": self.hypervolume, "ssd_utilization": self.ssd_utilization,
                "wasted_ssd": self.wasted_ssd}


def ssd_placement(instance: WindowInstance, indices) -> tuple[int, int, int]:
    """Place the jobs' nodes on the SSD classes: (nodes left unplaced, SSD GB requested, SSD GB wasted).

    A job needing s GB per node may use any class of at least s GB. Jobs go by decreasing
    need, each onto the smallest classes it may use: with these nested choices that places
    every job whenever any placement does, and wastes the least (the waste depends only on
    how many nodes of each class are used).
    """
    classes = sorted(instance.capacity.ssd_classes, key=lambda c: c.ssd)
    free = [c.nodes for c in classes]
    unplaced = used = waste = 0
    for i in sorted(indices, key=lambda i: -instance.jobs[i].ssd_per_node):
        job = instance.jobs[i]
        left = job.nodes
        used += job.ssd_per_node * job.nodes
        for c, cls in enumerate(classes):
            if cls.ssd >= job.ssd_per_node and left:
                take = min(left, free[c])
                free[c] -= take
                left -= take
                waste += take * (cls.ssd - job.ssd_per_node)
        unplaced += left
    return unplaced, used, waste


def ssd_capacity(instance: WindowInstance) -> int:
    return sum(c.ssd * c.nodes for c in instance.capacity.ssd_classes)


def _sums(instance: WindowInstance, ids, where: str, bad: list[Violation]) -> tuple[int, int, int, int]:
    index = {j.id: i for i, j in enumerate(instance.jobs)}
    seen, chosen, n, b = set(), [], 0, 0
    for job in ids:
        if not isinstance(job, str) or job not in index:
            bad.append(Violation("unknown_job", f"{where}: {job!r}", 1))
            continue
        if job in seen:
            bad.append(Violation("duplicate_job", f"{where}: {job!r}", 1))
            continue
        seen.add(job)
        chosen.append(index[job])
        n += instance.jobs[index[job]].nodes
        b += instance.bb(index[job])
    cap = instance.capacity
    if n > cap.nodes:
        bad.append(Violation("nodes", where, n - cap.nodes))
    if b > cap.burst_buffer:
        bad.append(Violation("burst_buffer", where, b - cap.burst_buffer))
    ssd = waste = 0
    if instance.has_ssd:
        unplaced, ssd, waste = ssd_placement(instance, chosen)
        if unplaced:
            bad.append(Violation("ssd", f"{where}: nodes without a large enough SSD", unplaced))
    return n, b, ssd, waste


def _share(x: int, cap: int) -> float:
    return x / cap if cap else 0.0


def utilisations(instance: WindowInstance, points) -> np.ndarray:
    """(node utilisation, BB utilisation) rows for (nodes, burst_buffer) pairs."""
    cap = instance.capacity
    return np.array([[_share(n, cap.nodes), _share(b, cap.burst_buffer)] for n, b in points], dtype=float)


def hypervolume(instance: WindowInstance, points) -> float:
    """Area dominated by the points in utilisation space, from (0, 0); exact for two objectives."""
    u = sorted(map(tuple, utilisations(instance, points).tolist()), key=lambda p: (-p[0], -p[1]))
    area, top = 0.0, 0.0
    for x, y in u:
        if y > top:
            area += x * (y - top)
            top = y
    return area


def evaluate(instance: WindowInstance, selection: Selection) -> Evaluation:
    """Check the selection (and its front) against the capacity; utilisations and hypervolume."""
    bad: list[Violation] = []
    n, b, ssd, waste = _sums(instance, selection.selected, "selected", bad)
    for k, p in enumerate(selection.front):
        got = _sums(instance, p.jobs, f"front[{k}]", bad)
        claimed = (p.nodes, p.burst_buffer) + ((p.ssd, p.wasted_ssd) if instance.has_ssd else (0, 0))
        if got != claimed:
            bad.append(Violation("front_sums", f"front[{k}] claims {claimed}, its jobs give {got}",
                                 sum(abs(x - y) for x, y in zip(got, claimed))))
    cap = instance.capacity
    ev = Evaluation(not bad, bad, n, b, _share(n, cap.nodes), _share(b, cap.burst_buffer))
    if instance.has_ssd:
        ev.ssd_utilization, ev.wasted_ssd = _share(ssd, ssd_capacity(instance)), _share(waste, ssd_capacity(instance))
    ev.hypervolume = front_hypervolume(instance, list(selection.front) or [FrontPoint(n, b, (), ssd, waste)])
    return ev


def front_hypervolume(instance: WindowInstance, front: list[FrontPoint]) -> float:
    """Hypervolume of front points in the shares of the instance's objectives (two, or four with SSD)."""
    if instance.has_ssd:
        return hypervolume_ssd(instance, [p.vector() for p in front])
    return hypervolume(instance, [(p.nodes, p.burst_buffer) for p in front])


def ssd_utilisations(instance: WindowInstance, vectors) -> np.ndarray:
    """Rows of the four objectives as shares, all maximised: nodes, BB, SSD used, 1 - SSD wasted."""
    cap, total = instance.capacity, ssd_capacity(instance)
    return np.array([[_share(n, cap.nodes), _share(b, cap.burst_buffer), _share(s, total), 1 - _share(-w, total)]
                     for n, b, s, w in vectors], dtype=float)


def hypervolume_ssd(instance: WindowInstance, vectors) -> float:
    """pymoo's hypervolume of the four shares (minimising 1 - share, reference point all ones)."""
    from pymoo.indicators.hv import HV

    return float(HV(ref_point=np.ones(4))(1 - ssd_utilisations(instance, vectors)))


def front_quality(instance: WindowInstance, front, reference) -> dict:
    """GD, IGD (pymoo) and HV of ``front`` against ``reference`` (lists of FrontPoint, or of
    (nodes, burst_buffer) pairs), on 1 - share of each objective (minimised)."""
    from pymoo.indicators.gd import GD
    from pymoo.indicators.hv import HV
    from pymoo.indicators.igd import IGD

    def shares(points):
        if points and isinstance(points[0], FrontPoint):
            if instance.has_ssd:
                return ssd_utilisations(instance, [p.vector() for p in points])
            points = [(p.nodes, p.burst_buffer) for p in points]
        return utilisations(instance, points)

    F, R = 1 - shares(list(front)), 1 - shares(list(reference))
    hv = HV(ref_point=np.ones(F.shape[1]))
    return {"gd": float(GD(R)(F)), "igd": float(IGD(R)(F)), "hv": float(hv(F)), "hv_reference": float(hv(R))}

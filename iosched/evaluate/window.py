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

from iosched.errors import InstanceError
from iosched.evaluate import Violation
from iosched.instances.window import WindowInstance


@dataclass(frozen=True)
class FrontPoint:
    """Total nodes and burst buffer units of one subset, and that subset's job ids."""

    nodes: int
    burst_buffer: int
    jobs: tuple[str, ...]


@dataclass(frozen=True)
class Selection:
    """The chosen job ids, and the front the choice was made from (empty for single-answer methods)."""

    selected: tuple[str, ...]
    front: tuple[FrontPoint, ...] = ()

    def to_dict(self, instance: WindowInstance | None = None) -> dict:
        return {"selected": list(self.selected),
                "front": [{"nodes": p.nodes, "burst_buffer": p.burst_buffer, "jobs": list(p.jobs)}
                          for p in self.front]}

    @classmethod
    def from_dict(cls, d: dict) -> Selection:
        try:
            front = tuple(FrontPoint(int(p["nodes"]), int(p["burst_buffer"]), tuple(p["jobs"]))
                          for p in d.get("front", []))
            return cls(tuple(d["selected"]), front)
        except (KeyError, TypeError, ValueError) as e:
            raise InstanceError(f"not a window selection: {e}") from None


@dataclass
class Evaluation:
    feasible: bool
    violations: list[Violation] = field(default_factory=list)
    nodes: int = 0
    burst_buffer: int = 0
    node_utilization: float = 0.0
    bb_utilization: float = 0.0
    hypervolume: float = 0.0  # of the front (or of the selection alone), in utilisations

    def to_dict(self) -> dict:
        return {"feasible": self.feasible, "violations": [v.__dict__ for v in self.violations],
                "nodes": self.nodes, "burst_buffer": self.burst_buffer,
                "node_utilization": self.node_utilization, "bb_utilization": self.bb_utilization,
                "hypervolume": self.hypervolume}


def _sums(instance: WindowInstance, ids, where: str, bad: list[Violation]) -> tuple[int, int]:
    index = {j.id: i for i, j in enumerate(instance.jobs)}
    seen, n, b = set(), 0, 0
    for job in ids:
        if job not in index:
            bad.append(Violation("unknown_job", f"{where}: {job!r}", 1))
            continue
        if job in seen:
            bad.append(Violation("duplicate_job", f"{where}: {job!r}", 1))
            continue
        seen.add(job)
        n += instance.jobs[index[job]].nodes
        b += instance.bb(index[job])
    cap = instance.capacity
    if n > cap.nodes:
        bad.append(Violation("nodes", where, n - cap.nodes))
    if b > cap.burst_buffer:
        bad.append(Violation("burst_buffer", where, b - cap.burst_buffer))
    return n, b


def _share(x: int, cap: int) -> float:
    return x / cap if cap else 0.0


def utilisations(instance: WindowInstance, points) -> np.ndarray:
    """(node utilisation, BB utilisation) rows for (nodes, burst_buffer) pairs."""
    cap = instance.capacity
    return np.array([[_share(n, cap.nodes), _share(b, cap.burst_buffer)] for n, b in points], dtype=float)


def hypervolume(instance: WindowInstance, points) -> float:
    """Area dominated by the points in utilisation space, from (0, 0); exact for two objectives."""
    u = sorted(map(tuple, utilisations(instance, points)), key=lambda p: (-p[0], -p[1]))
    area, top = 0.0, 0.0
    for x, y in u:
        if y > top:
            area += x * (y - top)
            top = y
    return area


def evaluate(instance: WindowInstance, selection: Selection) -> Evaluation:
    """Check the selection (and its front) against the capacity; utilisations and hypervolume."""
    bad: list[Violation] = []
    n, b = _sums(instance, selection.selected, "selected", bad)
    for k, p in enumerate(selection.front):
        pn, pb = _sums(instance, p.jobs, f"front[{k}]", bad)
        if (pn, pb) != (p.nodes, p.burst_buffer):
            bad.append(Violation("front_sums", f"front[{k}] claims ({p.nodes}, {p.burst_buffer}), jobs give "
                                               f"({pn}, {pb})", abs(pn - p.nodes) + abs(pb - p.burst_buffer)))
    points = [(p.nodes, p.burst_buffer) for p in selection.front] or [(n, b)]
    cap = instance.capacity
    return Evaluation(not bad, bad, n, b, _share(n, cap.nodes), _share(b, cap.burst_buffer),
                      hypervolume(instance, points))


def front_quality(instance: WindowInstance, front, reference) -> dict:
    """GD, IGD (pymoo) and HV of ``front`` against ``reference``, on 1 - utilisation (minimised)."""
    from pymoo.indicators.gd import GD
    from pymoo.indicators.hv import HV
    from pymoo.indicators.igd import IGD

    F = 1 - utilisations(instance, front)
    R = 1 - utilisations(instance, reference)
    return {"gd": float(GD(R)(F)), "igd": float(IGD(R)(F)), "hv": float(HV(ref_point=np.array([1.0, 1.0]))(F)),
            "hv_reference": float(HV(ref_point=np.array([1.0, 1.0]))(R))}

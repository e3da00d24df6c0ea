"""The one checker of periodic patterns: feasibility in the fluid model, and objectives.

A pattern of period T (s) holds, per application, its instances: the start of
the compute phase (s, in [0, T)) and the I/O segments (start s, end s, rate
data/s) that move that instance's volume before the next compute start of the
same application (cyclically). Segments may run past T; they wrap.

Violation kinds: ``period``, ``applications`` (wrong count), ``no_instance``,
``compute_start`` (outside [0, T)), ``compute_overlap`` (two computes of one
application, or w_k > T), ``segment`` (end before start, negative rate, longer
than T), ``app_rate`` (above β_k b), ``io_window`` (I/O outside the instance's
window [compute end, next compute start]), ``volume`` (moved != vol_k),
``capacity`` (summed rates above B, over more than the time tolerance); for timelines also ``horizon`` (I/O past it).

Tolerances: volumes and rates within ``rel_tol`` (1e-5) relative to vol_k, β_k b
and B; times within rel_tol · T. (PerSched merges dates closer than its
``precision``, at most 1e-6 of the shortest I/O time, and its patterns stay
well inside these tolerances.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from iosched.errors import InstanceError
from iosched.evaluate import Violation
from iosched.fluid import Segment, cyclic_load, overlap
from iosched.instances.periodic import PeriodicInstance

REL_TOL = 1e-5


@dataclass(frozen=True)
class Instance:
    """One instance of an application: compute from ``compute_start`` for w_k seconds,
    then I/O as ``io`` segments (start s, end s, rate data/s)."""

    compute_start: float
    io: tuple[tuple[float, float, float], ...]


@dataclass(frozen=True)
class Pattern:
    """A periodic pattern: period (s) and, per application in instance order, its instances."""

    period: float
    applications: tuple[tuple[Instance, ...], ...]

    def counts(self) -> list[int]:
        return [len(a) for a in self.applications]

    def to_dict(self, instance: PeriodicInstance | None = None) -> dict:
        names = [a.name for a in instance.applications] if instance else None
        apps = []
        for k, insts in enumerate(self.applications):
            entry = {"instances": [
                {"compute_start": i.compute_start, "io": [list(s) for s in i.io]} for i in insts
            ]}
            if names:
                entry = {"name": names[k], **entry}
            apps.append(entry)
        return {"period": self.period, "applications": apps}

    @classmethod
    def from_dict(cls, d: dict) -> Pattern:
        def segment(s):
            if len(s) != 3:
                raise ValueError(f"an I/O segment is [start, end, rate], got {s!r}")
            return tuple(map(float, s))

        try:
            apps = tuple(
                tuple(Instance(float(i["compute_start"]), tuple(segment(s) for s in i["io"]))
                      for i in a["instances"])
                for a in d["applications"]
            )
            return cls(float(d["period"]), apps)
        except (KeyError, TypeError, ValueError) as e:
            raise InstanceError(f"not a periodic pattern: {e}") from None


@dataclass
class Evaluation:
    feasible: bool
    violations: list[Violation] = field(default_factory=list)
    sys_efficiency: float = 0.0
    dilation: float = float("inf")
    counts: list[int] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "feasible": self.feasible,
            "violations": [v.__dict__ for v in self.violations],
            "sys_efficiency": self.sys_efficiency,
            "dilation": self.dilation,
            "counts": self.counts,
        }


def evaluate(instance: PeriodicInstance, pattern: Pattern, rel_tol: float = REL_TOL) -> Evaluation:
    """Check ``pattern`` against ``instance`` and compute SysEfficiency and Dilation.

    SysEfficiency = Σ_k β_k n_k w_k / (N T); Dilation = max_k ρ_k T / (n_k w_k).
    """
    T = pattern.period
    bad: list[Violation] = []
    if not T > 0:
        return Evaluation(False, [Violation("period", "period", T)])
    if len(pattern.applications) != len(instance.applications):
        return Evaluation(False, [Violation(
            "applications", f"{len(pattern.applications)} given, {len(instance.applications)} expected",
            abs(len(pattern.applications) - len(instance.applications)))])
    t_tol = rel_tol * T
    B = instance.platform.bandwidth
    all_segments: list[Segment] = []
    for app, insts in zip(instance.applications, pattern.applications):
        name = app.name
        if not insts:
            bad.append(Violation("no_instance", name, 1))
            continue
        cap = app.processors * instance.platform.processor_bandwidth
        order = sorted(range(len(insts)), key=lambda i: insts[i].compute_start)
        computes = []
        for i in order:
            c = insts[i].compute_start
            if not 0 <= c < T:
                bad.append(Violation("compute_start", f"{name}#{i}", c))
            computes.append(Segment(c, c + app.work, 1.0))
        if app.work > T:
            bad.append(Violation("compute_overlap", f"{name}: work {app.work} > period", app.work - T))
        n = len(computes)
        # equal-length intervals sorted by start: any overlap shows between cyclic neighbours
        for a, b in [(a, (a + 1) % n) for a in range(n)] if n > 2 else [(0, 1)] if n == 2 else []:
            ov = overlap(computes[a], computes[b], T)
            if ov > t_tol:
                bad.append(Violation("compute_overlap", f"{name}#{order[a]}/#{order[b]}", ov))
        for pos, i in enumerate(order):
            inst = insts[i]
            window_start = inst.compute_start + app.work
            nxt = insts[order[(pos + 1) % len(order)]].compute_start
            window_end = nxt + T if nxt <= inst.compute_start else nxt
            if len(order) == 1:
                window_end = inst.compute_start + T
            moved = 0.0
            for s, e, r in inst.io:
                seg = Segment(s, e, r)
                if e < s or r < 0 or e - s > T + t_tol:
                    bad.append(Violation("segment", f"{name}#{i} [{s}, {e}] rate {r}",
                                         max(s - e, -r, (e - s) - T)))
                    continue
                moved += r * (e - s)
                if r > cap * (1 + rel_tol):
                    bad.append(Violation("app_rate", f"{name}#{i} [{s:.6g}, {e:.6g}]", r - cap))
                outside = _outside(s, e, window_start, window_end, T)
                if outside > t_tol:
                    bad.append(Violation("io_window", f"{name}#{i} [{s:.6g}, {e:.6g}]", outside))
                all_segments.append(seg)
            if abs(moved - app.io_volume) > rel_tol * app.io_volume:
                bad.append(Violation("volume", f"{name}#{i}", moved - app.io_volume))
    for start, end, load in cyclic_load(all_segments, T):
        if load > B * (1 + rel_tol) and end - start > t_tol:
            bad.append(Violation("capacity", f"[{start:.6g}, {end:.6g}]", load - B))
    counts = pattern.counts()
    ev = Evaluation(not bad, bad, counts=counts)
    if min(counts) > 0:
        ev.sys_efficiency, ev.dilation = sys_efficiency(instance, counts, T), dilation(instance, counts, T)
    return ev


def sys_efficiency(instance: PeriodicInstance, counts: list[int], period: float) -> float:
    """Σ_k β_k n_k w_k / (N T) for n_k instances of each application in a period T."""
    N = instance.platform.processors
    return sum(a.processors * n * a.work for a, n in zip(instance.applications, counts)) / (N * period)


def dilation(instance: PeriodicInstance, counts: list[int], period: float) -> float:
    """max_k ρ_k T / (n_k w_k); infinite when some application has no instance."""
    if min(counts) == 0:
        return math.inf
    return max(instance.rho(k) * period / (n * a.work) for k, (a, n) in enumerate(zip(instance.applications, counts)))


def _outside(s: float, e: float, lo: float, hi: float, T: float) -> float:
    """Length of [s, e] (mod T) outside the window [lo, hi] (hi - lo <= T, mod T)."""
    inside = max(overlap(Segment(s, e, 1.0), Segment(lo, hi, 1.0), T), 0.0)
    return max((e - s) - inside, 0.0)


@dataclass(frozen=True)
class Trace:
    """A schedule on a timeline [0, horizon] (s), not periodic: per application its
    completed instances in time order (compute start, I/O segments)."""

    horizon: float
    applications: tuple[tuple[Instance, ...], ...]

    def counts(self) -> list[int]:
        return [len(a) for a in self.applications]

    def to_dict(self, instance: PeriodicInstance | None = None) -> dict:
        d = Pattern(self.horizon, self.applications).to_dict(instance)
        return {"horizon": d.pop("period"), **d}


def evaluate_trace(instance: PeriodicInstance, trace: Trace, rel_tol: float = REL_TOL) -> Evaluation:
    """Check a timeline schedule and score it by the paper's definitions (1) and (2).

    Both are taken at the horizon H: application k, released at its first compute
    start r_k, has ρ̃_k = n_k w_k / (H - r_k) with n_k its instances completed by H;
    SysEfficiency = Σ_k β_k ρ̃_k / N and Dilation = max_k ρ_k / ρ̃_k (infinite for an
    application that never completes an instance: starvation, not a violation).
    Measured at a common H, they obey the long-run LP bounds. The same constraints as
    :func:`evaluate`, on a line instead of a cycle.
    """
    H = trace.horizon
    t_tol = rel_tol * H
    bad: list[Violation] = []
    segments: list[Segment] = []
    rho_tilde = []
    for k, (app, insts) in enumerate(zip(instance.applications, trace.applications)):
        if not insts:
            rho_tilde.append(0.0)
            continue
        cap = instance.max_rate(k)
        last_end = insts[0].compute_start
        for i, inst in enumerate(insts):
            where = f"{app.name}#{i}"
            nxt = insts[i + 1].compute_start if i + 1 < len(insts) else H
            if inst.compute_start < last_end - t_tol:
                bad.append(Violation("compute_overlap", where, last_end - inst.compute_start))
            lo, moved = inst.compute_start + app.work, 0.0
            for s, e, r in inst.io:
                if e < s or r < 0:
                    bad.append(Violation("segment", f"{where} [{s}, {e}] rate {r}", max(s - e, -r)))
                    continue
                if r > cap * (1 + rel_tol):
                    bad.append(Violation("app_rate", f"{where} [{s:.6g}, {e:.6g}]", r - cap))
                outside = max(lo - s, 0.0) + max(e - nxt, 0.0)
                if outside > t_tol:
                    bad.append(Violation("io_window", f"{where} [{s:.6g}, {e:.6g}]", outside))
                moved += r * (e - s)
                segments.append(Segment(s, e, r))
            if abs(moved - app.io_volume) > rel_tol * app.io_volume:
                bad.append(Violation("volume", where, moved - app.io_volume))
            last_end = max([lo] + [e for _, e, _ in inst.io])
        if last_end > H + t_tol:
            bad.append(Violation("horizon", app.name, last_end - H))
        rho_tilde.append(len(insts) * app.work / (H - insts[0].compute_start))
    horizon = max([H] + [s.end for s in segments])
    for start, end, load in cyclic_load(segments, horizon * (1 + 1e-9) + 1.0):
        if load > instance.platform.bandwidth * (1 + rel_tol) and end - start > t_tol:
            bad.append(Violation("capacity", f"[{start:.6g}, {end:.6g}]", load - instance.platform.bandwidth))
    ev = Evaluation(not bad, bad, counts=trace.counts())
    N = instance.platform.processors
    ev.sys_efficiency = sum(a.processors * r for a, r in zip(instance.applications, rho_tilde)) / N
    ev.dilation = max(instance.rho(k) / r if r > 0 else math.inf for k, r in enumerate(rho_tilde))
    return ev


def evaluate_any(instance: PeriodicInstance, solution: Pattern | Trace) -> Evaluation:
    """:func:`evaluate` for a periodic pattern, :func:`evaluate_trace` for a timeline."""
    return evaluate_trace(instance, solution) if isinstance(solution, Trace) else evaluate(instance, solution)

"""The one checker of periodic patterns: feasibility in the fluid model, and objectives.

A pattern of period T (s) holds, per application, its instances: the start of
the compute phase (s, in [0, T)) and the I/O segments (start s, end s, rate
data/s) that move that instance's volume before the next compute start of the
same application (cyclically). Segments may run past T; they wrap.

Violation kinds: ``period``, ``period_cap`` (a period above the instance's K' t_min:
:meth:`~iosched.instances.periodic.PeriodicInstance.period_cap`), ``applications`` (wrong count), ``no_instance``,
``compute_start`` (outside [0, T)), ``compute_overlap`` (two computes of one
application, or w_k > T), ``segment`` (end before start, negative rate, longer
than T), ``app_rate`` (above β_k b), ``io_window`` (I/O outside the instance's
window [compute end, next compute start]), ``volume`` (moved != vol_k),
``capacity`` (summed rates above B, over more than the time tolerance); for timelines also ``horizon``
(I/O past it, or a horizon that is not a finite positive number).
Before any of these, every number is read: ``period`` (not a finite positive number),
``structure`` (not an instance, a segment that is not three numbers, a value that is not a
number) and ``non_finite`` (NaN or infinity anywhere) make a solution infeasible at once,
so that nothing computed from garbage is ever certified.

Tolerances: volumes and rates within ``rel_tol`` (1e-5) relative to vol_k, β_k b
and B; times within rel_tol · T. (PerSched merges dates closer than its
``precision``, at most 1e-6 of the shortest I/O time, and its patterns stay
well inside these tolerances.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from iosched.errors import InstanceError
from iosched.evaluate import Violation
from iosched.instances.periodic import PeriodicInstance, checked_instance
from iosched.validate import finite, real

REL_TOL = 1e-5


@dataclass(frozen=True, slots=True)
class Instance:
    """One instance of an application: compute from ``compute_start`` for w_k seconds,
    then I/O as ``io`` segments (start s, end s, rate data/s)."""

    compute_start: float
    io: tuple[tuple[float, float, float], ...]


class PackedApplications(Sequence):
    """A pattern's instances held as flat arrays (what PerSched builds: hundreds of thousands
    of instances take a few bytes each instead of Python objects); a sequence of applications,
    each a sequence of :class:`Instance` made on access, so it reads like the tuples.

    Instances app by app (``app_off[k]:app_off[k + 1]`` are application k's), compute starts
    ``c`` (s); I/O segments instance by instance (``seg_off[q]:seg_off[q + 1]`` are instance
    q's): starts ``s``, ends ``e`` (s), rates ``r`` (data/s).
    """

    __slots__ = ("app_off", "c", "seg_off", "s", "e", "r")

    def __init__(self, app_off, c, seg_off, s, e, r):
        self.app_off, self.c, self.seg_off = (np.asarray(x) for x in (app_off, c, seg_off))
        self.s, self.e, self.r = (np.asarray(x, float) for x in (s, e, r))

    def __len__(self) -> int:
        return len(self.app_off) - 1

    def __getitem__(self, k):
        if isinstance(k, slice):
            return tuple(self[i] for i in range(len(self))[k])
        if not -len(self) <= k < len(self):
            raise IndexError(k)
        k %= len(self)
        return _PackedApp(self, int(self.app_off[k]), int(self.app_off[k + 1]))

    def instance(self, q: int) -> Instance:
        a, b = int(self.seg_off[q]), int(self.seg_off[q + 1])
        return Instance(float(self.c[q]), tuple(zip(self.s[a:b].tolist(), self.e[a:b].tolist(),
                                                    self.r[a:b].tolist())))

    def as_tuples(self) -> tuple[tuple[Instance, ...], ...]:
        return tuple(tuple(app) for app in self)

    def __eq__(self, other):
        if isinstance(other, (PackedApplications, tuple)):
            return self.as_tuples() == (other.as_tuples() if isinstance(other, PackedApplications) else other)
        return NotImplemented

    def __hash__(self):
        return hash(self.as_tuples())

    def __repr__(self):
        return f"PackedApplications({len(self.c)} instances, {len(self.s)} segments)"


class _PackedApp(Sequence):
    """One application's instances of a :class:`PackedApplications`."""

    __slots__ = ("_packed", "_first", "_last")

    def __init__(self, packed: PackedApplications, first: int, last: int):
        self._packed, self._first, self._last = packed, first, last

    def __len__(self) -> int:
        return self._last - self._first

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(len(self))[i])
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self._packed.instance(self._first + i % len(self))

    def __eq__(self, other):
        return tuple(self) == (tuple(other) if isinstance(other, (tuple, list, _PackedApp)) else other)

    def __hash__(self):
        return hash(tuple(self))


@dataclass(frozen=True)
class Pattern:
    """A periodic pattern: period (s) and, per application in instance order, its instances
    (tuples, or a :class:`PackedApplications`)."""

    period: float
    applications: tuple[tuple[Instance, ...], ...] | PackedApplications

    def counts(self) -> list[int]:
        return [len(a) for a in self.applications]

    def to_dict(self, instance: PeriodicInstance | None = None) -> dict:
        names = [a.name for a in instance.applications] if instance else None
        apps = []
        for k, insts in enumerate(self.applications):
            entry: dict[str, object] = {"instances": [
                {"compute_start": i.compute_start, "io": [list(s) for s in i.io]} for i in insts
            ]}
            if names:
                entry = {"name": names[k], **entry}
            apps.append(entry)
        return {"period": self.period, "applications": apps}

    @classmethod
    def from_dict(cls, d: dict) -> Pattern:
        """From JSON: ``{"period": T, "applications": [{"instances": [{"compute_start": c, "io": [[s, e, r]...]}]}]}``.

        Numbers must be JSON numbers (not strings or booleans); NaN and infinity are read
        as they are and left to :func:`evaluate` to reject.
        """
        if not isinstance(d, dict):
            raise InstanceError(f"not a periodic pattern: a JSON object is needed, got {type(d).__name__}")
        return cls(_number(d, "period"), _applications(d))


def _number(d, key) -> float:
    if key not in d:
        raise InstanceError(f"not a periodic pattern: missing {key!r}")
    x = d[key]
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise InstanceError(f"not a periodic pattern: {key} must be a number, got {x!r}")
    try:
        return float(x)
    except OverflowError:
        raise InstanceError(f"not a periodic pattern: {key} = {x!r} is beyond floats") from None


def _applications(d) -> tuple[tuple[Instance, ...], ...]:
    def segment(s):
        if not isinstance(s, list) or len(s) != 3:
            raise InstanceError(f"not a periodic pattern: an I/O segment is [start, end, rate], got {s!r}")
        return tuple(_number({"x": x}, "x") for x in s)

    apps = d.get("applications")
    if not isinstance(apps, list):
        raise InstanceError(f"not a periodic pattern: applications must be a list, got {apps!r}")
    out = []
    for a in apps:
        if not isinstance(a, dict) or not isinstance(a.get("instances"), list):
            raise InstanceError(f"not a periodic pattern: an application is {{\"instances\": [...]}}, got {a!r}")
        insts = []
        for i in a["instances"]:
            if not isinstance(i, dict) or not isinstance(i.get("io"), list):
                raise InstanceError(f"not a periodic pattern: an instance is {{\"compute_start\": c, \"io\": "
                                    f"[...]}}, got {i!r}")
            insts.append(Instance(_number(i, "compute_start"), tuple(segment(s) for s in i["io"])))
        out.append(tuple(insts))
    return tuple(out)


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


MAX_REPORTED = 100  # non-finite numbers or malformed entries named one by one; the rest are counted


@dataclass
class _Read:
    """A solution's numbers as flat arrays: instances app by app, in each app in the given order;
    segments instance by instance (``seg_off[q]:seg_off[q + 1]`` are instance q's)."""

    counts: list[int]
    app_off: np.ndarray  # instances of app k: app_off[k]:app_off[k + 1]
    c: np.ndarray  # compute starts
    seg_off: np.ndarray
    s: np.ndarray
    e: np.ndarray
    r: np.ndarray


_PLAIN = {float, int, np.float64}


def _fast(applications):
    """The arrays when every entry is well formed and finite (one pass in C-speed comprehensions),
    else None: the slow path then names what is wrong."""
    try:
        insts = [inst for app in applications for inst in app]
        if not all(type(inst) is Instance for inst in insts):
            return None
        ios = [inst.io for inst in insts]
        segs = [seg for io in ios for seg in io]
        if not all(type(seg) is tuple and len(seg) == 3 for seg in segs):
            return None
        cs = [inst.compute_start for inst in insts]
        flat = [x for seg in segs for x in seg]
        if not set(map(type, flat)) | set(map(type, cs)) <= _PLAIN:
            return None
        c = np.array(cs, dtype=float)
        xyz = np.array(flat, dtype=float).reshape(-1, 3)
    except (TypeError, ValueError, OverflowError):
        return None
    if not (np.isfinite(c).all() and np.isfinite(xyz).all()):
        return None
    counts = [len(app) for app in applications]
    seg_off = np.zeros(len(insts) + 1, dtype=np.int64)
    np.cumsum([len(io) for io in ios], out=seg_off[1:])
    app_off = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=app_off[1:])
    return _Read(counts, app_off, c, seg_off, xyz[:, 0].copy(), xyz[:, 1].copy(), xyz[:, 2].copy())


def _read(instance: PeriodicInstance, applications, names) -> tuple[_Read | None, list[Violation]]:
    """Every number of a pattern or a trace, read and checked before any arithmetic.

    Returns the numbers as flat float arrays, and the violations: ``structure`` (not an
    instance, a segment that is not three numbers, a value that is not a number) and
    ``non_finite`` (NaN or infinity anywhere). Any of them makes the solution infeasible and
    stops the evaluation there.
    """
    if isinstance(applications, PackedApplications):
        arrays = (applications.c, applications.s, applications.e, applications.r)
        if len(applications) == len(instance.applications) and all(np.isfinite(x).all() for x in arrays):
            counts = np.diff(applications.app_off).tolist()
            return _Read(counts, applications.app_off, arrays[0], applications.seg_off, *arrays[1:]), []
        applications = applications.as_tuples()  # the slow path names what is wrong
    if not isinstance(applications, (tuple, list)) or not all(isinstance(a, (tuple, list)) for a in applications):
        return None, [Violation("structure", "applications is not a list of lists of instances", 1.0)]
    if len(applications) != len(instance.applications):
        return None, [Violation(
            "applications", f"{len(applications)} given, {len(instance.applications)} expected",
            abs(len(applications) - len(instance.applications)))]
    fast = _fast(applications)
    if fast is not None:
        return fast, []
    bad: list[Violation] = []
    extra = 0

    def report(kind, where):
        nonlocal extra
        if len(bad) < MAX_REPORTED:
            bad.append(Violation(kind, where, 1.0))
        else:
            extra += 1

    for name, insts in zip(names, applications):
        for i, inst in enumerate(insts):
            where = f"{name}#{i}"
            if not isinstance(inst, Instance) or not isinstance(inst.io, (tuple, list)):
                report("structure", f"{where}: not an instance (compute_start, io)")
                continue
            c = inst.compute_start
            if not real(c):
                report("structure", f"{where} compute_start = {c!r}")
            elif not finite(c):
                report("non_finite", f"{where} compute_start = {c!r}")
            for j, seg in enumerate(inst.io):
                if not isinstance(seg, (tuple, list)) or len(seg) != 3 or not all(real(x) for x in seg):
                    report("structure", f"{where} io[{j}] = {seg!r} (not [start, end, rate])")
                elif not all(finite(x) for x in seg):
                    report("non_finite", f"{where} io[{j}] = {list(seg)!r}")
    if extra:
        bad.append(Violation(bad[-1].constraint, f"{extra} more entries", float(extra)))
    if bad:
        return None, bad
    # well formed and finite, only not in the fast path's plain types (numpy scalars, lists...)
    insts = [inst for app in applications for inst in app]
    counts = [len(app) for app in applications]
    seg_off = np.zeros(len(insts) + 1, dtype=np.int64)
    np.cumsum([len(inst.io) for inst in insts], out=seg_off[1:])
    app_off = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=app_off[1:])
    xyz = np.array([[float(x) for x in seg] for inst in insts for seg in inst.io], dtype=float).reshape(-1, 3)
    return _Read(counts, app_off, np.array([float(inst.compute_start) for inst in insts]), seg_off,
                 xyz[:, 0].copy(), xyz[:, 1].copy(), xyz[:, 2].copy()), []


def _counts(applications) -> list[int]:
    try:
        return [len(a) for a in applications]
    except TypeError:
        return []


def _cyclic_overlap(a0, la, b0, lb, T):
    """Vectorised fluid.overlap: time (s) in both [a0, a0 + la) and [b0, b0 + lb) on a cycle of T."""
    a0 = np.mod(a0, T)
    b0 = np.mod(b0, T)
    a1, b1 = a0 + la, b0 + lb
    total = np.zeros(np.broadcast(a0, b0).shape)
    for shift in (-T, 0.0, T):
        total = total + np.maximum(0.0, np.minimum(a1, b1 + shift) - np.maximum(a0, b0 + shift))
    return total


def _load(s, e, r, period):
    """Vectorised fluid.cyclic_load: (starts, ends, loads) of the summed rate over [0, period).

    Same events, same order (by time, then rate change) and the same sequential sums.
    """
    keep = (e > s) & (r != 0)
    s, e, r = s[keep], e[keep], r[keep]
    s0 = np.mod(s, period)
    e0 = s0 + (e - s)
    wrap = e0 > period
    times = np.concatenate([s0, np.minimum(e0, period), np.zeros(int(wrap.sum())), e0[wrap] - period])
    deltas = np.concatenate([r, -r, r[wrap], -r[wrap]])
    order = np.lexsort((deltas, times))
    times, deltas = times[order], deltas[order]
    if not len(times):
        return np.array([0.0]), np.array([period]), np.array([0.0])
    loads = np.cumsum(deltas)
    prev = np.concatenate([[0.0], times[:-1]])
    cut = times > np.maximum.accumulate(np.concatenate([[0.0], times[:-1]]))
    before = np.concatenate([[0.0], loads[:-1]])
    starts, ends, values = prev[cut], times[cut], before[cut]
    if times[-1] < period:
        starts, ends, values = (np.append(starts, times[-1]), np.append(ends, period),
                                np.append(values, loads[-1]))
    return starts, ends, values


def evaluate(instance: PeriodicInstance, pattern: Pattern | object, rel_tol: float = REL_TOL) -> Evaluation:
    """Check ``pattern`` against ``instance`` and compute SysEfficiency and Dilation.

    SysEfficiency = Σ_k β_k n_k w_k / (N T); Dilation = max_k ρ_k T / (n_k w_k).
    A period above the instance's cap K' t_min (by more than ``rel_tol``, the tolerance of every
    time) is a ``period_cap`` violation: such patterns are outside the problem.
    Every number is read first: a period that is not a finite positive number, or a
    non-finite or malformed number anywhere, makes the pattern infeasible.
    """
    instance = checked_instance(instance)
    if not isinstance(pattern, Pattern):
        return Evaluation(False, [Violation("structure", f"not a periodic pattern: {type(pattern).__name__}", 1.0)])
    T = pattern.period
    if not real(T) or not finite(T) or not T > 0:
        return Evaluation(False, [Violation("period", f"period = {T!r}", float(T) if real(T) and finite(T)
                                            else math.nan)])
    T = float(T)
    apps = instance.applications
    data, bad = _read(instance, pattern.applications, [a.name for a in apps])
    if bad:
        return Evaluation(False, bad, counts=_counts(pattern.applications))
    assert data is not None  # _read gives a reading exactly where nothing is bad
    t_tol = rel_tol * T
    B = instance.platform.bandwidth
    found: list[tuple[tuple, Violation]] = []  # (order key, violation): reported in the checker's order
    top = instance.period_cap()
    if T > top * (1 + rel_tol):  # the period's own tolerance, as every time
        found.append(((-1,), Violation(
            "period_cap", f"period {T!r} s above K' t_min = {instance.k_prime!r} x {instance.search_t_min()!r} s = "
                          f"{top!r} s", T - top)))
    n_inst = len(data.c)
    pos_of = np.zeros(n_inst, dtype=np.int64)  # an instance's position in its application, by compute start
    lo, hi = np.zeros(n_inst), np.zeros(n_inst)  # its I/O window
    app_of = np.zeros(n_inst, dtype=np.int64)
    for k, app in enumerate(apps):
        name = app.name
        first, last = int(data.app_off[k]), int(data.app_off[k + 1])
        n = last - first
        if not n:
            found.append(((k, 0, -1), Violation("no_instance", name, 1)))
            continue
        order = np.argsort(data.c[first:last], kind="stable")
        starts = data.c[first:last][order]
        for pos in np.flatnonzero(~((starts >= 0) & (starts < T))):
            found.append(((k, 0, int(pos)), Violation("compute_start", f"{name}#{order[pos]}", float(starts[pos]))))
        if app.work > T:
            found.append(((k, 1, -1), Violation("compute_overlap", f"{name}: work {app.work} > period",
                                                app.work - T)))
        pairs = np.arange(n) if n > 2 else np.array([0]) if n == 2 else np.array([], dtype=int)
        if len(pairs):
            ov = _cyclic_overlap(starts[pairs], app.work, starts[(pairs + 1) % n], app.work, T)
            for a in np.flatnonzero(ov > t_tol):
                b = (pairs[a] + 1) % n
                found.append(((k, 1, int(pairs[a])),
                              Violation("compute_overlap", f"{name}#{order[pairs[a]]}/#{order[b]}", float(ov[a]))))
        nxt = np.roll(starts, -1)
        ends = np.where(nxt <= starts, nxt + T, nxt) if n > 1 else starts + T
        pos_of[first + order] = np.arange(n)
        lo[first + order] = starts + app.work
        hi[first + order] = ends
        app_of[first:last] = k

    def label(q):
        k = int(app_of[q])
        return k, int(pos_of[q]), f"{apps[k].name}#{q - int(data.app_off[k])}"

    s, e, r = data.s, data.e, data.r
    owner = np.repeat(np.arange(n_inst), np.diff(data.seg_off))
    cap = np.array([a.processors * instance.platform.processor_bandwidth for a in apps])
    with np.errstate(over="ignore", invalid="ignore"):
        length = e - s
        broken = (e < s) | (r < 0) | (length > T + t_tol)
        good = ~broken
        seg_cap = cap[app_of[owner]] if len(owner) else np.zeros(0)
        fast = good & (r > seg_cap * (1 + rel_tol))
        inside = np.maximum(_cyclic_overlap(s, length, lo[owner], (hi - lo)[owner], T), 0.0) if len(s) \
            else np.zeros(0)
        outside = np.maximum(length - inside, 0.0)
        late = good & (outside > t_tol)
        moved = np.bincount(owner[good], weights=(r * length)[good], minlength=n_inst)
    for j in np.flatnonzero(broken | fast | late):
        k, pos, where = label(owner[j])
        if broken[j]:
            found.append(((k, 2, pos, j, 0), Violation(
                "segment", f"{where} [{s[j]}, {e[j]}] rate {r[j]}", max(s[j] - e[j], -r[j], length[j] - T))))
            continue
        if fast[j]:
            found.append(((k, 2, pos, j, 1), Violation(
                "app_rate", f"{where} [{s[j]:.6g}, {e[j]:.6g}]", float(r[j] - seg_cap[j]))))
        if late[j]:
            found.append(((k, 2, pos, j, 2), Violation(
                "io_window", f"{where} [{s[j]:.6g}, {e[j]:.6g}]", float(outside[j]))))
    vol = np.array([a.io_volume for a in apps], float)[app_of]
    with np.errstate(over="ignore", invalid="ignore"):
        off = np.abs(moved - vol) > rel_tol * vol
    for q in np.flatnonzero(off):
        k, pos, where = label(q)
        found.append(((k, 2, pos, math.inf, 0), Violation("volume", where, float(moved[q] - vol[q]))))
    with np.errstate(over="ignore", invalid="ignore"):
        starts, ends, loads = _load(s[good], e[good], r[good], T)
        over = (loads > B * (1 + rel_tol)) & (ends - starts > t_tol)
    for q in np.flatnonzero(over):
        found.append(((len(apps), q), Violation("capacity", f"[{starts[q]:.6g}, {ends[q]:.6g}]",
                                                float(loads[q] - B))))
    bad = [v for _, v in sorted(found, key=lambda x: x[0])]
    counts = data.counts
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

    @classmethod
    def from_dict(cls, d: dict) -> Trace:
        """From JSON: as a pattern, with ``horizon`` instead of ``period``."""
        if not isinstance(d, dict):
            raise InstanceError(f"not a periodic pattern: a JSON object is needed, got {type(d).__name__}")
        return cls(_number(d, "horizon"), _applications(d))


def solution_from_dict(d: dict) -> Pattern | Trace:
    """A pattern (``period``) or a trace (``horizon``) from its JSON dict."""
    return Trace.from_dict(d) if isinstance(d, dict) and "horizon" in d else Pattern.from_dict(d)


def evaluate_trace(instance: PeriodicInstance, trace: Trace | object, rel_tol: float = REL_TOL) -> Evaluation:
    """Check a timeline schedule and score it by the paper's definitions (1) and (2).

    Both are taken at the horizon H: application k, released at its first compute
    start r_k, has ρ̃_k = n_k w_k / (H - r_k) with n_k its instances completed by H;
    SysEfficiency = Σ_k β_k ρ̃_k / N and Dilation = max_k ρ_k / ρ̃_k (infinite for an
    application that never completes an instance: starvation, not a violation).
    Measured at a common H, they obey the long-run LP bounds. The same constraints as
    :func:`evaluate`, on a line instead of a cycle.
    """
    instance = checked_instance(instance)
    if not isinstance(trace, Trace):
        return Evaluation(False, [Violation("structure", f"not a trace: {type(trace).__name__}", 1.0)])
    H = trace.horizon
    if not real(H) or not finite(H) or not H > 0:
        return Evaluation(False, [Violation("horizon", f"horizon = {H!r}", float(H) if real(H) and finite(H)
                                            else math.nan)])
    H = float(H)
    data, bad = _read(instance, trace.applications, [a.name for a in instance.applications])
    if bad:
        return Evaluation(False, bad, counts=_counts(trace.applications))
    assert data is not None  # _read gives a reading exactly where nothing is bad
    t_tol = rel_tol * H
    rho_tilde = []
    seg_off, S, E, R, C = data.seg_off.tolist(), data.s.tolist(), data.e.tolist(), data.r.tolist(), data.c.tolist()
    for k, app in enumerate(instance.applications):
        first, last = int(data.app_off[k]), int(data.app_off[k + 1])
        if first == last:
            rho_tilde.append(0.0)
            continue
        cap = instance.max_rate(k)
        last_end = C[first]
        for q in range(first, last):
            i, c = q - first, C[q]
            where = f"{app.name}#{i}"
            if not 0 <= c < H:
                bad.append(Violation("compute_start", where, c))
            nxt = C[q + 1] if q + 1 < last else H
            if c < last_end - t_tol:
                bad.append(Violation("compute_overlap", where, last_end - c))
            lo, moved, end = c + app.work, 0.0, c + app.work
            for j in range(seg_off[q], seg_off[q + 1]):
                s, e, r = S[j], E[j], R[j]
                end = max(end, e)
                if e < s or r < 0:
                    bad.append(Violation("segment", f"{where} [{s}, {e}] rate {r}", max(s - e, -r)))
                    continue
                if r > cap * (1 + rel_tol):
                    bad.append(Violation("app_rate", f"{where} [{s:.6g}, {e:.6g}]", r - cap))
                outside = max(lo - s, 0.0) + max(e - nxt, 0.0)
                if outside > t_tol:
                    bad.append(Violation("io_window", f"{where} [{s:.6g}, {e:.6g}]", outside))
                moved += r * (e - s)
            if not abs(moved - app.io_volume) <= rel_tol * app.io_volume:
                bad.append(Violation("volume", where, moved - app.io_volume))
            last_end = end
        if last_end > H + t_tol:
            bad.append(Violation("horizon", app.name, last_end - H))
        rho_tilde.append((last - first) * app.work / (H - C[first]) if C[first] < H else 0.0)
    good = (data.e >= data.s) & (data.r >= 0)
    s, e, r = data.s[good], data.e[good], data.r[good]
    horizon = max(H, float(e.max()) if len(e) else H)
    B = instance.platform.bandwidth
    with np.errstate(over="ignore", invalid="ignore"):
        starts, ends, loads = _load(s, e, r, horizon * (1 + 1e-9) + 1.0)
        over = (loads > B * (1 + rel_tol)) & (ends - starts > t_tol)
    for w in np.flatnonzero(over):
        bad.append(Violation("capacity", f"[{starts[w]:.6g}, {ends[w]:.6g}]", float(loads[w] - B)))
    ev = Evaluation(not bad, bad, counts=data.counts)
    N = instance.platform.processors
    ev.sys_efficiency = sum(a.processors * r for a, r in zip(instance.applications, rho_tilde)) / N
    ev.dilation = max(instance.rho(k) / r if r > 0 else math.inf for k, r in enumerate(rho_tilde))
    return ev


def evaluate_any(instance: PeriodicInstance, solution: Pattern | Trace) -> Evaluation:
    """:func:`evaluate` for a periodic pattern, :func:`evaluate_trace` for a timeline.

    Anything else (a dict, None...) is an infeasible ``structure`` violation, not an exception.
    """
    return evaluate_trace(instance, solution) if isinstance(solution, Trace) else evaluate(instance, solution)

"""The shortest pattern for given instance counts n: the leaves of the exact method (``periodic/exact``).

For counts n the problem is to place n_k computes of every application k on a cycle of period T and
move every instance's data between its compute's end and the next compute's start, the rates summing to
at most B, with T as short as possible. Two cases are solved exactly here:

* **the peak demand fits** (Σ_k r_k <= B, r_k = min(β_k b, B)): no transfer ever waits, so T*(n) =
  max_k n_k c_k (c_k = w_k + time_io_k), attained by every application's instances back to back
  (:func:`back_to_back`);
* **one contender** (:func:`contender`): an application b with r_b = B and the others' peak within B
  (Σ_{k != b} r_k <= B): the paper's sets 5, 7, 8 and 10. Then only b's transfers compete. By max-flow
  min-cut on the network instances -> time -> B, a placement of the computes is feasible if and only if
  every other instance q, whose I/O window W_q can move r_q |W_q ∩ b computing| alone, moves the rest
  y_qi <= r_q |W_q ∩ D_i| inside b's I/O windows D_i, and b still moves vol_b in each: Σ_q y_qi <= B |D_i|
  - vol_b. (Proof: inside D_i b takes B minus what the others move, never more than r_b = B; outside
  b's windows only the others move, never more than B together. The condition is also necessary: q
  moves at most r_q per second, so whatever it cannot move outside b's windows it moves inside, and b
  moves at most B minus that.) :func:`build_leaf_milp` states it as a MILP over the compute starts
  (continuous), with a binary per pair (window of q, interval of b) that may overlap: the overlap then
  is at most each of end - start of the other, and 0 when the binary is 0 (an overlap bounded above
  only, which is all the condition needs). Which pairs may overlap follows from the period being at most
  T_up (what a better pattern than the incumbent needs): instance j of k starts in [j c_k, (j + 1) c_k +
  2 (T_up - n_k c_k)] once b's first compute starts at 0, so the model is small even for hundreds of
  instances.

The MILP's placement fixes an order of compute starts and ends; the compaction LP of that order
(:func:`iosched.models.periodic_trace.compaction_lp`, exact for a fixed order) gives the pattern, which
the evaluator checks.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from iosched.evaluate.periodic import Instance as PatternInstance
from iosched.evaluate.periodic import Pattern
from iosched.instances.periodic import PeriodicInstance
from iosched.solvers import Profile

MILP_SLACK = 1e-7  # relative: the MILP's period range is widened, its bound lowered, by this (HiGHS's tolerances)
MAX_LEAF_BINARIES = 20_000  # pairs (window, interval) that may overlap: a larger leaf is left open


def peak_fits(instance: PeriodicInstance) -> bool:
    """Σ_k min(β_k b, B) <= B: no transfer ever has to wait for another."""
    return sum(instance.max_rate(k) for k in range(len(instance.applications))) <= instance.platform.bandwidth


def contender(instance: PeriodicInstance) -> int | None:
    """The application b whose transfers alone compete (r_b = B, Σ_{k != b} r_k <= B), or None."""
    B = instance.platform.bandwidth
    rates = [instance.max_rate(k) for k in range(len(instance.applications))]
    for b, r in enumerate(rates):
        if r >= B and sum(rates) - r <= B:
            return b
    return None


def back_to_back(instance: PeriodicInstance, counts) -> Pattern:
    """Each application's n_k instances one after the other from 0 at its full rate, in T = max_k n_k c_k
    (every transfer at min(β_k b, B); feasible when the peak demand fits)."""
    apps = instance.applications
    cyc = [a.work + instance.time_io(k) for k, a in enumerate(apps)]
    T = max(n * c for n, c in zip(counts, cyc))
    out = []
    for k, (a, n) in enumerate(zip(apps, counts)):
        r = instance.max_rate(k)
        out.append(tuple(PatternInstance(i * cyc[k], ((i * cyc[k] + a.work, (i + 1) * cyc[k], r),)) for i in range(n)))
    return Pattern(T, tuple(out))


class _Affine:
    """A linear expression in the MILP's columns plus a constant, with its range over the columns' bounds."""

    def __init__(self, terms: dict, const: float, lo: float, hi: float):
        self.terms, self.const, self.lo, self.hi = terms, const, lo, hi

    def plus(self, other: _Affine, sign: float = 1.0) -> _Affine:
        terms = dict(self.terms)
        for c, v in other.terms.items():
            terms[c] = terms.get(c, 0.0) + sign * v
        lo, hi = (other.lo, other.hi) if sign > 0 else (-other.hi, -other.lo)
        return _Affine(terms, self.const + sign * other.const, self.lo + lo, self.hi + hi)

    def shift(self, d: float) -> _Affine:
        return _Affine(self.terms, self.const + d, self.lo + d, self.hi + d)


def build_leaf_milp(instance: PeriodicInstance, counts, t_lo: float, t_up: float, keep=None):
    """The one-contender leaf MILP (see the module's docstring) for counts ``counts`` and periods in
    [t_lo, t_up] (s), minimising T. Returns (the :class:`~iosched.models.matrix.Matrix`, what reads a
    solution back: {"scale", "T", "starts"}), or None where the instance has no contender. With ``keep`` (a
    set of applications besides the contender), the others are left out: a relaxation (their demands on
    b's windows dropped), infeasible only if the whole is.

    Columns: T; b's compute starts β_1..β_{p-1} (β_0 = 0); each other application's starts σ_kj; per pair
    (window of q, compute or I/O interval of b, in the period or the next) that may overlap: z (binary),
    the overlap o, and for b's I/O windows the data y that q moves there. Times in units of max_k c_k,
    data in B of those."""
    from iosched.models.matrix import Matrix

    b = contender(instance)
    if b is None:
        return None
    apps = instance.applications
    B = instance.platform.bandwidth
    u = instance.default_t_min()
    w = [a.work / u for a in apps]
    cyc = [(a.work + instance.time_io(k)) / u for k, a in enumerate(apps)]
    rate = [instance.max_rate(k) / B for k in range(len(apps))]
    vol = [a.io_volume / (B * u) for a in apps]
    lo_T, hi_T = t_lo / u, t_up / u
    M = Matrix()
    T = M.col(lo_T, hi_T, integer=False, cost=1.0)
    var_T = _Affine({T: 1.0}, 0.0, lo_T, hi_T)
    p = counts[b]
    slack_b = max(hi_T - p * cyc[b], 0.0)
    beta = [_Affine({}, 0.0, 0.0, 0.0)]
    for i in range(1, p):
        lo, hi = i * cyc[b], i * cyc[b] + slack_b
        beta.append(_Affine({M.col(lo, hi, integer=False): 1.0}, 0.0, lo, hi))
    beta.append(var_T)  # β_p = T
    for i in range(p):  # b's instances need c_b each
        diff = beta[i + 1].plus(beta[i], -1.0)
        _row(M, diff, lo=cyc[b])
    intervals = []  # (kind "C" | "D", window index i, start, end)
    for copy in (0, 1):
        for i in range(p):
            s = beta[i] if copy == 0 else beta[i].plus(var_T)
            e_next = beta[i + 1] if copy == 0 else beta[i + 1].plus(var_T)
            intervals.append(("C", i, s, s.shift(w[b])))
            intervals.append(("D", i, s.shift(w[b]), e_next))
    budget: dict[int, list[int]] = {i: [] for i in range(p)}  # the y columns inside b's window i
    starts = {}
    for k, n in enumerate(counts):
        if k == b or (keep is not None and k not in keep):
            continue
        slack = max(hi_T - n * cyc[k], 0.0)
        sig = []
        for j in range(n):
            lo, hi = j * cyc[k], min((j + 1) * cyc[k] + 2 * slack, 2 * hi_T)
            sig.append(_Affine({M.col(lo, hi, integer=False): 1.0}, 0.0, lo, hi))
        starts[k] = [next(iter(s.terms)) for s in sig]
        for j in range(n):  # instance j's window [σ_j + w_k, σ_{j+1}]
            nxt = sig[j + 1] if j + 1 < n else sig[0].plus(var_T)
            _row(M, nxt.plus(sig[j], -1.0), lo=cyc[k])
            ws, we = sig[j].shift(w[k]), nxt
            pairs = [(kind, i, s, e) for kind, i, s, e in intervals if not (we.hi <= s.lo or e.hi <= ws.lo)]
            if any(kind == "C" and ws.lo >= s.hi and we.hi <= e.lo for kind, i, s, e in pairs):
                continue  # surely inside one of b's computes: it moves alone, its window is long enough
            moved = []  # (column, coefficient): data the instance moves
            parts = []  # the overlaps, which tile the window: Σ o = |W| (every interval it may meet is a pair)
            for kind, i, s, e in pairs:
                if M.columns > MAX_LEAF_BINARIES * 4:
                    return None
                top = min(we.hi - ws.lo, e.hi - s.lo)
                z = M.col(0, 1, integer=True)
                o = M.col(0, top, integer=False)
                parts.append(o)
                M.row([o, z], [1.0, -top], hi=0.0)  # o <= top z
                for a_end, a_start in ((we, s), (e, ws), (we, ws), (e, s)):  # o <= end - start (+ M (1 - z))
                    big = max(top - (a_end.lo - a_start.hi), 0.0)
                    _row(M, a_end.plus(a_start, -1.0), hi=None, extra={o: -1.0, z: -big}, lo=-big)
                if kind == "C":
                    moved.append((o, rate[k]))
                else:
                    y = M.col(0, rate[k] * top, integer=False)
                    M.row([y, o], [1.0, -rate[k]], hi=0.0)
                    moved.append((y, 1.0))
                    budget[i].append(y)
            M.row([c for c, _ in moved], [v for _, v in moved], lo=vol[k])
            _row(M, we.plus(ws, -1.0), lo=0.0, hi=0.0, extra={o: -1.0 for o in parts})
    key = {k: (apps[k].work, apps[k].io_volume, apps[k].processors, counts[k]) for k in starts}
    for k in starts:  # identical applications with as many instances: the first starts first (a relabelling)
        twin = next((j for j in starts if j > k and key[j] == key[k]), None)
        if twin is not None:
            M.row([starts[k][0], starts[twin][0]], [1.0, -1.0], hi=0.0)
    for i in range(p):  # Σ y in D_i <= B |D_i| - vol_b   (B = 1)
        length = beta[i + 1].plus(beta[i], -1.0).shift(-w[b])
        _row(M, length, lo=vol[b], extra={y: -1.0 for y in budget[i]})
    meta = {"scale": u, "T": T, "beta": [next(iter(x.terms)) if x.terms else None for x in beta[:p]], "starts": starts,
            "contender": b}
    return M, meta


def _row(M, expr: _Affine, lo: float | None = None, hi: float | None = None, extra: dict | None = None) -> None:
    """lo <= expr + Σ extra <= hi (expr's constant moved to the bounds)."""
    terms = dict(expr.terms)
    for c, v in (extra or {}).items():
        terms[c] = terms.get(c, 0.0) + v
    M.row(list(terms), list(terms.values()), lo=-math.inf if lo is None else lo - expr.const,
          hi=math.inf if hi is None else hi - expr.const)


def solve_leaf(instance: PeriodicInstance, counts, t_lo: float, t_up: float, profile: Profile) -> dict:
    """The shortest pattern with counts ``counts`` and a period in [t_lo, t_up] (s), by the leaf MILP under
    ``profile`` (its time limit): {"status" ("optimal": ``period_lb`` is the least period, ``pattern`` one
    that meets it; "infeasible": none up to t_up; "time_limit": ``period_lb`` a lower bound, ``pattern``
    the best found or None; "unsupported": no contender or too many pairs), "period_lb" (s), "pattern",
    "binaries", "solver_time_s"}."""
    from iosched.models.matrix import solve

    b = contender(instance)
    if b is None:
        return {"status": "unsupported", "period_lb": t_lo, "pattern": None}
    began = time.perf_counter()
    others = [k for k in range(len(counts)) if k != b]
    if len(others) > 1:  # each other application alone with b first: a smaller relaxation that often settles it
        key = {k: (instance.applications[k].work, instance.applications[k].io_volume,
                   instance.applications[k].processors, counts[k]) for k in others}
        for k in {key[k]: k for k in others}.values():
            left = profile.time_limit - (time.perf_counter() - began)
            built = build_leaf_milp(instance, counts, t_lo, t_up * (1 + MILP_SLACK), keep={k})
            if built is None or left <= 0.01:
                break
            out, _ = solve(built[0], replace(profile, time_limit=left, rel_gap=min(profile.rel_gap, 1e-9)))
            if out.status.value == "infeasible":
                return {"status": "infeasible", "period_lb": t_up, "pattern": None, "binaries": 0,
                        "solver_time_s": time.perf_counter() - began, "message": f"infeasible with {k} alone"}
    built = build_leaf_milp(instance, counts, t_lo, t_up * (1 + MILP_SLACK))
    if built is None:
        return {"status": "unsupported", "period_lb": t_lo, "pattern": None}
    M, meta = built
    profile = replace(profile, time_limit=max(profile.time_limit - (time.perf_counter() - began), 0.01))
    lo, hi, integer, *_ = M.arrays()
    out, x = solve(M, replace(profile, rel_gap=min(profile.rel_gap, 1e-9)))
    info = {"binaries": int(np.count_nonzero(integer)), "solver_time_s": time.perf_counter() - began,
            "message": out.message}
    u = meta["scale"]
    if out.status.value == "infeasible":
        return {**info, "status": "infeasible", "period_lb": t_up, "pattern": None}
    bound = out.bound if out.bound is not None else t_lo / u
    period_lb = max(t_lo, bound * u * (1 - MILP_SLACK))
    pattern = None
    if x is not None:
        pattern = _pattern(instance, counts, meta, x, profile)
    status = "optimal" if out.status.value == "optimal" else "time_limit"
    return {**info, "status": status, "period_lb": period_lb, "pattern": pattern}


def _pattern(instance: PeriodicInstance, counts, meta: dict, x: np.ndarray, profile: Profile) -> Pattern | None:
    """The MILP's compute starts as a pattern, compacted by the LP of their order (None if it fails)."""
    from iosched.models.periodic_trace import compaction_lp

    u, b = meta["scale"], meta["contender"]
    T = float(x[meta["T"]]) * u
    per_app = []
    for k in range(len(counts)):
        if k == b:
            times = [0.0] + [float(x[c]) * u for c in meta["beta"][1:]]
        else:
            times = [float(x[c]) * u for c in meta["starts"][k]]
        per_app.append(tuple(PatternInstance(t % T, ()) for t in times))
    return compaction_lp(instance, Pattern(T, tuple(per_app)), max(profile.time_limit, 1.0), profile.solver)

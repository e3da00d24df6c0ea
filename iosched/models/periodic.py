"""Bounds for the periodic problem, valid for every schedule, periodic or not.

* The paper's bound (eq. 5): SysEfficiency <= Σ_k β_k ρ_k / N, which ignores
  that the applications share B.
* The long-run LP: application k completes at most x_k instances per second,
  x_k (w_k + time_io_k) <= 1, and all together move Σ_k x_k vol_k <= B data
  per second. Maximising Σ_k β_k x_k w_k / N bounds SysEfficiency from above;
  maximising z with z <= x_k (w_k + time_io_k) bounds Dilation below by 1 / z.
"""

from __future__ import annotations

import math
import time
from typing import Annotated

from iosched import lazy
from iosched.core import MethodOutput, Status, register
from iosched.errors import InstanceError, ParameterError
from iosched.evaluate.periodic import Instance as PatternInstance
from iosched.evaluate.periodic import Pattern, dilation, sys_efficiency
from iosched.heuristics.periodic import Eps, KPrime, Seconds, Workers, compile_kernel
from iosched.instances.periodic import PeriodicInstance
from iosched.solvers import Deadline, Profile, load_profile, pyomo_highs, solve_pyomo, solve_pyomo_within
from iosched.validate import Integer, ListOf, Number, choice, integer, number, positive

pe = lazy.module("pyomo.environ")

# What one exact run may build, measured on a 2-core, 24 GiB machine (load average 5): the
# compaction LP with 296,000 volume variables took 1.7 GB, 0.09 ms per variable to build in
# Pyomo and 0.5 ms to hand to HiGHS (outside HiGHS's own time limit); the time-indexed MILP
# (3 K S variables, about 5 K S constraints) 0.25 ms per cell to build and 1.1 ms to hand over.
MAX_LP_VARIABLES = 500_000  # compaction LP: K x 2 x the most instances a pattern of K' t_min can hold
MAX_MILP_CELLS = 20_000  # time-indexed MILP: applications x slots
MAX_MILP_TERMS = 2_000_000  # ... and Σ_k slots x the slots a compute covers (its compute constraints' terms)
MAX_PERIODS = 100  # periods given to the MILP
SEARCH_SHARE = 0.5  # of an exact method's budget, at most this much goes to the PerSched search before it
SECONDS_PER_LP_VARIABLE = 6e-4  # building the compaction LP and loading it into HiGHS
SECONDS_PER_MILP_CELL = 1.3e-3  # the same for one time-indexed model (the first; then as measured)


Slots = Annotated[int | None, Integer(2)]
PERIODS_CHECK = ListOf(Number(0, lo_open=True), MAX_PERIODS, scalar=True)
Periods = Annotated[list | float | None, PERIODS_CHECK]  # s


def _profile(profile) -> Profile:
    """A profile by name (solvers.toml) or a Profile."""
    if isinstance(profile, Profile):
        return profile
    if not isinstance(profile, str) or not profile:
        raise ParameterError(f"profile must be the name of a solvers.toml profile, got {profile!r}")
    return load_profile(profile)


def paper_bound(instance: PeriodicInstance) -> float:
    """Σ_k β_k ρ_k / N (eq. 5 of the paper)."""
    N = instance.platform.processors
    return sum(a.processors * instance.rho(k) for k, a in enumerate(instance.applications)) / N


def build_longrun_model(instance: PeriodicInstance, objective: str = "sys_efficiency") -> pe.ConcreteModel:
    """The long-run LP; ``objective`` "sys_efficiency" or "dilation" (maximises 1 / Dilation)."""
    apps = instance.applications
    m = pe.ConcreteModel(name=f"periodic-longrun-{objective}")
    m.K = pe.RangeSet(0, len(apps) - 1)
    m.x = pe.Var(m.K, domain=pe.NonNegativeReals, doc="instances of k per second")
    m.alone = pe.Constraint(m.K, rule=lambda m, k: m.x[k] * (apps[k].work + instance.time_io(k)) <= 1)
    m.bandwidth = pe.Constraint(
        expr=sum(m.x[k] * apps[k].io_volume for k in m.K) <= instance.platform.bandwidth)
    if objective == "sys_efficiency":
        N = instance.platform.processors
        m.obj = pe.Objective(expr=sum(apps[k].processors * apps[k].work * m.x[k] for k in m.K) / N,
                             sense=pe.maximize)
    elif objective == "dilation":
        m.z = pe.Var(domain=pe.NonNegativeReals, doc="1 / Dilation")
        m.worst = pe.Constraint(m.K, rule=lambda m, k: m.z <= m.x[k] * (apps[k].work + instance.time_io(k)))
        m.obj = pe.Objective(expr=m.z, sense=pe.maximize)
    else:
        raise ValueError(f"objective must be sys_efficiency or dilation, got {objective!r}")
    return m


def longrun_bound(instance: PeriodicInstance, objective: str = "sys_efficiency",
                  profile: Profile | None = None) -> float | None:
    """The LP bound: an upper bound on SysEfficiency, or a lower bound on Dilation.

    The optimum of :func:`build_longrun_model`, in closed form rather than through a solver
    (exact up to rounding, instant, and never missing): SysEfficiency is a fractional
    knapsack, x_k up to 1 / (w_k + time_io_k) by decreasing β_k w_k / vol_k while Σ_k x_k
    vol_k <= B; Dilation takes x_k = z / (w_k + time_io_k) with z = min(1, B / Σ_k vol_k /
    (w_k + time_io_k)). ``profile`` is accepted for compatibility and unused.
    """
    choice("objective", objective, ("sys_efficiency", "dilation"), error=ParameterError)
    apps = instance.applications
    cycles = [a.work + instance.time_io(k) for k, a in enumerate(apps)]
    B = instance.platform.bandwidth
    if objective == "dilation":
        need = math.fsum(a.io_volume / c for a, c in zip(apps, cycles))
        return 1.0 / min(1.0, B / need)
    left, value = B, []
    for k in sorted(range(len(apps)), key=lambda k: -apps[k].processors * apps[k].work / apps[k].io_volume):
        x = min(1.0 / cycles[k], left / apps[k].io_volume)
        if x <= 0:
            break
        value.append(apps[k].processors * apps[k].work * x)
        left -= x * apps[k].io_volume
    return math.fsum(value) / instance.platform.processors


CAPPED_K_PRIME = 10.0  # the period-capped bound covers periods up to this many t_min (PerSched's K')
MAX_CAPPED_CELLS = 20_000_000  # count vectors x periods the period-capped bound may enumerate
MAX_CAPPED_TYPES = 12  # distinct applications the period-capped bound enumerates at most
MAX_CUT_APPS = 60  # applications up to which contiguity cuts are generated


def period_capped_bound(instance: PeriodicInstance, k_prime: float = CAPPED_K_PRIME) -> dict | None:
    """The exact maximum SysEfficiency of the integer relaxation over periods T in [t_min, K' t_min]:

        max Σ_k β_k n_k w_k / (N T)  s.t.  n_k (w_k + time_io_k) <= T,  Σ_k n_k vol_k <= B T,
                                          n_k >= 1 integer,  t_min <= T <= K' t_min,

    t_min = max_k (w_k + time_io_k). Theorem: it bounds the SysEfficiency of every periodic
    pattern of period T in that range with at least one instance of every application.
    Proof: the n_k instances of k in a period follow each other cyclically, each computing
    w_k and moving vol_k at most at min(β_k b, B), so n_k (w_k + time_io_k) <= T; the I/O
    system moves at most B T per period. (Patterns whose period is below t_min cannot hold
    every application; the bound says nothing about longer periods, where the long-run LP
    bound holds.)

    Exact, not a grid sample: for fixed counts the value decreases in T, so the supremum is
    attained at T = max(L, Σ_k n_k vol_k / B), L the smallest T in the range with n_k (w_k +
    time_io_k) <= T for all k. L is t_min or some m (w_k + time_io_k); on each such L the caps
    floor(L / cycle) are fixed and every count vector within them is scored at that T.
    Identical applications (same w, vol, β) are merged into one type whose total count lies
    in [m, m cap]; all types but the one of widest range are enumerated, and for that one the
    value is increasing in its count while Σ vol <= B L and monotone beyond, so the two counts
    around B L and the ends of its range contain the optimum.

    Returns {"value", "t_min", "t_max" (s), "period" (s) and "counts" per type where attained,
    "k_prime"} (value 0, period and counts None, when no pattern in the range holds every
    application), or None when the enumeration would exceed MAX_CAPPED_CELLS, or with more than
    MAX_CAPPED_TYPES distinct applications.
    """
    import numpy as np

    k_prime = number("k_prime", k_prime, 1, error=ParameterError)
    apps = instance.applications
    B, N = instance.platform.bandwidth, instance.platform.processors
    kinds: dict[tuple, int] = {}
    for k, a in enumerate(apps):
        kinds.setdefault((a.work, a.io_volume, a.processors, a.work + instance.time_io(k)), 0)
        kinds[(a.work, a.io_volume, a.processors, a.work + instance.time_io(k))] += 1
    types = list(kinds)
    if len(types) > MAX_CAPPED_TYPES:
        return None
    copies = np.array([kinds[t] for t in types], dtype=float)
    gain = np.array([p * w for w, _, p, _ in types])  # β_k w_k per instance
    vol = np.array([v for _, v, _, _ in types])
    cyc = np.array([c for *_, c in types])
    t_min = float(cyc.max())
    t_max = k_prime * t_min
    points = {t_min}
    for c in cyc:
        points.update(float(m * c) for m in range(2, int(t_max / c) + 1) if t_min < m * c <= t_max)
    L = np.array(sorted(points))
    caps = copies[:, None] * np.floor(L[None, :] / cyc[:, None] * (1 + 1e-12))  # types x periods
    widest = int(np.argmax(caps[:, -1] - copies))
    others = [i for i in range(len(types)) if i != widest]
    grid = [np.arange(copies[i], caps[i, -1] + 1) for i in others]
    size = math.prod(len(g) for g in grid)
    if size * len(L) > MAX_CAPPED_CELLS:
        return None
    mesh = np.array(np.meshgrid(*grid, indexing="ij")).reshape(len(others), -1) if grid else np.zeros((0, 1))
    inside = np.all(mesh[:, :, None] <= caps[others][:, None, :], axis=0) if others else np.ones((1, len(L)), bool)
    A0 = (gain[others] @ mesh)[:, None]
    V0 = (vol[others] @ mesh)[:, None]
    a, v, lo = gain[widest], vol[widest], copies[widest]
    hi = np.minimum(caps[widest][None, :], np.floor((B * t_max * (1 + 1e-12) - V0) / v))  # same slack as below
    cross = np.floor((B * L[None, :] - V0) / v)
    best = (-np.inf, None, None, None)
    for n in (np.full_like(hi, lo), hi, cross, cross + 1):
        n = np.clip(n, lo, None)
        ok = inside & (n <= hi) & (V0 + v * n <= B * t_max * (1 + 1e-12))
        T = np.maximum(L[None, :], (V0 + v * n) / B)
        value = np.where(ok, (A0 + a * n) / (N * T), -np.inf)
        i = np.unravel_index(int(np.argmax(value)), value.shape)
        if value[i] > best[0]:
            counts = np.zeros(len(types))
            counts[others] = mesh[:, i[0]]
            counts[widest] = n[i]
            best = (float(value[i]), float(T[i]), counts, i)
    if best[1] is None:  # even one instance each moves more than B K' t_min: no such pattern
        return {"value": 0.0, "t_min": t_min, "t_max": t_max, "k_prime": k_prime, "period": None, "counts": None}
    return {"value": best[0], "t_min": t_min, "t_max": t_max, "k_prime": k_prime, "period": best[1],
            "counts": {f"{p:g} x {w:g} s, {v:g} GB": int(c) for (w, v, p, _), c in zip(types, best[2])}}


def contiguity_cuts(instance: PeriodicInstance) -> list[tuple[list[int], list[int], float, float]]:
    """Cuts (S, A, ℓ, g) for :func:`contiguity_bound`: A a class of identical applications or one
    application, ℓ a breakpoint (some w_j, time_io_j) no longer than any time_io in S ∪ A, S the
    other applications with time_io_j >= ℓ and w_j < ℓ, by increasing w_j, every prefix with
    Σ_S r_j <= B; only cuts with g > 0 (the others are implied). None above MAX_CUT_APPS
    applications (their number grows as K^3; the bound is then the LP's)."""
    apps = instance.applications
    K, B = len(apps), instance.platform.bandwidth
    if K > MAX_CUT_APPS:
        return []
    r = [instance.max_rate(k) for k in range(K)]
    tio = [instance.time_io(k) for k in range(K)]
    key = [(a.work, a.io_volume, a.processors) for a in apps]
    classes = {tuple(k for k in range(K) if key[k] == key[j]) for j in range(K)} | {(k,) for k in range(K)}
    cuts = []
    for A in sorted(classes):
        others = [j for j in range(K) if j not in A]
        for ell in sorted({apps[j].work for j in range(K)} | set(tio)):
            if ell > min(tio[a] for a in A):
                continue
            S_all = sorted((j for j in others if tio[j] >= ell and apps[j].work < ell), key=lambda j: apps[j].work)
            S = []
            for j in S_all:
                if sum(r[i] for i in S) + r[j] > B:
                    break
                S.append(j)
                g = (sum(r[i] for i in S) + r[A[0]] - B) * ell - sum(r[i] * min(apps[i].work, ell) for i in S)
                if g > 0:
                    cuts.append((list(S), list(A), ell, g))
    return cuts


def contiguity_bound(instance: PeriodicInstance) -> dict:
    """The long-run LP with contiguity cuts: an upper bound on SysEfficiency that can lie strictly
    below the LP bound when that bound needs transfers to overlap in a way contiguous computes forbid.

    Theorem. Let r_j = min(β_j b, B), c_j = w_j + time_io_j, and x_j the long-run rate of
    instances of j (a periodic pattern of period T: x_j = n_j / T). The deficit rate
    d_j = r_j (1 - c_j x_j) is the time-average of r_j [j in its I/O phase] - rate_j(t) >= 0.
    For disjoint sets S, A of applications with Σ_{j in S} r_j <= B, all of A with the same
    r_a, and 0 < ℓ <= min over S ∪ A of time_io:

        Σ_{j in S} d_j + Σ_{a in A} d_a >= g Σ_{a in A} x_a,
        g = (Σ_{j in S} r_j + r_a - B) ℓ - Σ_{j in S} r_j min(w_j, ℓ).

    Proof. Take W_i, the first ℓ seconds of each I/O phase i of an application of A (that phase
    lasts L_i >= time_io_a >= ℓ) and U their union. In W_i, a_i moves at least vol_a - r_a (L_i -
    ℓ) = r_a ℓ - e_i, e_i = r_a L_i - vol_a its deficit in phase i. A j in S computes at most
    min(w_j, ℓ) in W_i: two of its computes are apart by an I/O phase >= time_io_j >= ℓ. At every
    t, Σ_S rate_j(t) <= B - Σ_A rate_a(t), so over U the deficits of S add up to at least
    (Σ_S r_j - B) |U| - Σ_S r_j (time j computes in U) + (what A moves in U) >= Σ_i (g - e_i),
    as |U| <= Σ_i ℓ and Σ_S r_j <= B. Deficits are >= 0 pointwise, so the totals over a period (or
    a long horizon, per unit time) satisfy the cut. Every cut holds together with x_j c_j <= 1
    and Σ_j x_j vol_j <= B, so the LP's optimum bounds the SysEfficiency of every periodic
    pattern (and of every schedule in the long run; a finite trace only up to its boundary).

    Cuts from :func:`contiguity_cuts`. Returns {"value", "cuts" (how many), "binding" (the cuts
    holding with equality at the optimum, as S, A names, ℓ s, g data)}.
    """
    import numpy as np
    from scipy.optimize import linprog

    apps = instance.applications
    K, B, N = len(apps), instance.platform.bandwidth, instance.platform.processors
    r = np.array([instance.max_rate(k) for k in range(K)])
    c = np.array([a.work + instance.time_io(k) for k, a in enumerate(apps)])
    cuts = contiguity_cuts(instance)
    rows, rhs = [np.array([a.io_volume for a in apps])], [B]
    for S, A, _, g in cuts:  # Σ_{S ∪ A} r_j c_j x_j + g Σ_A x_a <= Σ_{S ∪ A} r_j
        row = np.zeros(K)
        for j in S + A:
            row[j] += r[j] * c[j]
        for a in A:
            row[a] += g
        rows.append(row)
        rhs.append(float(sum(r[j] for j in S + A)))
    res = linprog(-np.array([a.processors * a.work for a in apps]) / N, A_ub=np.array(rows), b_ub=np.array(rhs),
                  bounds=[(0, 1 / ck) for ck in c], method="highs")
    if res.status != 0:
        raise RuntimeError(f"the contiguity LP was not solved: {res.message}")
    slack = res.slack[1:]
    binding = [{"S": [apps[j].name for j in S], "A": [apps[a].name for a in A], "ell_s": ell, "g": g}
               for (S, A, ell, g), sl in zip(cuts, slack) if sl <= 1e-9 * max(1.0, abs(rhs[1]))]
    # the LP's optimum rounded up by HiGHS's tolerance, so that it never falls below a true pattern
    return {"value": min(-res.fun * (1 + 1e-9), longrun_bound(instance, "sys_efficiency")), "cuts": len(cuts),
            "binding": binding}


def bound_scope(cap: dict) -> str:
    """The scope of the period-capped bound ``cap``, in words."""
    return (f"optimal among periodic patterns of period in [t_min, {cap['k_prime']:g} t_min] = "
            f"[{cap['t_min']:.6g}, {cap['t_max']:.6g}] s holding every application at least once "
            f"(period-capped integer bound {cap['value']:.6f})")


def bounds(instance: PeriodicInstance, profile: Profile | None = None) -> dict:
    """All bounds: the paper's SysEfficiency bound and the LP's two bounds (every schedule), and the
    period-capped integer bound with its period range (patterns of period <= 10 t_min only)."""
    cap = period_capped_bound(instance)
    return {
        "paper_sys_efficiency": paper_bound(instance),
        "lp_sys_efficiency": longrun_bound(instance, "sys_efficiency", profile),
        "contiguity_sys_efficiency": contiguity_bound(instance)["value"],
        "lp_dilation": longrun_bound(instance, "dilation", profile),
        "capped_sys_efficiency": None if cap is None else cap["value"],
        "capped_period_min_s": None if cap is None else cap["t_min"],  # the capped bound's range of periods
        "capped_period_max_s": None if cap is None else cap["t_max"],
    }


def best_bound(instance: PeriodicInstance, objective: str) -> float | None:
    """The tightest bound on ``objective``: min of paper and LP for SysEfficiency, LP for Dilation."""
    lp = longrun_bound(instance, objective)
    if objective == "sys_efficiency":
        return min(paper_bound(instance), lp) if lp is not None else paper_bound(instance)
    return lp


def gap_reference(instance: PeriodicInstance, objective: str) -> str:
    """What :func:`best_bound` is, in words: the bound a Result's gap is measured against."""
    if objective == "sys_efficiency":
        return "the long-run LP bound (min with the paper's eq. 5), valid for every schedule"
    return "the long-run LP bound on Dilation, valid for every schedule"


# --- compaction: the best pattern with a given order of events --------------------------------


def _events(instance: PeriodicInstance, pattern: Pattern):
    """The compute starts and ends of ``pattern`` in cyclic order, and each instance's event indices.

    Returns (times, per application a list of (start index, end index) by compute start).
    Ends sort before starts at equal times.
    """
    T = pattern.period
    raw = []
    for k, insts in enumerate(pattern.applications):
        w = instance.applications[k].work
        for i, inst in enumerate(sorted(insts, key=lambda x: x.compute_start)):
            raw.append((inst.compute_start % T, 1, k, i))
            raw.append(((inst.compute_start + w) % T, 0, k, i))
    raw.sort()
    index = {(kind, k, i): j for j, (_, kind, k, i) in enumerate(raw)}
    spans = [[(index[1, k, i], index[0, k, i]) for i in range(len(insts))]
             for k, insts in enumerate(pattern.applications)]
    return [t for t, *_ in raw], spans


def _cyclic(a: int, b: int, n: int) -> list[int]:
    """Interval indices a, a+1, ..., b-1 (mod n); the whole cycle when a == b."""
    return [(a + j) % n for j in range((b - a) % n or n)]


def _spans_to_intervals(spans, n: int) -> tuple[list, list]:
    """Per instance (application k, interval indices): its compute, and the window up to the next
    instance of k in which its transfer must happen (cyclically over the n intervals)."""
    computes, windows = [], []
    for k, sp in enumerate(spans):
        for i, (a, b) in enumerate(sp):
            computes.append((k, _cyclic(a, b, n)))
            windows.append((k, _cyclic(b, sp[(i + 1) % len(sp)][0], n)))
    return computes, windows


def build_compaction_model(instance: PeriodicInstance, pattern: Pattern) -> pe.ConcreteModel:
    """The compaction LP: keep the cyclic order of every compute start and end of ``pattern``
    and choose the lengths t_j (s) of the elementary intervals and the volume v_kj each
    application moves in each interval of its I/O windows; minimise the period Σ t_j.

    Rate change points need not be events: volumes are free within an interval, so a
    finer subdivision would not help. Both objectives improve as the period shrinks with
    the instance counts fixed, so one LP serves SysEfficiency and Dilation.
    """
    times, spans = _events(instance, pattern)
    n = len(times)
    apps = instance.applications
    B = instance.platform.bandwidth
    m = pe.ConcreteModel(name="periodic-compaction")
    m.J = pe.RangeSet(0, n - 1)
    m.t = pe.Var(m.J, domain=pe.NonNegativeReals, doc="length of interval j (s)")
    computes, windows = _spans_to_intervals(spans, n)
    io_index = sorted({(k, j) for k, js in windows for j in js})
    m.IO = pe.Set(initialize=io_index, dimen=2)
    m.v = pe.Var(m.IO, domain=pe.NonNegativeReals, doc="volume moved by k in interval j")
    m.compute = pe.Constraint(range(len(computes)), rule=lambda m, c: (
        sum(m.t[j] for j in computes[c][1]) == apps[computes[c][0]].work))
    m.volume = pe.Constraint(range(len(windows)), rule=lambda m, c: (
        sum(m.v[windows[c][0], j] for j in windows[c][1]) == apps[windows[c][0]].io_volume))
    m.rate = pe.Constraint(m.IO, rule=lambda m, k, j: m.v[k, j] <= instance.max_rate(k) * m.t[j])
    users: dict[int, list[int]] = {}
    for k, j in io_index:
        users.setdefault(j, []).append(k)
    m.capacity = pe.Constraint(sorted(users), rule=lambda m, j: (
        sum(m.v[k, j] for k in users[j]) <= B * m.t[j]))
    m.period = pe.Objective(expr=sum(m.t[j] for j in m.J), sense=pe.minimize)
    m._spans = spans  # kept for reading the solution back
    return m


def compaction_pattern(instance: PeriodicInstance, model: pe.ConcreteModel) -> Pattern:
    """The pattern of a solved compaction model (see :func:`assemble_pattern`)."""
    t = [max(pe.value(model.t[j]), 0.0) for j in range(len(model.t))]
    return assemble_pattern(instance, model._spans, t, {(k, j): pe.value(model.v[k, j]) for k, j in model.IO})


def assemble_pattern(instance: PeriodicInstance, spans, t: list[float], volumes: dict) -> Pattern:
    """The pattern of compaction interval lengths ``t`` (s) and ``volumes`` {(k, j): data moved by
    k in interval j}, starting the period at the first event; ``spans`` as :func:`_events` gives.

    Rates are v / t, clipped to β_k b and scaled so their sum stays within B (solver
    tolerances); intervals shorter than 1e-12 of the period carry nothing.
    """
    n = len(t)
    t = [max(float(x), 0.0) for x in t]
    T = sum(t)
    starts = [0.0]
    for j in range(n - 1):
        starts.append(starts[-1] + t[j])
    rates: dict[tuple[int, int], float] = {}
    for (k, j), v in volumes.items():
        if t[j] > 1e-12 * T:
            rates[k, j] = min(max(v, 0.0) / t[j], instance.max_rate(k))
    load: dict[int, float] = {}
    for (_, j), r in rates.items():
        load[j] = load.get(j, 0.0) + r
    B = instance.platform.bandwidth
    apps = []
    for k, sp in enumerate(spans):
        insts = []
        for i, (a, b) in enumerate(sp):
            nxt = sp[(i + 1) % len(sp)][0]
            segs = tuple((starts[j], starts[j] + t[j], rates[k, j] * min(1.0, B / load[j]))
                         for j in _cyclic(b, nxt, n) if rates.get((k, j), 0.0) > 0)
            insts.append(PatternInstance(starts[a] % T, segs))
        apps.append(tuple(insts))
    return Pattern(T, tuple(apps))


def compact(instance: PeriodicInstance, pattern: Pattern, profile: Profile | None = None):
    """Solve the compaction LP of ``pattern``; returns (the shortest pattern, the solver outcome).

    The input pattern is feasible for the LP, so the result is never longer; the
    pattern is None when the solver proves nothing (it then says why).
    """
    m = build_compaction_model(instance, pattern)
    out = solve_pyomo(m, profile or load_profile("default"))
    if not out.has_solution:
        return None, out
    return compaction_pattern(instance, m), out


def compaction_size(instance: PeriodicInstance, pattern: Pattern) -> int:
    """The number of volume variables of ``pattern``'s compaction LP, without building it."""
    times, spans = _events(instance, pattern)
    n = len(times)
    cells = set()
    for k, sp in enumerate(spans):
        for i, (_, b) in enumerate(sp):
            cells.update((k, j) for j in _cyclic(b, sp[(i + 1) % len(sp)][0], n))
    return len(cells)


def check_compaction(instance: PeriodicInstance, plan) -> None:
    """Refuse, before anything runs, a search whose patterns could give a compaction LP above
    MAX_LP_VARIABLES: K applications x 2 N intervals, N the most instances a pattern of
    K' t_min can hold."""
    from iosched.heuristics.periodic import _largest_k_prime

    apps = instance.applications
    cycles = [a.work + instance.time_io(k) for k, a in enumerate(apps)]

    def size(T):
        return 2 * len(apps) * sum(math.floor(T / c) for c in cycles)

    if size(plan.t_max) <= MAX_LP_VARIABLES:
        return
    if size(plan.t_min) <= MAX_LP_VARIABLES:
        fit = _largest_k_prime(plan.t_min, plan.k_prime, lambda T: size(T) <= MAX_LP_VARIABLES)
        raise ParameterError(
            f"k_prime = {plan.k_prime!r}: the compaction LP of a pattern as long as K' t_min = {plan.t_max:.6g} s "
            f"could have up to {size(plan.t_max):.4g} variables, above the limit of {MAX_LP_VARIABLES}; "
            f"k_prime <= {fit:.4g} fits (or run persched)")
    raise InstanceError(
        f"applications: {len(apps)} applications whose patterns hold up to {size(plan.t_min) // (2 * len(apps))} "
        f"instances already at t_min = {plan.t_min:.6g} s give a compaction LP of up to {size(plan.t_min):.4g} "
        f"variables, above persched-compact's limit of {MAX_LP_VARIABLES} (run persched)")


def _compacted(instance, objective, profile, k_prime, eps, t_min, workers):
    from iosched.heuristics.periodic import method_deadline, plan_search, run_search

    entry = time.perf_counter()
    prof = _profile(profile)
    plan = plan_search(instance, k_prime, eps, t_min)  # every parameter checked before anything runs
    integer("workers", workers, 1, 256, error=ParameterError)
    check_compaction(instance, plan)
    deadline = method_deadline(prof.time_limit, entry)  # the whole method: search, LP build and solve
    warm_solver()
    # the search gets at most half of what is left: the LP needs the rest
    start = run_search(instance, objective, Deadline(SEARCH_SHARE * deadline.remaining()), k_prime, eps, t_min, None,
                       workers)
    if start.solution is None:
        return start
    info = {**start.info, "period_before": start.solution.period}
    size = compaction_size(instance, start.solution)
    needed = size * SECONDS_PER_LP_VARIABLE
    notes = {}
    model, out = None, None
    if needed < deadline.remaining():
        model, out, note = solve_pyomo_within(lambda: build_compaction_model(instance, start.solution), prof,
                                              deadline, HANDOVER_LP)
        if note:
            notes["skipped"] = f"the compaction LP: {note}"
    if out is None:
        info["error"] = notes.get("skipped") or (
            f"the compaction LP ({size} variables, about {needed:.3g} s to build and hand over) was not run: "
            f"{deadline.remaining():.3g} s of the {prof.time_limit:g} s limit left")
        return MethodOutput(start.solution, Status.TIME_LIMIT, info=info)
    pattern = compaction_pattern(instance, model) if out.has_solution else None
    info.update(lp_status=out.status.value, lp_time_s=out.wall_time_s, lp_variables=size)
    timed_out = start.status == Status.TIME_LIMIT or out.status == Status.TIME_LIMIT
    if pattern is None:
        info["error"] = f"the compaction LP gave no solution ({out.message})"
        return MethodOutput(start.solution, Status.TIME_LIMIT if timed_out else Status.FEASIBLE, info=info)
    # optimal for the fixed order of events only: a heuristic value overall
    return MethodOutput(pattern, Status.TIME_LIMIT if timed_out else Status.FEASIBLE, info=info)


@register("periodic", "persched-compact", objective="sys_efficiency", prepare=compile_kernel)
def persched_compact(instance: PeriodicInstance, profile: str = "default", k_prime: KPrime = 10,
                     eps: Eps = 0.01, t_min: Seconds = None, workers: Workers = 1) -> MethodOutput:
    """PerSched's pattern shortened by the compaction LP (event order kept, exact for that order)."""
    return _compacted(instance, "sys_efficiency", profile, k_prime, eps, t_min, workers)


@register("periodic", "persched-mindil-compact", objective="dilation", prepare=compile_kernel)
def persched_mindil_compact(instance: PeriodicInstance, profile: str = "default", k_prime: KPrime = 10,
                            eps: Eps = 0.01, t_min: Seconds = None, workers: Workers = 1) -> MethodOutput:
    """PerSched-MinDil's pattern shortened by the compaction LP (event order kept)."""
    return _compacted(instance, "dilation", profile, k_prime, eps, t_min, workers)


# --- the time-indexed MILP for a given period ---------------------------------------------------


def default_slots(instance: PeriodicInstance, period: float) -> int:
    """ceil(20 T / min_k w_k) slots (a compute loses at most 5 % to rounding), at most about
    2000 binaries in all and at least 12. With fewer than T / min_k w_k slots there is no
    relaxation (it needs δ <= min_k w_k) and the restriction is coarse."""
    ratio = period / min(a.work for a in instance.applications)
    return max(min(math.ceil(min(20 * ratio, 1e9)), 2000 // len(instance.applications)), 12)


def build_milp(instance: PeriodicInstance, period: float, slots: int | None = None,
               kind: str = "restriction", objective: str = "sys_efficiency") -> pe.ConcreteModel:
    """A time-indexed MILP over S equal slots of the period T (s): which slots start a compute,
    how much each application moves in each slot.

    x[k,s] = 1 when an instance of k starts computing at slot s; the compute blocks c_k
    slots; v[k,s] is k's volume in slot s (at most β_k b δ, none while blocked), all
    together at most B δ; u[k,s] is the volume moved for k's current instance when slot s
    begins: u[k,s+1] = u[k,s] + v[k,s] - vol_k x[k,s+1] and u[k,s] <= vol_k (1 - x[k,s]),
    so exactly vol_k moves between two compute starts. n_k = Σ_s x[k,s] >= 1. Two cuts
    valid for every pattern of period T: n_k (w_k + time_io_k) <= T and Σ_k n_k vol_k <= B T,
    so the relaxation's optimum never exceeds the long-run LP bound.

    ``kind`` "restriction": c_k = ceil(w_k / δ); every solution is a real pattern (the
    compute starts on a slot boundary, rates are constant per slot).
    ``kind`` "relaxation": c_k = floor(w_k / δ) - 1 (a compute starting anywhere covers at
    least that many whole slots) and requires δ <= min_k w_k; its optimum bounds every
    pattern of period T, because any pattern maps to a solution: starts rounded up to the
    next slot boundary, volumes summed per slot.
    Objective: SysEfficiency Σ β_k w_k n_k / (N T), or "dilation": maximise z <= n_k
    (w_k + time_io_k) / T, the inverse of the Dilation. Slot 0 starts an instance of the
    first application (rotating a pattern by whole slots keeps it feasible).
    """
    choice("kind", kind, ("restriction", "relaxation"), error=ParameterError)
    choice("objective", objective, ("sys_efficiency", "dilation"), error=ParameterError)
    period = positive("period", period, error=ParameterError)
    S = default_slots(instance, period) if slots is None else integer("slots", slots, 2, error=ParameterError)
    check_milp_size(instance, S, period)
    apps = instance.applications
    delta = period / S
    if kind == "relaxation" and delta > min(a.work for a in apps) * (1 + 1e-12):
        raise ParameterError(f"the relaxation needs slots >= T / min_k w_k = {period / min(a.work for a in apps):.4g}"
                             f", got {S}")
    if kind == "restriction":
        blocks = [math.ceil(a.work / delta - 1e-9) for a in apps]
    else:
        blocks = [max(math.floor(a.work / delta + 1e-9) - 1, 0) for a in apps]
    B, N = instance.platform.bandwidth, instance.platform.processors
    m = pe.ConcreteModel(name=f"periodic-{kind}-T{period:g}-S{S}")
    m.K = pe.RangeSet(0, len(apps) - 1)
    m.S = pe.RangeSet(0, S - 1)
    m.x = pe.Var(m.K, m.S, domain=pe.Binary, doc="an instance of k starts computing at slot s")
    m.v = pe.Var(m.K, m.S, domain=pe.NonNegativeReals, doc="volume k moves in slot s")
    m.u = pe.Var(m.K, m.S, domain=pe.NonNegativeReals, doc="volume moved for k's current instance")

    def blocked(m, k, s):
        return sum(m.x[k, (s - j) % S] for j in range(blocks[k]))

    m.one_compute = pe.Constraint(m.K, m.S, rule=lambda m, k, s: blocked(m, k, s) <= 1 if blocks[k] > 1
                                  else pe.Constraint.Skip)
    m.rate = pe.Constraint(m.K, m.S, rule=lambda m, k, s: (
        m.v[k, s] <= instance.max_rate(k) * delta * (1 - blocked(m, k, s))))
    m.capacity = pe.Constraint(m.S, rule=lambda m, s: sum(m.v[k, s] for k in m.K) <= B * delta)
    m.flow = pe.Constraint(m.K, m.S, rule=lambda m, k, s: (
        m.u[k, (s + 1) % S] == m.u[k, s] + m.v[k, s] - apps[k].io_volume * m.x[k, (s + 1) % S]))
    m.reset = pe.Constraint(m.K, m.S, rule=lambda m, k, s: m.u[k, s] <= apps[k].io_volume * (1 - m.x[k, s]))
    m.n = pe.Expression(m.K, rule=lambda m, k: sum(m.x[k, s] for s in m.S))
    m.at_least_one = pe.Constraint(m.K, rule=lambda m, k: m.n[k] >= 1)
    # valid for every pattern of period T; they tie the relaxation to the long-run LP bound
    m.alone = pe.Constraint(m.K, rule=lambda m, k: m.n[k] * (apps[k].work + instance.time_io(k)) <= period)
    m.total_volume = pe.Constraint(expr=sum(m.n[k] * apps[k].io_volume for k in m.K) <= B * period)
    m.x[0, 0].fix(1)
    if objective == "sys_efficiency":
        m.obj = pe.Objective(expr=sum(apps[k].processors * apps[k].work * m.n[k] for k in m.K) / (N * period),
                             sense=pe.maximize)
    else:
        m.z = pe.Var(domain=pe.NonNegativeReals, doc="1 / Dilation")
        m.worst = pe.Constraint(m.K, rule=lambda m, k: (
            m.z <= m.n[k] * (apps[k].work + instance.time_io(k)) / period))
        m.obj = pe.Objective(expr=m.z, sense=pe.maximize)
    m._period, m._slots, m._kind, m._blocks = period, S, kind, blocks
    return m


def milp_pattern(instance: PeriodicInstance, model: pe.ConcreteModel) -> Pattern:
    """The pattern of a solved restriction: computes on slot boundaries, a rate per slot.

    Volumes below 1e-9 of vol_k are solver tolerance, not transfers, and are dropped, as
    is anything in a slot the compute blocks.
    """
    T, S = model._period, model._slots
    delta = T / S
    B = instance.platform.bandwidth
    apps_ = instance.applications
    rate = {(k, s): (min(pe.value(model.v[k, s]) / delta, instance.max_rate(k))
                     if pe.value(model.v[k, s]) > 1e-9 * apps_[k].io_volume else 0.0)
            for k in model.K for s in model.S}
    load = [sum(rate[k, s] for k in model.K) for s in model.S]
    apps = []
    for k in model.K:
        starts = [s for s in model.S if pe.value(model.x[k, s]) > 0.5]
        insts = []
        for i, s0 in enumerate(starts):
            s1 = starts[(i + 1) % len(starts)] + (S if i + 1 == len(starts) else 0)
            segs = tuple(((s % S) * delta, (s % S + 1) * delta, rate[k, s % S] * min(1.0, B / load[s % S]))
                         for s in range(s0 + model._blocks[k], s1) if rate[k, s % S] > 0)
            insts.append(PatternInstance(s0 * delta, segs))
        apps.append(tuple(insts))
    return Pattern(T, tuple(apps))


# Pyomo hands a model to HiGHS (outside HiGHS's time limit) in a multiple of the time it took
# to build it: measured 3.4-6.0x for the time-indexed MILP, 1.3-1.6x for the compaction LP
HANDOVER_MILP = 6.0
HANDOVER_LP = 2.5


def warm_solver() -> None:
    """Import the solver layer (its first import takes seconds): methods call it inside their budget,
    before they measure what is left."""
    pyomo_highs().available()  # imports highspy


def check_milp_size(instance: PeriodicInstance, slots: int, period: float | None = None,
                    where: str = "period") -> None:
    """Refuse a time-indexed model above MAX_MILP_CELLS applications x slots, or with more than
    MAX_MILP_TERMS terms in its compute constraints (Σ_k slots x the slots a compute covers), or
    of a ``period`` shorter than some application's work (no pattern of it holds that application)."""
    apps = instance.applications
    cells = len(apps) * slots
    if cells > MAX_MILP_CELLS:
        raise ParameterError(f"slots = {slots}: {len(apps)} applications x {slots} slots = {cells} "
                             f"cells, above the MILP's limit of {MAX_MILP_CELLS}; slots <= "
                             f"{MAX_MILP_CELLS // len(apps)} fits")
    if period is None:
        return
    longest = max(range(len(apps)), key=lambda k: apps[k].work)
    if apps[longest].work > period:
        raise ParameterError(f"{where} = {period!r} s is shorter than applications[{apps[longest].name}].work = "
                             f"{apps[longest].work!r} s: no pattern of that period holds an instance of it")
    terms = sum(slots * math.ceil(a.work / (period / slots)) for a in apps)
    if terms > MAX_MILP_TERMS:
        raise ParameterError(f"slots = {slots} at {where} = {period:.6g} s: computes cover {terms} slot terms in "
                             f"all, above the MILP's limit of {MAX_MILP_TERMS}; fewer slots fit")


def _solve_kind(instance, period, S, kind, objective, profile, deadline, notes, cost):
    """Build and solve one time-indexed model within ``deadline`` (see :func:`iosched.solvers.solve_pyomo_within`).

    ``cost`` holds the seconds per cell that building and handing over took last time (or the
    constant), so that a model that cannot make it is not even built."""
    cells = len(instance.applications) * S
    if deadline is not None and cells * cost["per_cell"] >= deadline.remaining():
        notes.setdefault("skipped", f"{kind}: {deadline.remaining():.3g} s left, about "
                                    f"{cells * cost['per_cell']:.3g} s to build and hand to HiGHS")
        return None, None
    model, out, note = solve_pyomo_within(lambda: build_milp(instance, period, S, kind, objective), profile,
                                          deadline, HANDOVER_MILP, load=kind == "restriction")
    if note:
        notes.setdefault("skipped", f"{kind}: {note}")
    cost["per_cell"] = (1 + HANDOVER_MILP) * model._build_s / cells
    return model, out


def solve_period(instance: PeriodicInstance, period: float, slots: int | None = None,
                 objective: str = "sys_efficiency", profile: Profile | None = None,
                 deadline: Deadline | None = None, kinds=("restriction", "relaxation"),
                 cost: dict | None = None) -> dict:
    """Solve the restriction and (when δ <= min w) the relaxation at one period.

    Returns the restriction's pattern (or None) and both solver outcomes; the relaxation's
    bound holds for every pattern of this period. With a ``deadline`` each solve gets what
    is left of it once the model is built and handed to HiGHS; a model that would not be
    built and handed over in that time is not solved (its outcome is None and ``skipped``
    says why). ``kinds`` limits which of the two are solved.
    """
    profile = profile or load_profile("default")
    S = default_slots(instance, period) if slots is None else slots
    cost = {"per_cell": SECONDS_PER_MILP_CELL} if cost is None else cost
    result = {"period": period, "slots": S, "pattern": None, "restriction": None, "relaxation": None}
    if "restriction" in kinds:
        model, out = _solve_kind(instance, period, S, "restriction", objective, profile, deadline, result, cost)
        result["restriction"] = out
        result["pattern"] = milp_pattern(instance, model) if out is not None and out.has_solution else None
    if "relaxation" in kinds and period / S <= min(a.work for a in instance.applications):
        result["relaxation"] = _solve_kind(instance, period, S, "relaxation", objective, profile, deadline, result,
                                           cost)[1]
    return result


def _objective_bound(outcome, objective):
    """A solver bound on SysEfficiency, or the Dilation bound it implies (1 / z)."""
    if outcome is None or outcome.bound is None:
        return None
    if objective == "sys_efficiency":
        return outcome.bound
    return math.inf if outcome.bound <= 0 else 1.0 / outcome.bound


def _periods(periods) -> list[float] | None:
    """None, or the list of periods (s) that ``periods`` (one or a list) gives, checked as declared."""
    if periods is None:
        return None
    checked = PERIODS_CHECK("periods", periods, ParameterError)
    return checked if isinstance(checked, list) else [checked]


def _milp(instance, objective, periods, slots, profile, k_prime, eps):
    from iosched.heuristics.periodic import method_deadline, plan_search, search

    entry = time.perf_counter()
    prof = _profile(profile)
    periods = _periods(periods)
    if periods is None:
        plan = plan_search(instance, k_prime, eps)
    else:  # not searched, but checked all the same
        number("k_prime", k_prime, 1, error=ParameterError)
        number("eps", eps, 0, 1, lo_open=True, hi_open=True, error=ParameterError)
    if slots is not None:
        slots = integer("slots", slots, 2, error=ParameterError)
        check_milp_size(instance, slots)
    if periods is not None:
        for i, T in enumerate(periods):
            check_milp_size(instance, slots or default_slots(instance, T), T, f"periods[{i}]")
    deadline = method_deadline(prof.time_limit, entry)  # the whole method: the PerSched search and every solve
    warm_solver()
    info = {}
    if periods is None:  # the best PerSched periods of the search
        found = search(instance, k_prime=plan.k_prime, eps=plan.eps, objective=objective,
                       deadline=Deadline(SEARCH_SHARE * deadline.remaining()))  # the MILPs need the rest
        if found["stopped"]:
            info["search"] = f"PerSched's search stopped by the time limit after {len(found['trace'])} periods"
        score = {T: sys_efficiency(instance, c, T) if objective == "sys_efficiency" else -dilation(instance, c, T)
                 for T, c in found["trace"] if min(c) > 0}
        periods = []
        for T in sorted(score, key=score.get, reverse=True):  # three, at least eps apart
            if all(abs(T - p) > plan.eps * p for p in periods):
                periods.append(T)
            if len(periods) == 3:
                break
        if not periods:
            status = Status.TIME_LIMIT if found["stopped"] else Status.INFEASIBLE
            return MethodOutput(None, status, info={**info, "error": "no candidate period"})
        for T in periods:
            check_milp_size(instance, slots or default_slots(instance, T), T)
    # restrictions first (they give patterns), in PerSched's order of preference; then the
    # relaxations (bounds for their own period only) with whatever time is left
    cost = {"per_cell": SECONDS_PER_MILP_CELL}
    solved = [solve_period(instance, T, slots, objective, prof, deadline, ("restriction",), cost) for T in periods]
    for r in solved:
        r["relaxation"] = solve_period(instance, r["period"], r["slots"], objective, prof, deadline,
                                       ("relaxation",), cost)["relaxation"] if "skipped" not in r else None
    runs, best, best_value, timed_out = [], None, None, bool(info)
    for r in solved:
        run = {"period": r["period"], "slots": r["slots"], "restriction": None, "relaxation": None}
        runs.append(run)
        if r["relaxation"] is not None:
            run["relaxation"] = {"status": r["relaxation"].status.value,
                                 "bound": _objective_bound(r["relaxation"], objective),
                                 "time_s": r["relaxation"].wall_time_s}
        if "skipped" in r:
            run["skipped"] = r["skipped"]
            timed_out = True
        if r["restriction"] is None:
            continue
        value = r["restriction"].objective
        if objective == "dilation" and value:
            value = 1 / value
        run["restriction"] = {"status": r["restriction"].status.value, "objective": value,
                              "bound": _objective_bound(r["restriction"], objective),
                              "time_s": r["restriction"].wall_time_s}
        timed_out = timed_out or r["restriction"].status == Status.TIME_LIMIT
        better = r["pattern"] is not None and (
            best_value is None or (value > best_value if objective == "sys_efficiency" else value < best_value))
        if better:
            best, best_value = r, value
    # the relaxations bound patterns of their own period only: they stay in info, and the
    # Result's bound is the one valid for every schedule (the long-run LP)
    info["periods"] = runs
    if best is None:
        return MethodOutput(None, Status.TIME_LIMIT if timed_out else Status.INFEASIBLE, info=info)
    return MethodOutput(best["pattern"], Status.TIME_LIMIT if timed_out else Status.FEASIBLE, info=info)


@register("periodic", "milp", objective="sys_efficiency", prepare=compile_kernel)
def milp(instance: PeriodicInstance, periods: Periods = None, slots: Slots = None,
         profile: str = "default", k_prime: KPrime = 10, eps: Eps = 0.01) -> MethodOutput:
    """Time-indexed MILP (restriction) at the best PerSched periods or the given ones."""
    return _milp(instance, "sys_efficiency", periods, slots, profile, k_prime, eps)


@register("periodic", "milp-dilation", objective="dilation", prepare=compile_kernel)
def milp_dilation(instance: PeriodicInstance, periods: Periods = None, slots: Slots = None,
                  profile: str = "default", k_prime: KPrime = 10, eps: Eps = 0.01) -> MethodOutput:
    """The time-indexed MILP minimising Dilation."""
    return _milp(instance, "dilation", periods, slots, profile, k_prime, eps)


from iosched.models import periodic_trace  # noqa: E402, F401  (registers trace-compact; it imports this module)

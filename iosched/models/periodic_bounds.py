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

from iosched import lazy
from iosched.errors import ParameterError
from iosched.instances.periodic import PeriodicInstance
from iosched.solvers import Profile, load_profile
from iosched.validate import choice, number

pe = lazy.module("pyomo.environ")


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


def gap_reference(instance: PeriodicInstance | None, objective: str) -> str:
    """What :func:`best_bound` is, in words: the bound a Result's gap is measured against."""
    if objective == "sys_efficiency":
        return "the long-run LP bound (min with the paper's eq. 5), valid for every schedule"
    return "the long-run LP bound on Dilation, valid for every schedule"

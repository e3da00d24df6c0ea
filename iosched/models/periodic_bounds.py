"""Bounds for the periodic problem, each with its scope.

* The paper's bound (eq. 5): SysEfficiency <= Σ_k β_k ρ_k / N, which ignores
  that the applications share B (every schedule).
* The long-run LP: application k completes at most x_k instances per second,
  x_k (w_k + time_io_k) <= 1, and all together move Σ_k x_k vol_k <= B data
  per second. Maximising Σ_k β_k x_k w_k / N bounds SysEfficiency from above;
  maximising z with z <= x_k (w_k + time_io_k) bounds Dilation below by 1 / z
  (every schedule).
* The contiguity bound: the LP with cuts for transfers that cannot overlap as the LP
  needs (every periodic pattern, of any period).
* The period-capped integer bound (:mod:`iosched.models.periodic_counts`): the problem's bound,
  valid for every pattern within the instance's period cap K' t_min, and the tightest: the
  integer counts, the cap, the cycle, volume and contiguity rows and the blocking rows at once.
  The others stay as information (``bounds``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from iosched import lazy
from iosched.errors import ParameterError
from iosched.instances.periodic import PeriodicInstance
from iosched.models.periodic_counts import MAX_CUT_APPS, capped_bound, contiguity_cuts  # noqa: F401
from iosched.solvers import Deadline, Profile, load_profile
from iosched.status import RunContext
from iosched.validate import choice

if TYPE_CHECKING:
    from pyomo.environ import ConcreteModel

pe = lazy.module("pyomo.environ")


def as_profile(profile: Profile | str) -> Profile:
    """A profile by name (solvers.toml) or a Profile, as the periodic methods' ``profile`` parameter takes it
    (a ParameterError naming it otherwise): one reading for the MILP, the compaction LP, trace-compact and exact."""
    if isinstance(profile, Profile):
        return profile
    if not isinstance(profile, str) or not profile:
        raise ParameterError(f"profile must be the name of a solvers.toml profile, got {profile!r}")
    return load_profile(profile)


def paper_bound(instance: PeriodicInstance) -> float:
    """Σ_k β_k ρ_k / N (eq. 5 of the paper)."""
    N = instance.platform.processors
    return sum(a.processors * instance.rho(k) for k, a in enumerate(instance.applications)) / N


def build_longrun_model(instance: PeriodicInstance, objective: str = "sys_efficiency") -> ConcreteModel:
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
                  profile: Profile | None = None) -> float:
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


CAPPED_SECONDS = 10.0  # the capped bound's search, where no deadline is given (outside a method's budget)


def capped(instance: PeriodicInstance, deadline: Deadline | None = None) -> dict:
    """:func:`iosched.models.periodic_counts.capped_bound` of ``instance`` by ``deadline``: by default the end of
    the running method's budget when :func:`iosched.solve` attaches it (:meth:`Deadline.for_bound`), else
    CAPPED_SECONDS.
    Complete results are remembered per instance (a bound cut short by a deadline is still valid, only
    weaker: the largest bound left in the search, and is not remembered)."""
    known = _CAPPED.get(instance)
    if known is not None:
        return dict(known)
    if deadline is None:
        deadline = Deadline(CAPPED_SECONDS)
    out = capped_bound(instance, deadline)
    if out["complete"]:
        if len(_CAPPED) >= 64:
            del _CAPPED[next(iter(_CAPPED))]
        _CAPPED[instance] = dict(out)
    return out


_CAPPED: dict[PeriodicInstance, dict] = {}


def bounds(instance: PeriodicInstance, profile: Profile | None = None) -> dict:
    """All bounds: the paper's SysEfficiency bound and the LP's two bounds (every schedule), the contiguity
    bound (every periodic pattern, any period), and the period-capped integer bound (every pattern within
    the instance's cap K' t_min, the problem's: :func:`best_bound`) with the counts and period where its
    relaxation peaks."""
    cap = capped(instance)
    return {
        "paper_sys_efficiency": paper_bound(instance),
        "lp_sys_efficiency": longrun_bound(instance, "sys_efficiency", profile),
        "contiguity_sys_efficiency": contiguity_bound(instance)["value"],
        "lp_dilation": longrun_bound(instance, "dilation", profile),
        "capped_sys_efficiency": cap["value"],
        "capped_counts": cap["counts"],  # per type of identical applications, in order of first appearance
        "capped_period_s": cap["period"],
        "period_cap_s": instance.period_cap(),
    }


def best_bound(instance: PeriodicInstance, objective: str, context: RunContext | None = None) -> float:
    """The tightest bound on ``objective`` valid for every pattern within the instance's period cap: for
    SysEfficiency the period-capped integer bound (it includes the cycle, volume and contiguity rows, so it
    is never above the LP, contiguity or paper bound: the min is taken all the same, against rounding),
    for Dilation the long-run LP bound (valid for every schedule). The capped bound's search ends with the
    run's budget (``context``: :func:`iosched.solve`'s), else after CAPPED_SECONDS."""
    lp = longrun_bound(instance, objective)
    if objective == "sys_efficiency":
        capped_value = capped(instance, Deadline.for_bound(context))["value"]
        return min(paper_bound(instance), lp, contiguity_bound(instance)["value"], capped_value)
    return lp


def gap_reference(instance: PeriodicInstance | None, objective: str) -> str:
    """What :func:`best_bound` is, in words: the bound a Result's gap is measured against."""
    if objective == "sys_efficiency":
        cap = "K' t_min" if instance is None else f"{instance.period_cap():.6g} s (K' t_min)"
        return (f"the period-capped integer bound (cycles, volume, contiguity cuts, blocking), valid for every "
                f"pattern of period at most {cap}")
    return "the long-run LP bound on Dilation, valid for every schedule"


def timeline_bound(instance: PeriodicInstance, objective: str, solution: object) -> tuple[float, str] | None:
    """For a timeline (an online baseline's :class:`~iosched.evaluate.periodic.Trace`, not a periodic pattern,
    so outside the problem's patterns within the cap, which it can beat), the long-run LP bound and what it
    is; None for a pattern (the problem's bound applies)."""
    from iosched.evaluate.periodic import Trace

    if not isinstance(solution, Trace):
        return None
    return longrun_bound(instance, objective), (
        f"the long-run LP bound on {objective.replace('_', ' ')}, valid for every schedule (a timeline is no "
        f"pattern within the period cap: the problem's capped bound does not hold for it)")

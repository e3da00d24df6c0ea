"""Bounds for the periodic problem, valid for every schedule, periodic or not.

* The paper's bound (eq. 5): SysEfficiency <= Σ_k β_k ρ_k / N, which ignores
  that the applications share B.
* The long-run LP: application k completes at most x_k instances per second,
  x_k (w_k + time_io_k) <= 1, and all together move Σ_k x_k vol_k <= B data
  per second. Maximising Σ_k β_k x_k w_k / N bounds SysEfficiency from above;
  maximising z with z <= x_k (w_k + time_io_k) bounds Dilation below by 1 / z.
"""

from __future__ import annotations

import pyomo.environ as pe

from iosched.instances.periodic import PeriodicInstance
from iosched.solvers import Profile, load_profile, solve_pyomo


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

    None if HiGHS does not prove the LP optimal.
    """
    out = solve_pyomo(build_longrun_model(instance, objective), profile or load_profile("quick"), load=False)
    if out.status.value != "optimal" or out.objective is None:
        return None
    return out.objective if objective == "sys_efficiency" else 1.0 / out.objective


def bounds(instance: PeriodicInstance, profile: Profile | None = None) -> dict:
    """All bounds: the paper's SysEfficiency bound and the LP's two bounds."""
    return {
        "paper_sys_efficiency": paper_bound(instance),
        "lp_sys_efficiency": longrun_bound(instance, "sys_efficiency", profile),
        "lp_dilation": longrun_bound(instance, "dilation", profile),
    }


def best_bound(instance: PeriodicInstance, objective: str) -> float | None:
    """The tightest bound on ``objective``: min of paper and LP for SysEfficiency, LP for Dilation."""
    lp = longrun_bound(instance, objective)
    if objective == "sys_efficiency":
        return min(paper_bound(instance), lp) if lp is not None else paper_bound(instance)
    return lp

"""The periodic problem's heuristics, one module per method family:

* :mod:`iosched.heuristics.periodic_persched`: PerSched (Algorithm 2's period search, the
  pattern read back, the parameter checks and limits) and its Dilation variant;
* :mod:`iosched.heuristics.periodic_kernel`: the compiled insertion kernel it runs per period;
* :mod:`iosched.heuristics.periodic_online`: the online baselines (no pattern, the bandwidth
  shared at run time).

Importing this module registers every method; the public names are here as before.
"""

from iosched.heuristics.periodic_kernel import compile_kernel, kernel, method_deadline
from iosched.heuristics.periodic_online import ONLINE_POLICIES, simulate_online
from iosched.heuristics.periodic_persched import (
    MAX_APPS,
    Eps,
    KPrime,
    Plan,
    Seconds,
    Workers,
    build_pattern,
    count_caps,
    default_precision,
    period_bounds,
    period_grid,
    persched,
    persched_mindil,
    plan_search,
    run_search,
    search,
)

__all__ = [
    "MAX_APPS", "ONLINE_POLICIES", "Eps", "KPrime", "Plan", "Seconds", "Workers", "build_pattern", "compile_kernel",
    "count_caps", "default_precision", "kernel", "method_deadline", "period_bounds", "period_grid", "persched",
    "persched_mindil", "plan_search", "run_search", "search", "simulate_online",
]

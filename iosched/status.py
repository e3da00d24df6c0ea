"""The words every result is told in, shared by :mod:`iosched.core` and :mod:`iosched.solvers`:
a status, the relative gap, and the clock of the running method. Neither module needs the other
to say them."""

from __future__ import annotations

import contextvars
import math
from enum import StrEnum


class Status(StrEnum):
    OPTIMAL = "optimal"  # proven: by the solver, or a value that meets a proven bound
    FEASIBLE = "feasible"  # a solution, no optimality claim (heuristics)
    TIME_LIMIT = "time_limit"  # stopped by the limit: incumbent (if any) and bound
    INFEASIBLE = "infeasible"  # proven to have no solution / no pattern found
    ERROR = "error"


# perf_counter() when solve started the running method's clock (None outside solve): the origin of
# solvers.Deadline.for_method, so a method's budget covers what ran before its first line
METHOD_START: contextvars.ContextVar[float | None] = contextvars.ContextVar("iosched_method_start", default=None)

# perf_counter() by which the problem's bound that solve attaches must be done (None outside that step): the
# end of the method's budget, so the method, its evaluation and the bound together keep the method's limit
BOUND_END: contextvars.ContextVar[float | None] = contextvars.ContextVar("iosched_bound_end", default=None)

# the LP backend (a name of iosched.solvers.BACKENDS) of the running method's profile, "highs" for a method
# without one: the problem's bounds that solve the LPs (malleable's) run on it, in the method and in the
# bound that solve attaches after it
BOUND_SOLVER: contextvars.ContextVar[str] = contextvars.ContextVar("iosched_bound_solver", default="highs")


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """|bound - objective| / |objective| (the MIP-solver convention); None without both."""
    if objective is None or bound is None or not math.isfinite(objective) or not math.isfinite(bound):
        return None
    if objective == 0:
        return 0.0 if bound == 0 else math.inf
    return abs(bound - objective) / abs(objective)

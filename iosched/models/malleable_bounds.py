"""The problem's lower bounds on malleable-job schedules, valid for every schedule: the largest of the
closed-form ones (:mod:`iosched.models.malleable_closed`), the interval LP's, on up to six jobs the
completion-order LP's and, for the mean completion, the Lagrangian one
(:mod:`iosched.models.malleable_lp`), remembered per instance.
"""

from __future__ import annotations

import math

from iosched.instances.malleable import MalleableInstance
from iosched.models.malleable_closed import closed_form_bounds
from iosched.models.malleable_lp import interval_lp_bound, lagrangian_bound, order_lp_bound
from iosched.solvers import Deadline

MODEL_OBJECTIVES = ("mean_completion", "makespan")
_BOUNDS: dict = {}  # (instance, objectives, solver) -> (bounds, the seconds they had: inf without a deadline);
#                     the last 16
BOUND_SHARE = 0.25  # of its budget: the problem's bound that cpsat, rigid-optimal and milp compute first (to
#                     bound their own models; solve then attaches it, remembered, as the Result's)


def bounds(instance: MalleableInstance, objectives: tuple[str, ...] = MODEL_OBJECTIVES,
           deadline: Deadline | None = None, solver: str | None = None) -> dict:
    """Every lower bound (s) valid for every schedule: the closed-form ones, the interval LP's,
    (up to ORDER_MAX_JOBS jobs) the completion-order LP's for ``objectives`` and, for the mean
    completion, the Lagrangian one (:mod:`iosched.models.malleable_lp`, its LPs on backend ``solver``,
    by default HiGHS: :func:`iosched.solve` names the method's; None where the LP did not finish, would be too
    large, was refused for the backend's licence or ``deadline`` came first), and under
    ``mean_completion`` / ``makespan`` the largest, its name under ``..._from``. Remembered per
    backend: bounds already computed for the instance with at least as much time are returned as they are."""
    solver = "highs" if solver is None else solver
    key = (instance, tuple(objectives), solver)
    budget = math.inf if deadline is None else deadline.remaining()
    known = _BOUNDS.get(key)
    if known is not None and known[1] >= budget:
        return dict(known[0])
    out = closed_form_bounds(instance)
    for objective in objectives:
        out[f"{objective}_from"] = "closed form (per job, area)"
        lp = out[f"{objective}_lp"] = interval_lp_bound(instance, objective, deadline=deadline, solver=solver)
        order = out[f"{objective}_order_lp"] = order_lp_bound(instance, objective, deadline, solver)
        priced = None
        if objective == "mean_completion":  # none for the makespan
            priced = out["mean_completion_lagrangian"] = lagrangian_bound(instance, deadline=deadline, solver=solver)
        for value, name in ((lp, "interval LP"), (order, "completion-order LP"), (priced, "Lagrangian")):
            if value is not None and value > out[objective]:
                out[objective], out[f"{objective}_from"] = value, name
    if len(_BOUNDS) >= 16:
        del _BOUNDS[next(iter(_BOUNDS))]
    _BOUNDS[key] = (dict(out), budget)
    return out


def bound(instance: MalleableInstance, objective: str, deadline: Deadline | None = None,
          solver: str | None = None) -> float | None:
    """The largest lower bound on ``objective`` valid for every schedule (None where there is none),
    computed by ``deadline`` (default: without one; :func:`iosched.solve` gives the end of the running
    method's budget), its LPs on ``solver`` (see :func:`bounds`)."""
    if objective not in MODEL_OBJECTIVES:
        return None
    return bounds(instance, (objective,), deadline, solver)[objective]


def gap_reference(instance: MalleableInstance, objective: str, solver: str = "highs") -> str:
    """What the problem's bound on ``objective`` is, in words (the one :func:`bound` last computed)."""
    if objective not in MODEL_OBJECTIVES:
        return ""
    known = _BOUNDS.get((instance, (objective,), solver))
    which = (known[0] if known is not None else bounds(instance, (objective,), solver=solver))[f"{objective}_from"]
    by = f" (solved by {solver})" if solver != "highs" and ("LP" in which or which == "Lagrangian") else ""
    return f"the {which} bound{by} on the {objective.replace('_', ' ')}, valid for every schedule"

"""The problem's lower bounds on malleable-job schedules, valid for every schedule: the largest of the
closed-form ones (:mod:`iosched.models.malleable_closed`), the interval LP's, on up to six jobs the
completion-order LP's, for the mean completion the Lagrangian one (:mod:`iosched.models.malleable_lp`) and, on up
to FLUID_MAX_JOBS jobs, the free (fluid) problem's (:mod:`iosched.models.malleable_fluid`), remembered per
instance.
"""

from __future__ import annotations

import math

from iosched.instances.malleable import MalleableInstance
from iosched.models.malleable_closed import closed_form_bounds
from iosched.models.malleable_fluid import search
from iosched.models.malleable_lp import interval_lp_bound, lagrangian_bound, order_lp_bound
from iosched.solvers import Deadline

MODEL_OBJECTIVES = ("mean_completion", "makespan")
_BOUNDS: dict = {}  # (instance, objectives, solver) -> (bounds, the seconds they had: inf without a deadline);
#                     the last 16
BOUND_SHARE = 0.25  # of its budget: the problem's bound that cpsat, rigid-optimal and milp compute first (to
#                     bound their own models; solve then attaches it, remembered, as the Result's)
FLUID_MAX_JOBS = 12  # the free problem's search on up to this many jobs: it closes paper10-0..2 in 1-2 s and the
#                      paper generator's 12 jobs in 4-10 s, not grid's 10 jobs in 30 s; where it does not close its
#                      bound so far is mostly below the Lagrangian's (benchmarks/malleable_fluid.md)
FLUID_TIME_LIMIT = 10.0  # s of that search at most (less where the deadline comes first); its bound by then is kept
FLUID_MAX_NODES = 200  # and nodes expanded at most (paper10-0..2 close in 30-49, the paper generator's 12 jobs in
#                        62-148; grid's 8 jobs need 404-554): the same bound on a busy machine, within its time
FLUID_GAIN = 1e-4  # relative: that search stops once a free schedule shows it cannot beat the Lagrangian by more


def bounds(instance: MalleableInstance, objectives: tuple[str, ...] = MODEL_OBJECTIVES,
           deadline: Deadline | None = None, solver: str | None = None) -> dict:
    """Every lower bound (s) valid for every schedule: the closed-form ones, the interval LP's,
    (up to ORDER_MAX_JOBS jobs) the completion-order LP's for ``objectives`` and, for the mean
    completion, the Lagrangian one (:mod:`iosched.models.malleable_lp`, its LPs on backend ``solver``,
    by default HiGHS: :func:`iosched.solve` names the method's; None where the LP did not finish, would be too
    large, was refused for the backend's licence or ``deadline`` came first), then (up to FLUID_MAX_JOBS
    jobs, for FLUID_TIME_LIMIT s and FLUID_MAX_NODES nodes at most) the free problem's under
    ``mean_completion_fluid`` (:func:`iosched.models.malleable_fluid.search`; ``mean_completion_fluid_status``
    ``optimal`` where the search closed, so that it is the free optimum, ``time_limit`` where it stopped at
    either limit with its bound so far, ``no_gain`` where it stopped on finding a free schedule within
    FLUID_GAIN of the Lagrangian bound), and under ``mean_completion`` / ``makespan`` the largest, its name
    under ``..._from``. Remembered per backend: bounds already computed for the instance with at least as much
    time are returned as they are."""
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
        priced = fluid = None
        if objective == "mean_completion":  # none for the makespan
            priced = out["mean_completion_lagrangian"] = lagrangian_bound(instance, deadline=deadline, solver=solver)
            fluid = _fluid(instance, deadline, solver, out, priced)
        for value, name in ((lp, "interval LP"), (order, "completion-order LP"), (priced, "Lagrangian"),
                            (fluid, "free-problem search")):
            if value is not None and value > out[objective]:
                out[objective], out[f"{objective}_from"] = value, name
    if len(_BOUNDS) >= 16:
        del _BOUNDS[next(iter(_BOUNDS))]
    _BOUNDS[key] = (dict(out), budget)
    return out


def _fluid(instance: MalleableInstance, deadline: Deadline | None, solver: str, out: dict,
           lagrangian: float | None) -> float | None:
    """The free problem's bound (None beyond FLUID_MAX_JOBS jobs or where its root LP did not finish) and its
    search's status, put in ``out``; the bound returned. The search stops early where it finds a free schedule
    within FLUID_GAIN of the ``lagrangian`` bound."""
    out["mean_completion_fluid"] = out["mean_completion_fluid_status"] = None
    if len(instance.jobs) > FLUID_MAX_JOBS:
        return None
    seconds = FLUID_TIME_LIMIT if deadline is None else min(FLUID_TIME_LIMIT, deadline.remaining())
    floor = None if lagrangian is None else lagrangian * (1 + FLUID_GAIN)
    found = search(instance, Deadline(seconds), solver, floor=floor, max_nodes=FLUID_MAX_NODES)
    if found.bound is not None:
        out["mean_completion_fluid"] = found.bound
        stopped = floor is not None and found.best is not None and found.best <= floor
        out["mean_completion_fluid_status"] = "optimal" if found.complete else "no_gain" if stopped else "time_limit"
    return found.bound


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
    lps = "LP" in which or which in ("Lagrangian", "free-problem search")
    by = f" (solved by {solver})" if solver != "highs" and lps else ""
    return f"the {which} bound{by} on the {objective.replace('_', ' ')}, valid for every schedule"

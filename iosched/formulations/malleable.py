"""The malleable problem's formulations (the mean completion time, s, minimised; or the makespan):

* ``milp`` (array model, :mod:`iosched.models.malleable_milp`): the time-indexed MILP on the grid of
  :mod:`iosched.models.malleable_grid`, one size per grid step; ``covers`` and ``earliest`` add its valid
  inequalities (:func:`~iosched.models.malleable_milp.add_covers`,
  :func:`~iosched.models.malleable_milp.add_earliest`);
* ``cpsat`` (CP-SAT, :mod:`iosched.models.malleable_cpsat`): at most ``segments`` runs per job on the grid;
* ``interval-lp``, ``order-lp``, ``lagrangian`` (algorithms, :mod:`iosched.models.malleable_lp`): bounds
  valid for every schedule.

The models' objectives are in grid units (the sum of completion slots, or the makespan's slots): the
table gives them as the problem's objective in seconds (:func:`~iosched.models.malleable_grid.scope_value`).
"""

from __future__ import annotations

from iosched.core import EVERY_SOLUTION
from iosched.errors import ParameterError
from iosched.formulations.registry import (
    ALGORITHM,
    ARRAY,
    CPSAT,
    ArrayModel,
    Formulation,
    Ran,
    register_formulation,
)
from iosched.models import malleable_lp as lp
from iosched.models.malleable_cpsat import build_cpsat, cpsat_plans
from iosched.models.malleable_grid import check_model_params, make_grid, plan_schedule, scope_value
from iosched.models.malleable_milp import MAX_MILP_COLUMNS, MAX_SLOTS_MILP, milp_model, milp_plans, milp_variables
from iosched.solvers import Deadline

GRID_SCOPE = "a time grid (arrivals, costs and run times rounded up to it), jobs ending by its horizon"


def _objective(params: dict) -> str:
    return params.get("objective", "mean_completion")


def build_milp(instance, unit: float | None = None, objective: str = "mean_completion", covers: bool = False,
               earliest: bool = False) -> ArrayModel:
    """The time-indexed MILP as an array model: ``columns`` per job (``y``, ``s``, ``f``: slots from its
    arrival x sizes; ``z``; ``g``: resize (p, q) -> (slots, columns)); ``data`` its grid. Refused past
    MAX_MILP_COLUMNS columns, where the ``milp`` method refuses it too."""
    check_model_params(1, unit, objective)
    grid = make_grid(instance, unit, max_slots=MAX_SLOTS_MILP)
    columns = milp_variables(instance, grid)
    if columns > MAX_MILP_COLUMNS:
        raise ParameterError(f"the time-indexed MILP would have {columns:,} columns, beyond {MAX_MILP_COLUMNS:,} "
                             f"(a coarser unit, or cpsat)")
    matrix, cols = milp_model(instance, grid, objective, covers, earliest)
    return ArrayModel("malleable-milp", matrix, {"jobs": cols}, grid)


def _grid(model):
    return model.data if isinstance(model, ArrayModel) else model.named["grid"]


def _value(instance, model, v: float, is_bound: bool) -> float:
    out = scope_value(instance, _grid(model), _objective(getattr(model, "iosched_params", {})), v)
    assert out is not None  # (None only for no value)
    return out


def _read_milp(instance, model, x):
    grid = model.data
    return plan_schedule(instance, grid, milp_plans(x, instance, grid, model.columns["jobs"]))


def _read_cpsat(instance, model, solver):
    grid = model.named["grid"]
    return plan_schedule(instance, grid, cpsat_plans(solver, instance, model.named["jobs"]))


def _bound(fn):
    def run(instance, profile, objective: str = "mean_completion") -> Ran:
        value = fn(instance, objective, Deadline(profile.time_limit), profile.solver)
        return Ran(None, value, value, value is not None,
                   note="" if value is not None else "no bound within the time limit (or past its size limit)")

    return run


def _interval(instance, objective, deadline, solver):
    return lp.interval_lp_bound(instance, objective, deadline=deadline, solver=solver)


def _order(instance, objective, deadline, solver):
    if len(instance.jobs) > lp.ORDER_MAX_JOBS:
        raise ParameterError(f"the completion-order LP takes at most {lp.ORDER_MAX_JOBS} jobs (n! orders), "
                             f"got {len(instance.jobs)}")
    return lp.order_lp_bound(instance, objective, deadline, solver)


def _lagrangian(instance, objective, deadline, solver):
    if objective != "mean_completion":
        raise ParameterError("the Lagrangian bound is for the mean completion time")
    return lp.lagrangian_bound(instance, deadline=deadline, solver=solver)


register_formulation(Formulation(
    "malleable", "milp", ARRAY, GRID_SCOPE + ", one size per grid step", _objective,
    "the time-indexed MILP: run, start, end and resize arcs per job, slot and size",
    build=build_milp, read=_read_milp, value=_value))
register_formulation(Formulation(
    "malleable", "cpsat", CPSAT, lambda p: f"{GRID_SCOPE}, at most {p.get('segments', 3)} runs per job", _objective,
    "CP-SAT: optional intervals per segment and size, one cumulative", build=build_cpsat, read=_read_cpsat,
    value=_value))
register_formulation(Formulation(
    "malleable", "interval-lp", ALGORITHM, EVERY_SOLUTION, _objective, "the interval-indexed LP bound",
    run=_bound(_interval), relaxation=True))
register_formulation(Formulation(
    "malleable", "order-lp", ALGORITHM, EVERY_SOLUTION, _objective, "the completion-order LP bound (n! LPs)",
    run=_bound(_order), relaxation=True))
register_formulation(Formulation(
    "malleable", "lagrangian", ALGORITHM, EVERY_SOLUTION, _objective, "the Lagrangian bound (prices by column "
    "generation)", run=_bound(_lagrangian), relaxation=True))

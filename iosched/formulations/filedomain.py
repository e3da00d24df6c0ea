"""The filedomain problem's formulations (the modelled time, s, minimised; the models themselves are in
:mod:`iosched.models.filedomain`, whose docstring states each one and its scope):

* ``segments`` (array model): clean segments of whole units x bins, the time minimised below ``time_s``
  (default: the best heuristic's evaluated time, so that every solution at least as good is in it: its
  optimum is the problem's, its bound valid for every solution);
* ``milp`` / ``milp-unit`` (Pyomo) and ``cpsat`` / ``cpsat-unit`` (CP-SAT): per (lock unit, aggregator), any
  byte split or whole units; ``symmetry`` orders identical aggregators (``loads``, ``first`` or ``none``:
  :func:`iosched.models.filedomain_milp.build_milp`);
* ``aggregated`` (Pyomo): whole equal stripes counted per (aggregator, server);
* ``relaxation`` (Pyomo): the count relaxation, a bound for every solution;
* ``dp`` (algorithm): contiguous domains in aggregator order, lock costs ignored.

Times inside the Pyomo models are in microseconds, CP-SAT's in nanoseconds; a HiGHS-style bound is read
deflated by BOUND_SLACK and CP-SAT's less 1 ns, as the ``exact`` method reads them.
"""

from __future__ import annotations

from iosched.core import EVERY_SOLUTION
from iosched.evaluate.filedomain import evaluate
from iosched.formulations.registry import (
    ALGORITHM,
    ARRAY,
    CPSAT,
    PYOMO,
    ArrayModel,
    Formulation,
    Ran,
    register_formulation,
)
from iosched.models import filedomain as models
from iosched.models import filedomain_segments as segments
from iosched.models.filedomain_aggregated import build_aggregated, build_relaxation, read_aggregated
from iosched.models.filedomain_cpsat import build_cpsat, read_cpsat
from iosched.models.filedomain_dp import dp_partition
from iosched.models.filedomain_milp import build_milp, read_milp
from iosched.models.filedomain_units import BOUND_SLACK, US
from iosched.solvers import Deadline

OBJECTIVE = "time"


def best_heuristic_time(instance) -> float:
    """The evaluated time (s) of the best heuristic's domains: at least the optimum."""
    return min(evaluate(instance, d).time for _, d in models.heuristic_starts(instance))


def build_segments(instance, time_s: float | None = None) -> ArrayModel:
    """The segment model minimising the time below ``time_s`` s (default :func:`best_heuristic_time`), as an
    array model: ``columns["tau"]`` is the time over ``time_s``, ``columns["pieces"]`` per sequence and
    segment (i, j) its z column and pieces (:class:`iosched.models.filedomain_segments.SegmentModel`)."""
    t = best_heuristic_time(instance) if time_s is None else float(time_s)
    sm = segments.build(instance, t, minimise=True)
    return ArrayModel("filedomain-segments", sm.matrix, {"tau": sm.tau, "pieces": sm.pieces}, sm)


def _segments_scope(params: dict) -> str:
    if params.get("time_s") is None:
        return EVERY_SOLUTION
    return f"solutions of time at most {params['time_s']:g} s (every solution where that is at least the optimum)"


def _per_second(scale: float):
    def value(instance, model, v: float, is_bound: bool) -> float:
        return v / scale * (1 - BOUND_SLACK) if is_bound else v / scale

    return value


def _segments_value(instance, model, v: float, is_bound: bool) -> float:
    t = v * model.data.time_s
    return t * (1 - BOUND_SLACK) if is_bound else t


def _cpsat_value(instance, model, v: float, is_bound: bool) -> float:
    return max(0.0, v * 1e-9 - 1e-9) if is_bound else v * 1e-9


def _milp_scope(params: dict) -> str:
    return models.SCOPES["milp", params.get("granularity", "byte")]


def _cpsat_scope(params: dict) -> str:
    return models.SCOPES["cpsat", params.get("granularity", "byte")]


def _granularity(model, default: str) -> str:
    return getattr(model, "iosched_params", {}).get("granularity", default)


def build_milp_unit(instance, symmetry: str = "loads"):
    """:func:`iosched.models.filedomain_milp.build_milp` with whole lock units."""
    return build_milp(instance, "unit", symmetry)


def build_cpsat_unit(instance):
    """:func:`iosched.models.filedomain_cpsat.build_cpsat` with whole lock units."""
    return build_cpsat(instance, "unit")


def _dp(instance, profile, granularity: str = "byte") -> Ran:
    domains, fluid, finished = dp_partition(instance, granularity, Deadline(profile.time_limit))
    exact = instance.acquire_s == 0 and instance.revoke_s == 0 and granularity == "byte"
    return Ran(domains, fluid, fluid if exact else None, finished,
               note="its value is the fluid time (lock costs ignored); the bound only where lock costs are 0")


SEGMENTS_SCOPE = _segments_scope
register_formulation(Formulation(
    "filedomain", "segments", ARRAY, _segments_scope, OBJECTIVE, "clean segments and bins at a fixed time",
    build=build_segments, read=lambda inst, m, x: segments.read(m.data, x, inst), value=_segments_value))
register_formulation(Formulation(
    "filedomain", "milp", PYOMO, _milp_scope, OBJECTIVE, "per (lock unit, aggregator): bytes, owners, runs",
    build=build_milp, read=lambda inst, m, _: read_milp(inst, m, _granularity(m, "byte")), value=_per_second(US)))
register_formulation(Formulation(
    "filedomain", "milp-unit", PYOMO, models.SCOPES["milp", "unit"], OBJECTIVE, "the MILP with whole lock units",
    build=build_milp_unit, read=lambda inst, m, _: read_milp(inst, m, "unit"), value=_per_second(US)))
register_formulation(Formulation(
    "filedomain", "cpsat", CPSAT, _cpsat_scope, OBJECTIVE, "the MILP's model on CP-SAT, in whole ns",
    build=build_cpsat, read=lambda inst, m, solver: read_cpsat(inst, solver, m.named, _granularity(m, "byte")),
    value=_cpsat_value))
register_formulation(Formulation(
    "filedomain", "cpsat-unit", CPSAT, models.SCOPES["cpsat", "unit"], OBJECTIVE, "CP-SAT with whole lock units",
    build=build_cpsat_unit, read=lambda inst, m, solver: read_cpsat(inst, solver, m.named, "unit"),
    value=_cpsat_value))
register_formulation(Formulation(
    "filedomain", "aggregated", PYOMO, "whole equal stripes per (aggregator, server), each aggregator's stripes on "
    "a server consecutive (extent locking)", OBJECTIVE, "stripe counts per (aggregator, server)",
    build=build_aggregated, read=lambda inst, m, _: read_aggregated(inst, m), value=_per_second(US)))
register_formulation(Formulation(
    "filedomain", "relaxation", PYOMO, EVERY_SOLUTION, OBJECTIVE, "the count relaxation (false sharing dropped)",
    build=build_relaxation, value=_per_second(US), relaxation=True))
register_formulation(Formulation(
    "filedomain", "dp", ALGORITHM, lambda p: models.SCOPES["dp", p.get("granularity", "byte")], OBJECTIVE,
    "contiguous domains by a parametric search, lock costs ignored", run=_dp))

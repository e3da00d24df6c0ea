"""The periodic problem's formulations (SysEfficiency, maximised; or the Dilation, minimised):

* ``milp`` (Pyomo, :func:`iosched.models.periodic_milp.build_milp`): the time-indexed restriction at one
  period T (the study's: PerSched's best pattern's period); ``contiguity=True`` adds the contiguity cuts
  (:func:`add_contiguity_cuts`);
* ``milp-relaxation`` (Pyomo): the same grid as a relaxation, a bound for every pattern of period T;
* ``longrun`` (Pyomo LP, :func:`iosched.models.periodic_bounds.build_longrun_model`): a bound for every
  schedule;
* ``contiguity`` (Pyomo LP): the long-run LP with the contiguity cuts (:func:`build_contiguity_model`);
* ``compaction`` (Pyomo LP, :func:`iosched.models.periodic_compaction.build_compaction_model`): the shortest
  period keeping a pattern's cyclic order of events (PerSched's pattern by default).
"""

from __future__ import annotations

import functools

from iosched import lazy
from iosched.core import EVERY_SOLUTION
from iosched.errors import ParameterError
from iosched.evaluate.periodic import Pattern
from iosched.formulations.registry import PYOMO, Formulation, register_formulation
from iosched.models import periodic_milp as milp
from iosched.models.periodic_bounds import build_longrun_model, contiguity_cuts
from iosched.models.periodic_compaction import build_compaction_model, compaction_pattern

pe = lazy.module("pyomo.environ")

PERSCHED_SECONDS = 10.0  # at most, for the PerSched pattern the study starts from


@functools.lru_cache(maxsize=8)
def persched_pattern(instance) -> Pattern:
    """PerSched's best pattern (SysEfficiency) within PERSCHED_SECONDS: the period the time-indexed models are
    built at, and the pattern the compaction LP keeps the order of."""
    from iosched.heuristics.periodic_persched import persched

    out = persched(instance, time_limit=PERSCHED_SECONDS)
    if out.solution is None:
        raise ParameterError(f"PerSched found no pattern in {PERSCHED_SECONDS:g} s: give the period")
    return out.solution


def _at_persched(instance, profile) -> dict:
    return {"period": persched_pattern(instance).period}


def add_contiguity_cuts(model, instance, period: float) -> int:
    """Add to a time-indexed model of period T (restriction or relaxation) the contiguity cuts
    Σ_{j in S ∪ A} r_j c_j n_j + g Σ_{a in A} n_a <= T Σ_{j in S ∪ A} r_j, one per cut (S, A, ℓ, g) of
    :func:`iosched.models.periodic_bounds.contiguity_cuts` (``model.contiguity``). Valid for every
    pattern of period T: the theorem of :func:`~iosched.models.periodic_bounds.contiguity_bound` with
    x_j = n_j / T (its proof is over a period), times T; so the restriction keeps its optimum and the
    relaxation stays a relaxation (a pattern maps to a solution with the same counts n). Returns the
    number of cuts."""
    cuts = contiguity_cuts(instance)
    r = [instance.max_rate(k) for k in range(len(instance.applications))]
    c = [a.work + instance.time_io(k) for k, a in enumerate(instance.applications)]
    model.contiguity = pe.Constraint(range(len(cuts)), rule=lambda m, i: (
        sum(r[j] * c[j] * m.n[j] for j in cuts[i][0] + cuts[i][1]) + cuts[i][3] * sum(m.n[a] for a in cuts[i][1])
        <= period * sum(r[j] for j in cuts[i][0] + cuts[i][1])))
    return len(cuts)


def build_milp(instance, period: float, slots: int | None = None, kind: str = "restriction",
               objective: str = "sys_efficiency", contiguity: bool = False):
    """:func:`iosched.models.periodic_milp.build_milp`, with ``contiguity`` its contiguity cuts
    (:func:`add_contiguity_cuts`)."""
    m = milp.build_milp(instance, period, slots, kind, objective)
    if contiguity:
        add_contiguity_cuts(m, instance, float(period))
    return m


def build_relaxation(instance, period: float, slots: int | None = None, objective: str = "sys_efficiency",
                     contiguity: bool = False):
    """The time-indexed relaxation at ``period`` (:func:`build_milp` with kind relaxation)."""
    return build_milp(instance, period, slots, "relaxation", objective, contiguity)


def build_contiguity_model(instance):
    """The long-run LP (x_k instances of k per second) with the contiguity cuts
    Σ_{S ∪ A} r_j c_j x_j + g Σ_A x_a <= Σ_{S ∪ A} r_j (``contiguity``): its optimum is
    :func:`iosched.models.periodic_bounds.contiguity_bound`'s, a bound on SysEfficiency for every schedule."""
    m = build_longrun_model(instance, "sys_efficiency")
    cuts = contiguity_cuts(instance)
    r = [instance.max_rate(k) for k in range(len(instance.applications))]
    c = [a.work + instance.time_io(k) for k, a in enumerate(instance.applications)]
    m.contiguity = pe.Constraint(range(len(cuts)), rule=lambda m, i: (
        sum(r[j] * c[j] * m.x[j] for j in cuts[i][0] + cuts[i][1]) + cuts[i][3] * sum(m.x[a] for a in cuts[i][1])
        <= sum(r[j] for j in cuts[i][0] + cuts[i][1])))
    return m


def build_compaction(instance, pattern: Pattern | dict | None = None):
    """The compaction LP of ``pattern`` (a Pattern or its JSON dict; default :func:`persched_pattern`); the
    pattern's counts are kept on the model (``model.counts``) to value its period."""
    if pattern is None:
        pattern = persched_pattern(instance)
    elif isinstance(pattern, dict):
        pattern = Pattern.from_dict(pattern)
    m = build_compaction_model(instance, pattern)
    m.counts = [len(insts) for insts in pattern.applications]
    return m


def milp_size(instance, params: dict) -> int:
    """The time-indexed model's variables (x, v, u per application and slot), counted before it is built."""
    slots = params.get("slots") or milp.default_slots(instance, float(params["period"]))
    return 3 * len(instance.applications) * int(slots)


def _objective(params: dict) -> str:
    return params.get("objective", "sys_efficiency")


def _milp_value(instance, model, v: float, is_bound: bool) -> float:
    """SysEfficiency as it is; the dilation model's 1 / Dilation inverted."""
    if _objective(getattr(model, "iosched_params", {})) == "dilation":
        return float("inf") if v <= 0 else 1.0 / v
    return v


def _period_value(instance, model, v: float, is_bound: bool) -> float:
    """The SysEfficiency of the pattern's counts at period ``v`` (s), Σ_k β_k n_k w_k / (N v)."""
    apps = instance.applications
    work = sum(a.processors * a.work * n for a, n in zip(apps, model.counts))
    return work / (instance.platform.processors * v) if v > 0 else float("inf")


def _period(params: dict) -> str:
    return f"{params['period']:.6g} s" if isinstance(params.get("period"), (int, float)) else "T"


def _milp_scope(params: dict) -> str:
    if params.get("kind", "restriction") == "relaxation":
        return f"every pattern of period {_period(params)}"
    return (f"patterns of period {_period(params)} on a grid of slots: computes start on slot "
            f"boundaries, one rate per slot")


register_formulation(Formulation(
    "periodic", "milp", PYOMO, _milp_scope, _objective, "time-indexed: compute starts and volumes per slot",
    build=build_milp, read=lambda inst, m, _: milp.milp_pattern(inst, m), value=_milp_value,
    relaxation=lambda p: p.get("kind", "restriction") == "relaxation", study=_at_persched, estimate=milp_size))
register_formulation(Formulation(
    "periodic", "milp-relaxation", PYOMO, lambda p: _milp_scope({**p, "kind": "relaxation"}), _objective,
    "the time-indexed grid as a relaxation (computes cover floor(w / δ) - 1 slots)", build=build_relaxation,
    value=_milp_value, relaxation=True, study=_at_persched, estimate=milp_size))
register_formulation(Formulation(
    "periodic", "longrun", PYOMO, EVERY_SOLUTION, _objective, "the long-run LP: instances per second",
    build=build_longrun_model, value=_milp_value, relaxation=True))
register_formulation(Formulation(
    "periodic", "contiguity", PYOMO, EVERY_SOLUTION, "sys_efficiency", "the long-run LP with contiguity cuts",
    build=build_contiguity_model, relaxation=True))
register_formulation(Formulation(
    "periodic", "compaction", PYOMO, "the pattern's cyclic order of compute starts and ends and its counts (PerSched's "
    "pattern by default)", "sys_efficiency", "the shortest period keeping a pattern's order of events",
    build=build_compaction, read=lambda inst, m, _: compaction_pattern(inst, m), value=_period_value))

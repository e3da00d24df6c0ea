"""The problems iosched knows, each tied to its instances, evaluator and bounds."""

from __future__ import annotations

from importlib import import_module

from iosched.core import Problem, RunContext, Sense, register_problem
from iosched.errors import ParameterError
from iosched.evaluate import filedomain as filedomain_eval
from iosched.evaluate import forwarding as forwarding_eval
from iosched.evaluate import malleable as malleable_eval
from iosched.evaluate import periodic as periodic_eval
from iosched.evaluate import window as window_eval
from iosched.formulations import builders
from iosched.heuristics import filedomain as _filedomain_heuristics  # noqa: F401  (registers methods)
from iosched.heuristics import forwarding as _forwarding_heuristics  # noqa: F401  (registers methods)
from iosched.heuristics import malleable as _malleable_heuristics  # noqa: F401  (registers methods)
from iosched.heuristics import malleable_list as _malleable_list  # noqa: F401  (registers methods)
from iosched.heuristics import malleable_track as _malleable_track  # noqa: F401  (registers fluid-track)
from iosched.heuristics import periodic as _periodic_heuristics  # noqa: F401  (registers methods)
from iosched.heuristics import window as _window_heuristics  # noqa: F401  (registers methods)
from iosched.instances import filedomain as filedomain_instances
from iosched.instances import (
    filedomain_presets,
    forwarding_presets,
    malleable_presets,
    periodic_fields,
    window_presets,
)
from iosched.instances import forwarding as forwarding_instances
from iosched.instances import malleable as malleable_instances
from iosched.instances import periodic as periodic_instances
from iosched.instances import window as window_instances
from iosched.models import filedomain as filedomain_models
from iosched.models import forwarding as forwarding_models
from iosched.models import forwarding_every as _forwarding_every  # noqa: F401  (registers milp, milp-max)
from iosched.models import forwarding_exact as _forwarding_exact  # noqa: F401  (registers exact)
from iosched.models import malleable as malleable_models  # (also registers the exact methods)
from iosched.models import periodic as periodic_models
from iosched.models import window as window_models
from iosched.solvers import Deadline


def _drawing(problem: str):
    """``iosched.plots.<problem>.plot``, imported when first drawn (matplotlib stays out of ``import iosched``)."""

    def draw(instance, solution, path=None, title: str = ""):
        return import_module(f"iosched.plots.{problem}").plot(instance, solution, path, title)

    return draw


register_problem(Problem(
    name="periodic",
    draw=_drawing("periodic"),
    load=periodic_instances.load,
    evaluate=periodic_eval.evaluate_any,
    objectives={"sys_efficiency": Sense.MAX, "dilation": Sense.MIN},
    bound=periodic_models.best_bound,
    bounds=lambda instance, context=None: periodic_models.bounds(instance),
    gap_reference=lambda instance, objective, context=None: periodic_models.gap_reference(instance, objective),
    outside_bound=periodic_models.timeline_bound,
    generate=periodic_instances.generate,
    builtins=periodic_instances.BUILTIN,
    models=builders("periodic"),
    instance_type=periodic_instances.PeriodicInstance,
    solution_from_dict=periodic_eval.solution_from_dict,
    template=periodic_fields.template,
))


WINDOW_BOUND_SECONDS = 5.0


def _window_bound(instance, objective, context: RunContext | None = None):
    """The hypervolume of the exact front: no feasible front covers more. None (absent) where the
    exact front is beyond the dynamic program's reach (too many states, sizes beyond 63 bits) or
    takes more than WINDOW_BOUND_SECONDS: a bound is not worth waiting for longer than the method."""
    try:
        front = window_models.pareto_front(instance, time_limit=WINDOW_BOUND_SECONDS)
    except (ParameterError, window_models.FrontTimeLimit):
        return None
    return window_eval.front_hypervolume(instance, front)


def _window_bounds(instance, context: RunContext | None = None):
    """The hypervolume bound and the exact front it comes from, both absent (None) where the bound is."""
    hv = _window_bound(instance, "hypervolume")
    front = None if hv is None else [p.__dict__ for p in window_models.pareto_front(instance)]  # cached
    return {"hypervolume": hv, "front": front}


def _window_columns(instance, result) -> dict:
    """A window decision beside the exact one (the paper's rule on the exact front, gains as shares
    of the free capacity): its node and burst-buffer loss in points of utilisation (positive: it
    uses less), and whether a point of the exact front dominates it. What a scheduler compares;
    the hypervolume gap says little about a method that returns one decision, so ``objective_gap``
    is False for those (the report leaves their hypervolume gap blank) and True for a method that
    returns a front. No loss where the exact front is out of reach (as the bound) or the method
    gave no selection."""
    sel = result.solution
    out = {"objective_gap": bool(sel is not None and sel.front)}
    if sel is None or result.evaluation is None:
        return out
    try:
        front = window_models.pareto_front(instance, time_limit=WINDOW_BOUND_SECONDS)
    except (ParameterError, window_models.FrontTimeLimit):
        return out
    best = _window_heuristics.decide(instance, list(front))
    ev, cap = result.evaluation, instance.capacity
    if instance.has_ssd:
        chosen = set(sel.selected)
        _, used, waste = window_eval.ssd_placement(instance, [i for i, j in enumerate(instance.jobs) if j.id in chosen])
        mine: tuple = (ev.nodes, ev.burst_buffer, used, -waste)
    else:
        mine = (ev.nodes, ev.burst_buffer)
    vectors = [p.vector()[:len(mine)] for p in front]
    return {**out, "node_loss_pts": 100 * (best.nodes - ev.nodes) / max(cap.nodes, 1),
            "bb_loss_pts": 100 * (best.burst_buffer - ev.burst_buffer) / max(cap.burst_buffer, 1),
            "dominated": any(all(f >= m for f, m in zip(v, mine)) and v != mine for v in vectors)}


register_problem(Problem(
    name="window",
    draw=_drawing("window"),
    load=window_presets.load,
    evaluate=window_eval.evaluate,
    # the front's hypervolume; the formulations' nodes and burst buffer (what a decision gains)
    objectives={"hypervolume": Sense.MAX, "nodes": Sense.MAX, "burst_buffer": Sense.MAX},
    bound=_window_bound,
    bounds=_window_bounds,
    generate=window_presets.generate,
    builtins=window_presets.BUILTIN,
    models=builders("window"),
    instance_type=window_instances.WindowInstance,
    solution_from_dict=window_eval.Selection.from_dict,
    report_columns=_window_columns,
    trivial=lambda instance: instance.trivial,
    template=window_presets.template,
))


# --- forwarding (DFRA, FAST'19) ---------------------------------------------------------------------

register_problem(Problem(
    name="forwarding",
    draw=_drawing("forwarding"),
    load=forwarding_presets.load,
    evaluate=forwarding_eval.evaluate,
    objectives={"total_io_time": Sense.MIN, "total_slowdown": Sense.MIN, "max_io_time": Sense.MIN},
    bound=lambda instance, objective, context=None: forwarding_models.lower_bound(instance, objective),
    bounds=lambda instance, context=None: forwarding_models.bounds(instance),
    generate=forwarding_presets.generate,
    builtins=forwarding_presets.BUILTIN,
    models=builders("forwarding"),
    instance_type=forwarding_instances.ForwardingInstance,
    solution_from_dict=forwarding_eval.Allocation.from_dict,
    template=forwarding_presets.template,
))


# --- malleable: expanding and shrinking jobs (DMR, Iserte et al.) ----------------------------------


def _malleable_bound(instance, objective, context: RunContext | None = None):
    """The malleable bound by the end of the run's budget, its LPs on the run's backend (HiGHS without a run)."""
    return malleable_models.bound(instance, objective, Deadline.for_bound(context),
                                  "highs" if context is None else context.solver)

register_problem(Problem(
    name="malleable",
    draw=_drawing("malleable"),
    load=malleable_presets.load,
    evaluate=malleable_eval.evaluate,
    objectives={"mean_completion": Sense.MIN, "makespan": Sense.MIN, "utilization": Sense.MAX},
    bound=_malleable_bound,
    bounds=lambda instance, context=None: malleable_models.bounds(
        instance, solver="highs" if context is None else context.solver),
    gap_reference=lambda instance, objective, context=None: malleable_models.gap_reference(
        instance, objective, "highs" if context is None else context.solver),
    generate=malleable_presets.generate,
    builtins=malleable_presets.BUILTIN,
    models=builders("malleable"),
    instance_type=malleable_instances.MalleableInstance,
    solution_from_dict=malleable_eval.Schedule.from_dict,
    template=malleable_presets.template,
))


# --- filedomain: file domains for collective I/O ---------------------------------------------------


def _filedomain_bound(instance, objective, context: RunContext | None = None):
    """Time: the cheap bound of models.filedomain.time_bound (by the end of the run's budget); bandwidth: data
    over it; conflicts: 0."""
    t = filedomain_models.time_bound(instance, deadline=Deadline.for_bound(context))
    return {"time": t, "bandwidth": instance.data_bytes / t / filedomain_instances.GB, "conflicts": 0.0}.get(objective)


def _filedomain_objective(evaluation, objective):
    return getattr(evaluation, objective) if evaluation.feasible else None


register_problem(Problem(
    name="filedomain",
    draw=_drawing("filedomain"),
    load=filedomain_presets.load,
    evaluate=filedomain_eval.evaluate,
    objectives={"time": Sense.MIN, "bandwidth": Sense.MAX, "conflicts": Sense.MIN},
    bound=_filedomain_bound,
    bounds=lambda inst, context=None: {"time_s": filedomain_models.time_bound(inst),
                                       "bandwidth_gbs": _filedomain_bound(inst, "bandwidth")},
    generate=filedomain_presets.generate,
    builtins=filedomain_presets.BUILTIN,
    models=builders("filedomain"),
    objective=_filedomain_objective,
    instance_type=filedomain_instances.FileDomainInstance,
    solution_from_dict=filedomain_eval.Domains.from_dict,
    template=filedomain_presets.template,
))

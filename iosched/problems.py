"""The problems iosched knows, each tied to its instances, evaluator and bounds."""

from __future__ import annotations

from iosched.core import Problem, register_problem
from iosched.evaluate import periodic as periodic_eval
from iosched.evaluate import window as window_eval
from iosched.heuristics import periodic as _periodic_heuristics  # noqa: F401  (registers methods)
from iosched.heuristics import window as _window_heuristics  # noqa: F401  (registers methods)
from iosched.instances import periodic as periodic_instances
from iosched.instances import window as window_instances
from iosched.models import periodic as periodic_models
from iosched.models import window as window_models

register_problem(Problem(
    name="periodic",
    load=periodic_instances.load,
    evaluate=periodic_eval.evaluate_any,
    sense=lambda name: "max" if name == "sys_efficiency" else "min",
    bound=periodic_models.best_bound,
    bounds=periodic_models.bounds,
    generate=periodic_instances.generate,
    builtins=periodic_instances.BUILTIN,
    models={"milp": periodic_models.build_milp, "longrun": periodic_models.build_longrun_model},
))


def _window_bound(instance, objective):
    """The hypervolume of the exact front: no feasible front covers more."""
    return window_eval.front_hypervolume(instance, window_models.pareto_front(instance))


register_problem(Problem(
    name="window",
    load=window_instances.load,
    evaluate=window_eval.evaluate,
    sense=lambda name: "max",
    bound=_window_bound,
    bounds=lambda inst: {"hypervolume": _window_bound(inst, "hypervolume"),
                         "front": [p.__dict__ for p in window_models.pareto_front(inst)]},
    generate=window_instances.generate,
    builtins=window_instances.BUILTIN,
    models={"milp": window_models.build_milp},
))


# --- filedomain: file domains for collective I/O ---------------------------------------------------

from iosched.evaluate import filedomain as filedomain_eval  # noqa: E402
from iosched.heuristics import filedomain as _filedomain_heuristics  # noqa: E402,F401  (registers methods)
from iosched.instances import filedomain as filedomain_instances  # noqa: E402
from iosched.models import filedomain as filedomain_models  # noqa: E402


def _filedomain_bound(instance, objective):
    """Time: the cheap bound of models.filedomain.time_bound; bandwidth: data over it; conflicts: 0."""
    t = filedomain_models.time_bound(instance)
    return {"time": t, "bandwidth": instance.data_bytes / t / filedomain_instances.GB, "conflicts": 0.0}.get(objective)


def _filedomain_objective(evaluation, objective):
    return getattr(evaluation, objective) if evaluation.feasible else None


register_problem(Problem(
    name="filedomain",
    load=filedomain_instances.load,
    evaluate=filedomain_eval.evaluate_any,
    sense=lambda name: "max" if name == "bandwidth" else "min",
    bound=_filedomain_bound,
    bounds=lambda inst: {"time_s": filedomain_models.time_bound(inst),
                         "bandwidth_gbs": _filedomain_bound(inst, "bandwidth")},
    generate=filedomain_instances.generate,
    builtins=filedomain_instances.BUILTIN,
    models={"milp": filedomain_models.build_milp, "cpsat": filedomain_models.build_cpsat,
            "aggregated": filedomain_models.build_aggregated, "relaxation": filedomain_models.build_relaxation},
    objective=_filedomain_objective,
))

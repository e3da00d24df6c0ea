"""The problems iosched knows, each tied to its instances, evaluator and bounds."""

from __future__ import annotations

from iosched.core import Problem, register_problem
from iosched.evaluate import periodic as periodic_eval
from iosched.heuristics import periodic as _periodic_heuristics  # noqa: F401  (registers methods)
from iosched.instances import periodic as periodic_instances


def _periodic_bound(instance, objective):
    from iosched.models.periodic import best_bound

    return best_bound(instance, objective)


def _periodic_bounds(instance):
    from iosched.models.periodic import bounds

    return bounds(instance)


register_problem(Problem(
    name="periodic",
    load=periodic_instances.load,
    evaluate=periodic_eval.evaluate,
    objective=lambda ev, name: getattr(ev, name),
    sense=lambda name: "max" if name == "sys_efficiency" else "min",
    bound=_periodic_bound,
    solution_to_dict=lambda sol, inst: sol.to_dict(inst),
    bounds=_periodic_bounds,
    generate=periodic_instances.generate,
    builtins=periodic_instances.BUILTIN,
))

"""The window problem's formulations. They are compared on the ε-constraint's first step, the point of the
exact front with the most nodes (the objective ``nodes``): the front's other points are the same models
with ``min_bb`` raised, and the hypervolume is the front's, which no single model gives.

* ``milp`` (Pyomo): x_j binary, Σ n_j x_j <= N, min_bb <= Σ b_j x_j <= B, maximise the nodes (with
  ``fix_nodes``: the nodes fixed, the burst buffer maximised); ``covers=True`` adds the cardinality cover
  inequalities of both capacity rows (:func:`iosched.models.covers.cardinality_cuts`, proved there).
* ``cpsat`` (CP-SAT): the same model.
* ``dp`` (algorithm): the dynamic program of :mod:`iosched.models.window`, the exact front; its first point.
"""

from __future__ import annotations

from iosched.core import EVERY_SOLUTION
from iosched.errors import ParameterError
from iosched.evaluate.window import Selection
from iosched.formulations.registry import ALGORITHM, CPSAT, PYOMO, Formulation, Ran, register_formulation
from iosched.models import window as models

FRONT_SECONDS = 5.0  # at least, the dynamic program's time for the bound (as for the problem's hypervolume bound)


def _objective(params: dict) -> str:
    return "burst_buffer" if params.get("fix_nodes") is not None else "nodes"


def _scope(params: dict) -> str:
    parts = []
    if params.get("min_bb"):
        parts.append(f"at least {params['min_bb']} GB of burst buffer")
    if params.get("max_nodes") is not None:
        parts.append(f"at most {params['max_nodes']} nodes")
    if params.get("fix_nodes") is not None:
        parts.append(f"exactly {params['fix_nodes']} nodes")
    return "selections with " + " and ".join(parts) if parts else EVERY_SOLUTION


def _selected(instance, chosen) -> Selection:
    return Selection(tuple(instance.jobs[j].id for j in sorted(chosen)))


def _read_pyomo(instance, m, values) -> Selection:
    return _selected(instance, [j for j in m.J if m.x[j].value is not None and m.x[j].value > 0.5])


def _read_cpsat(instance, m, solver) -> Selection:
    return _selected(instance, [j for j, v in enumerate(m.named["x"]) if solver.value(v)])


def most_nodes(instance, objective: str, profile) -> float | None:
    """The most nodes of any selection, from the exact front (valid for every selection), the dynamic program
    given the profile's time limit (at least FRONT_SECONDS); None for another objective (the burst buffer at
    fixed nodes is a restriction's) or where the front is out of the dynamic program's reach."""
    if objective != "nodes":
        return None
    try:
        return float(models.pareto_front(instance, time_limit=max(FRONT_SECONDS, profile.time_limit))[0].nodes)
    except (ParameterError, models.FrontTimeLimit):
        return None


def _dp(instance, profile) -> Ran:
    models.clear_front_cache()  # timed from scratch (the problem's bound has run the same program)
    try:
        front = models.pareto_front(instance, time_limit=profile.time_limit)
    except models.FrontTimeLimit as e:
        return Ran(None, None, None, finished=False, note=str(e))
    first = front[0]
    return Ran(Selection(first.jobs), float(first.nodes), float(first.nodes),
               note=f"the exact front has {len(front)} point(s); the row is its first (most nodes)")


register_formulation(Formulation(
    "window", "milp", PYOMO, _scope, _objective, "the ε-constraint MILP (most nodes, then burst buffer)",
    build=models.build_milp, read=_read_pyomo, problem_bound=most_nodes))
register_formulation(Formulation(
    "window", "cpsat", CPSAT, _scope, _objective, "the same model on CP-SAT",
    build=models.build_cpsat, read=_read_cpsat, problem_bound=most_nodes))
register_formulation(Formulation(
    "window", "dp", ALGORITHM, EVERY_SOLUTION, "nodes", "the exact front by dynamic programming: its first point",
    run=_dp, problem_bound=most_nodes))

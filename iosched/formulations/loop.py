"""Change a model, see the effect: :func:`build_model` returns a registered formulation's model, the user changes
it (adds a cut, fixes a variable), and :func:`solve_model` solves it on the profile's backend, reads the
solution back through the formulation's reader, scores it with the problem's one evaluator and gives it a
status by the same rule as :func:`iosched.solve` (:func:`iosched.core.settle`).

A changed model's own bound proves nothing: a cut may remove the optimum, or every solution. So the bound a
result is measured against is the problem's (valid for every solution, computed apart from the model), and
``optimal`` needs the evaluated value to meet it: a cut, valid or not, can never make a value below that
bound optimal. The model's status and bound are in ``info`` with the formulation's scope. (The formulation
study, which solves the registered models unchanged, also counts a model's own bound where its scope is
every solution.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from iosched.core import (
    Result,
    RunContext,
    Status,
    checked_bound,
    get_problem,
    profile_tolerance,
    relative_gap,
    settle,
)
from iosched.errors import ParameterError
from iosched.formulations import engine
from iosched.formulations.registry import ALGORITHM, Formulation, get_formulation
from iosched.solvers import Profile, load_profile

PARAMS_ATTRIBUTE = "iosched_params"  # the parameters a model was built with, kept on it for solve_model


def build_model(problem: str, instance, name: str, **params):
    """The model of formulation ``name`` of ``problem`` on ``instance``, built with ``params``.

    Parameters
    ----------
    problem : str
        The problem's name.
    instance : instance, dict or spec
        As :func:`iosched.load_instance` takes it.
    name : str
        A formulation of the problem (``iosched formulations PROBLEM INSTANCE`` lists them; ``iosched list``).
    **params
        The builder's parameters (the valid inequalities among them: see docs/formulations.md).

    Returns
    -------
    ConcreteModel, CpModel or ArrayModel
        A Pyomo ``ConcreteModel`` (variables named as in the formulation's docstring), a CP-SAT ``CpModel``
        (its variables by name in ``model.named``) or an :class:`~iosched.formulations.registry.ArrayModel`
        (columns by name in ``model.columns``; add a row with ``model.matrix.row``).

    Raises
    ------
    ParameterError
        An unknown problem or formulation, a parameter the builder does not take, an algorithm (no model), or a
        model past its size limit.
    InstanceError
        The instance cannot be read.
    """
    prob = get_problem(problem)
    f = get_formulation(problem, name)
    if f.kind == ALGORITHM:
        raise ParameterError(f"{problem}/{name} is an algorithm ({f.description}): it has no model to build; "
                             f"iosched formulations runs it")
    inst = prob.read_instance(instance)
    f.check(inst, params)
    return make_model(f, inst, params)


def make_model(f: Formulation, instance, params: dict):
    """``f``'s model of ``instance`` with ``params``, which it keeps (``model.iosched_params``): its reader, its
    scope and its objective depend on them, and :func:`solve_model` reads them back."""
    if f.build is None:
        raise ParameterError(f"{f.problem}/{f.name} is an algorithm: it has no model to build")
    model = f.build(instance, **params)
    setattr(model, PARAMS_ATTRIBUTE, dict(params))
    return model


@dataclass
class Scored:
    """A solved model scored: its solution and evaluation, the status by the one rule, and the values of
    ``info`` (model status, model objective and bound in the problem's units, scope, solver time)."""

    solution: object
    evaluation: object
    objective: float | None
    bound: float | None
    gap: float | None
    status: Status
    info: dict = field(default_factory=dict)


def problem_bound(prob, f: Formulation, instance, objective: str, profile: Profile) -> tuple[float | None, str]:
    """A bound valid for every solution on ``objective``, and what it is: the formulation's own where the
    problem's bound is on another objective, else the problem's (its LPs on the profile's backend, by the
    end of the profile's time limit)."""
    if f.problem_bound is not None:
        value = f.problem_bound(instance, objective, profile)
        if value is None:
            return None, (f"no bound: the {objective} bound of {f.problem}'s formulations was not reached within "
                          f"the profile's time limit ({profile.time_limit:g} s) or is not defined for {objective}")
        return value, f"the {objective} bound of {f.problem}'s formulations"
    context = RunContext(bound_end=time.perf_counter() + profile.time_limit, solver=profile.solver)
    value = prob.bound(instance, objective, context)
    why = prob.gap_reference(instance, objective, context) if prob.gap_reference is not None else "the problem's bound"
    return value, why or "the problem's bound"


def guarded_bound(prob, f: Formulation, instance, objective: str, profile: Profile) -> tuple[float | None, str]:
    """:func:`problem_bound`, or (None, why) where computing it failed: no bound is a weaker result, not a
    failed one."""
    try:
        return problem_bound(prob, f, instance, objective, profile)
    except Exception as e:
        return None, f"no bound: the problem's bound failed ({type(e).__name__}: {e})"


def score(prob, f: Formulation, instance, params: dict, model, solved: engine.Solved, profile: Profile,
          bound: tuple[float | None, str], trust_bound: bool = False) -> Scored:
    """Read, evaluate and settle one solve of ``model`` (see the module docstring); ``bound``: the problem's
    bound and what it is."""
    out = solved.outcome
    objective = f.objective_of(params)
    sense = prob.sense(objective)
    scope = f.scope_of(params)
    info: dict = {"formulation": f.name, "scope": scope, "model_status": out.status.value, "stopped": out.stopped,
                  "model_objective": _value(f, instance, model, out.objective, False),
                  "model_bound": _value(f, instance, model, out.bound, True), "solver": profile.solver,
                  "solver_time_s": out.wall_time_s, "nodes": out.nodes}
    solution = evaluation = value = None
    status = out.status
    if f.is_relaxation(params):  # its status is the solver's: optimal is its bound proved (settle leaves it)
        info["relaxation"] = "its optimum bounds the problem's objective over its scope: no solution to read"
    elif out.has_solution and f.read is not None:
        try:
            solution = f.read(instance, model, solved.values)
        except Exception as e:  # a user's change can leave values the reader cannot make a solution of
            status, info["error"] = Status.ERROR, f"the model's values are not a solution: {type(e).__name__}: {e}"
    if solution is not None:
        evaluation = prob.evaluate(instance, solution)
        value = prob.objective(evaluation, objective)
        if not evaluation.feasible:
            status = Status.ERROR
            info["error"] = "the evaluator rejected the solution: " + "; ".join(str(v) for v in
                                                                                 evaluation.violations[:5])
    feasible = value if evaluation is not None and evaluation.feasible else None
    best, proof = bound
    if best is None and proof.startswith("no bound:"):
        info["bound_error"] = proof
    model_bound = info["model_bound"] if not f.is_relaxation(params) else info["model_objective"]
    own = trust_bound and f.every_solution(params) and model_bound is not None and out.status in (
        Status.OPTIMAL, Status.TIME_LIMIT, Status.FEASIBLE)
    if own and (best is None or (model_bound > best if sense == "min" else model_bound < best)):
        best, proof = model_bound, f"the model's bound ({f.name}, trusted: its scope is every solution)"
    best = checked_bound(best, proof, feasible, sense, info)
    if out.status == Status.INFEASIBLE and not (trust_bound and f.every_solution(params)):
        status = Status.ERROR
        info["error"] = (f"the model has no solution: its scope ({scope}) holds none" if trust_bound else
                         "the model has no solution (a change removed every solution, or its scope holds none)"
                         ) + "; nothing is claimed about the instance"
    gap = relative_gap(value, best) if status != Status.ERROR else None
    status = settle(status, feasible, best, gap, profile_tolerance(profile), proof, info)
    return Scored(solution, evaluation, value, best, gap, status, info)


def _value(f: Formulation, instance, model, v: float | None, is_bound: bool) -> float | None:
    return None if v is None else f.value(instance, model, v, is_bound)


def solve_model(problem: str, instance, name: str, model, profile: Profile | str = "default") -> Result:
    """Solve a model of formulation ``name`` (as :func:`build_model` made it, changed or not) and score it.

    Parameters
    ----------
    problem, instance, name
        As for :func:`build_model` (the instance the model was built on).
    model
        The model, with the user's changes.
    profile : str or Profile
        A solvers.toml profile: its backend, time limit, gap, threads and seed (CP-SAT models run on OR-Tools).

    Returns
    -------
    Result
        As :func:`iosched.solve` gives it (``method`` is ``model:NAME``): the evaluated objective of the
        model's solution, the problem's bound (valid for every solution) and the gap; ``optimal`` only where
        that value meets the bound. ``info``: the model's status, objective and bound in the problem's units, the
        formulation's scope, the solver, its time and nodes. A model left without a solution is status
        ``error`` (not ``infeasible``: the changes may have removed every solution).

    Raises
    ------
    ParameterError
        An unknown problem or formulation, an algorithm, an unreadable profile, a backend not installed or
        refusing the model for its licence.
    """
    prob = get_problem(problem)
    f = get_formulation(problem, name)
    if f.kind == ALGORITHM:
        raise ParameterError(f"{problem}/{name} is an algorithm: there is no model to solve")
    inst = prob.read_instance(instance)
    prof = load_profile(profile) if isinstance(profile, str) else profile
    params = dict(getattr(model, PARAMS_ATTRIBUTE, {}))
    start = time.perf_counter()
    solved = engine.solve(f.kind, model, prof)
    method_time = time.perf_counter() - start
    objective = f.objective_of(params)
    bound_start = time.perf_counter()
    bound = guarded_bound(prob, f, inst, objective, prof)
    bound_time = time.perf_counter() - bound_start
    s = score(prob, f, inst, params, model, solved, prof, bound)
    return Result(problem, getattr(inst, "name", "instance"), f"model:{name}", s.status, objective,
                  prob.sense(objective), s.objective, s.bound, s.gap, time.perf_counter() - start, params, None,
                  s.evaluation, s.solution, s.info, method_time, bound_time, None, None, inst)

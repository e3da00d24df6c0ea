"""The one registry of formulations: per problem, each exact model (and each relaxation or algorithm the
formulation study compares with them) under a name, with its builder, its kind, its scope, the reader
that turns a solved model back into the problem's solution, and the map from the model's objective to
the problem's.

``iosched model``, ``iosched formulations``, :func:`iosched.build_model`, :func:`iosched.solve_model` and
``Problem.models`` (:func:`builders`) all read it, so a formulation is declared once: in
``iosched/formulations/<problem>.py``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from iosched.core import EVERY_SOLUTION
from iosched.errors import ParameterError

PYOMO, CPSAT, ARRAY, ALGORITHM = "Pyomo", "CP-SAT", "array model", "algorithm"
KINDS = (PYOMO, CPSAT, ARRAY, ALGORITHM)


@dataclass
class ArrayModel:
    """An array model (:class:`iosched.models.matrix.Matrix`) with its columns named as the formulation's
    docs name them (``columns``: name -> column indices, arrays or dicts of them) and what its reader
    needs (``data``). Add a row with ``model.matrix.row(cols, coefs, lo=..., hi=...)``."""

    name: str
    matrix: Any
    columns: dict = field(default_factory=dict)
    data: Any = None

    def pyomo(self):
        """The same model in Pyomo (to inspect, or write as LP or MPS): one variable ``x[k]`` per column."""
        return self.matrix.pyomo(self.name)


@dataclass
class Ran:
    """What an :data:`ALGORITHM` formulation gives back: its solution (None for a bound), its value and its
    bound in the problem's units, whether it finished (``optimal`` over its scope), and a note."""

    solution: Any
    value: float | None
    bound: float | None
    finished: bool = True
    note: str = ""


def _identity(instance, model, value: float, is_bound: bool) -> float:
    return value


@dataclass(frozen=True)
class Formulation:
    """One formulation of one problem.

    ``build(instance, **params)`` returns the model: a Pyomo ``ConcreteModel``, a CP-SAT ``CpModel`` (its
    variables by name in ``model.named``) or an :class:`ArrayModel`; an :data:`ALGORITHM` has no model to
    build and ``run(instance, profile, **params) -> Ran`` instead. ``scope`` is :data:`EVERY_SOLUTION`
    where the model is exact (or, with ``relaxation``, a valid relaxation) over every solution of the
    problem, else a phrase naming the restricted set it optimises over, as its docs state (a function of
    the parameters where they change it). ``read(instance, model, values)`` turns a solved model into the
    problem's solution (``values``: None for Pyomo, whose variables hold them; the CP-SAT solver; the
    array model's column values); a relaxation has none. ``value(instance, model, v, is_bound)`` maps the
    model's objective (or its bound) to the problem's ``objective`` in the problem's units and sense.
    ``study(instance, profile)`` gives the parameters the formulation study passes beyond the builder's
    defaults (PerSched's period for periodic's time-indexed models). ``problem_bound(instance, objective, profile)``: a
    bound valid for every solution on ``objective`` where the problem's own bound is on another objective.
    ``estimate(instance, params)``: the variables the model would have, counted before it is built (the
    study refuses a model past its ``max_variables`` without building it).
    """

    problem: str
    name: str
    kind: str
    scope: str | Callable[[dict], str]
    objective: str | Callable[[dict], str]
    description: str
    build: Callable[..., Any] | None = None
    read: Callable[[Any, Any, Any], Any] | None = None
    value: Callable[[Any, Any, float, bool], float] = _identity
    relaxation: bool | Callable[[dict], bool] = False
    run: Callable[..., Ran] | None = None
    study: Callable[[Any, Any], dict] | None = None
    problem_bound: Callable[[Any, str, Any], float | None] | None = None
    estimate: Callable[[Any, dict], int] | None = None

    def scope_of(self, params: dict) -> str:
        return self.scope(params) if callable(self.scope) else self.scope

    def objective_of(self, params: dict) -> str:
        return self.objective(params) if callable(self.objective) else self.objective

    def is_relaxation(self, params: dict) -> bool:
        """Whether the model is a relaxation with ``params``: its optimum is a bound, it has no solution."""
        return self.relaxation(params) if callable(self.relaxation) else self.relaxation

    def every_solution(self, params: dict) -> bool:
        """Whether its bounds (and a relaxation's optimum) hold for every solution of the problem."""
        return self.scope_of(params) == EVERY_SOLUTION

    def check(self, instance, params: dict) -> None:
        """The parameters bind to the builder (or the algorithm): else a ParameterError naming them."""
        fn = self.build if self.build is not None else self.run
        assert fn is not None  # (register_formulation: a model has a builder, an algorithm a run)
        try:
            if self.build is not None:
                inspect.signature(fn).bind(instance, **params)
            else:
                inspect.signature(fn).bind(instance, None, **params)
        except TypeError as e:
            hint = " (give it as --param NAME=VALUE)" if "missing" in str(e) else ""
            raise ParameterError(f"formulation {self.problem}/{self.name}: {e}{hint}") from None


FORMULATIONS: dict[str, dict[str, Formulation]] = {}


def register_formulation(formulation: Formulation) -> Formulation:
    """Add ``formulation`` to the registry (its kind checked)."""
    if formulation.kind not in KINDS:
        raise ValueError(f"{formulation.problem}/{formulation.name}: kind must be one of {KINDS}")
    if (formulation.build is None) != (formulation.kind == ALGORITHM) or (formulation.run is None) == (
            formulation.kind == ALGORITHM):
        raise ValueError(f"{formulation.problem}/{formulation.name}: a model has a builder, an algorithm a run")
    FORMULATIONS.setdefault(formulation.problem, {})[formulation.name] = formulation
    return formulation


def formulations_of(problem: str) -> dict[str, Formulation]:
    """The formulations of ``problem`` by name, in the order they were declared."""
    if problem not in FORMULATIONS:
        raise ParameterError(f"no formulations for {problem!r}; known problems: {', '.join(sorted(FORMULATIONS))}")
    return FORMULATIONS[problem]


def get_formulation(problem: str, name: str) -> Formulation:
    known = formulations_of(problem)
    if name not in known:
        raise ParameterError(f"unknown formulation {name!r} for {problem}; known: {', '.join(known)}")
    return known[name]


def builders(problem: str) -> dict[str, Callable[..., Any]]:
    """``Problem.models``: the builders of the problem's models (its algorithms have none), by name."""
    return {name: f.build for name, f in FORMULATIONS.get(problem, {}).items() if f.build is not None}

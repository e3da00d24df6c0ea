"""The words every result is told in, shared by :mod:`iosched.core` and :mod:`iosched.solvers`:
a status, an objective's sense, the relative gap, and the running method's context (its clock and
backend). Neither module needs the other to say them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    """How a run ended: the verdict of a :class:`~iosched.core.Result`, of a method's output, and of a solver's
    outcome (:class:`~iosched.solvers.SolveOutcome`, over its model's own scope).

    A str (``"optimal"`` ...), so JSON and text say the value.

    Attributes
    ----------
    OPTIMAL
        A solution proven optimal. For a Result the one rule holds (:func:`iosched.core.settle`, for every
        problem and method): it is optimal when, and only when, its objective as the problem's evaluator scores
        it meets a bound valid for every solution of the instance (the method's own or the problem's) within
        the tolerance (the profile's ``rel_gap``, at least 2e-6, for a method that runs a solver; 1e-9 for
        any other). A claim that fails is downgraded to FEASIBLE (``info["not_optimal"]`` says why); a value
        that meets the bound is optimal whatever found it (``info["optimal"]`` names the bound). In a
        solver's outcome, or where a method's model covers a restricted set (a scope), it is optimal over
        that model only.
    FEASIBLE
        A solution, and no claim that it is optimal (a heuristic's, or a scope's optimum).
    TIME_LIMIT
        Stopped by the time limit: the best solution found, if any, and the bound reached so far.
    INFEASIBLE
        No solution: proven by the solver or the method for its model, or, for a method whose search covers
        only part of the solutions (PerSched's periods), none in what it searched (``info`` says which).
    ERROR
        No usable answer: the method failed, the evaluator rejected its solution, or the solver reported an
        error (``info["error"]`` says which).
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    TIME_LIMIT = "time_limit"
    INFEASIBLE = "infeasible"
    ERROR = "error"


class Sense(StrEnum):
    """Which way an objective is better: ``min`` (smaller is better) or ``max``. A str, so that JSON and
    text say ``"min"`` and ``"max"`` as they always did; :meth:`iosched.core.Problem.sense` gives an
    objective's, and refuses a name the problem does not know."""

    MIN = "min"
    MAX = "max"


@dataclass(frozen=True)
class RunContext:
    """The running method's clock and backend, as :func:`iosched.solve` hands them to the method (its keyword
    ``context``, which the registry passes and no user gives) and to the problem's bound.

    ``method_start`` is the ``perf_counter()`` reading when solve started the method's clock (loading the
    instance included): the origin of :meth:`iosched.solvers.Deadline.for_method`, so a method's budget covers
    what ran before its first line. ``bound_end`` is the reading by which the problem's bound that solve
    attaches must be done, the end of the method's budget, so the method, its evaluation and the bound
    together keep the method's limit (:meth:`iosched.solvers.Deadline.for_bound`). ``solver`` is the LP
    backend (a name of ``iosched.solvers.BACKENDS``) of the method's profile, ``highs`` for a method without
    one: the problem's bounds that solve LPs (malleable's) run on it. A method or a bound called directly
    has no context: its budget counts from its first line, a bound has no deadline, and the LPs run on the
    method's profile's backend (a bound's on HiGHS).
    """

    method_start: float | None = None
    bound_end: float | None = None
    solver: str = "highs"


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """|bound - objective| / |objective| (the MIP-solver convention); None without both."""
    if objective is None or bound is None or not math.isfinite(objective) or not math.isfinite(bound):
        return None
    if objective == 0:
        return 0.0 if bound == 0 else math.inf
    return abs(bound - objective) / abs(objective)

"""One driver for every exact method: the deadline, the heuristic start, the build check, the solve and the
settle step, and the words the method's ``info`` says them in.

Every exact method (forwarding's MILPs, periodic's time-indexed MILP, malleable's grid MILP and CP-SAT,
filedomain's exact) runs the same five steps; an :class:`ExactRun` owns them, the method only its model:

1. **The deadline.** The profile's ``time_limit`` is the whole method's budget, counted from the method's
   start (:meth:`iosched.solvers.Deadline.for_method`: from when :func:`iosched.solve` started its clock, as
   the :class:`~iosched.core.RunContext` that solve passes the method, and the method its ExactRun, says):
   computing the model's data, the starts, building, handing over and solving all count against it.
2. **The start.** The heuristics' solutions, scored by the problem's evaluator (:func:`ranked`), run within
   the deadline: the best is what the method returns when no model is built or solved in time, or the
   solver has nothing better, and it is the model's MIP start (or CP-SAT hint) where it lies in the model.
3. **The build check.** A model whose estimated build and handover (its size times the seconds per unit
   its module measured) would not fit in the time left is not built (:meth:`ExactRun.too_slow`).
4. **The solve.** Pyomo on the profile's backend (:meth:`ExactRun.solve_pyomo`, through
   :func:`iosched.solvers.solve_pyomo_within`: the solver gets what is left once the model is handed
   over) or CP-SAT (:meth:`ExactRun.solve_cpsat`); :meth:`ExactRun.record` writes the outcome in ``info``.
5. **The settle step** (:meth:`ExactRun.settle`): the solver's solution or the start, whichever the
   evaluator scores better (ties within 1e-9, relative, to the solver). The solver's solution takes the
   status the method's rule gives it (a scope's optimum is ``feasible``, or ``time_limit`` where the
   solver stopped at its limit: only a model over every solution may say ``optimal``); the start is never
   called optimal (``time_limit`` where the solver stopped at its limit or none was built, else
   ``feasible``). :func:`iosched.solve` then scores the answer and certifies it against the problem's bound
   (:func:`iosched.core.settle`, :func:`iosched.core.checked_bound`): a start that meets it is optimal there.

**The info vocabulary of every exact method** (values in the problem's units unless said):

``model_status``
    the solver's verdict over the model's own scope (``optimal`` there is optimal over ``scope`` only)
``model_bound``
    the solver's bound, valid over the model's scope (for every solution only where the scope is)
``model_objective``, ``model_gap``
    the solver's incumbent as the model values it (None without one), and the gap to ``model_bound``
``solver_time_s``
    the solver's wall time (s), handing over excluded
``message``
    the solver's own words on why it stopped
``start``
    the heuristic start: ``heuristic`` (its name), ``value`` (the evaluator's score, or the model's value
    where the method says so), ``solver`` (the backend), ``solver_taken`` and ``solver_value`` (whether the
    backend took it as a MIP start, and its value of it), ``skipped`` (why it was not handed over)
``scope``
    what the model optimises over: every solution, or a named restriction of it
``error``
    why no model was built or solved, or why there is no solution
``incumbent``
    where the returned solution came from when it is the start rather than the solver's, and why
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from iosched.core import MethodOutput, RunContext, Sense, Status
from iosched.solvers import Deadline, Profile, SolveOutcome, solve_cpsat, solve_pyomo_within

S = TypeVar("S")
TIE = 1e-9  # relative: a start must beat the solver's solution by more than this to be returned instead


@dataclass
class Start(Generic[S]):
    """A heuristic's solution an exact method starts from; ``value`` is its score (the evaluator's, in the
    problem's objective, unless the method says otherwise)."""

    heuristic: str  # the heuristic's name (or what made the solution)
    solution: S
    value: float

    def summary(self) -> dict[str, Any]:
        return {"heuristic": self.heuristic, "value": self.value}


def method_limit(deadline: Deadline, context: RunContext | None = None) -> float:
    """The ``time_limit`` to give a registered method called inside the running one (a heuristic start) with
    the running one's ``context`` so that it ends by ``deadline``: a method counts its limit from the run's
    start, as :meth:`Deadline.for_method` does (or from now without a context)."""
    origin = None if context is None else context.method_start
    return max(deadline.end - (time.perf_counter() if origin is None else origin), 0.0)


def better(value: float, than: float, sense: Sense = Sense.MIN) -> bool:
    """Whether ``value`` beats ``than`` by more than TIE (relative) in the direction ``sense`` (min or max)."""
    margin = TIE * abs(than)
    return value < than - margin if sense == Sense.MIN else value > than + margin


def pick(values: Sequence[float], sense: Sense = Sense.MIN) -> int:
    """The index of the first of ``values`` no other beats by more than TIE: list the solver's candidates
    first, and a tie goes to the solver."""
    best = min(values) if sense == Sense.MIN else max(values)
    return next(i for i, v in enumerate(values) if not better(best, v, sense))


def ranked(candidates: Iterable[tuple[str, Callable[[], S | None]]], score: Callable[[S], float],
           deadline: Deadline | None = None, sense: Sense = Sense.MIN) -> list[Start[S]]:
    """The candidates' solutions (name, a function making it) as starts, best first by ``score`` (ties keep
    the candidates' order). They run in order while ``deadline`` holds (the first always runs); a candidate
    that makes None is left out."""
    out: list[Start[S]] = []
    for k, (name, make) in enumerate(candidates):
        if k and deadline is not None and deadline.expired():
            break
        solution = make()
        if solution is not None:
            out.append(Start(name, solution, score(solution)))
    return sorted(out, key=lambda s: s.value if sense == Sense.MIN else -s.value)


class ExactRun:
    """One exact method's run under ``profile`` (module docstring): its deadline, its start, its ``info``.

    ``score`` is the evaluator's value of a solution in the method's objective (minimised or maximised by
    ``sense``); ``scope`` what the model optimises over (``info["scope"]``); ``context`` the run's (the
    deadline counts from its start, the heuristic starts get it), None for a method called directly.
    """

    def __init__(self, profile: Profile, score: Callable[[Any], float] | None = None, sense: Sense = Sense.MIN,
                 scope: str | None = None, deadline: Deadline | None = None, context: RunContext | None = None):
        self.profile = profile
        self.context = context
        self.deadline = deadline if deadline is not None else Deadline.for_method(profile.time_limit, context=context)
        self.score = score
        self.sense = sense
        self.info: dict[str, Any] = {} if scope is None else {"scope": scope}
        self.start: Start | None = None
        self.engine = profile.solver  # what solves the model: the profile's backend, or cpsat

    def begin(self, start: Start | None) -> None:
        """Start from ``start`` (the best heuristic solution; None: there is none): ``info["start"]``."""
        self.start = start
        if start is not None:
            self.info["start"] = start.summary()

    def too_slow(self, size: int, seconds_each: float, what: str) -> str | None:
        """Why a model of ``size`` units (variables, cells) taking ``seconds_each`` to build and hand to the
        solver would not be built and handed over in the time left, naming the estimate; None when it would."""
        needed, left = size * seconds_each, self.deadline.remaining()
        if needed < left:
            return None
        return (f"the {what} would take about {needed:.3g} s to build and hand to {self.engine}; "
                f"{left:.3g} s left of the {self.deadline.seconds:g} s limit")

    def solve_pyomo(self, build: Callable[[], Any], handover: float, *, load: bool = True,
                    warm: bool | Callable[[Any], bool] = False, profile: Profile | None = None):
        """(model, outcome, note): ``build()`` solved on the profile's backend within the time left
        (:func:`iosched.solvers.solve_pyomo_within`; ``handover``: the model family's handover time as a
        multiple of its build time). The outcome is None, and ``note`` says why, when no time was left."""
        return solve_pyomo_within(build, profile or self.profile, self.deadline, handover, load=load, warm=warm)

    def solve_cpsat(self, model, profile: Profile | None = None):
        """(outcome, solver): the CP-SAT ``model`` solved within the time left (and ``profile``'s limit)."""
        self.engine = "cpsat"
        return solve_cpsat(model, self.deadline.limit(profile or self.profile))

    def record(self, out: SolveOutcome, objective: float | None = None, bound: float | None = None,
               **extra: Any) -> None:
        """The solver's outcome in ``info``'s shared keys (module docstring); ``objective`` and ``bound`` in
        the problem's units where the model's differ (default: the outcome's own); with a start handed over
        as a MIP start, whether the backend took it."""
        objective = out.objective if objective is None else objective
        bound = out.bound if bound is None else bound
        self.info.update({"model_status": out.status.value, "model_bound": bound, "model_objective": objective,
                          "model_gap": out.gap, "solver_time_s": out.wall_time_s, "message": out.message, **extra})
        if self.start is not None and "start" in self.info and out.start is not None:  # handed over as a MIP start
            self.info["start"] = {**self.info["start"], "solver": self.engine,
                                  **{f"solver_{k}": v for k, v in out.start.items()}}

    def fall_back(self, why: str, error: str | None = None, stopped: bool = True,
                  bound: float | None = None) -> MethodOutput:
        """The start as the method's result (``info["incumbent"]`` says so, and ``why``): ``time_limit`` when
        ``stopped`` (by the limit, or no model built in time), else ``feasible``; with no start, no solution.
        ``error``: ``info["error"]``."""
        if error is not None:
            self.info["error"] = error
        status = Status.TIME_LIMIT if stopped else Status.FEASIBLE
        if self.start is None:
            return MethodOutput(None, status, bound=bound, info=self.info)
        self.info["incumbent"] = f"{self.start.heuristic} (the best heuristic start): {why}"
        return MethodOutput(self.start.solution, status, bound=bound, info=self.info)

    def settle(self, solution: Any, status: Status, stopped: bool, bound: float | None = None,
               value: float | None = None, what: str = "solution") -> MethodOutput:
        """The method's result once the solver has run: its ``solution`` (None: it has none) with ``status``
        (the method's rule), unless the start scores better by more than TIE (``value``: the solution's
        score, else ``score(solution)``); then the start, never optimal (``time_limit`` where the solver
        ``stopped`` at its limit, else ``feasible``). With neither: no solution, ``time_limit`` where the
        solver stopped, else ``error``. ``bound``: the method's bound, valid for every solution, or None."""
        if solution is None:
            if self.start is not None:
                return self.fall_back(f"the solver found no {what}" + (" within the time limit" if stopped else ""),
                                      stopped=stopped, bound=bound)
            return MethodOutput(None, Status.TIME_LIMIT if stopped else Status.ERROR, bound=bound, info=self.info)
        if self.start is not None:
            if value is None:
                assert self.score is not None, "settle needs the solution's value or a score"
                value = self.score(solution)
            if better(self.start.value, value, self.sense):
                return self.fall_back(f"the solver's {what} scores {value:.6g}, worse", stopped=stopped,
                                      bound=bound)
        return MethodOutput(solution, status, bound=bound, info=self.info)

"""The contract every problem follows: Instance -> method -> Solution -> evaluate -> Result.

A method is a function ``(instance, **params) -> MethodOutput`` registered under
``"problem/name"``. It never scores itself: :func:`solve` times it, passes its
solution through the problem's one evaluator, and attaches the bound and gap.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iosched.errors import InstanceError, ParameterError
from iosched.status import RunContext, Sense, Status, relative_gap  # noqa: F401  (re-exported)
from iosched.validate import check_params, declared_checks, integer

if TYPE_CHECKING:
    from iosched.instances import JsonInstance


class TrivialInstanceWarning(UserWarning):
    """An instance on which every method's answer is trivially optimal; :func:`solve` says why (also in info)."""


@dataclass
class MethodOutput:
    """What a method hands back: its solution (or None), status, and a bound if it proves one."""

    solution: Any
    status: Status = Status.FEASIBLE
    bound: float | None = None
    info: dict = field(default_factory=dict)


def _attribute(evaluation, name: str) -> float:
    return getattr(evaluation, name)


def _solution_dict(solution, instance) -> dict:
    return solution.to_dict(instance)


@dataclass
class Problem:
    """A problem's pieces: how to load instances, evaluate solutions, and bound the objective."""

    name: str
    load: Callable[[str], Any]
    evaluate: Callable[[Any, Any], Any]
    objectives: Mapping[str, Sense]  # every objective name the problem scores -> its sense (:meth:`sense`)
    # (instance, objective name, context=None) -> proven bound: by the end of the run's budget and on its LP
    # backend when :func:`solve` passes the run's RunContext, else without a deadline, on HiGHS
    bound: Callable[..., float | None]
    bounds: Callable[..., dict]  # (instance, context=None) -> every bound the problem knows, by name
    generate: Callable[..., Any]  # (seed, **size) -> a random instance
    builtins: list[str]
    models: dict[str, Callable[..., Any]] = field(default_factory=dict)  # name -> (instance, **p) -> model
    objective: Callable[[Any, str], float] = _attribute  # (evaluation, objective name) -> value
    solution_to_dict: Callable[[Any, Any], dict] = _solution_dict
    instance_type: type[JsonInstance] | None = None  # the Instance class (from_dict / from_json)
    solution_from_dict: Callable[[dict], Any] | None = None
    gap_reference: Callable[..., str] | None = None  # (instance, objective, context=None) -> what ``bound`` is
    # (instance, Result) -> the problem's own report columns for one result ({name: number or bool}; the
    # report gives each configuration's mean, a bool as a share), beside the gap to the bound
    report_columns: Callable[[Any, Any], dict] | None = None
    # (instance, solution, path, title) -> its picture, a matplotlib Figure (iosched.plots.<problem>.plot)
    draw: Callable[..., Any] | None = None
    trivial: Callable[[Any], str | None] | None = None  # instance -> why every answer on it is optimal, or None
    template: Callable[[], Any] | None = None  # () -> a small valid instance to start from (show --template)
    # (instance, objective, solution) -> (bound, what it is) for a solution outside the problem's own solution set
    # (periodic: a timeline is not a pattern within the period cap), or None: the problem's bound applies
    outside_bound: Callable[[Any, str, Any], tuple[float | None, str] | None] | None = None

    def sense(self, objective: str) -> Sense:
        """Whether ``objective`` is minimised or maximised; a name the problem does not score is a ParameterError
        naming it (never a guess: a misspelt maximised objective would be ranked backwards)."""
        try:
            return self.objectives[objective]
        except (KeyError, TypeError):
            raise ParameterError(f"{self.name} has no objective {_short(objective)}; its objectives: "
                                 f"{', '.join(self.objectives)}") from None

    def read_instance(self, spec):
        """An instance from an instance object, a dict, a Path, JSON text, a built-in name, a file name,
        ``generate:SEED:{size JSON}`` (how benchmark suites and their reports name generated instances), or
        ``lib:NAME`` (a library instance: ``iosched library list``)."""
        kind = self.instance_type
        if kind is not None and isinstance(spec, kind):
            return spec
        if kind is not None and isinstance(spec, dict):
            return kind.from_dict(spec)
        if isinstance(spec, Path):
            spec = str(spec)
        if isinstance(spec, str) and os.path.exists(spec) and not os.path.isfile(spec):
            what = "a directory" if os.path.isdir(spec) else "not a regular file (a device, a FIFO or a socket)"
            raise InstanceError(f"{spec!r} is {what}: give a JSON instance file or a built-in name")
        if isinstance(spec, str) and spec.lstrip().startswith("{") and kind is not None:
            return kind.from_json(spec)
        if not isinstance(spec, str) or not spec:
            expected = f"a {kind.__name__}, " if kind is not None else ""
            raise InstanceError(f"a {self.name} instance must be {expected}a dict, a path, JSON text or a built-in "
                                f"name, got {type(spec).__name__} {_short(spec)}")
        if spec.startswith("generate:") and not os.path.exists(spec):
            return self._generated(spec)
        for prefix, source in INSTANCE_SOURCES.items():  # named collections (iosched.library: lib:NAME)
            if spec.startswith(prefix) and not os.path.exists(spec):
                return source(spec[len(prefix):], self)
        try:
            return self.load(spec)
        except InstanceError as e:
            named = [prefix + spec for prefix, source in INSTANCE_SOURCES.items() if _names(source, spec, self)]
            if not named:
                raise
            raise InstanceError(f"{e}; did you mean {named[0]!r}?") from None

    def _generated(self, spec: str):
        parts = spec.split(":", 2)
        try:
            seed, size = int(parts[1]), json.loads(parts[2]) if len(parts) > 2 else {}
        except (IndexError, ValueError):
            raise InstanceError(f"generated instances are generate:SEED:{{size JSON}} (as suites name them), got "
                                f"{_short(spec)}") from None
        if not isinstance(size, dict):
            raise InstanceError(f"the size in {_short(spec)} must be a JSON object, e.g. {{\"size\": 20}}")
        return self.generate_instance(seed, **size)

    def generate_instance(self, seed: int, **size):
        """``generate(seed, **size)`` with the seed and the size parameters' names checked first."""
        check_seed(seed)
        try:
            inspect.signature(self.generate).bind(seed, **size)
        except TypeError as e:
            known = [p for p in inspect.signature(self.generate).parameters if p != "seed"]
            raise ParameterError(f"generate {self.name}: {e}; size parameters: {', '.join(known)}") from None
        return self.generate(seed, **size)

    def read_solution(self, solution):
        """A solution object as it is, or one read from its JSON dict."""
        if isinstance(solution, dict) and self.solution_from_dict is not None:
            return self.solution_from_dict(solution)
        if solution is None or isinstance(solution, (dict, list, str, int, float)):
            raise InstanceError(f"a {self.name} solution must be a solution object or its JSON dict, "
                                f"got {type(solution).__name__} {_short(solution)}")
        return solution


def _names(source: Callable[[str, Problem], Any], spec: str, problem: Problem) -> bool:
    """Whether a named collection holds ``spec`` (a library name given without its ``lib:``)."""
    try:
        source(spec, problem)
    except (InstanceError, ParameterError):
        return False
    return True


def check_seed(seed) -> int:
    """A seed for numpy and the solvers: an integer in [0, 2^63 - 1]."""
    return integer("seed", seed, 0, 2**63 - 1, error=ParameterError)


def _short(value, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


@dataclass
class Method:
    problem: str
    name: str
    run: Callable[..., MethodOutput]
    objective: str
    description: str
    randomized: bool = False
    prepare: Callable[[], None] | None = None  # run by solve before the method's clock (a JIT compilation)
    exact_over: str | None = None  # what its answer is optimal over: EVERY_SOLUTION, HEURISTIC, or a scope's name

    def objective_of(self, params: dict) -> str:
        """The objective the method optimises with ``params``: the value of its ``objective``
        parameter where it takes one (its default is the registered objective), else the registered one."""
        return params.get("objective", self.objective) if "objective" in _signature(self.run) else self.objective

    @property
    def takes_context(self) -> bool:
        """Whether :func:`solve` hands the method the run's :class:`RunContext` (its keyword ``context``)."""
        return CONTEXT in _signature(self.run)


def _signature(fn) -> Mapping[str, inspect.Parameter]:
    return inspect.signature(fn).parameters


CONTEXT = "context"  # a method's keyword for the run's RunContext: solve passes it, no user gives it


def method_parameters(fn: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    """The parameters a user gives a method ``fn(instance, ...)``: its signature's after the instance, without
    the ``context`` that :func:`solve` passes (``iosched list``, the parameter checks and suites see these)."""
    return {name: p for name, p in list(_signature(fn).items())[1:] if name != CONTEXT}


PROBLEMS: dict[str, Problem] = {}
# prefix -> (name after the prefix, Problem) -> instance: named instances a module adds to every problem's
# specs (:func:`register_source`; iosched.library adds ``lib:``), so core needs none of them
INSTANCE_SOURCES: dict[str, Callable[[str, Problem], Any]] = {}
METHODS: dict[str, Method] = {}


def register_problem(problem: Problem) -> None:
    PROBLEMS[problem.name] = problem


def register_source(prefix: str, source: Callable[[str, Problem], Any]) -> None:
    """Instance specs starting ``prefix`` load as ``source(spec without prefix, problem)``, wherever a spec does."""
    INSTANCE_SOURCES[prefix] = source


def plain_summary(doc: str | None) -> str:
    """A docstring's first paragraph as one line of plain text: what ``iosched list`` and the docs' tables print
    (a first line alone stops mid-sentence; reST markup such as ``name`` or :func:`name` shows as name)."""
    paragraph = (doc or "").strip().split("\n\n")[0]
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", " ".join(paragraph.split()))
    return text.replace("``", "")


EVERY_SOLUTION = "every solution"  # exact: its optimum and its bound hold over every solution of the instance
HEURISTIC = "heuristic"  # no optimality claim (its value is still evaluated, and certified where it meets a bound)


def register(problem: str, name: str, objective: str, randomized: bool = False,
             prepare: Callable[[], None] | None = None, exact_over: str | None = None):
    """Decorator: register ``fn(instance, **params) -> MethodOutput`` as ``problem/name``.

    ``exact_over`` says what the method's answer is optimal over, as ``iosched list`` and the docs' table
    print it: :data:`EVERY_SOLUTION` (an exact method: where it ends, its value is optimal over every
    solution of the instance, and it proves a bound valid for every solution), :data:`HEURISTIC`, or a short
    phrase naming the restricted set (the scope) it optimises over, "a time grid, at most `segments` runs per
    job" (its optimum is then reported in ``info`` with that scope, never as the result's bound).

    A method whose budget counts from :func:`solve`'s clock takes a keyword-only ``context=None``: solve passes
    it the run's :class:`RunContext`, which is no parameter of the method's (``iosched list`` does not show it, a
    user cannot give it); called directly, the method has none and counts from its first line.

    ``prepare`` is a one-off step that :func:`solve` runs before it starts the method's clock
    (compiling a kernel, or loading it from a cache); its time is reported apart. A method with an
    ``objective`` parameter optimises the objective it names, and its result reports that one
    (:meth:`Method.objective_of`): the parameter's default must be ``objective``.
    """

    def wrap(fn):
        own = _signature(fn).get("objective")
        if own is not None and own.default != objective:
            raise ValueError(f"{problem}/{name}: registered for {objective!r}, but its objective parameter "
                             f"defaults to {own.default!r}")
        context = _signature(fn).get(CONTEXT)
        if context is not None and (context.kind != inspect.Parameter.KEYWORD_ONLY or context.default is not None):
            raise ValueError(f"{problem}/{name}: its {CONTEXT} parameter must be keyword-only with default None (a "
                             f"direct call has no context)")
        METHODS[f"{problem}/{name}"] = Method(problem, name, fn, objective, plain_summary(fn.__doc__), randomized,
                                              prepare, exact_over)
        return fn

    return wrap


def get_method(problem: str, name: str) -> Method:
    key = f"{problem}/{name}"
    if key not in METHODS:
        known = sorted(m.name for m in METHODS.values() if m.problem == problem)
        raise ParameterError(f"unknown method {name!r} for {problem}; known: {', '.join(known)}")
    return METHODS[key]


@dataclass(frozen=True)
class Parameter:
    """One parameter of a method: its name, default, the values it accepts (from the checks its
    signature declares), and its unit where one is declared."""

    name: str
    default: Any
    accepts: str
    unit: str = ""


def parameters(problem: str, method: str) -> list[Parameter]:
    """The parameters of ``problem/method`` in signature order (``seed`` for randomised methods,
    ``profile`` for those that run a solver)."""
    m = get_method(problem, method)
    declared = declared_checks(m.run)
    out = []
    for name, p in method_parameters(m.run).items():
        checks, none_ok = declared.get(name, ([], False))
        if checks:
            accepts = "; ".join(c.describe() for c in checks) + (", or null" if none_ok else "")
        elif name == "profile":
            accepts = "a profile of solvers.toml (quick, default, thorough ...)"
        else:
            accepts = getattr(p.annotation, "__name__", str(p.annotation)).replace("typing.", "")
        default = None if p.default is inspect.Parameter.empty else p.default
        out.append(Parameter(name, default, accepts, next((c.unit for c in checks if c.unit), "")))
    return out


@dataclass(frozen=True)
class MethodDescription:
    """What ``iosched list PROBLEM METHOD`` prints: the method, its objective and its parameters."""

    problem: str
    method: str
    objective: str
    description: str
    randomized: bool
    parameters: list[Parameter]
    exact_over: str | None = None

    def __str__(self) -> str:
        chosen = any(p.name == "objective" for p in self.parameters)
        other = " (or the one its objective parameter names)" if chosen else ""
        lines = [f"{self.problem}/{self.method}: {self.description}", f"  objective: {self.objective}{other}"
                 + (" (randomised: give --seed)" if self.randomized else ""),
                 f"  exact over: {self.exact_over or 'not stated'}"]
        if not self.parameters:
            lines.append("  no parameters")
        for p in self.parameters:
            unit = f" [{p.unit}]" if p.unit else ""
            lines.append(f"  {p.name}{unit} = {p.default!r}: {p.accepts}")
        return "\n".join(lines)


def describe(problem: str, method: str) -> MethodDescription:
    """``problem/method``'s objective, one-line description and parameters (defaults, accepted
    values, units); ``print`` it for the same text as ``iosched list PROBLEM METHOD``.

    Parameters
    ----------
    problem : str
        The problem's name (``periodic``, ``window``, ``forwarding``, ``filedomain``, ``malleable``).
    method : str
        One of its methods (``iosched.methods(problem)``).

    Returns
    -------
    MethodDescription
        The objective, the description, whether the method is randomised, what it is exact over, and
        each parameter's name, default, accepted values and unit, as :func:`solve` checks them.

    Raises
    ------
    ParameterError
        An unknown problem or method (the message lists the known ones).

    Examples
    --------
    >>> import iosched
    >>> [p.name for p in iosched.describe("periodic", "persched").parameters][:3]
    ['k_prime', 'eps', 't_min']
    """
    m = get_method(problem, method)
    return MethodDescription(problem, method, m.objective, m.description, m.randomized, parameters(problem, method),
                             m.exact_over)


def get_problem(name: str) -> Problem:
    if name not in PROBLEMS:
        raise ParameterError(f"unknown problem {name!r}; known: {', '.join(sorted(PROBLEMS))}")
    return PROBLEMS[name]


CERTIFIED_GAP = 1e-9  # a feasible value this close to a proven bound is optimal, whatever found it


BOUND_TOLERANCE = 1e-6  # a bound past a feasible solution's value by more than this (relative) is wrong


def _note(info: dict, key: str, text: str) -> None:
    """``text`` under ``info[key]``, after what is there already (two dropped bounds both say why)."""
    info[key] = f"{info[key]}; {text}" if info.get(key) else text


def checked_bound(bound, name: str, objective, sense: Sense, info: dict):
    """``bound``, or None when it lies past the evaluated value of a feasible solution by more than
    BOUND_TOLERANCE: no valid bound can (a solver's tolerances or a fault gave it), and it is reported."""
    if bound is None or objective is None:
        return bound
    past = bound - objective if sense == Sense.MIN else objective - bound
    if past > BOUND_TOLERANCE * abs(objective):
        _note(info, "bound_error", f"{name} {bound!r} lies past the evaluated value {objective!r} of a feasible "
                                   f"solution, so it is wrong (a solver's tolerances or a fault): dropped")
        return None
    return bound


def method_profile(method: Method, params: dict):
    """The solver profile ``method`` runs under with ``params``: its ``profile`` parameter, else that parameter's
    default, a name loaded from solvers.toml (a bad file or name is a ParameterError); None for a method
    that takes no profile."""
    own = _signature(method.run).get("profile")
    if own is None:
        return None
    from iosched.solvers import Profile, load_profile

    profile = params.get("profile", own.default)
    if isinstance(profile, Profile):
        return profile
    if not isinstance(profile, str):
        raise ParameterError(f"{method.problem}/{method.name}: profile must be the name of a solvers.toml profile, "
                             f"got {_short(profile)}")
    return load_profile(profile)


def optimality_tolerance(method: Method, params: dict) -> float:
    """The relative gap within which a value meets a bound (the result is then optimal): for a method that
    runs a solver, its profile's ``rel_gap`` (the solver's own idea of optimal), at least 2 BOUND_TOLERANCE
    (solvers' bounds are that far off); for any other method CERTIFIED_GAP."""
    profile = method_profile(method, params)
    return CERTIFIED_GAP if profile is None else profile_tolerance(profile)


def profile_tolerance(profile) -> float:
    """The relative gap within which a value meets a bound for a solve under ``profile``: its ``rel_gap``, at
    least 2 BOUND_TOLERANCE (see :func:`optimality_tolerance`)."""
    return max(CERTIFIED_GAP, profile.rel_gap, 2 * BOUND_TOLERANCE)


def settle(status: Status, objective, bound, gap, tolerance: float, proof: str, info: dict) -> Status:
    """The one rule on ``optimal``, for every problem and method: a result with a solution is optimal when, and
    only when, its evaluated ``objective`` meets ``bound`` (valid for every solution of the reported objective;
    ``proof`` names it) within ``tolerance``. A claim that fails is downgraded, ``info["not_optimal"]`` saying
    why (with a scope's claim the method made in ``info["optimal"]``); a value that meets the bound is
    optimal whatever found it, ``info["optimal"]`` naming the bound."""
    if objective is None or status not in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT):
        return status
    met = gap is not None and gap <= tolerance
    if status == Status.OPTIMAL and not met:
        claim = info.pop("optimal", None)
        why = ("no bound valid for every solution was available" if bound is None else
               f"its value {objective!r} is {gap:.3g} (relative) from {proof} {bound!r}, more than the "
               f"tolerance {tolerance:g}")
        info["not_optimal"] = (f"the method called it optimal{f' ({claim})' if claim else ''}, but {why}: "
                               f"feasible")
        return Status.FEASIBLE
    if status != Status.OPTIMAL and met:
        info["optimal"] = (f"certified: the evaluated value {objective!r} meets {proof} {bound!r} (gap {gap:.3g}, "
                           f"tolerance {tolerance:g})")
        return Status.OPTIMAL
    return status


@dataclass
class Result:
    """One run of one method on one instance, scored by the problem's evaluator (what :func:`solve` returns).

    Attributes
    ----------
    status : Status
        ``optimal`` only where the evaluated objective meets a bound valid for every solution; else
        ``feasible``, ``time_limit``, ``infeasible`` or ``error`` (the method's message in ``info``).
    objective : float or None
        The evaluator's value of the solution (None without a feasible one), in the sense ``sense``
        (``max`` or ``min``) of ``objective_name``.
    bound, gap : float or None
        The best bound valid for every solution (the method's own or the problem's) and the relative
        gap to it.
    solution, evaluation
        The method's solution and the evaluator's verdict on it (``feasible``, ``violations``, every
        objective).
    info : dict
        What the method reports besides (its scope, the solver's status and bound, where it stopped).
    wall_time_s, method_time_s, bound_time_s, prepare_time_s, method_cpu_s : float
        The whole call, the method alone, the problem's bound, the method's one-off preparation, and the
        CPU seconds of the loading and the method.
    """

    problem: str
    instance: str
    method: str
    status: Status
    objective_name: str
    sense: Sense
    objective: float | None
    bound: float | None
    gap: float | None
    wall_time_s: float  # the whole solve: method, evaluation and bound
    params: dict
    seed: int | None
    evaluation: Any
    solution: Any
    info: dict = field(default_factory=dict)
    method_time_s: float | None = None  # the method alone: what compares methods
    bound_time_s: float | None = None  # the problem's bound
    prepare_time_s: float | None = None  # the method's one-off preparation, before its clock (see register)
    method_cpu_s: float | None = None  # CPU seconds (all threads) of loading and the method: under its wall
    #                                    time, the machine was busy; 2 x it with two solver threads
    instance_data: Any = field(default=None, repr=False, compare=False)  # the instance object (for plot)

    def plot(self, path=None, title: str | None = None):
        """The solution's picture (a matplotlib Figure), saved to ``path`` too when given; the
        title names the instance, the method and the status. A result without a solution (an
        error, or a time limit that found nothing) has nothing to draw: ParameterError."""
        if self.solution is None:
            raise ParameterError(f"{self.problem}/{self.method} on {self.instance} ended {self.status.value} "
                                 f"without a solution: nothing to plot")
        if title is None:
            title = f"{self.instance}: {self.method} ({self.status.value})"
        draw = get_problem(self.problem).draw
        if draw is None:  # (every problem registers one)
            raise ParameterError(f"{self.problem} has no picture")
        return draw(self.instance_data, self.solution, path, title)

    def to_dict(self, instance=None) -> dict:
        prob = get_problem(self.problem)
        return {
            "problem": self.problem,
            "instance": self.instance,
            "method": self.method,
            "status": self.status.value,
            "objective_name": self.objective_name,
            "sense": str(self.sense),
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "wall_time_s": self.wall_time_s,
            "method_time_s": self.method_time_s,
            "bound_time_s": self.bound_time_s,
            "prepare_time_s": self.prepare_time_s,
            "method_cpu_s": self.method_cpu_s,
            "params": self.params,
            "seed": self.seed,
            "evaluation": self.evaluation.to_dict() if self.evaluation is not None else None,
            "solution": prob.solution_to_dict(self.solution, instance) if self.solution is not None else None,
            "info": self.info,
        }


def check_method_params(problem: str, method: str, params: dict) -> None:
    """Every parameter of ``params`` known to ``problem/method`` and within its declared range, and
    the solver profile it names readable: a ParameterError naming what is wrong, before any work."""
    m = get_method(problem, method)
    unknown = sorted(set(params) - set(method_parameters(m.run)))
    if unknown:
        known = ", ".join(p.name for p in parameters(problem, method)) or "none"
        raise ParameterError(f"{problem}/{method}: unknown parameter {unknown[0]!r}; its parameters: {known}")
    check_params(m.run, params, f"{problem}/{method}")
    method_profile(m, params)  # a bad solvers.toml or profile name stops here


def _time_limit(m: Method, params: dict) -> float:
    """The method's budget (s): its ``time_limit`` parameter where given, else its profile's (``default``)."""
    if params.get("time_limit") is not None:
        return params["time_limit"]
    from iosched.solvers import load_profile

    return (method_profile(m, params) or load_profile("default")).time_limit


def solve(problem: str, instance, method: str, seed: int | None = None, *, attach_bound: bool = True,
          **params) -> Result:
    """Run ``method`` on ``instance``, evaluate its solution, attach bound and gap.

    Parameters
    ----------
    problem : str
        The problem's name (``periodic``, ``window``, ``forwarding``, ``filedomain``, ``malleable``).
    instance : instance, dict or spec
        As :func:`iosched.load_instance` takes it; loading a named instance counts against the method's budget.
    method : str
        A registered method of the problem (``iosched.methods(problem)``; ``iosched list PROBLEM``).
    seed : int, optional
        For a randomised method (required there for a reproducible run), in [0, 2^63 - 1].
    attach_bound : bool
        False skips the problem's bound (an LP on large instances): the result then carries only the method's own
        bound, if any, and a gap against it.
    **params
        The method's parameters (``iosched.describe(problem, method)``), e.g. ``profile="quick"``,
        ``time_limit=10``; each is checked against its declared range before anything runs.

    Returns
    -------
    Result
        The status (``optimal`` only where the evaluated value meets a bound valid for every solution), the
        evaluated objective, that bound and the gap, the solution and its evaluation, times and ``info``.

    Raises
    ------
    ParameterError
        An unknown problem, method or parameter, a value out of range, or an unreadable solver profile.
    InstanceError
        The instance cannot be read.

    Notes
    -----
    A method that fails while running is a result with status ``error`` (its message in ``info``), not an
    exception.

    Examples
    --------
    >>> import iosched
    >>> res = iosched.solve("periodic", "paper:set1", "persched", time_limit=10)
    >>> res.evaluation.feasible, res.objective <= res.bound
    (True, True)
    """
    prob = get_problem(problem)
    m = get_method(problem, method)
    if seed is not None:
        check_seed(seed)
    if m.randomized:
        params = {**params, "seed": seed}
    check_method_params(problem, method, params)
    name = m.objective_of(params)
    sense = prob.sense(name)  # an objective the problem does not score stops here, before any work
    budget = _time_limit(m, params)  # a bad profile file stops here too, before any kernel compiles
    loading, cpu = time.perf_counter(), time.process_time()
    instance = prob.read_instance(instance)  # generating a named instance counts against the method's budget
    start = time.perf_counter()
    loading, cpu = start - loading, time.process_time() - cpu
    prepare_time, out = None, None
    if m.prepare is not None:
        try:
            m.prepare()
        except Exception as e:  # no kernel, no run: an error result that says which step failed
            out = MethodOutput(None, Status.ERROR,
                               info={"error": f"the method's preparation failed: {type(e).__name__}: {e}"})
        prepare_time = time.perf_counter() - start
        start = time.perf_counter()
    profile = method_profile(m, params)
    # the method's clock starts before the loading; the problem's bound ends with the method's budget, its LPs
    # on the method's backend (a bad profile value is the method's to refuse)
    context = RunContext(start - loading, start - loading + budget, getattr(profile, "solver", "highs"))
    if out is None:
        cpu -= time.process_time()
        try:
            out = m.run(instance, **params, **({CONTEXT: context} if m.takes_context else {}))
        except ParameterError:
            raise
        except Exception as e:  # a failing method is a result (status error), not a crash
            out = MethodOutput(None, Status.ERROR, info={"error": f"{type(e).__name__}: {e}"})
        cpu += time.process_time()
    method_time = time.perf_counter() - start
    trivial = prob.trivial(instance) if prob.trivial is not None else None
    if trivial is not None:
        warnings.warn(trivial, TrivialInstanceWarning, stacklevel=2)
        out.info["trivial"] = trivial
    evaluation = prob.evaluate(instance, out.solution) if out.solution is not None else None
    objective = prob.objective(evaluation, name) if evaluation is not None else None
    status = out.status
    if evaluation is not None and not evaluation.feasible:
        status = Status.ERROR
        out.info["error"] = "the evaluator rejected the solution: " + "; ".join(
            str(v) for v in evaluation.violations[:5])
    bound_start = time.perf_counter()
    outside = None
    try:
        if prob.outside_bound is not None and out.solution is not None:
            outside = prob.outside_bound(instance, name, out.solution)
        bound = (outside[0] if outside else prob.bound(instance, name, context)) if attach_bound else None
    except Exception as e:  # no bound is a weaker result, not a failed one
        bound = None
        _note(out.info, "bound_error", f"{type(e).__name__}: {e}")
    bound_time = time.perf_counter() - bound_start
    feasible = objective if evaluation is not None and evaluation.feasible else None
    bound = checked_bound(bound, "the problem's bound", feasible, sense, out.info)
    method_bound = checked_bound(out.bound, "the method's bound", feasible, sense, out.info)
    own = method_bound is not None and (bound is None or (method_bound > bound if sense == Sense.MIN else
                                                          method_bound < bound))
    bound = method_bound if own else bound
    gap = relative_gap(objective, bound) if status != Status.ERROR else None
    proof = "the problem's bound"
    if gap is not None and own:
        proof = "the method's own bound"
        out.info["gap_against"] = proof + ("" if attach_bound else " (the problem's was not asked for)")
    elif gap is not None and outside:
        proof = out.info["gap_against"] = outside[1]
    elif gap is not None and prob.gap_reference is not None:
        proof = out.info["gap_against"] = prob.gap_reference(instance, name, context)
    status = settle(status, feasible, bound, gap, optimality_tolerance(m, params), proof, out.info)
    return Result(problem, getattr(instance, "name", "instance"), method, status, name, sense,
                  objective, bound, gap, time.perf_counter() - start, params, seed, evaluation, out.solution,
                  out.info, method_time, bound_time, prepare_time, cpu, instance)

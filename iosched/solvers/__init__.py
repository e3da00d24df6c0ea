"""Solve a Pyomo model on the profile's backend (HiGHS by default; Gurobi, SCIP, CPLEX or Xpress: see
:mod:`iosched.solvers.backends`) or a CP-SAT model, under a profile from ``solvers.toml``.

Never raises on a time limit or an infeasible model: the :class:`SolveOutcome`
says what the solver said (status, incumbent, bound, gap, wall time). A backend that is not installed,
or refuses a model for its licence's size, raises a ParameterError saying so.
The profile file is looked up in: the ``path`` argument, ``$IOSCHED_SOLVERS``, ``./solvers.toml``,
then the package's own ``iosched/solvers.toml`` (the default profiles, shipped in the wheel). A profile is
named ``NAME`` or ``NAME:SOLVER`` (``default:scip``: the profile ``default`` with its solver replaced).
"""

from __future__ import annotations

import functools
import gc
import os
import time
import tomllib
from dataclasses import replace
from pathlib import Path

from iosched import validate
from iosched.errors import ParameterError
from iosched.solvers import backends
from iosched.solvers.backends import BACKENDS, LicenceLimit, SolverMissing  # noqa: F401
from iosched.solvers.outcome import Profile, SolveOutcome  # noqa: F401  (re-exported)
from iosched.status import METHOD_START, Status, relative_gap

_RAW = ("highs", "cpsat", *(b for b in BACKENDS if b != "highs"))  # tables of a backend's own options
_KEYS = {"time_limit", "rel_gap", "threads", "seed", "solver", *_RAW}


class Deadline:
    """A method's wall-clock budget (s): every solver call and loop inside the method shares it.

    ``profile.time_limit`` is a limit per method, not per solver call: a method makes one
    deadline (:meth:`for_method`) and hands ``deadline.limit(profile)`` to each solve.
    """

    def __init__(self, seconds: float, start: float | None = None):
        self.seconds = seconds
        self.end = (time.perf_counter() if start is None else start) + seconds

    @classmethod
    def for_method(cls, time_limit: float | None = None, profile: str = "default") -> Deadline:
        """The running method's budget: ``time_limit`` s (None: the profile's ``time_limit``),
        counted from when :func:`iosched.solve` started the method's clock (from now when the
        method is called directly), so work done before the method's first line counts."""
        seconds = load_profile(profile).time_limit if time_limit is None else time_limit
        return cls(seconds, METHOD_START.get())

    def remaining(self) -> float:
        return max(0.0, self.end - time.perf_counter())

    def expired(self) -> bool:
        return time.perf_counter() >= self.end

    def limit(self, profile: Profile) -> Profile:
        """``profile`` with its time limit cut to what is left (at least 10 ms, so a solver still starts)."""
        return replace(profile, time_limit=max(min(profile.time_limit, self.remaining()), 0.01))


DEFAULT_PROFILES = Path(__file__).resolve().parents[1] / "solvers.toml"  # package data: the profiles a wheel ships


def profile_path(path: str | Path | None = None) -> Path:
    """The profile file: ``path``, else ``$IOSCHED_SOLVERS``, else ./solvers.toml, else the package's defaults
    (``iosched/solvers.toml``, package data, so an installed wheel solves from any folder).

    A file named explicitly (argument or environment) must exist: no silent fallback.
    """
    for named, where in ((path, "the path given"), (os.environ.get("IOSCHED_SOLVERS"), "IOSCHED_SOLVERS")):
        if named:
            if not Path(named).is_file():
                raise ParameterError(f"{where} names {str(named)!r}, which is not a readable file")
            return Path(named)
    here = Path("solvers.toml")
    return here if here.is_file() else DEFAULT_PROFILES


def _check_highs(options: dict, where: str) -> None:
    """Every raw HiGHS option must exist and take its value's type (HiGHS itself says)."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for key, value in options.items():
        if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
            raise ParameterError(f"{where}.highs: HiGHS has no option {key!r} taking {value!r}")


def _check_cpsat(options: dict, where: str) -> None:
    """Every raw CP-SAT option must be a SatParameters field taking its value's type."""
    from ortools.sat.python import cp_model

    prm = cp_model.CpSolver().parameters
    for key, value in options.items():
        try:
            if not hasattr(prm, key):
                raise AttributeError(key)
            setattr(prm, key, value)
        except (AttributeError, TypeError, ValueError):
            raise ParameterError(f"{where}.cpsat: CP-SAT has no parameter {key!r} taking {value!r}") from None


def load_profile(name: str = "default", path: str | Path | None = None) -> Profile:
    """The profile ``name`` from solvers.toml, every field checked (errors name file, profile and key);
    ``NAME:SOLVER`` is profile NAME solved on backend SOLVER (which must be installed)."""
    file = profile_path(path)
    if not isinstance(name, str):
        raise ParameterError(f"profile must be a profile name, got {name!r}")
    base, _, solver = name.partition(":")
    try:
        content = file.read_bytes()
    except OSError as e:
        raise ParameterError(f"cannot read solver profiles from {file}: {e}") from None
    profile = _parse_profile(file, content, base)
    if not solver:
        return profile
    if solver not in BACKENDS:
        raise ParameterError(f"profile {name!r}: solver must be one of {', '.join(BACKENDS)}, got {solver!r}")
    backends.require(solver)
    backends.check_options(solver, profile.raw.get(solver, {}), f"{file}: profile {base!r}")
    return replace(profile, name=name, solver=solver)


@functools.lru_cache(maxsize=32)
def _parse_profile(file: Path, content: bytes, name: str) -> Profile:
    """Cached on the file's content: checking raw options imports the solvers once, not per solve."""
    try:
        profiles = tomllib.loads(content.decode())
    except UnicodeDecodeError as e:
        raise ParameterError(f"{file} is not UTF-8 text: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ParameterError(f"{file} is not valid TOML: {e}") from None
    if name not in profiles:
        raise ParameterError(f"unknown solver profile {name!r} in {file}; known: {', '.join(profiles)}")
    p = profiles[name]
    where = f"{file}: profile {name!r}"
    if not isinstance(p, dict):
        raise ParameterError(f"{where} must be a table ([{name}]), got {p!r}")
    unknown = set(p) - _KEYS
    if unknown:
        raise ParameterError(f"{where}: unknown key {sorted(unknown)[0]!r}; known: {', '.join(sorted(_KEYS))}")
    missing = {"time_limit", "rel_gap", "threads", "seed"} - set(p)
    if missing:
        raise ParameterError(f"{where} lacks {sorted(missing)[0]!r}")
    time_limit = validate.number(f"{where}: time_limit", p["time_limit"], 0, 10**7, lo_open=True, error=ParameterError)
    rel_gap = validate.number(f"{where}: rel_gap", p["rel_gap"], 0, 1, error=ParameterError)
    threads = validate.integer(f"{where}: threads", p["threads"], 1, 1024, error=ParameterError)
    seed = validate.integer(f"{where}: seed", p["seed"], 0, 2**31 - 1, error=ParameterError)
    solver = p.get("solver", "highs")
    if solver not in BACKENDS:
        raise ParameterError(f"{where}: solver must be one of {', '.join(BACKENDS)}, got {solver!r}")
    backends.require(solver)
    raw = {}
    for backend in _RAW:
        options = p.get(backend, {})
        if not isinstance(options, dict):
            raise ParameterError(f"{where}: {backend} must be a table ([{name}.{backend}]), got {options!r}")
        if backend == "highs":
            _check_highs(options, where)
        elif backend == "cpsat":
            _check_cpsat(options, where)
        elif backend == solver or (options and backends.version(backend) is not None):
            backends.check_options(backend, options, where)  # an absent backend's table waits until chosen
        raw[backend] = dict(options)
    others = {b: raw.pop(b) for b in list(raw) if b not in ("highs", "cpsat")}
    return Profile(name, time_limit, rel_gap, threads, seed, raw["highs"], raw["cpsat"], solver, others)


def pyomo_highs():
    """Pyomo's HiGHS interface (the newer solver layer). pyomo.environ is imported first: it loads the
    solver plugins, without which the factory does not know 'highs' (iosched imports Pyomo lazily)."""
    return backends.interface("highs")


def solve_pyomo(model, profile: Profile, load: bool = True, warm: bool = False) -> SolveOutcome:
    """Solve ``model`` on the profile's backend (HiGHS by default) through Pyomo.

    With ``load`` the incumbent (if any) is loaded into the model's variables; with ``warm`` the
    variables' current values are handed over as a MIP start (``outcome.start`` says if it was taken).
    """
    return backends.solve_pyomo(model, profile, load=load, warm=warm)


def solve_pyomo_within(build, profile: Profile, deadline: Deadline | None, handover: float, load: bool = True,
                       warm=False):
    """Build a Pyomo model with ``build()`` and solve it within what is left of ``deadline``.

    The solver's own time limit does not count Pyomo handing the model over, which takes
    ``handover`` times the build time (measured per model family by its caller, on HiGHS): that is
    taken off first, with a margin of min(1 s, 10 %) of the budget. Returns (model, outcome, note);
    the outcome is None, and ``note`` says why, when no time would be left for the solver. The
    model's ``_build_s`` is its build time (s). ``warm``: the values ``build`` leaves in the
    variables are a MIP start (see :func:`solve_pyomo`); a function of the built model says whether they are.

    The garbage collector is paused meanwhile: a full collection over a large heap (another
    model built earlier in the process) took 0.5 s of a 0.03 s build and made the estimate
    meaningless; Pyomo's models hold no cycles worth collecting during a solve.
    """
    backends.interface(profile.solver)  # Pyomo's first import is not part of the build time the estimate scales

    paused = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        model = build()
        model._build_s = time.perf_counter() - start
        warm = warm(model) if callable(warm) else warm
        if deadline is None:
            return model, solve_pyomo(model, profile, load=load, warm=warm), ""
        needed = handover * model._build_s
        left = deadline.remaining() - needed - min(1.0, 0.1 * deadline.seconds)
        if left < 0.05:
            return model, None, (f"built in {model._build_s:.3g} s, but {deadline.remaining():.3g} s left and "
                                 f"about {needed:.3g} s to hand it to {profile.solver}")
        return model, solve_pyomo(model, replace(profile, time_limit=min(profile.time_limit, left)), load=load,
                                  warm=warm), ""
    finally:
        if paused:
            gc.enable()


def solve_cpsat(model, profile: Profile):
    """Solve a CP-SAT ``model``; returns the outcome and the solver (to read values).

    CP-SAT reports objective and bound 0 without a solution: mapped by status here.
    """
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    prm = solver.parameters
    prm.max_time_in_seconds = profile.time_limit
    prm.relative_gap_limit = profile.rel_gap
    prm.num_workers = profile.threads
    prm.random_seed = profile.seed
    for key, value in profile.cpsat.items():
        setattr(prm, key, value)
    start = time.perf_counter()
    code = solver.solve(model)
    wall = time.perf_counter() - start
    has = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    if code == cp_model.OPTIMAL:
        status = Status.OPTIMAL
    elif code == cp_model.INFEASIBLE:
        status = Status.INFEASIBLE
    elif code == cp_model.MODEL_INVALID:
        status = Status.ERROR
    elif code == cp_model.UNKNOWN or wall >= 0.95 * profile.time_limit:
        status = Status.TIME_LIMIT
    else:
        status = Status.FEASIBLE
    with_objective = has and model.has_objective()
    obj = solver.objective_value if with_objective else None
    bound = solver.best_objective_bound if with_objective else None
    return SolveOutcome(status, obj, bound, relative_gap(obj, bound), wall, has,
                        solver.status_name(code)), solver

"""Solve a Pyomo model on the profile's backend (HiGHS by default; Gurobi, SCIP, CPLEX, Xpress or CBC: see
:mod:`iosched.solvers.backends`) or a CP-SAT model, under a profile from ``solvers.toml``.

Never raises on a time limit or an infeasible model: the :class:`SolveOutcome`
says what the solver said (status, why it stopped, incumbent, bound, gap, wall time). A backend that is not
installed, or refuses a model for its licence's size, raises a ParameterError saying so.
The profile file is looked up in: the ``path`` argument, ``$IOSCHED_SOLVERS``, ``./solvers.toml``, then the
package's own ``iosched/solvers.toml`` (the default profiles, shipped in the wheel); :func:`profile_source` says
which is in force. A profile is named ``NAME`` or ``NAME:SOLVER`` (``default:scip``: the profile ``default`` with its
solver replaced).
"""

from __future__ import annotations

import functools
import gc
import os
import time
import tomllib
import warnings
from dataclasses import replace
from pathlib import Path

from iosched import validate
from iosched.errors import ParameterError
from iosched.solvers import backends
from iosched.solvers.backends import BACKENDS, LicenceLimit, SolverMissing, shown  # noqa: F401  (re-exported)
from iosched.solvers.backends.cpsat import CPSAT, solve_cpsat  # noqa: F401  (re-exported)
from iosched.solvers.outcome import Profile, SolveOutcome, Stop  # noqa: F401  (re-exported)
from iosched.status import RunContext

# the tables of a backend's own options a profile may hold, in the order they are checked
_RAW = {"highs": BACKENDS["highs"], "cpsat": CPSAT, **{n: b for n, b in BACKENDS.items() if n != "highs"}}
_KEYS = {"time_limit", "rel_gap", "threads", "seed", "solver", *_RAW}
DEFAULT_PROFILES = Path(__file__).resolve().parents[1] / "solvers.toml"  # package data: the profiles a wheel ships


class ProfileFileWarning(UserWarning):
    """The solver profiles come from a solvers.toml nobody named: the working folder's."""


class Deadline:
    """A method's wall-clock budget (s): every solver call and loop inside the method shares it.

    ``profile.time_limit`` is a limit per method, not per solver call: a method makes one
    deadline (:meth:`for_method`) and hands ``deadline.limit(profile)`` to each solve.
    """

    def __init__(self, seconds: float, start: float | None = None):
        self.seconds = seconds
        self.end = (time.perf_counter() if start is None else start) + seconds

    @classmethod
    def for_method(cls, time_limit: float | None = None, profile: str = "default",
                   context: RunContext | None = None) -> Deadline:
        """The running method's budget: ``time_limit`` s (None: the profile's ``time_limit``),
        counted from when :func:`iosched.solve` started the method's clock (``context.method_start``;
        from now when the method is called directly, without a context), so work done before the
        method's first line counts."""
        seconds = load_profile(profile).time_limit if time_limit is None else time_limit
        return cls(seconds, None if context is None else context.method_start)

    @classmethod
    def for_bound(cls, context: RunContext | None) -> Deadline | None:
        """The deadline of the problem's bound that :func:`iosched.solve` attaches after the method: the end
        of the method's budget (``context.bound_end``); None without one (a bound called directly)."""
        if context is None or context.bound_end is None:
            return None
        return cls(0.0, context.bound_end)

    def remaining(self) -> float:
        return max(0.0, self.end - time.perf_counter())

    def expired(self) -> bool:
        return time.perf_counter() >= self.end

    def limit(self, profile: Profile) -> Profile:
        """``profile`` with its time limit cut to what is left (at least 10 ms, so a solver still starts)."""
        return replace(profile, time_limit=max(min(profile.time_limit, self.remaining()), 0.01))



def profile_path(path: str | Path | None = None) -> Path:
    """The profile file: ``path``, else ``$IOSCHED_SOLVERS``, else ./solvers.toml, else the package's defaults
    (``iosched/solvers.toml``, package data, so an installed wheel solves from any folder).

    A file named explicitly (argument or environment) must exist: no silent fallback. The working folder's
    solvers.toml, which nobody named, is said in a warning (once per process): its options apply to every
    solve.
    """
    for named, where in ((path, "the path given"), (os.environ.get("IOSCHED_SOLVERS"), "IOSCHED_SOLVERS")):
        if named:
            if not Path(named).is_file():
                raise ParameterError(f"{where} names {str(named)!r}, which is not a readable file")
            return Path(named)
    here = Path("solvers.toml")
    if here.is_file():
        warnings.warn(f"solver profiles from {here.resolve()}, the working folder's solvers.toml (set "
                      f"IOSCHED_SOLVERS to name another)", ProfileFileWarning, stacklevel=2)
        return here
    return DEFAULT_PROFILES


def profile_source() -> str:
    """Which profile file is in force, and why (``iosched solvers`` says it); never raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            file = profile_path()
    except ParameterError as e:
        return f"none: {e}"
    why = ("named by IOSCHED_SOLVERS" if os.environ.get("IOSCHED_SOLVERS") else
           "iosched's own" if file.resolve() == DEFAULT_PROFILES else "the working folder's")
    return f"{file.resolve()} ({why})"


def load_profile(name: str = "default", path: str | Path | None = None) -> Profile:
    """The profile ``name`` from solvers.toml, every field checked (errors name file, profile and key).

    Parameters
    ----------
    name : str
        A profile of the file (``quick``, ``default``, ``thorough`` in the package's own), or ``NAME:SOLVER``:
        profile NAME solved on backend SOLVER (``highs``, ``gurobi``, ``scip``, ``cplex``, ``xpress``, ``cbc``).
    path : str or Path, optional
        The profile file; else ``$IOSCHED_SOLVERS``, else ./solvers.toml, else the package's
        (:func:`profile_path`).

    Returns
    -------
    Profile
        Time limit (s), relative gap, threads, seed, the backend and its raw options, each checked.

    Raises
    ------
    ParameterError
        The file cannot be read or is not valid TOML, the profile is missing, or a key or value is wrong
        (named with the file and the profile).
    SolverMissing
        ``NAME:SOLVER`` names a backend that is not installed (a ParameterError too).

    Examples
    --------
    >>> from iosched.solvers import load_profile
    >>> p = load_profile("quick:highs")
    >>> p.solver, p.threads >= 1
    ('highs', True)
    """
    file = profile_path(path)
    if not isinstance(name, str):
        raise ParameterError(f"profile must be a profile name, got {shown(name)}")
    base, _, solver = name.partition(":")
    try:
        content = file.read_bytes()
    except OSError as e:
        raise ParameterError(f"cannot read solver profiles from {file}: {e}") from None
    profile = _parse_profile(file, content, base)
    if not solver:
        return profile
    if solver not in BACKENDS:
        raise ParameterError(f"profile {shown(name)}: solver must be one of {', '.join(BACKENDS)}, got {shown(solver)}")
    chosen = backends.require(solver)
    chosen.check_options(chosen.raw(profile), f"{file}: profile {base!r}")
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
    except RecursionError:  # tomllib recurses once per level of nested arrays and inline tables
        raise ParameterError(f"{file} is nested too deeply to be a solver profile file") from None
    if name not in profiles:
        raise ParameterError(f"unknown solver profile {shown(name)} in {file}; known: {shown(list(profiles))}")
    p = profiles[name]
    where = f"{file}: profile {name!r}"
    if not isinstance(p, dict):
        raise ParameterError(f"{where} must be a table ([{name}]), got {shown(p)}")
    unknown = set(p) - _KEYS
    if unknown:
        raise ParameterError(f"{where}: unknown key {shown(sorted(unknown)[0])}; known: {', '.join(sorted(_KEYS))}")
    missing = {"time_limit", "rel_gap", "threads", "seed"} - set(p)
    if missing:
        raise ParameterError(f"{where} lacks {sorted(missing)[0]!r}")
    time_limit = validate.number(f"{where}: time_limit", p["time_limit"], 0, 10**7, lo_open=True, error=ParameterError)
    rel_gap = validate.number(f"{where}: rel_gap", p["rel_gap"], 0, 1, error=ParameterError)
    threads = validate.integer(f"{where}: threads", p["threads"], 1, 1024, error=ParameterError)
    seed = validate.integer(f"{where}: seed", p["seed"], 0, 2**31 - 1, error=ParameterError)
    solver = p.get("solver", "highs")
    if not isinstance(solver, str) or solver not in BACKENDS:
        raise ParameterError(f"{where}: solver must be one of {', '.join(BACKENDS)}, got {shown(solver)}")
    backends.require(solver)
    raw = {}
    for table, engine in _RAW.items():
        options = p.get(table, {})
        if not isinstance(options, dict):
            raise ParameterError(f"{where}: {table} must be a table ([{name}.{table}]), got {shown(options)}")
        if table == solver or (options and engine.version() is not None):
            engine.check_options(options, where)  # an absent backend's table waits until it is chosen
        raw[table] = dict(options)
    highs, cpsat = raw.pop("highs"), raw.pop("cpsat")
    return Profile(name, time_limit, rel_gap, threads, seed, highs, cpsat, solver, raw)


def pyomo_highs():
    """Pyomo's HiGHS interface (the newer solver layer). pyomo.environ is imported first: it loads the
    solver plugins, without which the factory does not know 'highs' (iosched imports Pyomo lazily)."""
    return backends.interface("highs")


def solve_pyomo(model, profile: Profile, load: bool = True, warm: bool = False, root: bool = False) -> SolveOutcome:
    """Solve ``model`` on the profile's backend (HiGHS by default) through Pyomo.

    Parameters
    ----------
    model : pyomo.environ.ConcreteModel
        A MILP or LP with one objective.
    profile : Profile
        The limits (time, gap, threads, seed) and the backend (:func:`load_profile`).
    load : bool
        Load the incumbent (if any) into the model's variables.
    warm : bool
        Hand the variables' current values over as a MIP start (``outcome.start`` says if it was taken).
    root : bool
        Read the dual bound after the root node where the backend reports one (``outcome.root_bound``, else
        ``outcome.root_why`` says why not).

    Returns
    -------
    SolveOutcome
        The verdict ``status``, why the backend stopped (``stop``, and its own ``code``), the incumbent's
        ``objective``, the ``bound`` and ``gap``, the wall time. A time limit or an infeasible model is an
        outcome, never an exception; so is a backend's own failure (status ``error``, its message kept).

    Raises
    ------
    SolverMissing
        The profile's backend is not installed.
    LicenceLimit
        The backend refused the model for its size under a size-limited licence.
    """
    return backends.solve_pyomo(model, profile, load=load, warm=warm, root=root)


def solve_relaxation(model, profile: Profile) -> SolveOutcome:
    """The LP relaxation of the Pyomo ``model`` (integrality relaxed, on a copy) on the profile's backend: its
    value is the outcome's objective, its solve time the outcome's wall time."""
    return backends.backend(profile.solver).solve_relaxation(model, profile)


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
    model built earlier in the process) can take many times a small build and make the estimate
    meaningless (benchmarks/speed.md, constants); Pyomo's models hold no cycles worth collecting
    during a solve.
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

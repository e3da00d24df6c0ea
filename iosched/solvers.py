"""Solve a Pyomo model on HiGHS or a CP-SAT model under a profile from ``solvers.toml``.

Never raises on a time limit or an infeasible model: the :class:`SolveOutcome`
says what the solver said (status, incumbent, bound, gap, wall time).
The profile file is looked up in: the ``path`` argument, ``$IOSCHED_SOLVERS``,
``./solvers.toml``, then the ``solvers.toml`` of the source checkout.
"""

from __future__ import annotations

import os
import time
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from iosched.core import Status, relative_gap
from iosched.errors import ParameterError

_KEYS = {"time_limit", "rel_gap", "threads", "seed", "highs", "cpsat"}


@dataclass(frozen=True)
class Profile:
    """Limits for one solve: seconds, relative gap, threads, seed, and raw backend options."""

    name: str
    time_limit: float
    rel_gap: float
    threads: int
    seed: int
    highs: dict = field(default_factory=dict)
    cpsat: dict = field(default_factory=dict)


class Deadline:
    """A method's wall-clock budget (s): every solver call and loop inside the method shares it.

    ``profile.time_limit`` is a limit per method, not per solver call: a method makes one
    ``Deadline(profile.time_limit)`` and hands ``deadline.limit(profile)`` to each solve.
    """

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.perf_counter() + seconds

    def remaining(self) -> float:
        return max(0.0, self.end - time.perf_counter())

    def expired(self) -> bool:
        return time.perf_counter() >= self.end

    def limit(self, profile: Profile) -> Profile:
        """``profile`` with its time limit cut to what is left (at least 10 ms, so a solver still starts)."""
        return replace(profile, time_limit=max(min(profile.time_limit, self.remaining()), 0.01))


def profile_path(path: str | Path | None = None) -> Path:
    candidates = [path, os.environ.get("IOSCHED_SOLVERS"), "solvers.toml",
                  Path(__file__).resolve().parent.parent / "solvers.toml"]
    for c in candidates:
        if c and Path(c).is_file():
            return Path(c)
    raise ParameterError("no solvers.toml found (give a path or set IOSCHED_SOLVERS)")


def load_profile(name: str = "default", path: str | Path | None = None) -> Profile:
    """The profile ``name`` from solvers.toml, with its fields checked."""
    file = profile_path(path)
    with open(file, "rb") as f:
        profiles = tomllib.load(f)
    if name not in profiles:
        raise ParameterError(f"unknown solver profile {name!r} in {file}; known: {', '.join(profiles)}")
    p = profiles[name]
    unknown = set(p) - _KEYS
    if unknown:
        raise ParameterError(f"unknown key {sorted(unknown)[0]!r} in profile {name!r} of {file}")
    missing = {"time_limit", "rel_gap", "threads", "seed"} - set(p)
    if missing:
        raise ParameterError(f"profile {name!r} of {file} lacks {sorted(missing)[0]!r}")
    if not p["time_limit"] > 0 or p["rel_gap"] < 0 or int(p["threads"]) < 1:
        raise ParameterError(
            f"profile {name!r}: time_limit > 0, rel_gap >= 0, threads >= 1 required, got {p}")
    return Profile(name, float(p["time_limit"]), float(p["rel_gap"]), int(p["threads"]), int(p["seed"]),
                   dict(p.get("highs", {})), dict(p.get("cpsat", {})))


@dataclass
class SolveOutcome:
    """What a solver reported. ``objective`` is the incumbent (None without one)."""

    status: Status
    objective: float | None
    bound: float | None
    gap: float | None
    wall_time_s: float
    has_solution: bool
    message: str = ""


def solve_pyomo(model, profile: Profile, load: bool = True) -> SolveOutcome:
    """Solve ``model`` with HiGHS through Pyomo's newer solver interface.

    With ``load`` the incumbent (if any) is loaded into the model's variables.
    """
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.results import SolutionStatus
    from pyomo.contrib.solver.common.results import TerminationCondition as TC

    opt = SolverFactory("highs")
    options = {"random_seed": profile.seed, **profile.highs}
    start = time.perf_counter()
    try:
        res = opt.solve(model, time_limit=profile.time_limit, rel_gap=profile.rel_gap,
                        threads=profile.threads, load_solutions=False,
                        raise_exception_on_nonoptimal_result=False, solver_options=options)
    except Exception as e:  # a solver crash is a result too, not an exception for the caller
        return SolveOutcome(Status.ERROR, None, None, None, time.perf_counter() - start, False, repr(e))
    wall = time.perf_counter() - start
    tc, ss = res.termination_condition, res.solution_status
    has = ss in (SolutionStatus.feasible, SolutionStatus.optimal)
    if tc == TC.convergenceCriteriaSatisfied and ss == SolutionStatus.optimal:
        status = Status.OPTIMAL
    elif tc == TC.maxTimeLimit:
        status = Status.TIME_LIMIT
    elif tc in (TC.provenInfeasible, TC.locallyInfeasible, TC.infeasibleOrUnbounded):
        status = Status.INFEASIBLE
    elif has:
        status = Status.FEASIBLE
    else:
        status = Status.ERROR
    obj = res.incumbent_objective if has else None
    bound = res.objective_bound
    if bound is not None and abs(bound) == float("inf"):
        bound = None
    if has and load:
        res.solution_loader.load_vars()
    return SolveOutcome(status, obj, bound, relative_gap(obj, bound), wall, has, str(tc.name))


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

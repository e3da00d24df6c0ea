"""What a solve is given (a :class:`Profile` of ``solvers.toml``) and what it gives back (a
:class:`SolveOutcome`), shared by :mod:`iosched.solvers` and its backends.

An outcome answers two questions apart, as Pyomo's newer solver interface does: why the solver stopped
(:class:`Stop`, read from the backend's own status code through its table) and what that means for the
result (the verdict :class:`~iosched.status.Status`, one rule for every backend: :func:`verdict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from iosched.status import Status, relative_gap


class Stop(StrEnum):
    """Why a backend stopped, whatever its own code for it. Whether it holds a solution is said apart
    (``has_solution``): a time limit is a stop with or without an incumbent."""

    OPTIMAL = "optimal"  # proved optimal (for a MILP: within the profile's gap)
    TIME_LIMIT = "time_limit"
    OTHER_LIMIT = "other_limit"  # a node, iteration, solution, work, memory or objective limit
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    INTERRUPTED = "interrupted"  # by the user or a callback
    LICENCE = "licence"  # the licence refused the model or was lost
    NUMERICS = "numerics"  # stopped by numerical trouble
    ERROR = "error"  # the backend failed (reading, presolve, a crash)
    UNKNOWN = "unknown"  # the backend itself says it does not know
    UNLISTED = "unlisted"  # a code its backend's table does not list (logged, and named in the outcome)


def verdict(stop: Stop, has_solution: bool) -> Status:
    """The result's status, one rule for every backend: optimal only when proved and a solution is held;
    a time limit stays a time limit (with its incumbent or without); infeasible where the backend proved
    there is no solution (a model infeasible or unbounded has none: our models are bounded); otherwise
    feasible with a solution, an error without one."""
    if stop is Stop.OPTIMAL and has_solution:
        return Status.OPTIMAL
    if stop is Stop.TIME_LIMIT:
        return Status.TIME_LIMIT
    if stop in (Stop.INFEASIBLE, Stop.INFEASIBLE_OR_UNBOUNDED):
        return Status.INFEASIBLE
    return Status.FEASIBLE if has_solution else Status.ERROR


@dataclass(frozen=True)
class Profile:
    """Limits for one solve: seconds, relative gap, threads, seed, the MILP/LP backend (``solver``), and raw
    backend options (``highs``, ``cpsat``, and ``raw``: backend name -> its options)."""

    name: str
    time_limit: float
    rel_gap: float
    threads: int
    seed: int
    highs: dict = field(default_factory=dict)
    cpsat: dict = field(default_factory=dict)
    solver: str = "highs"
    raw: dict = field(default_factory=dict)


@dataclass
class SolveOutcome:
    """What a solver reported. ``objective`` is the incumbent (None without one); ``stop`` why it stopped and
    ``code`` the backend's own status code behind it; ``root_bound`` the dual bound after the root node, where
    it was asked for and the backend reports one (``root_why`` says why not otherwise)."""

    status: Status
    objective: float | None
    bound: float | None
    gap: float | None
    wall_time_s: float
    has_solution: bool
    message: str = ""
    start: dict | None = None  # with a MIP start: {"taken": bool, "value": the backend's value of it or None}
    stop: Stop | None = None
    code: str | None = None
    root_bound: float | None = None
    root_why: str = ""
    nodes: int | None = None  # branch-and-bound nodes the backend processed, where it reports them

    @property
    def stopped(self) -> str:
        """Why it stopped, in words, the time limit said with or without its incumbent."""
        if self.stop is None:
            return self.message
        reason = self.stop.value.replace("_", " ")
        if self.stop is Stop.TIME_LIMIT:
            reason += ", with an incumbent" if self.has_solution else ", without a solution"
        return reason if self.code is None else f"{reason} ({self.code})"


@dataclass
class Answer:
    """What one backend call said, before :func:`verdict` and the clock make an outcome of it: the stop and
    the code behind it, whether a solution is held, its objective, the backend's bound, a message, its log
    (for the MIP start report), the column values and row duals (array models and LPs), the root node's bound and
    the nodes processed."""

    stop: Stop
    code: str
    has_solution: bool
    objective: float | None = None
    bound: float | None = None
    message: str = ""
    log: str | None = ""  # None where the backend's log file could not be read (a MIP start's report unknown)
    x: np.ndarray | None = None  # column values, array models and LPs only
    duals: np.ndarray | None = None  # row duals, LPs only
    root_bound: float | None = None
    root_why: str = ""
    nodes: int | None = None

    def outcome(self, wall_time_s: float, start: dict | None = None) -> SolveOutcome:
        obj = self.objective if self.has_solution else None
        return SolveOutcome(verdict(self.stop, self.has_solution), obj, self.bound, relative_gap(obj, self.bound),
                            wall_time_s, self.has_solution, self.message, start, self.stop, self.code,
                            self.root_bound, self.root_why, self.nodes)

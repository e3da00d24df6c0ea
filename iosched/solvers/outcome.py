"""What a solve is given (a :class:`Profile` of ``solvers.toml``) and what it gives back (a
:class:`SolveOutcome`): shared by :mod:`iosched.solvers` and its backends."""

from __future__ import annotations

from dataclasses import dataclass, field

from iosched.status import Status


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
    """What a solver reported. ``objective`` is the incumbent (None without one)."""

    status: Status
    objective: float | None
    bound: float | None
    gap: float | None
    wall_time_s: float
    has_solution: bool
    message: str = ""
    start: dict | None = None  # with a MIP start: {"taken": bool, "value": the backend's value of it or None}

"""The MILP/LP backends a profile can name (``solver = "highs"`` by default), one module each: what it needs
installed, how the profile's limits map onto its own options, its one table of native status codes, its
licence limit, and its paths for a Pyomo model, an array model and an array LP, which report the same
statuses and bounds on every backend. CP-SAT, the solver of the CP models, is beside them
(:mod:`iosched.solvers.backends.cpsat`).

The profile's four limits mean the same everywhere (each backend's ``LIMITS`` names its options):
``time_limit`` (s), ``rel_gap`` (stop once |incumbent - bound| <= rel_gap |incumbent|; SCIP's divides by
min(|incumbent|, |bound|), so it stops no later), ``threads``, ``seed``.

A new backend is one module here (a :class:`~iosched.solvers.backends.base.Backend` subclass), its import
below and its place in :data:`BACKENDS`: profiles, ``iosched solvers``, ``bound --solver`` and the tests
find it there.
"""

from __future__ import annotations

from iosched.errors import ParameterError
from iosched.solvers.backends.base import Backend, LicenceLimit, SolverMissing, shown  # noqa: F401  (re-exported)
from iosched.solvers.backends.cbc import Cbc
from iosched.solvers.backends.cplex import Cplex
from iosched.solvers.backends.gurobi import Gurobi
from iosched.solvers.backends.highs import Highs
from iosched.solvers.backends.scip import Scip
from iosched.solvers.backends.xpress import Xpress
from iosched.solvers.outcome import Profile, SolveOutcome, Stop

BACKENDS: dict[str, Backend] = {b.name: b for b in (Highs(), Gurobi(), Scip(), Cplex(), Xpress(), Cbc())}


def backend(name: str) -> Backend:
    """The backend ``name`` (a ParameterError naming the known ones otherwise)."""
    if name not in BACKENDS:
        raise ParameterError(f"solver must be one of {', '.join(BACKENDS)}, got {shown(name)}")
    return BACKENDS[name]


def version(name: str) -> str | None:
    """The installed version of ``name``'s package (or program), None when it is not installed."""
    return backend(name).version()


def require(name: str) -> Backend:
    """The backend ``name``, installed: else SolverMissing naming what to install."""
    return backend(name).require()


def check_options(name: str, options: dict, where: str) -> None:
    """Every raw option of ``[profile.<name>]`` must exist in that backend and take its value, and none may
    write files (see :meth:`Backend.check_options`)."""
    backend(name).check_options(options, where)


def interface(name: str, warm: bool = False):
    """Pyomo's interface to backend ``name`` (with ``warm``, one that hands the variables' values over)."""
    return backend(name).interface(warm)


def solve_pyomo(model, profile: Profile, load: bool = True, warm: bool = False, root: bool = False) -> SolveOutcome:
    """Solve the Pyomo ``model`` on ``profile.solver`` (see :meth:`~iosched.solvers.backends.pyomo_path.PyomoPath.
    solve_pyomo`)."""
    return backend(profile.solver).solve_pyomo(model, profile, load=load, warm=warm, root=root)


def licence(name: str) -> str:
    """The size limit of ``name``'s licence here: "none" for a backend without one, else whether a model one
    variable past its community limit is refused (a trivial LP, solved in well under a second)."""
    b = require(name)
    if not b.size_limit:
        return "none"
    import pyomo.environ as pe

    m = pe.ConcreteModel()
    m.x = pe.Var(range(b.size_limit + 1), bounds=(0, 1))
    m.c = pe.Constraint(expr=sum(m.x.values()) <= 1)
    m.o = pe.Objective(expr=sum(m.x.values()), sense=pe.maximize)
    try:
        out = b.solve_pyomo(m, Profile("licence", 10.0, 1e-4, 1, 0, solver=name), load=False)
    except LicenceLimit:
        return b.licence
    return "full (a model past the community limit solved)" if out.stop is Stop.OPTIMAL else \
        f"unknown (the probe ended {out.status.value}: {out.message})"


def inventory(probe: bool = True) -> list[dict]:
    """Every backend: name, package, installed version (None if absent), the Pyomo interface used, its licence
    limit (probed when ``probe``) and what it can do."""
    rows = []
    for name, b in BACKENDS.items():
        v = b.version()
        row = {"solver": name, "package": b.package, "version": v, "pyomo": b.pyomo,
               "mip_start": b.mip_start, "root_bound": b.root_bound, "incremental_lp": b.incremental_lp}
        if v is None:
            row["licence"] = None
            row["install"] = b.install()
        else:
            try:
                row["licence"] = licence(name) if probe else (b.licence or "none")
            except Exception as e:  # an installed backend that fails to start (no licence at all ...)
                row["licence"] = f"unusable: {type(e).__name__}: {e}"
        rows.append(row)
    return rows

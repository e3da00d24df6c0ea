"""The MILP/LP backends a profile can name (``solver = "highs"`` by default): what each needs installed,
how the profile's limits map onto its own options, its licence limit, and one Pyomo solve that reports
the same statuses and bounds on every backend.

The profile's four limits mean the same everywhere:

* ``time_limit`` (s): HiGHS ``time_limit``, Gurobi ``TimeLimit``, SCIP ``limits/time``, CPLEX
  ``timelimit``, Xpress ``timelimit``, CBC ``sec``;
* ``rel_gap``: stop once |incumbent - bound| <= rel_gap |incumbent| (HiGHS ``mip_rel_gap``, Gurobi
  ``MIPGap``, CPLEX ``mip.tolerances.mipgap``, Xpress ``miprelstop``, CBC ``ratio``); SCIP's ``limits/gap``
  divides by min(|incumbent|, |bound|), so it stops no later than the others;
* ``threads``: HiGHS ``threads``, Gurobi ``Threads``, CPLEX ``threads``, Xpress ``threads``, CBC
  ``threads``; SCIP solves on one thread (``lp/threads`` caps its LP solver);
* ``seed``: HiGHS ``random_seed``, Gurobi ``Seed``, SCIP ``randomization/randomseedshift``, CPLEX
  ``randomseed``, Xpress ``randomseed``, CBC ``randomCbcSeed``.

HiGHS, Gurobi and SCIP go through Pyomo's newer interface (``pyomo.contrib.solver``); CPLEX and Xpress,
which it does not cover, through the older direct interfaces (``cplex_direct``, ``xpress_direct``); CBC,
a program rather than a Python package (Debian's ``coinor-cbc``), through Pyomo's ``cbc`` interface, which
writes an LP file and runs it.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import io
import math
import re
import shutil
import subprocess
import time
import warnings
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

from iosched.errors import ParameterError
from iosched.solvers.outcome import Profile, SolveOutcome
from iosched.status import Status, relative_gap


class SolverMissing(ParameterError):
    """The profile names a backend whose Python package is not installed."""


class LicenceLimit(ParameterError):
    """The backend refused the model for its size under a size-limited licence."""


@dataclass(frozen=True)
class Backend:
    """One MILP/LP backend: its pip package, module, Pyomo interface, and how it names the profile's seed."""

    name: str
    package: str  # pip install <package>
    module: str  # import <module>
    pyomo: str  # the Pyomo solver factory name
    contrib: bool  # Pyomo's newer interface (else the older direct one)
    seed_option: str
    licence: str  # the size limit of the licence its wheel ships, "" for none
    size_limit: int  # a model of more variables than this exceeds that licence (0: no limit)
    executable: str = ""  # a program on PATH instead of a Python module (CBC)


BACKENDS = {
    "highs": Backend("highs", "highspy", "highspy", "highs", True, "random_seed", "", 0),
    "gurobi": Backend("gurobi", "gurobipy", "gurobipy", "gurobi_direct", True, "Seed",
                      "size-limited licence of the pip wheel: 2,000 variables and 2,000 constraints", 2000),
    "scip": Backend("scip", "pyscipopt", "pyscipopt", "scip_direct", True, "randomization/randomseedshift", "", 0),
    "cplex": Backend("cplex", "cplex", "cplex", "cplex_direct", False, "randomseed",
                     "Community Edition: 1,000 variables and 1,000 constraints", 1000),
    "xpress": Backend("xpress", "xpress", "xpress", "xpress_direct", False, "randomseed",
                      "community licence: 5,000 rows and columns together", 5000),
    "cbc": Backend("cbc", "coinor-cbc", "", "cbc", False, "randomCbcSeed", "", 0, executable="cbc"),
}

# how each backend words a size refusal under a limited licence
_LICENCE_REFUSAL = re.compile(r"size-limited license|Problem size limits exceeded|too many rows and columns|"
                              r"Error\s+1016|\b10010\b", re.IGNORECASE)


def backend(name: str) -> Backend:
    """The backend ``name`` (a ParameterError naming the known ones otherwise)."""
    if name not in BACKENDS:
        raise ParameterError(f"solver must be one of {', '.join(BACKENDS)}, got {name!r}")
    return BACKENDS[name]


def version(name: str) -> str | None:
    """The installed version of ``name``'s package (or program), None when it is not installed."""
    b = backend(name)
    if b.executable:
        return _program_version(shutil.which(b.executable))
    if importlib.util.find_spec(b.module) is None:
        return None
    return _package_version(b.package)


@functools.cache
def _package_version(package: str) -> str:
    """``package``'s installed version, read once per process: the metadata scan took 0.7 ms, and every
    LP built checks its backend (the order LP builds up to 720 on six jobs)."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@functools.lru_cache(maxsize=4)
def _program_version(path: str | None) -> str | None:
    """The version CBC at ``path`` prints on starting ("Version: 2.10.8"), None without a program there."""
    if path is None:
        return None
    try:
        out = subprocess.run([path, "-quit"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"Version:\s*(\S+)", out)
    return found.group(1) if found else "unknown"


def require(name: str) -> Backend:
    """The backend ``name``, its package importable: else SolverMissing naming what to install."""
    b = backend(name)
    if version(name) is None and b.executable:
        raise SolverMissing(f"solver {name!r} is not installed: the {b.executable} program must be on PATH "
                            f"(apt-get install {b.package}, or conda install -c conda-forge coin-or-cbc)")
    if version(name) is None:
        extra = f" (or pip install 'iosched[{name}]')" if name != "highs" else ""
        raise SolverMissing(f"solver {name!r} is not installed: pip install {b.package}{extra}")
    return b


def check_options(name: str, options: dict, where: str) -> None:
    """Every raw option of ``[profile.<name>]`` must exist in that backend and take its value (the
    backend itself says); HiGHS's are checked by :func:`iosched.solvers._check_highs`."""
    if not options:
        return
    require(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Xpress warns about its community licence
        setter = _option_setter(name)
        for key, value in options.items():
            try:
                setter(key, value)
            except Exception:  # each backend raises its own errors (and TypeError) for a bad name or value
                raise ParameterError(f"{where}.{name}: {name} has no option {key!r} taking {value!r}") from None


def _option_setter(name: str):
    """A function (key, value) that sets one raw option on a throwaway model of backend ``name``."""
    if name == "cbc":
        return _cbc_option
    if name == "gurobi":
        import gurobipy as gp

        env = gp.Env(empty=True)
        env.setParam("OutputFlag", 0)
        return env.setParam
    if name == "scip":
        import pyscipopt

        return pyscipopt.Model().setParam
    if name == "cplex":
        import cplex

        c = cplex.Cplex()

        def set_cplex(key, value):
            target = c.parameters
            for piece in key.split("_"):  # cplex_direct's spelling: mip_tolerances_mipgap
                target = getattr(target, piece)
            target.set(value)

        return set_cplex
    import xpress

    return xpress.problem().setControl


def _cbc_option(key: str, value) -> None:
    """Raise where CBC does not know the command-line option ``-key value`` (CBC itself says)."""
    out = subprocess.run([shutil.which("cbc"), f"-{key}", str(value), "-quit"], capture_output=True, text=True,
                         timeout=30).stdout
    said = re.search(r".*(?:No match for|illegal|out of range|Possible options for).*", out, re.IGNORECASE)
    if said:
        raise ValueError(said.group(0))


def options(profile) -> dict:
    """The profile's limits in ``profile.solver``'s own option names, then its raw options."""
    b = backend(profile.solver)
    raw = profile.highs if b.name == "highs" else profile.raw.get(b.name, {})
    if b.contrib:
        return {b.seed_option: profile.seed, **raw}
    if b.name == "cplex":
        return {"timelimit": float(profile.time_limit), "mip_tolerances_mipgap": float(profile.rel_gap),
                "threads": profile.threads, b.seed_option: profile.seed, **raw}
    if b.name == "cbc":
        return {"sec": float(profile.time_limit), "ratio": float(profile.rel_gap), "threads": profile.threads,
                b.seed_option: profile.seed, **raw}
    return {"timelimit": float(profile.time_limit), "miprelstop": float(profile.rel_gap),
            "threads": profile.threads, b.seed_option: profile.seed, **raw}


def model_size(model) -> tuple[int, int]:
    """(variables, constraints) of a Pyomo model, as the backend receives them."""
    from pyomo.core.base.constraint import Constraint
    from pyomo.core.base.var import Var

    variables = sum(1 for _ in model.component_data_objects(Var, active=True, descend_into=True))
    constraints = sum(1 for _ in model.component_data_objects(Constraint, active=True, descend_into=True))
    return variables, constraints


def licence_error(name: str, error: Exception, variables: int, constraints: int) -> LicenceLimit | None:
    """A LicenceLimit naming the solver, the model's size and the limit, when ``error`` is ``name``'s
    refusal of a model too large for its licence; None for any other error."""
    if not _LICENCE_REFUSAL.search(str(error)):
        return None
    b = backend(name)
    return LicenceLimit(f"{name} refused the model ({variables} variables, {constraints} constraints): too large "
                        f"for its {b.licence or 'licence'} ({str(error).strip()}). Solve it with another solver "
                        f"(a profile with solver = \"highs\" or \"scip\", e.g. --profile default:highs) or with "
                        f"a full {name} licence")


# what each backend's log says when it takes a MIP start, and its value
_START_TAKEN = {
    "highs": re.compile(r"MIP start solution is feasible, objective value is\s+(\S+)|"  # a partial start: completed
                        r"user-supplied values of discrete variables[\s\S]*?Model status\s*:\s*Optimal\s*\n"
                        r"Objective value\s*:\s*(\S+)"),
    "gurobi": re.compile(r"(?:Loaded user MIP start|User MIP start produced solution) with objective\s+(\S+)"),
    "scip": re.compile(r"feasible solution (?:found by completesol heuristic after \S+ seconds, objective value|"
                       r"given by solution candidate storage, new primal bound)\s+(\S+)"),
    "cplex": re.compile(r"MIP start '[^']*' defined initial solution with objective\s+(\S+)"),
    "xpress": re.compile(r"Solution found:\s+(\S+)\s+Time:\s+\S+\s+Heuristic: U\b|"  # U: the user's solution
                         r"User solution \([^)]*\) accepted.*\n\s*U\s+(\S+)"),
    "cbc": re.compile(r"MIPStart provided solution with cost\s+(\S+)"),
}


def start_report(name: str, log: str) -> dict:
    """Whether ``name``'s log shows the MIP start taken, and its value there (None where not printed)."""
    found = _START_TAKEN[name].search(log or "")
    if not found:
        return {"taken": False, "value": None}
    value = next((g for g in found.groups() if g), None)
    try:
        value = float(value.rstrip(".")) if value is not None else None  # CPLEX ends its line with a dot
    except ValueError:
        value = None
    return {"taken": True, "value": value}


def interface(name: str, warm: bool = False):
    """Pyomo's interface to backend ``name`` (with ``warm``, HiGHS's hands the variables' values over as a
    start: Pyomo's own ignores them). pyomo.environ is imported first: it loads the solver plugins."""
    import pyomo.environ as pe

    b = require(name)
    if not b.contrib:
        return pe.SolverFactory(b.pyomo)
    from pyomo.contrib.solver.common.factory import SolverFactory

    if name == "highs" and warm:
        return _warm_highs()()
    return SolverFactory(b.pyomo)


def _warm_highs():
    import numpy as np
    from pyomo.contrib.solver.solvers.highs import Highs

    class WarmHighs(Highs):
        """Pyomo's HiGHS interface that hands the variables' current values to HiGHS (``setSolution``,
        a partial solution where some have none) before it runs."""

        def _solve(self):
            cols, values = [], []
            for vid, col in self._pyomo_var_to_solver_var_map.items():
                value = self._vars[vid][0].value
                if value is not None:
                    cols.append(col)
                    values.append(float(value))
            if cols:
                self._solver_model.setSolution(len(cols), np.asarray(cols, dtype=np.int32), np.asarray(values))
            return super()._solve()

    return WarmHighs


def _objective_sense(model) -> int:
    """+1 for a minimised objective, -1 for a maximised one."""
    from pyomo.core.base.objective import Objective

    obj = next(model.component_data_objects(Objective, active=True, descend_into=True))
    return 1 if obj.is_minimizing() else -1


def _finite(value) -> float | None:
    return float(value) if value is not None and math.isfinite(value) and abs(value) < 1e30 else None


# Pyomo's cbc interface writes only the integer variables' nonzero values as the start, and CBC scores the point it
# makes of them as given: 95,822.3 for DFRA's 1,658.3 on forwarding random:0:20 (its own heuristic then finds
# 1,658.3), 0.125 for PerSched's 0.208 on periodic milp. So no start goes to CBC from a Pyomo model; array
# models hand CBC every column's value (``_mps_cbc``), which it takes at its value.
CBC_START = ("not handed over: Pyomo's cbc interface gives CBC only the integer values, which CBC scores as a "
             "worse point")


def solve_pyomo(model, profile, load: bool = True, warm: bool = False):
    """Solve the Pyomo ``model`` on ``profile.solver`` under the profile's limits: a SolveOutcome whose
    status, incumbent and bound (the backend's best bound, not recomputed) mean the same on every backend.

    With ``warm`` the variables' current values go to the backend as a MIP start, and ``outcome.start``
    says whether its log shows it taken, and its value there. A licence's size refusal raises
    LicenceLimit; any other failure of the backend is an ERROR outcome, not an exception."""
    b = require(profile.solver)
    start = time.perf_counter()
    handed = warm and b.name != "cbc"
    try:
        if b.contrib:
            status, obj, bound, has, message, log, loader = _solve_contrib(model, profile, b, handed)
        else:
            status, obj, bound, has, message, log, loader = _solve_legacy(model, profile, b, handed)
    except Exception as e:  # a solver crash is a result too, not an exception for the caller
        refused = licence_error(b.name, e, *model_size(model))
        if refused is not None:
            raise refused from None
        return SolveOutcome(Status.ERROR, None, None, None, time.perf_counter() - start, False, repr(e))
    wall = time.perf_counter() - start
    if has and load:
        loader()
    outcome = SolveOutcome(status, obj, bound, relative_gap(obj, bound), wall, has, message)
    if warm:
        outcome.start = start_report(b.name, log) if handed else {"taken": False, "value": None, "why": CBC_START}
    return outcome


def _solve_contrib(model, profile, b: Backend, warm: bool):
    from pyomo.contrib.solver.common.results import SolutionStatus
    from pyomo.contrib.solver.common.results import TerminationCondition as TC

    opt = interface(b.name, warm)
    kw = {"time_limit": profile.time_limit, "rel_gap": profile.rel_gap, "threads": profile.threads,
          "load_solutions": False, "raise_exception_on_nonoptimal_result": False, "solver_options": options(profile)}
    if warm and b.name != "highs":
        kw["warmstart_discrete_vars"] = True
    res = opt.solve(model, **kw)
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
    obj = _finite(res.incumbent_objective) if has else None
    bound = _finite(res.objective_bound)
    return status, obj, bound, has, str(tc.name), res.solver_log or "", res.solution_loader.load_vars


def _stopped_by_time(b: Backend, opt) -> bool:
    """Whether the backend stopped at its time limit (Pyomo's xpress_direct reports that as 'other')."""
    if b.name == "cbc":
        return False  # Pyomo's cbc interface says maxTimeLimit itself
    solver_model = opt._solver_model
    if b.name == "xpress":
        import xpress

        return solver_model.attributes.stopstatus == xpress.StopType.TIMELIMIT
    return solver_model.solution.get_status() in (11, 107, 108)  # CPLEX: abort_time_limit, MIP_time_limit_*


def _solve_legacy(model, profile, b: Backend, warm: bool):
    import tempfile

    from pyomo.opt import TerminationCondition as TC

    opt = interface(b.name)
    opt.options.update(options(profile))
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings(), \
            redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        logfile = f"{folder}/solver.log"
        res = opt.solve(model, load_solutions=False, warmstart=warm, tee=False, logfile=logfile)
        try:
            with open(logfile, encoding="utf-8", errors="replace") as f:
                log = f.read()
        except OSError:
            log = ""
    tc = res.solver.termination_condition
    incumbent, best = res.problem.upper_bound, res.problem.lower_bound
    if _objective_sense(model) < 0:
        incumbent, best = best, incumbent
        if b.name == "cbc" and best is not None and tc != TC.optimal:
            best = -best  # Pyomo's cbc interface leaves a maximum's bound in CBC's own (minimising) sense
    obj = _finite(incumbent)
    has = obj is not None
    if tc == TC.optimal and has:
        status = Status.OPTIMAL
    elif tc == TC.maxTimeLimit or _stopped_by_time(b, opt):
        status = Status.TIME_LIMIT
    elif tc in (TC.infeasible, TC.infeasibleOrUnbounded):
        status = Status.INFEASIBLE
    elif has:
        status = Status.FEASIBLE
    else:
        status = Status.ERROR
    loader = (lambda: model.solutions.load_from(res)) if b.name == "cbc" else opt.load_vars
    return status, obj, _finite(best), has, str(tc), log, loader



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
        out = solve_pyomo(m, Profile("licence", 10.0, 1e-4, 1, 0, solver=name), load=False)
    except LicenceLimit:
        return b.licence
    return "full (a model past the community limit solved)" if out.status == Status.OPTIMAL else \
        f"unknown (the probe ended {out.status.value}: {out.message})"


def inventory(probe: bool = True) -> list[dict]:
    """Every backend: name, pip package, installed version (None if absent), the Pyomo interface used, and
    its licence limit (probed when ``probe``)."""
    rows = []
    for name, b in BACKENDS.items():
        v = version(name)
        row = {"solver": name, "package": b.package, "version": v, "pyomo": b.pyomo}
        if v is None:
            row["licence"] = None
            row["install"] = f"apt-get install {b.package}" if b.executable else f"pip install {b.package}"
        else:
            try:
                row["licence"] = licence(name) if probe else (b.licence or "none")
            except Exception as e:  # an installed backend that fails to start (no licence at all ...)
                row["licence"] = f"unusable: {type(e).__name__}: {e}"
        rows.append(row)
    return rows


def solve_mps(path: str, profile, columns: int, rows: int, start=None):
    """Solve the model of the MPS file ``path`` (``columns`` columns named c0, c1 ... in order, ``rows`` rows,
    minimised, as HiGHS writes a model) on ``profile.solver`` (not HiGHS) through its own reader and API:
    (status, objective, bound, has_solution, message, column values or None, start report or None), the
    same statuses and the backend's own best bound as :func:`solve_pyomo`. ``start``: column values handed
    over as a MIP start. A licence's size refusal raises LicenceLimit."""
    import numpy as np

    b = require(profile.solver)
    raw = profile.raw.get(b.name, {})
    log = f"{path}.log"
    try:
        with warnings.catch_warnings(), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            out = _MPS[b.name](path, profile, raw, log, None if start is None else np.asarray(start, dtype=float))
    except Exception as e:
        refused = licence_error(b.name, e, columns, rows)
        if refused is not None:
            raise refused from None
        return Status.ERROR, None, None, False, repr(e), None, None
    status, obj, bound, has, message, x = out
    if x is not None and len(x) != columns:
        return Status.ERROR, None, None, False, f"{b.name} read {len(x)} columns of {columns}", None, None
    report = None
    if start is not None:
        try:
            with open(log, encoding="utf-8", errors="replace") as f:
                report = start_report(b.name, f.read())
        except OSError:
            report = {"taken": None, "value": None}
    return status, _finite(obj) if has else None, _finite(bound), has, message, x if has else None, report


def _status(optimal: bool, time_limit: bool, infeasible: bool, has: bool) -> Status:
    if optimal and has:
        return Status.OPTIMAL
    if time_limit:
        return Status.TIME_LIMIT
    if infeasible:
        return Status.INFEASIBLE
    return Status.FEASIBLE if has else Status.ERROR


def _mps_gurobi(path, profile, raw, log, start):
    import gurobipy as gp
    import numpy as np

    env = gp.Env(empty=True)
    env.setParam("LogToConsole", 0)
    env.setParam("LogFile", log)
    env.start()
    m = gp.read(path, env)
    for key, value in {"TimeLimit": float(profile.time_limit), "MIPGap": float(profile.rel_gap),
                       "Threads": profile.threads, "Seed": profile.seed, **raw}.items():
        m.setParam(key, value)
    cols = m.getVars()
    order = np.argsort([int(v.VarName[1:]) for v in cols])
    cols = [cols[k] for k in order]
    if start is not None:
        m.setAttr("Start", cols, start.tolist())
    m.optimize()
    S = gp.GRB.Status
    has = m.SolCount > 0
    obj = m.ObjVal if has else None
    bound = m.ObjBound if m.IsMIP else (obj if m.Status == S.OPTIMAL else None)
    x = np.asarray(m.getAttr("X", cols)) if has else None
    status = _status(m.Status == S.OPTIMAL, m.Status == S.TIME_LIMIT, m.Status in (S.INFEASIBLE, S.INF_OR_UNBD), has)
    return status, obj, bound, has, f"gurobi status {m.Status}", x


def _mps_scip(path, profile, raw, log, start):
    import numpy as np
    import pyscipopt

    m = pyscipopt.Model()
    m.hideOutput()
    m.setLogfile(log)
    m.readProblem(path)
    for key, value in {"limits/time": float(profile.time_limit), "limits/gap": float(profile.rel_gap),
                       "lp/threads": profile.threads, "randomization/randomseedshift": profile.seed, **raw}.items():
        m.setParam(key, value)
    cols = m.getVars()
    cols = [cols[k] for k in np.argsort([int(v.name[1:]) for v in cols])]
    if start is not None:
        sol = m.createPartialSol()
        for v, value in zip(cols, start.tolist()):
            m.setSolVal(sol, v, value)
        m.addSol(sol)
    m.optimize()
    st = m.getStatus()
    has = m.getNSols() > 0
    obj = m.getObjVal() if has else None
    x = np.asarray([m.getVal(v) for v in cols]) if has else None
    status = _status(st in ("optimal", "gaplimit"), st == "timelimit", st in ("infeasible", "inforunbd"), has)
    return status, obj, m.getDualbound(), has, st, x


def _mps_cplex(path, profile, raw, log, start):
    import cplex
    import numpy as np

    c = cplex.Cplex()
    with open(log, "w", encoding="utf-8") as stream:
        c.set_log_stream(stream)
        c.set_results_stream(stream)
        c.set_warning_stream(None)
        c.set_error_stream(None)
        c.read(path)
        for key, value in {"timelimit": float(profile.time_limit), "mip_tolerances_mipgap": float(profile.rel_gap),
                           "threads": profile.threads, "randomseed": profile.seed, **raw}.items():
            target = c.parameters
            for piece in key.split("_"):
                target = getattr(target, piece)
            target.set(value)
        names = c.variables.get_names()
        order = np.argsort([int(n[1:]) for n in names])
        mip = c.variables.get_num_integer() + c.variables.get_num_binary() > 0
        if start is not None and mip:
            c.MIP_starts.add(cplex.SparsePair(ind=order.tolist(), val=start.tolist()),
                             c.MIP_starts.effort_level.repair)
        c.solve()
    code = c.solution.get_status()
    has = c.solution.get_solution_type() != c.solution.type.none
    obj = c.solution.get_objective_value() if has else None
    optimal = code in (1, 101, 102)  # optimal, MIP_optimal, MIP_optimal_tolerance
    bound = c.solution.MIP.get_best_objective() if mip else (obj if optimal else None)
    x = np.asarray(c.solution.get_values())[order] if has else None
    status = _status(optimal, code in (11, 107, 108), code in (3, 4, 103, 119), has)
    return status, obj, bound, has, c.solution.get_status_string(), x


def _mps_xpress(path, profile, raw, log, start):
    import numpy as np
    import xpress as xp

    p = xp.problem()
    p.setLogFile(log)
    p.setControl("outputlog", 1)
    p.readProb(path, "")
    for key, value in {"timelimit": float(profile.time_limit), "miprelstop": float(profile.rel_gap),
                       "threads": profile.threads, "randomseed": profile.seed, **raw}.items():
        p.setControl(key, value)
    n = p.attributes.cols
    names = p.getNameList(2, 0, n - 1)
    order = np.argsort([int(name[1:]) for name in names])
    if start is not None:
        p.addMipSol(start.tolist(), order.tolist(), "start")
    p.optimize()
    sol = p.attributes.solstatus
    S = xp.SolStatus
    has = sol in (S.OPTIMAL, S.FEASIBLE)
    mip = p.attributes.mipents > 0
    obj = p.attributes.objval if has else None
    optimal = sol == S.OPTIMAL
    bound = p.attributes.bestbound if mip else (obj if optimal else None)
    x = np.asarray(p.getSolution())[order] if has else None
    stopped = p.attributes.stopstatus == xp.StopType.TIMELIMIT
    return _status(optimal, stopped, sol == S.INFEASIBLE, has), obj, bound, has, f"xpress {sol.name}", x


def run_cbc(path: str, args: list[str], timeout: float) -> tuple[str, float | None, dict, str]:
    """Run CBC on the MPS file ``path`` with the command-line ``args`` (ending with the action: ``-solve``,
    ``-dualS``, ...): (the solution file's status line, its objective, {row or column name: (value, dual or
    reduced cost)}, CBC's output). ``timeout`` (s): a safety net beyond CBC's own ``-sec``."""
    import os
    import tempfile

    with tempfile.TemporaryDirectory(prefix="iosched-cbc-") as folder:
        sol = os.path.join(folder, "solution.txt")
        out = subprocess.run([shutil.which("cbc"), path, *args, "-printingOptions", "all", "-solu", sol],
                             capture_output=True, text=True, timeout=timeout)
        try:
            with open(sol, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return "no solution file", None, {}, out.stdout + out.stderr
    head = lines[0] if lines else ""
    found = re.search(r"objective value\s+(\S+)", head)
    objective = float(found.group(1)) if found else None
    values = {}
    for line in lines[1:]:
        parts = line.replace("**", " ").split()
        if len(parts) >= 4:
            values[parts[1]] = (float(parts[2]), float(parts[3]))
    return head, objective, values, out.stdout


def _mps_cbc(path, profile, raw, log, start):
    import numpy as np

    args = [x for k, v in {"sec": float(profile.time_limit), "ratio": float(profile.rel_gap),
                           "threads": profile.threads, "randomCbcSeed": profile.seed, **raw}.items()
            for x in (f"-{k}", str(v))]
    if start is not None:
        start_file = f"{path}.start"
        with open(start_file, "w", encoding="utf-8") as f:
            f.writelines(f"{j} c{j} {v!r}\n" for j, v in enumerate(start.tolist()) if v)
        args += ["-mipstart", start_file]
    head, obj, values, text = run_cbc(path, [*args, "-solve"], timeout=profile.time_limit + 60)
    with open(log, "w", encoding="utf-8") as f:
        f.write(text)
    has = obj is not None and abs(obj) < 1e49 and not head.startswith(("Infeasible", "Integer infeasible")) \
        and "no integer solution" not in head
    optimal = head.startswith("Optimal")
    found = re.search(r"Lower bound:\s+(\S+)", text)
    bound = obj if optimal else (float(found.group(1)) if found else None)
    cols = {int(k[1:]): v for k, (v, _) in values.items() if k[:1] == "c" and k[1:].isdigit()}  # all printed
    x = np.array([cols.get(j, 0.0) for j in range(len(cols))]) if has else None
    status = _status(optimal, head.startswith("Stopped on time"), head.startswith(("Infeasible", "Integer infeasible")),
                     has)
    return status, obj, bound, has, f"cbc: {head}", x


_MPS = {"gurobi": _mps_gurobi, "scip": _mps_scip, "cplex": _mps_cplex, "xpress": _mps_xpress, "cbc": _mps_cbc}

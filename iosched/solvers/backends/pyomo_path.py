"""How a Pyomo model reaches a backend: Pyomo's newer interface (``pyomo.contrib.solver``: HiGHS, Gurobi,
SCIP) or its older one (the direct interfaces ``cplex_direct`` and ``xpress_direct``, which the newer one
does not cover, and ``cbc``, which writes an LP file and runs the program). Either way the status is the
backend's own code, read from the solver object Pyomo drove and mapped by the backend's table; the
incumbent and the bound are Pyomo's reading of them.
"""

from __future__ import annotations

import io
import tempfile
import time
import warnings
from contextlib import redirect_stderr, redirect_stdout

from iosched.solvers.backends.base import Backend, RootWatch, finite
from iosched.solvers.outcome import Answer, Profile, SolveOutcome, Stop
from iosched.status import Status


def model_size(model) -> tuple[int, int]:
    """(variables, constraints) of a Pyomo model, as the backend receives them."""
    from pyomo.core.base.constraint import Constraint
    from pyomo.core.base.var import Var

    variables = sum(1 for _ in model.component_data_objects(Var, active=True, descend_into=True))
    constraints = sum(1 for _ in model.component_data_objects(Constraint, active=True, descend_into=True))
    return variables, constraints


def objective_sense(model) -> int:
    """+1 for a minimised objective, -1 for a maximised one."""
    from pyomo.core.base.objective import Objective

    obj = next(model.component_data_objects(Objective, active=True, descend_into=True))
    return 1 if obj.is_minimizing() else -1


class PyomoPath(Backend):
    """What both of Pyomo's interfaces share: one solve that reports the same on every backend, and the LP
    relaxation. The backend gives ``pyomo_native(opt, res)`` (its own solver object after a solve) and
    ``status_of(native)`` (its status code and message, read from that object)."""

    def pyomo_native(self, opt, res):
        """The backend's own solver object behind Pyomo's interface ``opt`` after the solve that gave ``res``."""
        raise NotImplementedError

    def status_of(self, native) -> tuple[int | str, str]:
        """The native status code (a key of ``STATUS``) and the backend's message, read from ``native``."""
        raise NotImplementedError

    def solve_pyomo(self, model, profile: Profile, load: bool = True, warm: bool = False,
                    root: bool = False) -> SolveOutcome:
        """Solve the Pyomo ``model`` under the profile's limits: a SolveOutcome whose status, incumbent and bound
        (the backend's best bound, not recomputed) mean the same on every backend.

        With ``load`` the incumbent (if any) is loaded into the model's variables; with ``warm`` the variables'
        current values go to the backend as a MIP start where it takes one (``outcome.start`` says whether its
        log shows it taken, and its value there); with ``root`` the root node's dual bound is read where the
        backend reports one (``outcome.root_bound``; ``outcome.root_why`` says why not). A licence's size
        refusal raises LicenceLimit; any other failure of the backend is an ERROR outcome, not an exception."""
        self.require()
        handed = warm and self.mip_start
        watch = RootWatch() if root and self.root_bound else None
        began = time.perf_counter()
        try:
            answer, loader = self.pyomo_answer(model, profile, handed, watch)
        except Exception as e:  # a solver crash is a result too, not an exception for the caller
            refused = self.licence_error(e, *model_size(model))
            if refused is not None:
                raise refused from None
            return SolveOutcome(Status.ERROR, None, None, None, time.perf_counter() - began, False, repr(e),
                                stop=Stop.ERROR, code="exception")
        wall = time.perf_counter() - began
        if answer.has_solution and load:
            loader()
        if root and watch is None:
            answer.root_why = self.root_why
        elif root and answer.root_bound is None:
            answer.root_why = self.no_root()
        start = None
        if warm:
            start = self.start_report(answer.log) if handed else {"taken": False, "value": None,
                                                                  "why": self.mip_start_why}
        return answer.outcome(wall, start)

    def solve_relaxation(self, model, profile: Profile) -> SolveOutcome:
        """The LP relaxation of the Pyomo ``model`` (a copy with every integer variable made continuous within
        its bounds), solved under ``profile``: its value is the outcome's objective, its time the outcome's
        (the copy not counted). The model itself is left as it was."""
        import pyomo.environ as pe

        relaxed = pe.TransformationFactory("core.relax_integer_vars").create_using(model)
        return self.solve_pyomo(relaxed, profile, load=False)


class ContribPyomo(PyomoPath):
    """A backend solved through Pyomo's newer interface."""

    pyomo_warm_flag = True  # Pyomo's own MIP start (warmstart_discrete_vars) hands the values over

    def interface(self, warm: bool = False, root: RootWatch | None = None):
        import pyomo.environ  # noqa: F401  (loads the solver plugins, without which the factory knows none)
        from pyomo.contrib.solver.common.factory import SolverFactory

        self.require()
        return SolverFactory(self.pyomo)

    def pyomo_answer(self, model, profile: Profile, warm: bool, root: RootWatch | None):
        from pyomo.contrib.solver.common.results import SolutionStatus

        opt = self.interface(warm, root)
        kw = {"load_solutions": False, "raise_exception_on_nonoptimal_result": False,
              "solver_options": self.options(profile)}
        if warm and self.pyomo_warm_flag:
            kw["warmstart_discrete_vars"] = True
        res = opt.solve(model, **kw)
        has = res.solution_status in (SolutionStatus.feasible, SolutionStatus.optimal)
        native = self.pyomo_native(opt, res)
        code, message = self.status_of(native)
        answer = self.answer(code, has, message, objective=finite(res.incumbent_objective) if has else None,
                             bound=finite(res.objective_bound), log=res.solver_log or "")
        if root is not None:
            answer.root_bound = self.root_after(native, root)
        answer.nodes = self.nodes(native)
        return answer, res.solution_loader.load_vars

    def root_after(self, native, root: RootWatch) -> float | None:
        """The root node's bound once the solve is over (what the callback saw, by default)."""
        return root.bound


class LegacyPyomo(PyomoPath):
    """A backend solved through Pyomo's older interface, its log written to a file Pyomo is given."""

    def interface(self, warm: bool = False, root: RootWatch | None = None):
        import pyomo.environ as pe

        self.require()
        return pe.SolverFactory(self.pyomo)

    def pyomo_answer(self, model, profile: Profile, warm: bool, root: RootWatch | None):
        opt = self.interface(warm, root)
        opt.options.update(self.options(profile))
        with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings(), \
                redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            logfile = f"{folder}/solver.log"
            res = self.legacy_solve(opt, model, warm, logfile, folder)
            try:
                with open(logfile, encoding="utf-8", errors="replace") as f:
                    log = f.read()
            except OSError:
                log = ""
        incumbent, best = res.problem.upper_bound, res.problem.lower_bound
        sense = objective_sense(model)
        if sense < 0:
            incumbent, best = best, incumbent
        obj = finite(incumbent)
        native = self.pyomo_native(opt, res)
        code, message = self.status_of(native)
        answer = self.answer(code, obj is not None, message, objective=obj, log=log)
        answer.bound = finite(self.pyomo_bound(best, sense, answer))
        if root is not None:
            answer.root_bound = self.root_after(native, root, log, sense)
        answer.nodes = self.nodes(native)
        return answer, self.pyomo_loader(opt, res, model)

    def legacy_solve(self, opt, model, warm: bool, logfile: str, folder: str):
        """Pyomo's solve call (CBC's keeps Pyomo's files in ``folder``)."""
        return opt.solve(model, load_solutions=False, warmstart=warm, tee=False, logfile=logfile)

    def pyomo_bound(self, best, sense: int, answer: Answer):
        """The backend's bound as Pyomo reports it, in the model's sense."""
        return best

    def pyomo_loader(self, opt, res, model):
        """A function that loads the incumbent into the model's variables."""
        return opt.load_vars

    def root_after(self, native, root: RootWatch, log: str, sense: int) -> float | None:
        """The root node's bound once the solve is over (what the callback saw, by default)."""
        return root.bound

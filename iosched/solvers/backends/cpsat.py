"""OR-Tools' CP-SAT, the solver of the CP models beside the MILP backends (a dependency of iosched): its
status table, its parameters and one solve under a profile."""

from __future__ import annotations

import time

from iosched.errors import ParameterError
from iosched.solvers.backends.base import Backend, shown
from iosched.solvers.outcome import Profile, SolveOutcome, Stop

# CP-SAT's solve status (CpSolverStatus), by name. CP-SAT does not say which limit stopped it: a FEASIBLE answer
# after 95 % of the time limit is read as that limit's ("FEASIBLE at the time limit"); UNKNOWN (stopped before a
# solution or a proof) can only be the time limit under our profiles
STATUS_DOC = "https://developers.google.com/optimization/cp/cp_solver#cp-sat_return_values"
STATUS = {
    "OPTIMAL": Stop.OPTIMAL,  # within relative_gap_limit, the profile's rel_gap
    "FEASIBLE": Stop.OTHER_LIMIT,
    "FEASIBLE at the time limit": Stop.TIME_LIMIT,
    "INFEASIBLE": Stop.INFEASIBLE,
    "MODEL_INVALID": Stop.ERROR,
    "UNKNOWN": Stop.TIME_LIMIT,
}


class CpSat(Backend):
    name = "cpsat"
    label = "CP-SAT"
    package = "ortools"
    module = "ortools"
    core = True
    STATUS = STATUS
    STATUS_DOC = STATUS_DOC
    root_bound = False
    root_why = "CP-SAT has no root node (not branch and bound on an LP)"
    mip_start = False

    def raw(self, profile: Profile) -> dict:
        return profile.cpsat

    def check_options(self, options: dict, where: str) -> None:
        """Every raw CP-SAT option must be a SatParameters field taking its value's type (none writes files)."""
        from ortools.sat.python import cp_model

        prm = cp_model.CpSolver().parameters
        for key, value in options.items():
            try:
                if not hasattr(prm, key):
                    raise AttributeError(key)
                setattr(prm, key, value)
            except (AttributeError, TypeError, ValueError):
                raise ParameterError(f"{where}.cpsat: CP-SAT has no parameter {shown(key)} taking "
                                     f"{shown(value)}") from None

    def solve(self, model, profile: Profile):
        """Solve the CP-SAT ``model`` under ``profile``: the outcome and the solver (to read values). CP-SAT
        reports objective and bound 0 without a solution: None here."""
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
        said = solver.status_name(code)
        read = "FEASIBLE at the time limit" if said == "FEASIBLE" and wall >= 0.95 * profile.time_limit else said
        with_objective = has and model.has_objective()
        answer = self.answer(read, has, said,
                             objective=solver.objective_value if with_objective else None,
                             bound=solver.best_objective_bound if with_objective else None)
        return answer.outcome(wall), solver


CPSAT = CpSat()


def solve_cpsat(model, profile: Profile) -> tuple[SolveOutcome, object]:
    """Solve a CP-SAT ``model`` under ``profile``: the outcome and the solver (to read values)."""
    return CPSAT.solve(model, profile)

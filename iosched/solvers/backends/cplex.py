"""CPLEX (``cplex``; its pip wheel is the size-limited Community Edition): Pyomo models through Pyomo's older
direct interface (``cplex_direct``: the newer one does not cover CPLEX), array models through its MPS
reader, array LPs through its ``add`` calls on arrays. Its options go by ``cplex_direct``'s spelling,
the parameter path joined by underscores (``mip_tolerances_mipgap``)."""

from __future__ import annotations

import re

import numpy as np

from iosched.solvers.backends.base import Pending, RootWatch, clip, senses
from iosched.solvers.backends.pyomo_path import LegacyPyomo
from iosched.solvers.outcome import Answer, Profile, Stop

# CPLEX's solution status codes (Cplex.solution.get_status()), by number
STATUS_DOC = ("https://www.ibm.com/docs/en/icos/22.1.2?topic=micclcarm-solution-status-codes-by-number-in-cplex-"
              "callable-library-c-api")
STATUS = {  # the codes of features iosched does not use (feasopt, the conflict refiner, multiple objectives) left out
    0: Stop.UNKNOWN,  # no status
    1: Stop.OPTIMAL,  # CPX_STAT_OPTIMAL
    2: Stop.UNBOUNDED,  # CPX_STAT_UNBOUNDED
    3: Stop.INFEASIBLE,  # CPX_STAT_INFEASIBLE
    4: Stop.INFEASIBLE_OR_UNBOUNDED,  # CPX_STAT_INForUNBD
    5: Stop.NUMERICS,  # CPX_STAT_OPTIMAL_INFEAS: optimal, with infeasibilities after unscaling
    6: Stop.NUMERICS,  # CPX_STAT_NUM_BEST: numerical difficulties, the best found kept
    10: Stop.OTHER_LIMIT,  # CPX_STAT_ABORT_IT_LIM
    11: Stop.TIME_LIMIT,  # CPX_STAT_ABORT_TIME_LIM
    12: Stop.OTHER_LIMIT,  # CPX_STAT_ABORT_OBJ_LIM
    13: Stop.INTERRUPTED,  # CPX_STAT_ABORT_USER
    21: Stop.OTHER_LIMIT,  # CPX_STAT_ABORT_PRIM_OBJ_LIM
    22: Stop.OTHER_LIMIT,  # CPX_STAT_ABORT_DUAL_OBJ_LIM
    23: Stop.UNKNOWN,  # CPX_STAT_FEASIBLE: a feasible point, no optimality claim
    25: Stop.OTHER_LIMIT,  # CPX_STAT_ABORT_DETTIME_LIM
    101: Stop.OPTIMAL,  # CPXMIP_OPTIMAL
    102: Stop.OPTIMAL,  # CPXMIP_OPTIMAL_TOL: within the relative gap
    103: Stop.INFEASIBLE,  # CPXMIP_INFEASIBLE
    104: Stop.OTHER_LIMIT,  # CPXMIP_SOL_LIM
    105: Stop.OTHER_LIMIT,  # CPXMIP_NODE_LIM_FEAS
    106: Stop.OTHER_LIMIT,  # CPXMIP_NODE_LIM_INFEAS
    107: Stop.TIME_LIMIT,  # CPXMIP_TIME_LIM_FEAS
    108: Stop.TIME_LIMIT,  # CPXMIP_TIME_LIM_INFEAS
    109: Stop.ERROR,  # CPXMIP_FAIL_FEAS
    110: Stop.ERROR,  # CPXMIP_FAIL_INFEAS
    111: Stop.OTHER_LIMIT,  # CPXMIP_MEM_LIM_FEAS
    112: Stop.OTHER_LIMIT,  # CPXMIP_MEM_LIM_INFEAS
    113: Stop.INTERRUPTED,  # CPXMIP_ABORT_FEAS
    114: Stop.INTERRUPTED,  # CPXMIP_ABORT_INFEAS
    115: Stop.NUMERICS,  # CPXMIP_OPTIMAL_INFEAS
    116: Stop.ERROR,  # CPXMIP_FAIL_FEAS_NO_TREE
    117: Stop.ERROR,  # CPXMIP_FAIL_INFEAS_NO_TREE
    118: Stop.UNBOUNDED,  # CPXMIP_UNBOUNDED
    119: Stop.INFEASIBLE_OR_UNBOUNDED,  # CPXMIP_INForUNBD
    127: Stop.UNKNOWN,  # CPXMIP_FEASIBLE: a feasible point, no optimality claim
    128: Stop.OTHER_LIMIT,  # CPXMIP_POPULATESOL_LIM
    129: Stop.OPTIMAL,  # CPXMIP_OPTIMAL_POPULATED
    130: Stop.OPTIMAL,  # CPXMIP_OPTIMAL_POPULATED_TOL
    131: Stop.OTHER_LIMIT,  # CPXMIP_DETTIME_LIM_FEAS
    132: Stop.OTHER_LIMIT,  # CPXMIP_DETTIME_LIM_INFEAS
    133: Stop.UNBOUNDED,  # CPXMIP_ABORT_RELAXATION_UNBOUNDED
}


def set_parameter(c, key: str, value) -> None:
    """Set CPLEX parameter ``key`` in cplex_direct's spelling (mip_tolerances_mipgap) on ``c``."""
    target = c.parameters
    for piece in key.split("_"):
        target = getattr(target, piece)
    target.set(value)


def watch_root(c, root: RootWatch) -> None:
    """Report to ``root`` CPLEX's best bound while no node has been processed (an informational callback:
    it leaves CPLEX's dynamic search on)."""
    from cplex.callbacks import MIPInfoCallback

    class Root(MIPInfoCallback):
        def __call__(self):
            if self.get_num_nodes() == 0:
                root.see(self.get_best_objective_value())

    c.register_callback(Root)


def _pyomo_cplex(root: RootWatch):
    """Pyomo's cplex_direct with the root watched on the model it builds."""
    from pyomo.solvers.plugins.solvers.cplex_direct import CPLEXDirect

    class Hooked(CPLEXDirect):
        def _apply_solver(self):
            watch_root(self._solver_model, root)
            return super()._apply_solver()

    return Hooked()


class Cplex(LegacyPyomo):
    name = "cplex"
    package = module = "cplex"
    pyomo = "cplex_direct"
    licence = "Community Edition: 1,000 variables and 1,000 constraints"
    size_limit = 1000
    LIMITS = {"time_limit": "timelimit", "rel_gap": "mip_tolerances_mipgap", "threads": "threads",
              "seed": "randomseed"}
    STATUS = STATUS
    STATUS_DOC = STATUS_DOC
    FILE_OPTIONS = ("workdir", "output_clonelog", "output_intsolfileprefix", "mip_strategy_file")
    START_TAKEN = re.compile(r"MIP start '[^']*' defined initial solution with objective\s+(\S+)")

    def option_setter(self):
        import cplex

        c = cplex.Cplex()
        return lambda key, value: set_parameter(c, key, value)

    def status_of(self, c) -> tuple[int, str]:
        return c.solution.get_status(), c.solution.get_status_string()

    # --- Pyomo models ----------------------------------------------------------------------------------

    def interface(self, warm: bool = False, root: RootWatch | None = None):
        opt = super().interface()
        return opt if root is None else _pyomo_cplex(root)

    def pyomo_native(self, opt, res):
        return opt._solver_model  # Pyomo's cplex_direct keeps its cplex.Cplex there

    def node_count(self, native) -> int | None:
        if native.variables.get_num_integer() + native.variables.get_num_binary() == 0:
            return None
        return int(native.solution.progress.get_num_nodes_processed())

    # --- array models --------------------------------------------------------------------------------------

    def solve_mps(self, path: str, profile: Profile, log_file: str, start, root: RootWatch | None) -> Answer:
        import cplex

        c = cplex.Cplex()
        with open(log_file, "w", encoding="utf-8") as stream:
            c.set_log_stream(stream)
            c.set_results_stream(stream)
            c.set_warning_stream(None)
            c.set_error_stream(None)
            c.read(path)
            for key, value in self.options(profile).items():
                set_parameter(c, key, value)
            names = c.variables.get_names()
            order = np.argsort([int(n[1:]) for n in names])
            mip = c.variables.get_num_integer() + c.variables.get_num_binary() > 0
            if start is not None and mip:
                c.MIP_starts.add(cplex.SparsePair(ind=order.tolist(), val=start.tolist()),
                                 c.MIP_starts.effort_level.repair)
            if root is not None and mip:
                watch_root(c, root)
            c.solve()
        has = c.solution.get_solution_type() != c.solution.type.none
        obj = c.solution.get_objective_value() if has else None
        code, message = self.status_of(c)
        answer = self.answer(code, has, message, objective=obj)
        answer.bound = c.solution.MIP.get_best_objective() if mip else (obj if answer.stop is Stop.OPTIMAL else None)
        answer.x = np.asarray(c.solution.get_values())[order] if has else None
        answer.root_bound = None if root is None else root.bound
        answer.nodes = self.nodes(c)
        return answer

    # --- array LPs -----------------------------------------------------------------------------------------

    def lp_send(self, lp, block: Pending, first: bool) -> None:
        import cplex

        if first:
            c = lp.model = cplex.Cplex()
            for stream in (c.set_log_stream, c.set_results_stream, c.set_warning_stream, c.set_error_stream):
                stream(None)
            c.parameters.threads.set(1)
            v = c.parameters.lpmethod.values
            c.parameters.lpmethod.set({"dual": v.dual, "primal": v.primal, "barrier": v.barrier}[lp.algorithm])
        c, A = lp.model, block.A
        if len(block.row_lo):
            sense, rhs = senses(block.row_lo, block.row_hi)
            c.linear_constraints.add(rhs=rhs.tolist(), senses="".join(sense))
        if len(block.cost):
            cut = [slice(A.indptr[j], A.indptr[j + 1]) for j in range(len(block.cost))]
            columns = [cplex.SparsePair(ind=A.indices[c].tolist(), val=A.data[c].tolist()) for c in cut]
            c.variables.add(obj=block.cost.tolist(), lb=clip(block.lo, cplex.infinity).tolist(),
                            ub=clip(block.hi, cplex.infinity).tolist(), columns=columns)

    def lp_solve(self, lp, time_limit: float) -> Answer:
        c = lp.model
        c.parameters.timelimit.set(float(time_limit))
        c.solve()
        code, message = self.status_of(c)
        answer = self.answer(code, False, message)
        if answer.stop is Stop.OPTIMAL:
            answer.has_solution, answer.objective = True, c.solution.get_objective_value()
            answer.x, answer.duals = np.array(c.solution.get_values()), np.array(c.solution.get_dual_values())
        return answer

"""Gurobi (``gurobipy``; its pip wheel's licence is size-limited): Pyomo models through Pyomo's newer
interface (``gurobi_direct``), array models through its MPS reader, array LPs through its matrix API."""

from __future__ import annotations

import re

import numpy as np

from iosched.solvers.backends.base import Pending, RootWatch, clip, senses
from iosched.solvers.backends.pyomo_path import ContribPyomo
from iosched.solvers.outcome import Answer, Profile, Stop

# Gurobi's optimization status codes (Model.Status)
STATUS_DOC = "https://docs.gurobi.com/projects/optimizer/en/current/reference/numericcodes/statuscodes.html"
STATUS = {
    1: Stop.ERROR,  # LOADED: no solve happened
    2: Stop.OPTIMAL,  # OPTIMAL
    3: Stop.INFEASIBLE,  # INFEASIBLE
    4: Stop.INFEASIBLE_OR_UNBOUNDED,  # INF_OR_UNBD
    5: Stop.UNBOUNDED,  # UNBOUNDED
    6: Stop.OTHER_LIMIT,  # CUTOFF
    7: Stop.OTHER_LIMIT,  # ITERATION_LIMIT
    8: Stop.OTHER_LIMIT,  # NODE_LIMIT
    9: Stop.TIME_LIMIT,  # TIME_LIMIT
    10: Stop.OTHER_LIMIT,  # SOLUTION_LIMIT
    11: Stop.INTERRUPTED,  # INTERRUPTED
    12: Stop.NUMERICS,  # NUMERIC
    13: Stop.NUMERICS,  # SUBOPTIMAL: unable to satisfy the optimality tolerances
    14: Stop.UNKNOWN,  # INPROGRESS: an asynchronous solve still running
    15: Stop.OTHER_LIMIT,  # USER_OBJ_LIMIT
    16: Stop.OTHER_LIMIT,  # WORK_LIMIT
    17: Stop.OTHER_LIMIT,  # MEM_LIMIT
    18: Stop.OPTIMAL,  # LOCALLY_OPTIMAL (nonconvex models only)
    19: Stop.INFEASIBLE,  # LOCALLY_INFEASIBLE (nonconvex models only)
}


def root_callback(root: RootWatch):
    """A Gurobi callback that reports to ``root`` the best bound while the node count is 0 (MIP and MIPNODE
    calls at the root)."""
    import gurobipy as gp

    C = gp.GRB.Callback

    def callback(model, where):
        if where == C.MIP and model.cbGet(C.MIP_NODCNT) == 0:
            root.see(model.cbGet(C.MIP_OBJBND))
        elif where == C.MIPNODE and model.cbGet(C.MIPNODE_NODCNT) == 0:
            root.see(model.cbGet(C.MIPNODE_OBJBND))

    return callback


def _quiet_env():
    import gurobipy as gp

    env = gp.Env(empty=True)
    env.setParam("OutputFlag", 0)
    return env


class Gurobi(ContribPyomo):
    name = "gurobi"
    package = module = "gurobipy"
    pyomo = "gurobi_direct"
    licence = "size-limited licence of the pip wheel: 2,000 variables and 2,000 constraints"
    size_limit = 2000
    LIMITS = {"time_limit": "TimeLimit", "rel_gap": "MIPGap", "threads": "Threads", "seed": "Seed"}
    STATUS = STATUS
    STATUS_DOC = STATUS_DOC
    FILE_OPTIONS = ("logfile", "resultfile", "solfiles", "nodefiledir")
    START_TAKEN = re.compile(r"(?:Loaded user MIP start|User MIP start produced solution) with objective\s+(\S+)")

    def option_setter(self):
        return _quiet_env().setParam

    def status_of(self, m) -> tuple[int, str]:
        return m.Status, f"gurobi status {m.Status}"

    # --- Pyomo models ----------------------------------------------------------------------------------

    def interface(self, warm: bool = False, root: RootWatch | None = None):
        opt = super().interface()
        if root is not None:
            opt._callback = root_callback(root)  # Pyomo's gurobi_direct passes it to optimize()
        return opt

    def pyomo_native(self, opt, res):
        return res.solution_loader._solver_model  # Pyomo's loader keeps the gurobipy model

    def node_count(self, native) -> int | None:
        return int(native.NodeCount) if native.IsMIP else None

    # --- array models --------------------------------------------------------------------------------------

    def solve_mps(self, path: str, profile: Profile, log_file: str, start, root: RootWatch | None) -> Answer:
        import gurobipy as gp

        env = gp.Env(empty=True)
        env.setParam("LogToConsole", 0)
        env.setParam("LogFile", log_file)
        env.start()
        m = gp.read(path, env)
        for key, value in self.options(profile).items():
            m.setParam(key, value)
        cols = m.getVars()
        order = np.argsort([int(v.VarName[1:]) for v in cols])
        cols = [cols[k] for k in order]
        if start is not None:
            m.setAttr("Start", cols, start.tolist())
        m.optimize(None if root is None else root_callback(root))
        has = m.SolCount > 0
        obj = m.ObjVal if has else None
        code, message = self.status_of(m)
        answer = self.answer(code, has, message, objective=obj,
                             bound=m.ObjBound if m.IsMIP else (obj if m.Status == gp.GRB.OPTIMAL else None))
        answer.x = np.asarray(m.getAttr("X", cols)) if has else None
        answer.root_bound = None if root is None else root.bound
        answer.nodes = self.nodes(m)
        return answer

    # --- array LPs -----------------------------------------------------------------------------------------

    def lp_send(self, lp, block: Pending, first: bool) -> None:
        import gurobipy as gp

        big = gp.GRB.INFINITY
        if first:
            env = _quiet_env()
            env.start()
            m = gp.Model(env=env)
            m.Params.Threads = 1
            m.Params.Method = {"dual": 1, "primal": 0, "barrier": 2}[lp.algorithm]
            sense, rhs = senses(block.row_lo, block.row_hi)
            x = m.addMVar(len(block.cost), lb=clip(block.lo, big), ub=clip(block.hi, big), obj=block.cost)
            lp.rows_of = m.addMConstr(block.A.tocsr(), x, sense, rhs).tolist()
            lp.model = m
            return
        m, A = lp.model, block.A
        if len(block.row_lo):
            sense, rhs = senses(block.row_lo, block.row_hi)
            lp.rows_of += [m.addLConstr(gp.LinExpr(), s, r) for s, r in zip(sense.tolist(), rhs.tolist())]
        for j in range(len(block.cost)):
            a, b = A.indptr[j], A.indptr[j + 1]
            m.addVar(lb=max(block.lo[j], -big), ub=min(block.hi[j], big), obj=block.cost[j],
                     column=gp.Column(A.data[a:b].tolist(), [lp.rows_of[i] for i in A.indices[a:b]]))

    def lp_solve(self, lp, time_limit: float) -> Answer:
        m = lp.model
        m.Params.TimeLimit = float(time_limit)
        m.optimize()
        code, message = self.status_of(m)
        answer = self.answer(code, False, message)
        if answer.stop is Stop.OPTIMAL:
            answer.has_solution, answer.objective = True, m.ObjVal
            answer.x, answer.duals = np.array(m.getAttr("X", m.getVars())), np.array(m.getAttr("Pi", lp.rows_of))
        return answer

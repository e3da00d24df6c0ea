"""SCIP (``pyscipopt``, no size limit): Pyomo models through Pyomo's newer interface (``scip_direct``),
array models through its MPS reader, array LPs through its LP interface (SoPlex, the LP solver inside
SCIP: an LP needs no branch and bound). SCIP solves on one thread (``lp/threads`` caps its LP solver), and
its ``limits/gap`` divides by min(|incumbent|, |bound|), so it stops no later than the others."""

from __future__ import annotations

import re
import time

import numpy as np

from iosched.solvers.backends.base import Pending, RootWatch, clip
from iosched.solvers.backends.pyomo_path import ContribPyomo
from iosched.solvers.outcome import Answer, Profile, Stop

# SCIP's solving status (SCIP_Status), by the names Model.getStatus() gives; "lp optimal" and "lp stopped" are
# what its LP interface answers (it has no status code: see Scip.lp_solve)
STATUS_DOC = "https://www.scipopt.org/doc/html/type__stat_8h.php"
STATUS = {
    "unknown": Stop.UNKNOWN,
    "userinterrupt": Stop.INTERRUPTED,
    "terminate": Stop.INTERRUPTED,
    "nodelimit": Stop.OTHER_LIMIT,
    "totalnodelimit": Stop.OTHER_LIMIT,
    "stallnodelimit": Stop.OTHER_LIMIT,
    "timelimit": Stop.TIME_LIMIT,
    "memlimit": Stop.OTHER_LIMIT,
    "gaplimit": Stop.OPTIMAL,  # the profile's rel_gap reached: optimal within it, as the other backends say
    "primallimit": Stop.OTHER_LIMIT,
    "duallimit": Stop.OTHER_LIMIT,
    "sollimit": Stop.OTHER_LIMIT,
    "bestsollimit": Stop.OTHER_LIMIT,
    "restartlimit": Stop.OTHER_LIMIT,
    "optimal": Stop.OPTIMAL,
    "infeasible": Stop.INFEASIBLE,
    "unbounded": Stop.UNBOUNDED,
    "inforunbd": Stop.INFEASIBLE_OR_UNBOUNDED,
    "lp optimal": Stop.OPTIMAL,
    "lp stopped at its time limit": Stop.TIME_LIMIT,
    "lp not optimal": Stop.UNKNOWN,
}


def watch_root(m, root: RootWatch) -> None:
    """Report to ``root`` SCIP's dual bound each time an LP is solved at depth 0 (the root, in every run:
    SCIP restarts, and ``getDualboundRoot`` then says nothing)."""
    from pyscipopt import SCIP_EVENTTYPE, Eventhdlr

    events = SCIP_EVENTTYPE.NODESOLVED | SCIP_EVENTTYPE.LPSOLVED

    class Root(Eventhdlr):
        def eventinitsol(self):
            self.model.catchEvent(events, self)

        def eventexitsol(self):
            self.model.dropEvent(events, self)

        def eventexec(self, event):
            if self.model.getDepth() == 0:
                root.see(self.model.getDualbound())

    m.includeEventhdlr(Root(), "iosched-root", "the dual bound at the root node")


def _pyomo_scip(root: RootWatch):
    """Pyomo's SCIP interface with the root watched on the model it builds."""
    from pyomo.contrib.solver.solvers.scip.scip_direct import ScipDirect

    class Hooked(ScipDirect):
        def _create_solver_model(self, model, config):
            made = super()._create_solver_model(model, config)
            watch_root(made[0], root)
            return made

    return Hooked()


class Scip(ContribPyomo):
    name = "scip"
    package = module = "pyscipopt"
    pyomo = "scip_direct"
    LIMITS = {"time_limit": "limits/time", "rel_gap": "limits/gap", "threads": "lp/threads",
              "seed": "randomization/randomseedshift"}
    STATUS = STATUS
    STATUS_DOC = STATUS_DOC
    FILE_OPTIONS = ("visual/vbcfilename", "visual/bakfilename", "heuristics/alns/rewardfilename",
                    "heuristics/repair/filename", "estimation/regforestfilename", "nlpi/ipopt/optfile")
    START_TAKEN = re.compile(r"feasible solution (?:found by completesol heuristic after \S+ seconds, objective value|"
                             r"given by solution candidate storage, new primal bound)\s+(\S+)")

    def option_setter(self):
        import pyscipopt

        return pyscipopt.Model().setParam

    def status_of(self, m) -> tuple[str, str]:
        st = m.getStatus()
        return st, st

    # --- Pyomo models ----------------------------------------------------------------------------------

    def interface(self, warm: bool = False, root: RootWatch | None = None):
        opt = super().interface()
        return opt if root is None else _pyomo_scip(root)

    def pyomo_native(self, opt, res):
        return opt._solver_model  # Pyomo keeps its pyscipopt model there

    def node_count(self, native) -> int | None:
        return int(native.getNNodes())

    # --- array models --------------------------------------------------------------------------------------

    def solve_mps(self, path: str, profile: Profile, log_file: str, start, root: RootWatch | None) -> Answer:
        import pyscipopt

        m = pyscipopt.Model()
        m.hideOutput()
        m.setLogfile(log_file)
        m.readProblem(path)
        for key, value in self.options(profile).items():
            m.setParam(key, value)
        cols = m.getVars()
        cols = [cols[k] for k in np.argsort([int(v.name[1:]) for v in cols])]
        if start is not None:
            sol = m.createPartialSol()
            for v, value in zip(cols, start.tolist()):
                m.setSolVal(sol, v, value)
            m.addSol(sol)
        if root is not None:
            watch_root(m, root)
        m.optimize()
        has = m.getNSols() > 0
        code, message = self.status_of(m)
        answer = self.answer(code, has, message, objective=m.getObjVal() if has else None, bound=m.getDualbound())
        answer.x = np.asarray([m.getVal(v) for v in cols]) if has else None
        answer.root_bound = None if root is None else root.bound
        answer.nodes = self.nodes(m)
        return answer

    # --- array LPs (SoPlex through SCIP's LP interface) ---------------------------------------------------

    def lp_send(self, lp, block: Pending, first: bool) -> None:
        from pyscipopt import LP as ScipLP

        if first:
            lp.model = ScipLP(f"iosched-{id(lp)}", sense="minimize")
        s = lp.model
        big = s.infinity()
        if len(block.row_lo):
            s.addRows([[] for _ in range(len(block.row_lo))], clip(block.row_lo, big).tolist(),
                      clip(block.row_hi, big).tolist())
        if len(block.cost):
            A = block.A
            cut = [slice(A.indptr[j], A.indptr[j + 1]) for j in range(len(block.cost))]
            entries = [list(zip(A.indices[c].tolist(), A.data[c].tolist())) for c in cut]
            s.addCols(entries, block.cost.tolist(), clip(block.lo, big).tolist(), clip(block.hi, big).tolist())

    def lp_solve(self, lp, time_limit: float) -> Answer:
        """SCIP's LP interface says only whether the LP is optimal: not optimal after 95 % of the time limit
        is read as stopped by it."""
        from pyscipopt import SCIP_LPPARAM

        s = lp.model
        s.setRealParam(SCIP_LPPARAM.LPTILIM, float(time_limit))
        began = time.perf_counter()
        value = s.solve(dual=lp.algorithm != "primal")
        spent = time.perf_counter() - began
        if not s.isOptimal():
            code = "lp stopped at its time limit" if spent >= 0.95 * time_limit else "lp not optimal"
            return self.answer(code, False, f"soplex not optimal after {spent:.3g} s")
        return self.answer("lp optimal", True, "soplex optimal", objective=value, x=np.array(s.getPrimal()),
                           duals=np.array(s.getDual()))

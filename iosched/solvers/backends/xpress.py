"""FICO Xpress (``xpress``; its pip wheel's community licence is size-limited): Pyomo models through Pyomo's
older direct interface (``xpress_direct``: the newer one does not cover Xpress), array models through its
MPS reader, array LPs through its ``addRows``/``addCols``."""

from __future__ import annotations

import re

import numpy as np

from iosched.solvers.backends.base import Pending, RootWatch, clip, senses
from iosched.solvers.backends.pyomo_path import LegacyPyomo
from iosched.solvers.outcome import Answer, Profile, Stop

# Xpress says why it stopped in two attributes: STOPSTATUS (what stopped it before the end, NONE or SOLVECOMPLETE
# where nothing did) and SOLSTATUS (what it holds, or proved). The code read here is STOPSTATUS's name where
# something stopped it and SOLSTATUS's otherwise (the two sets of names do not overlap).
STATUS_DOC = ("https://www.fico.com/fico-xpress-optimization/docs/latest/solver/optimizer/HTML/SOLSTATUS.html, "
              "https://www.fico.com/fico-xpress-optimization/docs/latest/solver/optimizer/HTML/STOPSTATUS.html")
STATUS = {
    # SOLSTATUS, where nothing stopped the solve
    "OPTIMAL": Stop.OPTIMAL,  # within miprelstop, the profile's rel_gap
    "FEASIBLE": Stop.UNKNOWN,
    "INFEASIBLE": Stop.INFEASIBLE,
    "UNBOUNDED": Stop.UNBOUNDED,
    "NOTFOUND": Stop.UNKNOWN,
    # STOPSTATUS, where something did
    "TIMELIMIT": Stop.TIME_LIMIT,
    "CTRLC": Stop.INTERRUPTED,
    "USER": Stop.INTERRUPTED,
    "NODELIMIT": Stop.OTHER_LIMIT,
    "ITERLIMIT": Stop.OTHER_LIMIT,
    "MIPGAP": Stop.OPTIMAL,  # miprelstop reached: optimal within the profile's rel_gap
    "SOLLIMIT": Stop.OTHER_LIMIT,
    "WORKLIMIT": Stop.OTHER_LIMIT,
    "GENERICERROR": Stop.ERROR,
    "MEMORYERROR": Stop.ERROR,
    "LICENSELOST": Stop.LICENCE,
    "NUMERICALERROR": Stop.NUMERICS,
    "NEXTOBJECTIVE": Stop.UNKNOWN,
    "MIPSTAGE": Stop.UNKNOWN,
}


def watch_root(p, root: RootWatch) -> None:
    """Report to ``root`` Xpress's best bound after the root node's LP and cuts (its optimal-node callback on
    node 1, the root)."""

    def seen(prob, data):
        if prob.attributes.currentnode == 1:
            root.see(prob.attributes.bestbound)
        return 0

    p.addcboptnode(seen, None, 0)


def _pyomo_xpress(root: RootWatch):
    """Pyomo's xpress_direct with the root watched on the problem it builds."""
    from pyomo.solvers.plugins.solvers.xpress_direct import XpressDirect

    class Hooked(XpressDirect):
        def _apply_solver(self):
            watch_root(self._solver_model, root)
            return super()._apply_solver()

    return Hooked()


class Xpress(LegacyPyomo):
    name = "xpress"
    package = module = "xpress"
    pyomo = "xpress_direct"
    licence = "community licence: 5,000 rows and columns together"
    size_limit = 5000
    LIMITS = {"time_limit": "timelimit", "rel_gap": "miprelstop", "threads": "threads", "seed": "randomseed"}
    STATUS = STATUS
    STATUS_DOC = STATUS_DOC
    FILE_OPTIONS = ("tuneroutputpath", "tunermethodfile", "tunersessionname")
    START_TAKEN = re.compile(r"Solution found:\s+(\S+)\s+Time:\s+\S+\s+Heuristic: U\b|"  # U: the user's solution
                             r"User solution \([^)]*\) accepted.*\n\s*U\s+(\S+)")

    def option_setter(self):
        import xpress

        return xpress.problem().setControl

    def status_of(self, p) -> tuple[str, str]:
        import xpress as xp

        a = p.attributes  # enums, or plain numbers on the problems Pyomo's xpress_direct makes
        stopped, solution = xp.StopType(int(a.stopstatus)).name, xp.SolStatus(int(a.solstatus)).name
        return (solution if stopped in ("NONE", "SOLVECOMPLETE") else stopped), f"xpress {solution}"

    # --- Pyomo models ----------------------------------------------------------------------------------

    def interface(self, warm: bool = False, root: RootWatch | None = None):
        opt = super().interface()
        return opt if root is None else _pyomo_xpress(root)

    def pyomo_native(self, opt, res):
        return opt._solver_model  # Pyomo's xpress_direct keeps its xpress.problem there

    def node_count(self, native) -> int | None:
        return int(native.attributes.nodes) if native.attributes.mipents > 0 else None

    # --- array models --------------------------------------------------------------------------------------

    def solve_mps(self, path: str, profile: Profile, log_file: str, start, root: RootWatch | None) -> Answer:
        import xpress as xp

        p = xp.problem()
        p.setLogFile(log_file)
        p.setControl("outputlog", 1)
        p.readProb(path, "")
        for key, value in self.options(profile).items():
            p.setControl(key, value)
        n = p.attributes.cols
        names = p.getNameList(2, 0, n - 1)
        order = np.argsort([int(name[1:]) for name in names])
        if start is not None:
            p.addMipSol(start.tolist(), order.tolist(), "start")
        mip = p.attributes.mipents > 0
        if root is not None and mip:
            watch_root(p, root)
        p.optimize()
        has = p.attributes.solstatus in (xp.SolStatus.OPTIMAL, xp.SolStatus.FEASIBLE)
        obj = p.attributes.objval if has else None
        code, message = self.status_of(p)
        answer = self.answer(code, has, message, objective=obj)
        answer.bound = p.attributes.bestbound if mip else (obj if answer.stop is Stop.OPTIMAL else None)
        answer.x = np.asarray(p.getSolution())[order] if has else None
        answer.root_bound = None if root is None else root.bound
        answer.nodes = self.nodes(p)
        return answer

    # --- array LPs -----------------------------------------------------------------------------------------

    def lp_send(self, lp, block: Pending, first: bool) -> None:
        import xpress as xp

        if first:
            p = lp.model = xp.problem()
            p.setControl("outputlog", 0)
            p.setControl("threads", 1)
        p, A = lp.model, block.A
        if len(block.row_lo):
            sense, rhs = senses(block.row_lo, block.row_hi)
            p.addRows(sense.tolist(), rhs.tolist())
        if len(block.cost):
            p.addCols(block.cost.tolist(), A.indptr[:-1].tolist(), A.indices.tolist(), A.data.tolist(),
                      clip(block.lo, xp.infinity).tolist(), clip(block.hi, xp.infinity).tolist())

    def lp_solve(self, lp, time_limit: float) -> Answer:
        p = lp.model
        p.setControl("timelimit", float(time_limit))
        p.lpOptimize({"dual": "d", "primal": "p", "barrier": "b"}[lp.algorithm])
        code, message = self.status_of(p)
        answer = self.answer(code, False, message)
        if answer.stop is Stop.OPTIMAL:
            answer.has_solution, answer.objective = True, p.attributes.lpobjval
            answer.x, answer.duals = np.array(p.getSolution()), np.array(p.getDuals())
        return answer

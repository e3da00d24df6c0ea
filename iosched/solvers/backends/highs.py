"""HiGHS (``highspy``), the default backend and a dependency of iosched: Pyomo models through Pyomo's newer
interface, array models and LPs through highspy directly (an LP's interior point through scipy's
``linprog``, whose HiGHS was faster here: see :meth:`Highs.lp_solve`)."""

from __future__ import annotations

import math
import os
import re
import tempfile
import time

import numpy as np

from iosched.solvers.backends.base import Pending, RootWatch, clip, keep, senses
from iosched.solvers.backends.pyomo_path import ContribPyomo
from iosched.solvers.outcome import Answer, Profile, SolveOutcome, Stop

# HiGHS's model status (HighsModelStatus), by the names highspy gives them
STATUS_DOC = "https://ergo-code.github.io/HiGHS/stable/structures/enums/#HighsModelStatus"
STATUS = {
    "kNotset": Stop.ERROR,
    "kLoadError": Stop.ERROR,
    "kModelError": Stop.ERROR,
    "kPresolveError": Stop.ERROR,
    "kSolveError": Stop.ERROR,
    "kPostsolveError": Stop.ERROR,
    "kModelEmpty": Stop.ERROR,
    "kOptimal": Stop.OPTIMAL,
    "kInfeasible": Stop.INFEASIBLE,
    "kUnboundedOrInfeasible": Stop.INFEASIBLE_OR_UNBOUNDED,
    "kUnbounded": Stop.UNBOUNDED,
    "kObjectiveBound": Stop.OTHER_LIMIT,
    "kObjectiveTarget": Stop.OTHER_LIMIT,
    "kTimeLimit": Stop.TIME_LIMIT,
    "kIterationLimit": Stop.OTHER_LIMIT,
    "kUnknown": Stop.UNKNOWN,
    "kSolutionLimit": Stop.OTHER_LIMIT,
    "kInterrupt": Stop.INTERRUPTED,
    "kMemoryLimit": Stop.OTHER_LIMIT,
    "kHighsInterrupt": Stop.INTERRUPTED,
}


def highs_model(cost, lo, hi, row_lo, row_hi, start, index, value):
    """A quiet highspy.Highs holding min cost x, row_lo <= A x <= row_hi, lo <= x <= hi, A column-wise (column
    j's entries: rows ``index[start[j]:start[j + 1]]``, values ``value[...]``; infinite bounds as numpy's inf):
    to solve, or to write as an MPS file."""
    import highspy

    model = highspy.HighsLp()
    model.num_col_, model.num_row_ = len(cost), len(row_lo)
    big = highspy.kHighsInf
    model.col_cost_, model.col_lower_, model.col_upper_ = np.asarray(cost, dtype=float), clip(lo, big), clip(hi, big)
    model.row_lower_, model.row_upper_ = clip(row_lo, big), clip(row_hi, big)
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_ = np.asarray(start, dtype=np.int32)
    model.a_matrix_.index_ = np.asarray(index, dtype=np.int32)
    model.a_matrix_.value_ = np.asarray(value, dtype=float)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.passModel(model)
    return h


def watch_root(h, root: RootWatch) -> None:
    """Report to ``root`` HiGHS's dual bound while it works on the root node (its MIP interrupt callback, called
    throughout the search, with the node count)."""

    def seen(event):
        if event.data_out.mip_node_count == 0:
            root.see(event.data_out.mip_dual_bound)

    h.cbMipInterrupt.subscribe(seen)


def _pyomo_highs(warm: bool, root: RootWatch | None):
    """Pyomo's HiGHS interface, which with ``warm`` hands the variables' current values to HiGHS
    (``setSolution``, a partial solution where some have none: Pyomo's own ignores them) and with ``root``
    watches the root node's bound, before it runs."""
    from pyomo.contrib.solver.solvers.highs import Highs as PyomoHighs

    class Hooked(PyomoHighs):
        def _solve(self):
            cols, values = [], []
            for vid, col in self._pyomo_var_to_solver_var_map.items():
                value = self._vars[vid][0].value
                if warm and value is not None:
                    cols.append(col)
                    values.append(float(value))
            if cols:
                self._solver_model.setSolution(len(cols), np.asarray(cols, dtype=np.int32), np.asarray(values))
            if root is not None:
                watch_root(self._solver_model, root)
            return super()._solve()

    return Hooked()


class Highs(ContribPyomo):
    name = "highs"
    label = "HiGHS"
    package = module = "highspy"
    pyomo = "highs"
    core = True
    LIMITS = {"time_limit": "time_limit", "rel_gap": "mip_rel_gap", "threads": "threads", "seed": "random_seed"}
    STATUS = STATUS
    STATUS_DOC = STATUS_DOC
    FILE_OPTIONS = ("log_file", "solution_file", "write_solution_to_file", "write_model_file", "write_model_to_file",
                    "write_presolved_model_file", "write_presolved_model_to_file", "write_iis_model_file",
                    "write_basis_file", "read_solution_file", "read_basis_file", "mip_improving_solution_save",
                    "mip_improving_solution_file")
    # a whole start is checked, a partial one completed (HiGHS then solves the rest and says it)
    START_TAKEN = re.compile(r"MIP start solution is feasible, objective value is\s+(\S+)|"
                             r"user-supplied values of discrete variables[\s\S]*?Model status\s*:\s*Optimal\s*\n"
                             r"Objective value\s*:\s*(\S+)")
    pyomo_warm_flag = False  # Pyomo's HiGHS ignores it: _pyomo_highs hands the values over

    def raw(self, profile: Profile) -> dict:
        return profile.highs

    def option_setter(self):
        import highspy

        h = highspy.Highs()
        h.setOptionValue("output_flag", False)

        def set_option(key, value):
            if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
                raise ValueError(key)

        return set_option

    def status_of(self, h) -> tuple[str, str]:
        st = h.getModelStatus()
        return st.name, h.modelStatusToString(st)

    # --- Pyomo models ----------------------------------------------------------------------------------

    def interface(self, warm: bool = False, root: RootWatch | None = None):
        if not (warm or root is not None):
            return super().interface()
        super().interface()  # the plugins, and the check that highspy is here
        return _pyomo_highs(warm, root)

    def pyomo_native(self, opt, res):
        return opt._solver_model  # Pyomo keeps its highspy.Highs there

    def node_count(self, native) -> int | None:
        nodes = native.getInfo().mip_node_count
        return int(nodes) if nodes >= 0 else None  # -1: an LP

    # --- array models: highspy directly ----------------------------------------------------------------

    def solve_matrix(self, h, profile: Profile, columns: int, rows: int, start=None, root: bool = False,
                     began: float | None = None) -> tuple[SolveOutcome, np.ndarray | None]:
        """Run ``h`` itself, from ``start`` (its log says whether the start was taken)."""
        import highspy

        began = time.perf_counter() if began is None else began
        log = None
        if start is not None:
            sol = highspy.HighsSolution()
            sol.col_value = np.asarray(start, dtype=float)
            sol.value_valid = True
            h.setSolution(sol)
            log = tempfile.NamedTemporaryFile(prefix="iosched-highs-", suffix=".log", delete=False).name
            for key, value in (("log_to_console", False), ("output_flag", True), ("log_file", log)):
                h.setOptionValue(key, value)
        watch = RootWatch() if root else None
        if watch is not None:
            watch_root(h, watch)
        h.run()
        info = h.getInfo()
        has = info.primal_solution_status == 2
        code, message = self.status_of(h)
        answer = self.answer(code, has, message, objective=info.objective_function_value if has else None,
                             bound=info.mip_dual_bound if math.isfinite(info.mip_dual_bound) else None)
        if watch is not None:
            answer.root_bound = watch.bound
            answer.root_why = "" if watch.bound is not None else self.no_root()
        answer.nodes = self.nodes(h)
        x = np.asarray(h.getSolution().col_value) if has else None
        report = None
        if log is not None:
            h.setOptionValue("log_file", "")  # closes the file
            with open(log, encoding="utf-8", errors="replace") as f:
                report = self.start_report(f.read())
            os.unlink(log)
        return answer.outcome(time.perf_counter() - began, report), x

    # --- array LPs ---------------------------------------------------------------------------------------

    def lp_send(self, lp, block: Pending, first: bool) -> None:
        import highspy

        if lp.algorithm == "barrier":  # solved whole by scipy's HiGHS (see lp_solve)
            keep(lp, block, first)
            return
        if first:
            lp.model = h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            h.setOptionValue("threads", 1)
            h.setOptionValue("solver", "simplex")
            if lp.algorithm == "primal":  # column generation: the last basis stays primal feasible as columns come
                h.setOptionValue("simplex_strategy", 4)
                h.setOptionValue("presolve", "off")
        h, big = lp.model, highspy.kHighsInf
        none = np.array([], dtype=np.int32)
        if len(block.row_lo):
            h.addRows(len(block.row_lo), clip(block.row_lo, big), clip(block.row_hi, big), 0, none, none, np.array([]))
        if len(block.cost):
            A = block.A
            h.addCols(len(block.cost), block.cost, clip(block.lo, big), clip(block.hi, big), A.nnz,
                      A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data.astype(float))

    def lp_solve(self, lp, time_limit: float) -> Answer:
        if lp.algorithm == "barrier":
            return self._lp_ipm(lp, time_limit)
        h = lp.model
        h.setOptionValue("time_limit", float(time_limit) + h.getRunTime())  # its limit counts every run of the model
        h.run()
        code, message = self.status_of(h)
        answer = self.answer(code, False, message)
        if answer.stop is Stop.OPTIMAL:
            sol = h.getSolution()
            answer.has_solution = True
            answer.objective, answer.x, answer.duals = (h.getInfo().objective_function_value, np.array(sol.col_value),
                                                        np.array(sol.row_dual))
        return answer

    def _lp_ipm(self, lp, time_limit: float) -> Answer:
        """HiGHS's interior point method through scipy's ``linprog``: the HiGHS scipy bundles (scipy 1.17.1) was
        faster on malleable's largest interval LPs than highspy 1.14's (benchmarks/solvers.md). scipy's message
        carries HiGHS's model status number, read through the same table."""
        import highspy
        from scipy.optimize import linprog
        from scipy.sparse import diags

        lp_ = Pending.join(lp.model)
        sense, rhs = senses(lp_.row_lo, lp_.row_hi)
        less, more, equal = sense == "L", sense == "G", sense == "E"
        ub = less | more
        flip = np.where(more, -1.0, 1.0)  # a >= row is -A x <= -lo
        A = lp_.A
        res = linprog(lp_.cost, A_ub=diags(flip[ub]) @ A[ub] if ub.any() else None,
                      b_ub=(flip * rhs)[ub] if ub.any() else None,
                      A_eq=A[equal] if equal.any() else None, b_eq=rhs[equal] if equal.any() else None,
                      bounds=np.column_stack([lp_.lo, lp_.hi]), method="highs-ipm",
                      options={"time_limit": float(time_limit)})
        number = re.search(r"HiGHS Status (\d+)", str(res.message))
        code = highspy.HighsModelStatus(int(number.group(1))).name if number else f"scipy status {res.status}"
        answer = self.answer(code, False, str(res.message))
        if answer.stop is not Stop.OPTIMAL or res.x is None:
            return answer
        duals = np.zeros(len(lp_.row_lo))
        if ub.any():
            duals[ub] = flip[ub] * res.ineqlin.marginals
        if equal.any():
            duals[equal] = res.eqlin.marginals
        answer.has_solution, answer.objective, answer.x, answer.duals = True, float(res.fun), np.asarray(res.x), duals
        return answer

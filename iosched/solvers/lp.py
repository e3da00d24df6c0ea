"""A linear program built as arrays and solved, then solved again as columns are added, on any backend.

For LPs that are rebuilt many times or grown column by column (malleable's interval, order and
Lagrangian bounds, periodic's compaction LP in ``trace-compact``), where a Pyomo model or an MPS file per
solve would cost more than the solve. :class:`LP` holds rows and columns until its first
:meth:`LP.solve`, then hands them to the backend in one piece through its own matrix API: HiGHS
``addRows``/``addCols`` (its interior point through scipy's ``linprog``, faster here), Gurobi
``addMVar``/``addMConstr``, CPLEX and Xpress their ``add`` calls on arrays, SCIP its LP interface (SoPlex,
the LP solver inside SCIP: an LP needs no branch and bound). Columns added later go in incrementally, so a
simplex solve goes on from the last basis (column generation); CBC, a program, solves the whole LP from an
MPS file each time. The problem is always minimised.

Every backend reports the same: :class:`LPResult` with the status, the optimum, the column values and the
row duals in one convention (the derivative of the optimum in the row's bound: <= 0 on a binding <= row,
>= 0 on a binding >= row, HiGHS's, Gurobi's, CPLEX's and Xpress's own). A licence's size refusal raises
:class:`iosched.solvers.LicenceLimit`, as a MILP's does.
"""

from __future__ import annotations

import io
import math
import time
import warnings
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from iosched.solvers import backends
from iosched.status import Status

ALGORITHMS = ("dual", "primal", "barrier")  # dual simplex (the default), primal simplex, interior point


@dataclass
class LPResult:
    """What a backend said of an LP: ``value``, ``x`` and ``duals`` only where it is solved to optimality."""

    status: Status
    value: float | None
    x: np.ndarray | None
    duals: np.ndarray | None
    message: str
    wall_time_s: float


class LP:
    """min c x subject to row_lo <= A x <= row_hi, col_lo <= x <= col_hi, on backend ``solver``.

    ``algorithm`` is one of ALGORITHMS (SoPlex, SCIP's LP solver, has no barrier: a simplex instead);
    one thread. Rows are added empty (:meth:`add_rows`); each column brings its entries (:meth:`add_cols`).
    A row's bounds are one of (-inf, hi), (lo, inf) or (lo, lo).
    """

    def __init__(self, solver: str = "highs", algorithm: str = "dual"):
        backends.require(solver)
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
        self.solver, self.algorithm = solver, algorithm
        self.rows, self.columns = 0, 0
        self._row_lo: list[np.ndarray] = []  # rows and columns not yet handed to the backend
        self._row_hi: list[np.ndarray] = []
        self._cols: list[tuple] = []  # (cost, lo, hi, csc block of rows x new columns)
        self._model = None  # the backend's model once built

    def add_rows(self, lo, hi) -> np.ndarray:
        """Empty rows with bounds ``lo`` and ``hi`` (arrays of one length); their indices."""
        lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        kinds = np.isinf(lo) | np.isinf(hi) | (lo == hi)
        if lo.shape != hi.shape or not kinds.all():
            raise ValueError("each row needs bounds (-inf, hi), (lo, inf) or (lo, lo)")
        self._row_lo.append(lo)
        self._row_hi.append(hi)
        self.rows += len(lo)
        return np.arange(self.rows - len(lo), self.rows)

    def add_cols(self, cost, lo, hi, entries) -> np.ndarray:
        """Columns with ``cost``, bounds ``lo`` and ``hi`` (scalars or arrays) and ``entries``, a sparse
        matrix of (rows so far) x (new columns); their indices."""
        entries = sp.csc_matrix(entries)
        n = entries.shape[1]
        if entries.shape[0] > self.rows:
            raise ValueError(f"entries in {entries.shape[0]} rows, the LP has {self.rows}")
        cost, lo, hi = (np.broadcast_to(np.asarray(v, dtype=float), n).copy() for v in (cost, lo, hi))
        self._cols.append((cost, lo, hi, entries))
        self.columns += n
        return np.arange(self.columns - n, self.columns)

    def solve(self, time_limit: float) -> LPResult:
        """Solve (again, from the last basis where the backend keeps one) within ``time_limit`` s."""
        began = time.perf_counter()
        try:
            with warnings.catch_warnings(), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")  # Xpress warns about its community licence
                self._send()
                status, value, x, duals, message = _SOLVE[self.solver](self, max(time_limit, 0.01))
        except backends.LicenceLimit:
            raise
        except Exception as e:  # each backend raises its own errors
            refused = backends.licence_error(self.solver, e, self.columns, self.rows)
            if refused is not None:
                raise refused from None
            return LPResult(Status.ERROR, None, None, None, repr(e), time.perf_counter() - began)
        if status != Status.OPTIMAL or value is None or not math.isfinite(value):
            value = x = duals = None
            status = Status.ERROR if status == Status.OPTIMAL else status
        return LPResult(status, value, x, duals, message, time.perf_counter() - began)

    def _pending(self):
        """The rows and columns not yet sent: (row lo, row hi, cost, col lo, col hi, csc of all rows x new cols)."""
        row_lo = np.concatenate(self._row_lo) if self._row_lo else np.zeros(0)
        row_hi = np.concatenate(self._row_hi) if self._row_hi else np.zeros(0)
        blocks = [sp.vstack([e, sp.csc_matrix((self.rows - e.shape[0], e.shape[1]))]).tocsc()
                  if e.shape[0] < self.rows else e for *_, e in self._cols]
        if blocks:
            cost, lo, hi = (np.concatenate([b[k] for b in self._cols]) for k in range(3))
            A = sp.hstack(blocks).tocsc()
        else:
            cost = lo = hi = np.zeros(0)
            A = sp.csc_matrix((self.rows, 0))
        self._row_lo, self._row_hi, self._cols = [], [], []
        A.sort_indices()
        return row_lo, row_hi, cost, lo, hi, A

    def _send(self) -> None:
        if self._row_lo or self._cols or self._model is None:
            _SEND[self.solver](self, *self._pending(), self._model is None)


def _senses(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row types "L" (<= hi), "G" (>= lo), "E" and the right-hand sides (a free row's 1e20: infinite to CPLEX
    and Xpress, far beyond any activity to the others)."""
    sense = np.where(np.isinf(lo), "L", np.where(np.isinf(hi), "G", "E"))
    return sense, np.clip(np.where(sense == "L", hi, lo), -1e20, 1e20)


def _inf(values: np.ndarray, big: float) -> np.ndarray:
    return np.clip(values, -big, big)


# --- HiGHS ---------------------------------------------------------------------------------------------

def highs_model(cost, lo, hi, row_lo, row_hi, start, index, value):
    """A quiet highspy.Highs holding min cost x, row_lo <= A x <= row_hi, lo <= x <= hi, A column-wise (column
    j's entries: rows ``index[start[j]:start[j + 1]]``, values ``value[...]``; infinite bounds as numpy's inf):
    to solve, or to write as an MPS file."""
    import highspy

    model = highspy.HighsLp()
    model.num_col_, model.num_row_ = len(cost), len(row_lo)
    big = highspy.kHighsInf
    model.col_cost_, model.col_lower_, model.col_upper_ = np.asarray(cost, dtype=float), _inf(lo, big), _inf(hi, big)
    model.row_lower_, model.row_upper_ = _inf(row_lo, big), _inf(row_hi, big)
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_ = np.asarray(start, dtype=np.int32)
    model.a_matrix_.index_ = np.asarray(index, dtype=np.int32)
    model.a_matrix_.value_ = np.asarray(value, dtype=float)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.passModel(model)
    return h


def _keep(lp, row_lo, row_hi, cost, lo, hi, A, first):
    """For a backend that solves the whole LP each time (no model kept between solves): the arrays, kept."""
    if first:
        lp._model = []
    lp._model.append((row_lo, row_hi, cost, lo, hi, A))


def _whole(lp):
    """The arrays :func:`_keep` kept, as one LP: (row lo, row hi, cost, col lo, col hi, csr matrix)."""
    blocks = lp._model
    row_lo = np.concatenate([b[0] for b in blocks])
    row_hi = np.concatenate([b[1] for b in blocks])
    cost, lo, hi = (np.concatenate([b[k] for b in blocks]) for k in (2, 3, 4))
    A = sp.hstack([sp.vstack([b[5], sp.csc_matrix((len(row_lo) - b[5].shape[0], b[5].shape[1]))])
                   for b in blocks]).tocsr()
    return row_lo, row_hi, cost, lo, hi, A


def _send_highs(lp, row_lo, row_hi, cost, lo, hi, A, first):
    import highspy

    if lp.algorithm == "barrier":  # solved whole by scipy's HiGHS (see _solve_highs_ipm)
        _keep(lp, row_lo, row_hi, cost, lo, hi, A, first)
        return
    if first:
        lp._model = h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.setOptionValue("solver", "ipm" if lp.algorithm == "barrier" else "simplex")
        if lp.algorithm == "primal":  # column generation: the last basis stays primal feasible as columns come
            h.setOptionValue("simplex_strategy", 4)
            h.setOptionValue("presolve", "off")
    h = lp._model
    none = np.array([], dtype=np.int32)
    if len(row_lo):
        h.addRows(len(row_lo), _inf(row_lo, highspy.kHighsInf), _inf(row_hi, highspy.kHighsInf), 0, none, none,
                  np.array([]))
    if len(cost):
        h.addCols(len(cost), cost, _inf(lo, highspy.kHighsInf), _inf(hi, highspy.kHighsInf), A.nnz,
                  A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data.astype(float))


def _solve_highs(lp, time_limit):
    import highspy

    if lp.algorithm == "barrier":
        return _solve_highs_ipm(lp, time_limit)
    h = lp._model
    h.setOptionValue("time_limit", float(time_limit) + h.getRunTime())  # HiGHS's limit counts every run of the model
    h.run()
    st = h.getModelStatus()
    status = {highspy.HighsModelStatus.kOptimal: Status.OPTIMAL, highspy.HighsModelStatus.kTimeLimit: Status.TIME_LIMIT,
              highspy.HighsModelStatus.kInfeasible: Status.INFEASIBLE}.get(st, Status.ERROR)
    if status != Status.OPTIMAL:
        return status, None, None, None, h.modelStatusToString(st)
    sol = h.getSolution()
    return (status, h.getInfo().objective_function_value, np.array(sol.col_value), np.array(sol.row_dual),
            h.modelStatusToString(st))


def _solve_highs_ipm(lp, time_limit):
    """HiGHS's interior point method through scipy's ``linprog``: the HiGHS scipy bundles (scipy 1.17.1) solved
    paper:200's interval LP (72,750 columns) in 13.7 s where highspy 1.14's took 17.8 s, with the same optimum
    (2026-11-28, machine otherwise idle)."""
    from scipy.optimize import linprog

    row_lo, row_hi, cost, lo, hi, A = _whole(lp)
    sense, rhs = _senses(row_lo, row_hi)
    less, more, equal = sense == "L", sense == "G", sense == "E"
    ub = less | more
    flip = np.where(more, -1.0, 1.0)  # a >= row is -A x <= -lo
    res = linprog(cost, A_ub=sp.diags(flip[ub]) @ A[ub] if ub.any() else None,
                  b_ub=(flip * rhs)[ub] if ub.any() else None,
                  A_eq=A[equal] if equal.any() else None, b_eq=rhs[equal] if equal.any() else None,
                  bounds=np.column_stack([lo, hi]), method="highs-ipm", options={"time_limit": float(time_limit)})
    status = {0: Status.OPTIMAL, 2: Status.INFEASIBLE}.get(res.status, Status.ERROR)
    if res.status == 1 and "time" in str(res.message).lower():
        status = Status.TIME_LIMIT
    if status != Status.OPTIMAL:
        return status, None, None, None, str(res.message)
    duals = np.zeros(len(row_lo))
    if ub.any():
        duals[ub] = flip[ub] * res.ineqlin.marginals
    if equal.any():
        duals[equal] = res.eqlin.marginals
    return status, float(res.fun), np.asarray(res.x), duals, str(res.message)


# --- Gurobi --------------------------------------------------------------------------------------------

def _send_gurobi(lp, row_lo, row_hi, cost, lo, hi, A, first):
    import gurobipy as gp

    if first:
        env = gp.Env(empty=True)
        env.setParam("OutputFlag", 0)
        env.start()
        m = gp.Model(env=env)
        m.Params.Threads = 1
        m.Params.Method = {"dual": 1, "primal": 0, "barrier": 2}[lp.algorithm]
        sense, rhs = _senses(row_lo, row_hi)
        x = m.addMVar(len(cost), lb=_inf(lo, gp.GRB.INFINITY), ub=_inf(hi, gp.GRB.INFINITY), obj=cost)
        lp._cons = m.addMConstr(A.tocsr(), x, sense, rhs).tolist()
        lp._model = m
        return
    m = lp._model
    if len(row_lo):
        sense, rhs = _senses(row_lo, row_hi)
        lp._cons += [m.addLConstr(gp.LinExpr(), s, r) for s, r in zip(sense.tolist(), rhs.tolist())]
    for j in range(len(cost)):
        a, b = A.indptr[j], A.indptr[j + 1]
        m.addVar(lb=max(lo[j], -gp.GRB.INFINITY), ub=min(hi[j], gp.GRB.INFINITY), obj=cost[j],
                 column=gp.Column(A.data[a:b].tolist(), [lp._cons[i] for i in A.indices[a:b]]))


def _solve_gurobi(lp, time_limit):
    import gurobipy as gp

    m = lp._model
    m.Params.TimeLimit = float(time_limit)
    m.optimize()
    S = gp.GRB.Status
    status = {S.OPTIMAL: Status.OPTIMAL, S.TIME_LIMIT: Status.TIME_LIMIT, S.INFEASIBLE: Status.INFEASIBLE,
              S.INF_OR_UNBD: Status.INFEASIBLE}.get(m.Status, Status.ERROR)
    if status != Status.OPTIMAL:
        return status, None, None, None, f"gurobi status {m.Status}"
    return (status, m.ObjVal, np.array(m.getAttr("X", m.getVars())), np.array(m.getAttr("Pi", lp._cons)),
            f"gurobi status {m.Status}")


# --- CPLEX ---------------------------------------------------------------------------------------------

def _send_cplex(lp, row_lo, row_hi, cost, lo, hi, A, first):
    import cplex

    if first:
        c = lp._model = cplex.Cplex()
        for stream in (c.set_log_stream, c.set_results_stream, c.set_warning_stream, c.set_error_stream):
            stream(None)
        c.parameters.threads.set(1)
        v = c.parameters.lpmethod.values
        c.parameters.lpmethod.set({"dual": v.dual, "primal": v.primal, "barrier": v.barrier}[lp.algorithm])
    c = lp._model
    if len(row_lo):
        sense, rhs = _senses(row_lo, row_hi)
        c.linear_constraints.add(rhs=rhs.tolist(), senses="".join(sense))
    if len(cost):
        columns = [cplex.SparsePair(ind=A.indices[A.indptr[j]:A.indptr[j + 1]].tolist(),
                                    val=A.data[A.indptr[j]:A.indptr[j + 1]].tolist()) for j in range(len(cost))]
        c.variables.add(obj=cost.tolist(), lb=_inf(lo, cplex.infinity).tolist(), ub=_inf(hi, cplex.infinity).tolist(),
                        columns=columns)


def _solve_cplex(lp, time_limit):
    c = lp._model
    c.parameters.timelimit.set(float(time_limit))
    c.solve()
    code = c.solution.get_status()
    status = Status.OPTIMAL if code == 1 else Status.TIME_LIMIT if code == 11 else \
        Status.INFEASIBLE if code in (3, 4) else Status.ERROR
    if status != Status.OPTIMAL:
        return status, None, None, None, c.solution.get_status_string()
    return (status, c.solution.get_objective_value(), np.array(c.solution.get_values()),
            np.array(c.solution.get_dual_values()), c.solution.get_status_string())


# --- Xpress --------------------------------------------------------------------------------------------

def _send_xpress(lp, row_lo, row_hi, cost, lo, hi, A, first):
    import xpress as xp

    if first:
        p = lp._model = xp.problem()
        p.setControl("outputlog", 0)
        p.setControl("threads", 1)
    p = lp._model
    if len(row_lo):
        sense, rhs = _senses(row_lo, row_hi)
        p.addRows(sense.tolist(), rhs.tolist())
    if len(cost):
        p.addCols(cost.tolist(), A.indptr[:-1].tolist(), A.indices.tolist(), A.data.tolist(),
                  _inf(lo, xp.infinity).tolist(), _inf(hi, xp.infinity).tolist())


def _solve_xpress(lp, time_limit):
    import xpress as xp

    p = lp._model
    p.setControl("timelimit", float(time_limit))
    p.lpOptimize({"dual": "d", "primal": "p", "barrier": "b"}[lp.algorithm])
    st = p.attributes.lpstatus
    status = Status.OPTIMAL if st == xp.LPStatus.OPTIMAL else Status.INFEASIBLE if st == xp.LPStatus.INFEAS else \
        Status.TIME_LIMIT if p.attributes.stopstatus == xp.StopType.TIMELIMIT else Status.ERROR
    if status != Status.OPTIMAL:
        return status, None, None, None, f"xpress {st.name}"
    return (status, p.attributes.lpobjval, np.array(p.getSolution()), np.array(p.getDuals()),
            f"xpress {st.name}")


# --- SCIP's LP interface (SoPlex) ----------------------------------------------------------------------

def _send_scip(lp, row_lo, row_hi, cost, lo, hi, A, first):
    from pyscipopt import LP as ScipLP

    if first:
        lp._model = ScipLP(f"iosched-{id(lp)}", sense="minimize")
    s = lp._model
    big = s.infinity()
    if len(row_lo):
        s.addRows([[] for _ in range(len(row_lo))], _inf(row_lo, big).tolist(), _inf(row_hi, big).tolist())
    if len(cost):
        cut = [slice(A.indptr[j], A.indptr[j + 1]) for j in range(len(cost))]
        entries = [list(zip(A.indices[c].tolist(), A.data[c].tolist())) for c in cut]
        s.addCols(entries, cost.tolist(), _inf(lo, big).tolist(), _inf(hi, big).tolist())


def _solve_scip(lp, time_limit):
    from pyscipopt import SCIP_LPPARAM

    s = lp._model
    s.setRealParam(SCIP_LPPARAM.LPTILIM, float(time_limit))
    began = time.perf_counter()
    value = s.solve(dual=lp.algorithm != "primal")
    if not s.isOptimal():
        spent = time.perf_counter() - began
        return (Status.TIME_LIMIT if spent >= 0.95 * time_limit else Status.ERROR), None, None, None, \
            f"soplex not optimal after {spent:.3g} s"
    return Status.OPTIMAL, value, np.array(s.getPrimal()), np.array(s.getDual()), "soplex optimal"


# --- CBC (a program: each solve writes the LP as MPS, through highspy, and runs it) --------------------------

def _solve_cbc(lp, time_limit):
    import os
    import tempfile

    row_lo, row_hi, cost, lo, hi, A = _whole(lp)
    A = A.tocsc()
    h = highs_model(cost, lo, hi, row_lo, row_hi, A.indptr, A.indices, A.data)
    with tempfile.TemporaryDirectory(prefix="iosched-cbc-") as folder:
        path = os.path.join(folder, "lp.mps")
        h.writeModel(path)
        action = {"dual": "-dualS", "primal": "-primalS", "barrier": "-barrier"}[lp.algorithm]
        head, value, values, text = backends.run_cbc(path, ["-sec", str(float(time_limit)), action],
                                                     timeout=time_limit + 60)
    if not head.startswith("Optimal"):
        status = Status.TIME_LIMIT if head.startswith("Stopped on time") else \
            Status.INFEASIBLE if "nfeasible" in head else Status.ERROR
        return status, None, None, None, f"cbc: {head}"
    x = np.array([values.get(f"c{j}", (0.0, 0.0))[0] for j in range(len(cost))])
    duals = np.array([values.get(f"r{i}", (0.0, 0.0))[1] for i in range(len(row_lo))])
    return Status.OPTIMAL, value, x, duals, f"cbc: {head}"


_SEND = {"highs": _send_highs, "gurobi": _send_gurobi, "cplex": _send_cplex, "xpress": _send_xpress,
         "scip": _send_scip, "cbc": _keep}
_SOLVE = {"highs": _solve_highs, "gurobi": _solve_gurobi, "cplex": _solve_cplex, "xpress": _solve_xpress,
          "scip": _solve_scip, "cbc": _solve_cbc}

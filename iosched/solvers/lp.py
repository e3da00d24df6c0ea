"""A linear program built as arrays and solved, then solved again as columns are added, on any backend.

For LPs that are rebuilt many times or grown column by column (malleable's interval, order and
Lagrangian bounds, periodic's compaction LP in ``trace-compact``), where a Pyomo model or an MPS file per
solve would cost more than the solve. :class:`LP` holds rows and columns until its first
:meth:`LP.solve`, then hands them to the backend in one piece through its own matrix API (each backend
module's ``lp_send``: HiGHS ``addRows``/``addCols``, Gurobi ``addMVar``/``addMConstr``, CPLEX and Xpress
their ``add`` calls on arrays, SCIP its LP interface, SoPlex). Columns added later go in incrementally, so a
simplex solve goes on from the last basis (column generation) where the backend keeps its model
(``incremental_lp``; CBC, a program, solves the whole LP from an MPS file each time). The problem is always
minimised.

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

from iosched import lazy
from iosched.solvers import backends
from iosched.solvers.backends.base import Pending
from iosched.solvers.outcome import Stop, verdict
from iosched.status import Status

sp = lazy.module("scipy.sparse")  # imported at the first LP built, not with iosched

ALGORITHMS = ("dual", "primal", "barrier")  # dual simplex (the default), primal simplex, interior point


@dataclass
class LPResult:
    """What a backend said of an LP: ``value``, ``x`` and ``duals`` only where it is solved to optimality;
    ``stop`` why it stopped and ``code`` the backend's own status behind it."""

    status: Status
    value: float | None
    x: np.ndarray | None
    duals: np.ndarray | None
    message: str
    wall_time_s: float
    stop: Stop | None = None
    code: str | None = None


class LP:
    """min c x subject to row_lo <= A x <= row_hi, col_lo <= x <= col_hi, on backend ``solver``.

    ``algorithm`` is one of ALGORITHMS (SoPlex, SCIP's LP solver, has no barrier: a simplex instead);
    one thread. Rows are added empty (:meth:`add_rows`); each column brings its entries (:meth:`add_cols`).
    A row's bounds are one of (-inf, hi), (lo, inf) or (lo, lo). ``model`` is the backend's model once the
    LP is first solved (None before).
    """

    def __init__(self, solver: str = "highs", algorithm: str = "dual"):
        self.backend = backends.require(solver)
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
        self.solver, self.algorithm = solver, algorithm
        self.rows, self.columns = 0, 0
        self._row_lo: list[np.ndarray] = []  # rows and columns not yet handed to the backend
        self._row_hi: list[np.ndarray] = []
        self._cols: list[tuple] = []  # (cost, lo, hi, csc block of rows x new columns)
        self.model = None

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
                if self._row_lo or self._cols or self.model is None:
                    self.backend.lp_send(self, self._pending(), self.model is None)
                answer = self.backend.lp_solve(self, max(time_limit, 0.01))
        except backends.LicenceLimit:
            raise
        except Exception as e:  # each backend raises its own errors
            refused = self.backend.licence_error(e, self.columns, self.rows)
            if refused is not None:
                raise refused from None
            return LPResult(Status.ERROR, None, None, None, repr(e), time.perf_counter() - began, Stop.ERROR,
                            "exception")
        status = verdict(answer.stop, answer.has_solution)
        value, x, duals = answer.objective, answer.x, answer.duals
        if status != Status.OPTIMAL or value is None or not math.isfinite(value):
            value = x = duals = None
            status = Status.ERROR if status == Status.OPTIMAL else status
        return LPResult(status, value, x, duals, answer.message, time.perf_counter() - began, answer.stop, answer.code)

    def _pending(self) -> Pending:
        """The rows and columns not yet sent (the new columns' entries over all rows so far)."""
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
        return Pending(row_lo, row_hi, cost, lo, hi, A)

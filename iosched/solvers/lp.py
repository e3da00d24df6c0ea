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

    Rows are added empty (:meth:`add_rows`); each column brings its entries (:meth:`add_cols`). A row's
    bounds are one of (-inf, hi), (lo, inf) or (lo, lo). One thread.

    Parameters
    ----------
    solver : str
        The backend: ``highs``, ``gurobi``, ``scip``, ``cplex``, ``xpress`` or ``cbc``.
    algorithm : str
        One of ALGORITHMS: ``dual`` (simplex, the default), ``primal`` or ``barrier`` (SoPlex, SCIP's LP
        solver, has no barrier: a simplex instead).

    Attributes
    ----------
    rows, columns : int
        How many the LP has so far.
    model
        The backend's own model once the LP is first solved (None before).

    Raises
    ------
    SolverMissing
        The backend is not installed.
    ValueError
        An unknown ``algorithm``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.sparse import csc_matrix
    >>> from iosched.solvers.lp import LP
    >>> lp = LP("highs")
    >>> lp.add_rows([1.0], [np.inf])  # x0 + x1 >= 1
    array([0])
    >>> lp.add_cols([1.0, 2.0], 0.0, np.inf, csc_matrix([[1.0, 1.0]]))
    array([0, 1])
    >>> res = lp.solve(time_limit=10)
    >>> res.status.value, res.value, res.x.tolist()
    ('optimal', 1.0, [1.0, 0.0])
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
        """Empty rows (their entries come with the columns).

        Parameters
        ----------
        lo, hi : array_like of float
            The rows' bounds, of one length; each row (-inf, hi), (lo, inf) or (lo, lo).

        Returns
        -------
        numpy.ndarray
            The new rows' indices.

        Raises
        ------
        ValueError
            Bounds of different lengths, or a row bounded on both sides by different values.
        """
        lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        kinds = np.isinf(lo) | np.isinf(hi) | (lo == hi)
        if lo.shape != hi.shape or not kinds.all():
            raise ValueError("each row needs bounds (-inf, hi), (lo, inf) or (lo, lo)")
        self._row_lo.append(lo)
        self._row_hi.append(hi)
        self.rows += len(lo)
        return np.arange(self.rows - len(lo), self.rows)

    def add_cols(self, cost, lo, hi, entries) -> np.ndarray:
        """Columns, with their entries in the rows added so far.

        Parameters
        ----------
        cost, lo, hi : float or array_like of float
            The columns' costs and bounds (a scalar applies to every new column).
        entries : sparse matrix or array_like
            (rows so far, or fewer: the rest are 0) x (new columns).

        Returns
        -------
        numpy.ndarray
            The new columns' indices.

        Raises
        ------
        ValueError
            ``entries`` has more rows than the LP.
        """
        entries = sp.csc_matrix(entries)
        n = entries.shape[1]
        if entries.shape[0] > self.rows:
            raise ValueError(f"entries in {entries.shape[0]} rows, the LP has {self.rows}")
        cost, lo, hi = (np.broadcast_to(np.asarray(v, dtype=float), n).copy() for v in (cost, lo, hi))
        self._cols.append((cost, lo, hi, entries))
        self.columns += n
        return np.arange(self.columns - n, self.columns)

    def solve(self, time_limit: float) -> LPResult:
        """Solve (again, from the last basis where the backend keeps one: ``incremental_lp``).

        Parameters
        ----------
        time_limit : float
            Seconds (at least 0.01 is given to the backend).

        Returns
        -------
        LPResult
            The status; the optimum, the column values and the row duals only where it is ``optimal``. A
            backend's own failure is status ``error`` with its message, not an exception.

        Raises
        ------
        LicenceLimit
            The backend refused the LP for its size under a size-limited licence.
        """
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

"""A MILP as arrays, for models too large to build through Pyomo's rules in a method's budget.

Columns (bounds, integrality, objective) and rows (bounds) are added one at a time
(:meth:`Matrix.col`, :meth:`Matrix.row`) or as numpy blocks (:meth:`Matrix.cols`,
:meth:`Matrix.rows`, :meth:`Matrix.add`); :meth:`Matrix.pyomo` rebuilds the same model in
Pyomo for ``iosched model`` (inspect it, write it as LP or MPS). :func:`solve` runs it on the profile's backend
(its ``solve_matrix``): HiGHS directly; the others read the MPS file HiGHS writes of it (their own MPS
readers and APIs: far faster than a Pyomo rebuild, see benchmarks/solvers.md).
"""

from __future__ import annotations

import math
import time

import numpy as np

from iosched import lazy
from iosched.solvers import Profile, SolveOutcome, backends
from iosched.solvers.backends.highs import highs_model

pe = lazy.module("pyomo.environ")


class Matrix:
    """A MILP as arrays: columns and rows in creation order, the entries as COO triples."""

    def __init__(self):
        self._cols: list[tuple] = []  # blocks of (lo, hi, integer, cost) arrays
        self._rows: list[tuple] = []  # blocks of (lo, hi) arrays
        self._entries: list[tuple] = []  # blocks of (row, col, value) arrays
        self._col1: tuple[list, list, list, list] = ([], [], [], [])  # single columns not yet in a block
        self._row1: tuple[list, list] = ([], [])
        self._entry1: tuple[list, list, list] = ([], [], [])
        self.columns = 0
        self.row_count = 0

    def col(self, lo: float, hi: float, integer: bool = True, cost: float = 0.0) -> int:
        for part, v in zip(self._col1, (lo, hi, integer, cost)):
            part.append(v)
        self.columns += 1
        return self.columns - 1

    def cols(self, n: int, lo, hi, integer: bool = True, cost=0.0) -> np.ndarray:
        """``n`` columns (bounds and cost scalars or arrays of n); their indices."""
        self._flush_cols()
        self._cols.append(tuple(np.broadcast_to(np.asarray(v, dtype=dt), n)
                                for v, dt in ((lo, float), (hi, float), (integer, bool), (cost, float))))
        self.columns += n
        return np.arange(self.columns - n, self.columns)

    def row(self, cols, coefs, lo: float = -math.inf, hi: float = math.inf) -> None:
        self._row1[0].append(lo)
        self._row1[1].append(hi)
        for c, v in zip(cols, coefs):
            self._entry1[0].append(self.row_count)
            self._entry1[1].append(c)
            self._entry1[2].append(float(v))
        self.row_count += 1

    def rows(self, n: int, lo=-math.inf, hi=math.inf) -> np.ndarray:
        """``n`` rows (bounds scalars or arrays of n), entries given by :meth:`add`; their indices."""
        self._flush_rows()
        self._rows.append((np.broadcast_to(np.asarray(lo, dtype=float), n),
                           np.broadcast_to(np.asarray(hi, dtype=float), n)))
        self.row_count += n
        return np.arange(self.row_count - n, self.row_count)

    def add(self, rows, cols, values) -> None:
        """Entries (row, column, value), broadcast together."""
        r, c, v = np.broadcast_arrays(np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64),
                                      np.asarray(values, dtype=float))
        self._entries.append((r.ravel(), c.ravel(), v.ravel()))

    def _flush_cols(self) -> None:
        if self._col1[0]:
            self._cols.append(tuple(np.asarray(v, dtype=dt) for v, dt in zip(self._col1, (float, float, bool, float))))
            self._col1 = ([], [], [], [])

    def _flush_rows(self) -> None:
        if self._row1[0]:
            self._rows.append(tuple(np.asarray(v, dtype=float) for v in self._row1))
            self._row1 = ([], [])

    def arrays(self) -> tuple[np.ndarray, ...]:
        """(col lo, col hi, integer, cost, row lo, row hi, entry rows, entry cols, entry values)."""
        self._flush_cols()
        self._flush_rows()
        if self._entry1[0]:
            self._entries.append(tuple(np.asarray(v, dtype=dt) for v, dt in zip(self._entry1, (np.int64, np.int64,
                                                                                            float))))
            self._entry1 = ([], [], [])
        cols = [np.concatenate([b[k] for b in self._cols]) if self._cols else np.zeros(0) for k in range(4)]
        rows = [np.concatenate([b[k] for b in self._rows]) if self._rows else np.zeros(0) for k in range(2)]
        ent = [np.concatenate([b[k] for b in self._entries]) if self._entries else np.zeros(0) for k in range(3)]
        return (*cols, *rows, *ent)

    def highs(self, profile: Profile, relax: bool = False):
        """A highspy.Highs holding this model, with the profile's HiGHS options and time limit (with ``relax``,
        its LP relaxation: every column continuous)."""
        lo, hi, integer, cost, row_lo, row_hi, rows, cols, vals = self.arrays()
        order = np.lexsort((rows, cols))  # column-wise
        h = highs_model(cost, lo, hi, row_lo, row_hi, np.searchsorted(cols[order], np.arange(self.columns + 1)),
                        rows[order], vals[order])
        for key, value in backends.backend("highs").options(profile).items():
            h.setOptionValue(key, value)
        ints = np.flatnonzero(integer).astype(np.int32)
        if len(ints) and not relax:
            h.changeColsIntegrality(len(ints), ints, np.ones(len(ints), dtype=np.uint8))
        return h

    def pyomo(self, name: str) -> pe.ConcreteModel:
        """The same model in Pyomo (for ``iosched model``: inspect it, write it as LP or MPS)."""
        lo, hi, integer, cost, row_lo, row_hi, rows, cols, vals = self.arrays()
        m = pe.ConcreteModel(name=name)
        m.x = pe.Var(range(self.columns), bounds=lambda m, j: (lo[j], None if math.isinf(hi[j]) else hi[j]),
                     domain=lambda m, j: pe.Integers if integer[j] else pe.Reals)
        by_row: dict[int, list] = {}
        for r, c, v in zip(rows.tolist(), cols.tolist(), vals.tolist()):
            by_row.setdefault(r, []).append((c, v))

        def rule(m, r):
            body = sum(v * m.x[c] for c, v in by_row.get(r, []))
            low = None if math.isinf(row_lo[r]) else row_lo[r]
            high = None if math.isinf(row_hi[r]) else row_hi[r]
            return pe.Constraint.Skip if not by_row.get(r) else (low, body, high)

        m.rows = pe.Constraint(range(self.row_count), rule=rule)
        m.obj = pe.Objective(expr=sum(c * m.x[j] for j, c in enumerate(cost.tolist()) if c), sense=pe.minimize)
        return m


def solve(matrix: Matrix, profile: Profile, start: np.ndarray | None = None, relax: bool = False,
          root: bool = False) -> tuple[SolveOutcome, np.ndarray | None]:
    """Solve ``matrix`` on the profile's backend under ``profile`` (from the solution ``start``, column
    values, if given): the outcome (objective and bound in the model's own units; with a start,
    ``outcome.start`` says whether the backend took it) and the column values of the incumbent (None
    without one). Other backends than HiGHS read the MPS file HiGHS writes (time counted in the outcome).
    With ``relax`` the LP relaxation is solved (every column continuous); with ``root`` the root node's
    dual bound is read where the backend reports one (``outcome.root_bound``, else ``outcome.root_why``)."""
    began = time.perf_counter()
    backend = backends.require(profile.solver)
    return backend.solve_matrix(matrix.highs(profile, relax), profile, matrix.columns, matrix.row_count, start,
                                root=root, began=began)

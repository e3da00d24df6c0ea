"""Small linear programs with rational data, solved in floating point and certified in exact arithmetic.

A :class:`RationalLP` is ``min c x + c0`` subject to rows ``lo <= a x`` or ``a x <= hi`` and bounds
``l <= x <= u``, every number a :class:`fractions.Fraction` (a float's exact value where the data came as
floats). :meth:`RationalLP.solve` hands it to a backend in floating point through
:class:`iosched.solvers.lp.LP` and then proves what it can in exact arithmetic:

* **a safe lower bound** (Neumaier and Shcherbina, "Safe bounds in linear and mixed-integer programming",
  Math. Program. 99, 2004): for ANY row multipliers y with y_r >= 0 on rows with a lower side and
  y_r <= 0 on rows with an upper side (others 0), every feasible x has
  ``c x = y A x + (c - A^T y) x >= sum_r y_r b_r + sum_j min(d_j l_j, d_j u_j)``, d = c - A^T y,
  b_r the row's side that y_r's sign selects. Computed exactly from the backend's duals (rounded to
  rationals of small denominator, which keeps the inequality: it holds for every y of the right signs),
  it is a lower bound on the LP's optimum whatever the backend's tolerances did. :func:`float_safe_bound`
  computes it in floating point for the duals as they are, less an allowance proven to cover every
  rounding: no Fractions, and as valid, where a bound a little below the exact one will do (a branch
  and bound node far from its cut, a Farkas ray's bound far above 0);
* **an exact vertex**: the constraints tight at the backend's point (within a tolerance), greedily
  those with non-zero multipliers first, until n are linearly independent; that square system solved
  exactly gives a point, kept only if it satisfies every row and bound exactly; the same basis's exact
  multipliers, where their signs are right, prove it optimal (then the bound equals its value);
* **infeasibility**: where the backend finds none, the phase-one LP ``min sum v`` (an elastic v_r >= 0
  per row) is solved the same way: its safe bound above 0 proves that no point satisfies the rows.

Nothing is claimed that these exact computations do not prove: an outcome without a proof says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from iosched.solvers.backends.highs import highs_model
from iosched.solvers.lp import LP
from iosched.status import Status

DENOMINATOR = 10**6  # duals rounded to rationals of at most this denominator (any y of the right signs is valid)
TIGHT = 1e-7  # relative: a constraint this close to its side at the backend's point is a vertex candidate
Row = tuple[dict[int, Fraction], Fraction | None, Fraction | None]  # coefficients, lower side, upper side
FloatRow = tuple[float, float, list[int], list[float]]  # lower side, upper side, columns, coefficients (floats)
Constraint = tuple[dict[int, Fraction], Fraction, int]  # coefficients, side, sign of a valid multiplier


@dataclass
class Certified:
    """What :meth:`RationalLP.solve` proved. ``lower``: a lower bound on the LP's optimum (``math.inf``
    where its rows are proven infeasible; None where nothing was proven, or not yet: see
    :meth:`Session.solve`). ``x``: an exactly feasible
    point and ``value`` its objective, or None. ``exact``: ``lower == value`` (an exact optimum).
    ``point`` and ``duals``: the backend's floating-point solution (None without one)."""

    status: str  # "optimal" (solved, lower proven), "infeasible" (proven), "unproven" (neither)
    lower: Fraction | float | None
    x: list[Fraction] | None = None
    value: Fraction | None = None
    exact: bool = False
    point: np.ndarray | None = None
    duals: np.ndarray | None = None
    estimate: float | None = None  # the backend's optimum, in floating point (a guide, never a proof)
    floor: float = -math.inf  # a lower bound on the LP's optimum proven in floating point (float_safe_bound)
    message: str = ""


def rational(values: Iterable[float]) -> dict[int, Fraction]:
    """Floating-point duals as rationals of denominator at most DENOMINATOR (exact for the simple ratios of
    these LPs' data; a rounded one still gives a valid bound, only a weaker one), the zeros left out."""
    out = {}
    for r, v in enumerate(values):
        if v:
            q = Fraction(float(v)).limit_denominator(DENOMINATOR)
            if q:
                out[r] = q
    return out


def float_safe_bound(y: np.ndarray | Sequence[float], rows: list[FloatRow], cost: list[float], constant: float,
                     lower: list[float], upper: list[float]) -> float:
    """The safe bound of the module docstring for the float multipliers ``y``, computed in floating point and
    lowered by an allowance that covers every rounding, so that it is a lower bound on the exact LP's
    optimum (Neumaier and Shcherbina 2004, section 3, by an explicit error term instead of directed
    rounding); ``-math.inf`` where it cannot be (a non-finite number on the way).

    The data: each number the nearest float to the exact one (relative error <= u = 2^-53; Python's
    ``float(Fraction)`` rounds correctly): ``rows`` as (lower side, upper side, columns, coefficients), an
    absent side infinite, the objective ``cost`` x + ``constant``, bounds ``lower <= x <= upper`` (all
    finite). y is taken as it is (a float is an exact number): y_r where its sign selects a finite side,
    else 0; the bound holds for that y whatever the backend's tolerances did.

    **The error allowance.** With m rows and n columns, gamma_k = k u / (1 - k u) <= 1.01 k u (k u <= 0.01):
    a sum of k terms, each a product of at most two numbers rounded once before and once after their
    product, computed in floating point in any order, is within gamma_(k+2) of the sum of their
    magnitudes (Higham, Accuracy and Stability of Numerical Algorithms, 2002, 3.1 and 4.2). So

    * the computed reduced cost d~_j = fl(c_j - sum_r y_r A_rj) is within E_j = gamma_(m+3) M_j of the
      exact d_j, M_j = abs(c_j) + sum_r abs(y_r A_rj);
    * min(d l_j, d u_j) is 1-Lipschitz in d times w_j = max(abs(l_j), abs(u_j)) (l_j <= u_j), so the
      exact bound is at least B~ - sum_j E_j w_j, B~ = c0 + sum_r y_r b_r + sum_j min(d~_j l_j, d~_j u_j)
      in exact arithmetic (the side that d~_j's sign picks is that minimum's);
    * B~ computed as a float sum of m + n + 1 terms is within gamma_(m+n+3) (abs(c0) + sum abs(y_r b_r)
      + sum_j abs(d~_j) w_j) of it, and abs(d~_j) <= (1 + gamma_(m+3)) M_j;

    hence the computed value is within 2.1 * 1.01 (m + n + 3) u T of the exact bound, T = abs(c0) +
    sum abs(y_r b_r) + sum_j M_j w_j, itself at most 1.02 times its computed value T~ (a sum of
    2 m + n + 4 non-negative terms, so within gamma_(2m+n+6)). The allowance 8 (m + n + 3) u T~ covers
    that with room for its own rounding, plus an absolute (m + n + 3) 1e-300 for products that underflow
    (each off by at most 2^-1075); the last subtraction is rounded to nearest and then stepped one float
    down, which puts it below the exact difference."""
    m, n = len(rows), len(cost)
    if (2 * m + n + 6) * 2.0**-53 > 0.01:
        return -math.inf
    d, magnitude = list(cost), [abs(c) for c in cost]
    value, size = constant, abs(constant)
    for r in np.flatnonzero(y).tolist():  # rows of multiplier 0 add nothing, exactly
        lo, hi, columns, coefs = rows[r]
        yr = float(y[r])
        if yr > 0 and lo > -math.inf:
            side = lo
        elif yr < 0 and hi < math.inf:
            side = hi
        else:
            continue
        value += yr * side
        size += abs(yr * side)
        for j, a in zip(columns, coefs):
            t = yr * a
            d[j] -= t
            magnitude[j] += abs(t)
    for j in range(n):
        value += d[j] * (lower[j] if d[j] > 0 else upper[j])
        size += magnitude[j] * max(abs(lower[j]), abs(upper[j]))
    allowance = (m + n + 3) * (2.0**-50 * size + 1e-300)
    out = math.nextafter(value - allowance, -math.inf)
    return out if math.isfinite(out) and math.isfinite(allowance) else -math.inf


class RationalLP:
    """min ``cost`` x + ``constant`` s.t. ``rows`` and ``lower`` <= x <= ``upper`` (Fractions; bounds finite)."""

    def __init__(self, cost: list[Fraction], constant: Fraction, lower: list[Fraction], upper: list[Fraction],
                 rows: list[Row] | None = None):
        self.cost, self.constant, self.lower, self.upper = cost, constant, lower, upper
        self.rows: list[Row] = list(rows or [])
        self.n = len(cost)

    def with_rows(self, extra: list[Row]) -> RationalLP:
        """The same LP with ``extra`` rows added (this one unchanged)."""
        return RationalLP(self.cost, self.constant, self.lower, self.upper, self.rows + list(extra))

    def objective(self, x: list[Fraction]) -> Fraction:
        """The objective's exact value at ``x``."""
        return self.constant + sum((c * v for c, v in zip(self.cost, x) if c), Fraction(0))

    def feasible(self, x: list[Fraction]) -> bool:
        """Whether ``x`` satisfies every bound and row exactly."""
        if any(v < lo or v > hi for v, lo, hi in zip(x, self.lower, self.upper)):
            return False
        for coefs, lo, hi in self.rows:
            act = sum((a * x[j] for j, a in coefs.items()), Fraction(0))
            if (lo is not None and act < lo) or (hi is not None and act > hi):
                return False
        return True

    # --- floating point -------------------------------------------------------------------------------
    def _float_lp(self, solver: str, elastic: bool) -> LP:
        """The LP (or, ``elastic``, its phase one) as an :class:`LP` on ``solver``."""
        import scipy.sparse as sp  # here, not at import: import iosched loads no SciPy

        m = len(self.rows)
        lp = LP(solver)
        lo = np.array([-math.inf if r[1] is None else float(r[1]) for r in self.rows])
        hi = np.array([math.inf if r[2] is None else float(r[2]) for r in self.rows])
        lp.add_rows(lo, hi)
        r_idx, c_idx, vals = [], [], []
        for i, (coefs, _, _) in enumerate(self.rows):
            for j, a in coefs.items():
                r_idx.append(i)
                c_idx.append(j)
                vals.append(float(a))
        entries = sp.csc_matrix((vals, (r_idx, c_idx)), shape=(m, self.n))
        cost = np.zeros(self.n) if elastic else np.array([float(c) for c in self.cost])
        lp.add_cols(cost, np.array([float(v) for v in self.lower]), np.array([float(v) for v in self.upper]),
                    entries)
        if elastic and m:  # v_r >= 0: + v on a row with a lower side, - v on one with an upper side
            signs = [1.0 if r[1] is not None else -1.0 for r in self.rows]
            lp.add_cols(np.ones(m), 0.0, math.inf, sp.csc_matrix((signs, (range(m), range(m))), shape=(m, m)))
        return lp

    def solve(self, solver: str, time_limit: float, vertex: bool = True) -> Certified:
        """Solve on ``solver`` within ``time_limit`` s, then certify (module docstring); ``vertex``: look for
        the exact vertex too (else :meth:`certify_vertex` may do it later)."""
        res = self._float_lp(solver, False).solve(time_limit)
        if res.status == Status.INFEASIBLE:
            return self._infeasible(solver, time_limit)
        if res.status != Status.OPTIMAL:
            return Certified("unproven", None, message=f"the LP backend stopped: {res.message}")
        assert res.value is not None and res.x is not None and res.duals is not None  # LP.solve's at OPTIMAL
        out = Certified("optimal", self.safe_bound(rational(res.duals)), point=res.x, duals=res.duals,
                        estimate=res.value + float(self.constant))
        if vertex:
            self.certify_vertex(out)
        return out

    def certify_vertex(self, out: Certified) -> None:
        """Fill ``out``'s exact vertex (and, where its basis proves it optimal, its exact bound)."""
        assert out.point is not None and out.duals is not None  # (an optimal outcome has the backend's solution)
        found = self.vertex(out.point, out.duals)
        if found is not None and found[1] is not None:  # the exact basis is optimal: its value is the optimum
            out.x, out.value = found[0], self.objective(found[0])
            out.lower, out.exact = out.value, True
            return
        prove(self, out)
        if found is not None:
            assert out.lower is not None  # (prove gives one)
            out.x, out.value = found[0], self.objective(found[0])
            out.lower = min(out.lower, out.value)  # never lower: a feasible point's value bounds the optimum

    def _infeasible(self, solver: str, time_limit: float) -> Certified:
        """The backend found no point: prove it with the phase-one LP's safe bound, or say it is unproven."""
        res = self._float_lp(solver, True).solve(time_limit)
        if res.status != Status.OPTIMAL:
            return Certified("unproven", None, message=f"phase one: {res.message}")
        assert res.duals is not None  # (LP.solve's at OPTIMAL)
        y = {r: min(Fraction(1), max(Fraction(-1), v)) for r, v in rational(res.duals).items()}  # |y| <= 1: d_v >= 0
        if self.safe_bound(y, phase_one=True) > 0:
            return Certified("infeasible", math.inf, message="proven infeasible (phase one's safe bound > 0)")
        return Certified("unproven", None, message="the backend found the LP infeasible, unproven in exact arithmetic")

    # --- exact arithmetic --------------------------------------------------------------------------------
    def safe_bound(self, y: dict[int, Fraction], phase_one: bool = False) -> Fraction | float:
        """The safe bound of the module docstring for multipliers ``y`` (row index -> multiplier; absent
        rows, and a sign that does not match a row's side, count as 0). ``phase_one``: with the objective 0
        instead, a bound above 0 proving that no point satisfies the rows (a Farkas certificate); it is also
        the bound on ``min sum v`` of the elastic LP, whose v columns (cost 1, coefficient +-1) have
        d = 1 - abs(y_r) >= 0 for abs(y_r) <= 1 and lower bound 0, so they add 0. ``-math.inf`` where a d_j != 0
        meets an infinite bound."""
        total = Fraction(0) if phase_one else self.constant
        d = [Fraction(0)] * self.n if phase_one else list(self.cost)
        for r, yr in y.items():
            coefs, lo, hi = self.rows[r]
            if yr > 0 and lo is not None:
                total += yr * lo
            elif yr < 0 and hi is not None:
                total += yr * hi
            else:
                continue
            for j, a in coefs.items():
                d[j] -= yr * a
        for dj, lo, hi in zip(d, self.lower, self.upper):
            if dj:
                total += dj * (lo if dj > 0 else hi)
        return total

    def _candidates(self, x: np.ndarray, duals: np.ndarray) -> list[Constraint]:
        """Constraints tight at ``x`` as (coefficients, side, sign of a valid multiplier), those with
        non-zero multipliers (rows: the duals; bounds: the reduced costs) first."""
        d = np.array([float(c) for c in self.cost])
        first: list[Constraint] = []
        rest: list[Constraint] = []
        for (coefs, lo, hi), yr in zip(self.rows, duals):
            act = sum(float(a) * x[j] for j, a in coefs.items())
            for side, sign in ((lo, 1), (hi, -1)):
                if side is not None and abs(act - float(side)) <= TIGHT * (1 + abs(float(side))):
                    (first if yr * sign > 1e-12 else rest).append((coefs, side, sign))
            for j, a in coefs.items():
                d[j] -= yr * float(a)
        for j in range(self.n):
            for side, sign in ((self.lower[j], 1), (self.upper[j], -1)):
                if abs(x[j] - float(side)) <= TIGHT * (1 + abs(float(side))):
                    (first if d[j] * sign > 1e-12 else rest).append(({j: Fraction(1)}, side, sign))
        return first + rest

    def vertex(self, x: np.ndarray, duals: np.ndarray) -> tuple[list[Fraction], list[Fraction] | None] | None:
        """The exact vertex near the backend's ``x`` (module docstring): (point, multipliers) where the
        basis's exact multipliers prove it optimal, (point, None) where only its feasibility is exact,
        None where no exactly feasible vertex was found."""
        basis: list[Constraint] = []  # chosen constraints
        reduced: list[tuple[int, list[Fraction]]] = []  # their rows reduced against the earlier ones (echelon)
        for coefs, side, sign in self._candidates(x, duals):
            row = [coefs.get(j, Fraction(0)) for j in range(self.n)]
            for col, r in reduced:
                if row[col]:
                    f = row[col] / r[col]
                    row = [a - f * b for a, b in zip(row, r)]
            pivot = next((j for j, a in enumerate(row) if a), None)
            if pivot is None:
                continue
            basis.append((coefs, side, sign))
            reduced.append((pivot, row))
            if len(basis) == self.n:
                break
        if len(basis) < self.n:
            return None
        matrix = [[coefs.get(j, Fraction(0)) for j in range(self.n)] for coefs, _, _ in basis]
        point = solve_exact(matrix, [side for _, side, _ in basis])
        if point is None or not self.feasible(point):
            return None
        transposed = [[matrix[i][j] for i in range(self.n)] for j in range(self.n)]
        mult = solve_exact(transposed, list(self.cost))
        if mult is None or any(m * sign < 0 for m, (_, _, sign) in zip(mult, basis)):
            return point, None
        return point, mult


def solve_exact(matrix: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction] | None:
    """The solution of the square system ``matrix`` x = ``rhs`` by Gaussian elimination in exact
    arithmetic, or None where it is singular."""
    n = len(rhs)
    a = [list(row) + [b] for row, b in zip(matrix, rhs)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if a[r][col]), None)
        if pivot is None:
            return None
        a[col], a[pivot] = a[pivot], a[col]
        p = a[col][col]
        for r in range(n):
            if r != col and a[r][col]:
                f = a[r][col] / p
                a[r] = [u - f * v for u, v in zip(a[r], a[col])]
    return [a[i][n] / a[i][i] for i in range(n)]


class Session:
    """The LPs of one branch and bound: ``base`` and, per node, extra rows. On HiGHS one model is kept and
    only the extra rows that differ from the last node's change (a depth-first search's next node shares a
    prefix of its rows with the last one: its parent's, or an ancestor's), so each solve starts from the
    last basis; other backends build each node's LP through :class:`LP`. The backend is trusted for
    nothing: its point, duals and rays only guide the proofs, in exact arithmetic or by
    :func:`float_safe_bound`."""

    def __init__(self, base: RationalLP, solver: str):
        import scipy.sparse as sp  # here, not at import: import iosched loads no SciPy

        self.base, self.solver = base, solver
        self.rows: list[Row] = []  # the extra rows HiGHS's model holds after the base rows
        self.highs: Any = None  # a highspy.Highs on HiGHS
        self._floats: dict[int, FloatRow] = {}  # id(row) -> its float form (rows live as long as their model)
        self.cost, self.constant = [float(c) for c in base.cost], float(base.constant)
        self.lower, self.upper = [float(v) for v in base.lower], [float(v) for v in base.upper]
        self.forms = [self._form(row) for row in base.rows]  # on HiGHS, its rows' (base rows, then the extra)
        if solver == "highs":
            lo, hi, starts, index, value = self._float_rows(base.rows)
            csr = sp.csr_matrix((value, index, starts), shape=(len(base.rows), base.n)).tocsc()
            self.highs = highs_model(np.array(self.cost), np.array(self.lower), np.array(self.upper), lo, hi,
                                     csr.indptr, csr.indices, csr.data)
            self.highs.setOptionValue("threads", 1)
            self.highs.setOptionValue("presolve", "off")  # tiny LPs, solved again and again from the last basis

    def _form(self, row: Row) -> FloatRow:
        """The row as floats, each number the nearest float to the exact one: (lower side, upper side,
        columns, coefficients), an absent side infinite."""
        known = self._floats.get(id(row))
        if known is None:
            coefs, a, b = row
            known = self._floats[id(row)] = (-math.inf if a is None else float(a), math.inf if b is None else float(b),
                                             list(coefs), [float(c) for c in coefs.values()])
        return known

    def _float_rows(self, rows: list[Row], big: float = math.inf
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Rows as floats (:meth:`_form`): lower and upper sides (infinite ones as -``big``, ``big``) and CSR
        (starts, columns, values)."""
        lo: list[float] = []
        hi: list[float] = []
        starts: list[int] = [0]
        index: list[int] = []
        value: list[float] = []
        for row in rows:
            known = self._form(row)
            lo.append(max(known[0], -big))
            hi.append(min(known[1], big))
            index += known[2]
            value += known[3]
            starts.append(len(index))
        return (np.array(lo), np.array(hi), np.array(starts, dtype=np.int32), np.array(index, dtype=np.int32),
                np.array(value))

    def _load(self, extra: list[Row]) -> None:
        """Make HiGHS's extra rows ``extra``: the rows after the prefix it shares with the last node's go;
        ``forms`` follows (every row's :meth:`_form`, base rows first)."""
        import highspy

        h, same, nb = self.highs, 0, len(self.base.rows)
        for old, new in zip(self.rows, extra):
            if old is not new:
                break
            same += 1
        if len(self.rows) > same:
            h.deleteRows(len(self.rows) - same, np.arange(nb + same, nb + len(self.rows), dtype=np.int32))
            del self.forms[nb + same:]
        if len(extra) > same:
            lo, hi, starts, index, value = self._float_rows(extra[same:], highspy.kHighsInf)
            h.addRows(len(extra) - same, lo, hi, len(index), starts[:-1], index, value)
            self.forms.extend(self._form(row) for row in extra[same:])
        self.rows = list(extra)

    def solve(self, extra: list[Row], time_limit: float) -> tuple[Certified, RationalLP]:
        """The node with ``extra`` rows: its certificate and its exact LP. On HiGHS an optimal node's
        ``lower`` is left to :meth:`prove` (the caller asks where it needs it) and its ``floor`` is
        :func:`float_safe_bound`'s; infeasibility is proven from HiGHS's dual ray (a Farkas certificate,
        checked exactly) or else by phase one."""
        lp = self.base.with_rows(extra)
        if self.highs is None:
            return lp.solve(self.solver, time_limit, False), lp
        import highspy

        h = self.highs
        self._load(extra)
        h.setOptionValue("time_limit", float(max(time_limit, 0.01)) + h.getRunTime())
        h.run()
        st = h.getModelStatus()
        if st == highspy.HighsModelStatus.kInfeasible:
            _, has, ray = h.getDualRay()
            if has and np.abs(ray).max() > 0:  # sum y b + sum min(d l, d u) > 0 = 0 x (d = -A^T y): no point
                ray = np.asarray(ray) / np.abs(ray).max()
                if float_safe_bound(ray, self.forms, [0.0] * lp.n, 0.0, self.lower, self.upper) > 0:
                    return Certified("infeasible", math.inf, message="proven infeasible (a Farkas ray, in floats)"), lp
                if lp.safe_bound(rational(ray), phase_one=True) > 0:
                    return Certified("infeasible", math.inf, message="proven infeasible (a Farkas ray)"), lp
            return lp._infeasible(self.solver, time_limit), lp
        if st != highspy.HighsModelStatus.kOptimal:
            return Certified("unproven", None, message=f"the LP backend stopped: {h.modelStatusToString(st)}"), lp
        sol = h.getSolution()
        duals = np.array(sol.row_dual)
        return Certified("optimal", None, point=np.array(sol.col_value), duals=duals,
                         estimate=h.getInfo().objective_function_value + float(lp.constant),
                         floor=float_safe_bound(duals, self.forms, self.cost, self.constant, self.lower,
                                                self.upper)), lp


def prove(lp: RationalLP, cert: Certified) -> None:
    """Give an optimal ``cert`` of ``lp`` its safe lower bound where it has none yet."""
    if cert.lower is None:
        assert cert.duals is not None  # (an optimal outcome has the backend's duals)
        cert.lower = lp.safe_bound(rational(cert.duals))

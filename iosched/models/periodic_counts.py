"""Count-vector relaxations of the periodic problem under its period cap: what the instance counts n and
the period T of every pattern obey, the bound they give, and the best-first search over integer n.

A pattern holds n_k >= 1 instances of application k in a period T <= T_max = K' t_min
(:meth:`~iosched.instances.periodic.PeriodicInstance.period_cap`); its SysEfficiency is A(n) / T with
A(n) = Σ_k β_k w_k n_k / N. Every constraint below is linear and homogeneous in (T, n, auxiliaries) and
holds for every periodic pattern (each with its proof), so:

* for a fixed n, T_lb(n), the least T they allow, is a lower bound on the shortest period of any pattern
  with counts n (:func:`t_lower`), and U(n) = A(n) / T_lb(n) bounds its SysEfficiency;
* max_n U(n) over integer n >= 1 with T_lb(n) <= T_max bounds every pattern within the cap
  (:func:`capped_bound`), found by a best-first branch and bound whose node bounds are the linear
  relaxation over a box of counts (Charnes-Cooper: y = 1 / T makes the ratio linear).

The constraints (r_k = min(β_k b, B), c_k = w_k + time_io_k):

1. **cycles**: n_k c_k <= T. The n_k instances of k follow each other cyclically; each computes w_k
   and then moves vol_k at most at r_k before the next starts.
2. **volume**: Σ_k n_k vol_k <= B T: the file system moves at most B T per period.
3. **contiguity cuts** (:func:`contiguity_cuts`, proof in
   :func:`iosched.models.periodic_bounds.contiguity_bound`): Σ_{S∪A} r_j c_j n_j + g Σ_A n_a <= (Σ_{S∪A} r_j) T
   (the cut per unit time, multiplied by T).
4. **blocking** (ours), for an application a and the set J_a of the others with w_j < time_io_a:
   with auxiliaries S_a, U_aj, Λ_aj >= 0,

       n_a c_a + S_a <= T,     n_j c_j + Λ_aj <= T,
       Λ_aj >= n_a (time_io_a - w_j) + S_a - U_aj c_j / vol_j,     Σ_j U_aj <= B (n_a time_io_a + S_a) - n_a vol_a.

   Proof. Let D_i = time_io_a + s_i be the I/O window of a's i-th instance (from its compute's end to its
   next compute's start; s_i >= 0 and Σ_i s_i = S_a := T - n_a c_a, the first row). In D_i, let u_ji be
   the data j moves and m the number of j's computes that meet D_i: the m - 1 I/O windows of j between
   them lie inside D_i and each moves vol_j, so m <= 1 + u_ji / vol_j and j computes at most m w_j in
   D_i. j's slack S_j = T - n_j c_j equals ∫ ([j not computing] - rate_j / r_j) dt over the period, an
   integrand >= 0; over D_i alone it is at least D_i - m w_j - u_ji / r_j >= D_i - w_j - u_ji c_j / vol_j,
   and the D_i are disjoint, so S_j >= Σ_i max(0, D_i - w_j - u_ji c_j / vol_j) >= Λ_aj with U_aj = Σ_i u_ji
   (the second and third rows). In D_i, a moves vol_a at a rate of at most B - Σ_j rate_j, so
   Σ_j u_ji <= B D_i - vol_a, summed over i: the fourth row. (Leaving out an application j only drops
   its demand on that budget: any subset J_a is valid; j with w_j >= time_io_a rarely bind.)
5. **symmetry**: identical applications (same w, vol, β) may be relabelled, so n_k >= n_k' for the
   later one of two identical applications (valid for the bound: a pattern and its relabelling have
   the same value).

Where every application's peak demand fits (Σ_k r_k <= B) the cycles alone bind: T_lb(n) = max_k n_k c_k
is attained (back-to-back instances never compete), and the capped bound is the optimum.

Units inside: times in t_min (s), data in B t_min, rates in B: the relaxations are solved in numbers
near 1, and T_lb(n) in closed form (blocking: a convex piecewise-linear check, bisected on T).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from iosched.errors import ParameterError
from iosched.instances.periodic import PeriodicInstance
from iosched.solvers import Deadline

LP_SAFETY = 1e-9  # a node's LP optimum raised by this where its duals give no safe bound (HiGHS's tolerances)
INTEGRAL = 1e-9  # a relaxed count this close to an integer is that integer
MAX_CUT_APPS = 60  # applications up to which contiguity cuts are generated
MAX_BLOCK_UNITS = 20  # units (types) up to which blocking rows are generated (2 per pair of units: dense rows)


def contiguity_cuts(instance: PeriodicInstance) -> list[tuple[list[int], list[int], float, float]]:
    """Cuts (S, A, ℓ, g) for :func:`iosched.models.periodic_bounds.contiguity_bound` (its proof there): A a
    class of identical applications or one application, ℓ a breakpoint (some w_j, time_io_j) no longer
    than any time_io in S ∪ A, S the other applications with time_io_j >= ℓ and w_j < ℓ, by increasing
    w_j, every prefix with
    Σ_S r_j <= B; only cuts with g > 0 (the others are implied). None above MAX_CUT_APPS
    applications (their number grows as K^3; the bound is then the LP's)."""
    apps = instance.applications
    K, B = len(apps), instance.platform.bandwidth
    if K > MAX_CUT_APPS:
        return []
    r = [instance.max_rate(k) for k in range(K)]
    tio = [instance.time_io(k) for k in range(K)]
    key = [(a.work, a.io_volume, a.processors) for a in apps]
    classes = {tuple(k for k in range(K) if key[k] == key[j]) for j in range(K)} | {(k,) for k in range(K)}
    cuts = []
    for A in sorted(classes):
        others = [j for j in range(K) if j not in A]
        for ell in sorted({apps[j].work for j in range(K)} | set(tio)):
            if ell > min(tio[a] for a in A):
                continue
            S_all = sorted((j for j in others if tio[j] >= ell and apps[j].work < ell), key=lambda j: apps[j].work)
            S: list[int] = []
            for j in S_all:
                if sum(r[i] for i in S) + r[j] > B:
                    break
                S.append(j)
                g = (sum(r[i] for i in S) + r[A[0]] - B) * ell - sum(r[i] * min(apps[i].work, ell) for i in S)
                if g > 0:
                    cuts.append((list(S), list(A), ell, g))
    return cuts


@dataclass
class Relaxation:
    """The scaled data and the linear rows of one instance over *units*: the applications, or with
    ``merged`` their types (identical w, vol, β), whose count m_t is the total over the type's q_t copies.

    Columns: T, m_1..m_P, then the blocking auxiliaries; ``rows`` @ x <= 0 for every pattern. Over types
    the rows are the per-application rows averaged over the relabellings of identical applications (an
    average of valid rows is valid, and a pattern relabelled is a pattern), so they depend on the types'
    totals only; the cycle rows read (m_t / q_t) c_t <= T, and for integer counts max_k n_k >= ceil(m_t /
    q_t) (:func:`t_lower` uses the latter). ``scale``: seconds per time unit (max_k c_k); ``gain[t]`` =
    β_t w_t / (N scale) so that SysEfficiency = gain @ m / T; ``t_max`` the period cap in units."""

    instance: PeriodicInstance
    members: list[list[int]]  # per unit, its applications
    scale: float
    gain: np.ndarray
    cycle: np.ndarray
    volume: np.ndarray  # vol / (B scale)
    rate: np.ndarray  # r / B
    work: np.ndarray
    tio: np.ndarray
    copies: np.ndarray
    t_max: float
    rows: np.ndarray
    cuts: np.ndarray  # the contiguity rows alone (T column and the units' columns), for t_lower
    blockers: list[tuple[int, list[int], np.ndarray]]  # (unit a, target units J, how many of each J in a's set)
    peak_fits: bool  # Σ_k r_k <= B: the cycles alone bind, and T_lb(n) is attained

    @property
    def units(self) -> int:
        return len(self.gain)


def relaxation(instance: PeriodicInstance, merged: bool = True) -> Relaxation:
    """The rows of :class:`Relaxation` for ``instance``, over its types (``merged``) or its applications
    (cuts up to MAX_CUT_APPS applications, blocking up to MAX_BLOCK_UNITS units)."""
    apps = instance.applications
    K = len(apps)
    B, N = instance.platform.bandwidth, instance.platform.processors
    key = [(a.work, a.io_volume, a.processors) for a in apps]
    if merged:
        members = [[k for k in range(K) if key[k] == u] for u in dict.fromkeys(key)]
    else:
        members = [[k] for k in range(K)]
    unit_of = {k: u for u, ks in enumerate(members) for k in ks}
    first = [ks[0] for ks in members]
    P = len(members)
    scale = instance.default_t_min()
    work = np.array([apps[k].work for k in first]) / scale
    tio = np.array([instance.time_io(k) for k in first]) / scale
    rate = np.array([instance.max_rate(k) for k in first]) / B
    volume = np.array([apps[k].io_volume for k in first]) / (B * scale)
    copies = np.array([len(ks) for ks in members], float)
    cycle = work + tio
    gain = np.array([apps[k].processors * apps[k].work for k in first]) / (N * scale)
    peak_fits = float(rate @ copies) <= 1.0
    blockers = []
    if P <= MAX_BLOCK_UNITS and not peak_fits:
        for a in range(P):
            J = [j for j in range(P) if work[j] < tio[a] and copies[j] - (j == a) > 0]
            mult = np.array([copies[j] - (j == a) for j in J])
            if J and rate[a] + rate[J] @ mult > 1.0:
                blockers.append((a, J, mult))
    width = 1 + P + sum(1 + 2 * len(J) for _, J, _ in blockers)
    rows = []

    def row():
        r = np.zeros(width)
        rows.append(r)
        return r

    for t in range(P):  # cycles (balanced over the copies)
        r = row()
        r[1 + t], r[0] = cycle[t] / copies[t], -1.0
    r = row()  # volume
    r[1:1 + P], r[0] = volume, -1.0
    first_cut = len(rows)
    if K <= MAX_CUT_APPS and not peak_fits:
        seen = set()
        for S, A, _, g in contiguity_cuts(instance):
            coef = np.zeros(P)
            for j in S + A:
                coef[unit_of[j]] += rate[unit_of[j]] * cycle[unit_of[j]]
            for a in A:
                coef[unit_of[a]] += g / (B * scale)
            coef /= copies  # averaged over the relabellings: each copy's coefficient is the type's mean
            rhs = float(sum(rate[unit_of[j]] for j in S + A))
            sig = tuple(np.round(np.append(coef / rhs, 0), 15))
            if sig not in seen:
                seen.add(sig)
                r = row()
                r[1:1 + P], r[0] = coef, -rhs
    cuts = np.array(rows[first_cut:]).reshape(-1, width)[:, :1 + P]
    col = 1 + P
    for a, J, mult in blockers:  # averaged over the relabellings: one blocker of unit a, one target per unit
        s_a = col
        u = {j: col + 1 + 2 * i for i, j in enumerate(J)}
        lam = {j: col + 2 + 2 * i for i, j in enumerate(J)}
        col += 1 + 2 * len(J)
        r = row()  # n_a c_a + S_a <= T, n_a = m_a / q_a
        r[1 + a], r[s_a], r[0] = cycle[a] / copies[a], 1.0, -1.0
        for j in J:
            r = row()  # n_j c_j + Λ_aj <= T
            r[1 + j], r[lam[j]], r[0] = cycle[j] / copies[j], 1.0, -1.0
            r = row()  # n_a (tio_a - w_j) + S_a - U_aj c_j / vol_j - Λ_aj <= 0
            r[1 + a], r[s_a], r[u[j]], r[lam[j]] = (tio[a] - work[j]) / copies[a], 1.0, -cycle[j] / volume[j], -1.0
        r = row()  # Σ_j mult_j U_aj - S_a - n_a (tio_a - vol_a) <= 0   (B = 1)
        for j, m in zip(J, mult):
            r[u[j]] = m
        r[s_a], r[1 + a] = -1.0, -(tio[a] - volume[a]) / copies[a]
    return Relaxation(instance, members, scale, gain, cycle, volume, rate, work, tio, copies,
                      instance.period_cap() / scale, np.array(rows), cuts, blockers, peak_fits)


def _blocking_feasible(rel: Relaxation, x: np.ndarray, T: float, a: int, J: list[int], mult: np.ndarray) -> bool:
    """Whether some window length D in [time_io_a, T / x_a - w_a] meets blocking's budget at period T, x the
    counts per copy (m / q): Σ_j mult_j (vol_j / c_j) max(0, D - w_j - Λ_j) <= D - vol_a (B = 1), Λ_j = (T -
    x_j c_j) / x_a. This is the blocking rows' feasibility for fixed counts and T (with D = time_io_a + S_a
    / x_a, U and Λ per window: divide the rows by x_a); the left side minus the right is convex piecewise
    linear in D, so its least value over the interval is at an end or a kink."""
    lo, hi = rel.tio[a], T / x[a] - rel.work[a]
    if hi < lo:
        return False
    lam = (T - x[J] * rel.cycle[J]) / x[a]
    if (lam < 0).any():
        return False
    slope = mult * rel.volume[J] / rel.cycle[J]
    kinks = rel.work[J] + lam
    points = np.concatenate(([lo, hi], kinks[(kinks > lo) & (kinks < hi)]))
    excess = (slope[None, :] * np.maximum(0.0, points[:, None] - kinks[None, :])).sum(axis=1) - points + rel.volume[a]
    return bool(excess.min() <= 0.0)


def t_lower(rel: Relaxation, m) -> float:
    """T_lb(m) in time units: the least period the rows allow for unit counts m, with the cycles at the
    busiest copy (ceil(m_t / q_t) c_t): a lower bound on the shortest pattern with these counts (for
    types: with any split of each type's total among its copies; exact where the peak demand fits).
    Blocking's part is bisected on T to 1e-15 relative and the infeasible end returned, so the result
    never exceeds the true least T of the rows."""
    m = np.asarray(m, float)
    x = m / rel.copies
    T = max(float((np.ceil(x - 1e-9) * rel.cycle).max()), float(m @ rel.volume))
    if len(rel.cuts):
        T = max(T, float(((rel.cuts[:, 1:] @ m) / -rel.cuts[:, 0]).max()))
    for a, J, mult in rel.blockers:
        if _blocking_feasible(rel, x, T, a, J, mult):
            continue
        lo, hi = T, 2 * T
        while not _blocking_feasible(rel, x, hi, a, J, mult):
            lo, hi = hi, 2 * hi
        while hi - lo > 1e-15 * hi:
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if _blocking_feasible(rel, x, mid, a, J, mult) else (mid, hi)
        T = lo
    return T


def upper(rel: Relaxation, m) -> tuple[float, float]:
    """(U(m), T_lb(m) in units): the SysEfficiency bound of unit counts m, 0 where T_lb(m) exceeds the cap."""
    T = t_lower(rel, m)
    if T > rel.t_max * (1 + 1e-12):
        return 0.0, T
    return float(rel.gain @ np.asarray(m, float)) / T, T


LP_RANGE = 100  # |nonzero| of every coefficient and finite bound within 1e-100..1e100, else no LP is built
MAX_LP_COUNTS = 500_000  # instances in one pattern of K' t_min, as PerSched's MAX_INSTANCES: past it, no LP


def _in_range(*arrays: np.ndarray, infinite: bool = True) -> bool:
    """Whether every entry is 0 or of magnitude within 1e-LP_RANGE..1e+LP_RANGE (infinite ones allowed as
    bounds where ``infinite``). HiGHS takes its data unchecked: an instance with a work of 1e300 s made a
    column bound of 1e-301 and crashed the process (a segmentation fault, found by the fuzz tests)."""
    for a in arrays:
        v = np.abs(np.asarray(a, dtype=float).ravel())
        if np.isnan(v).any() or (not infinite and np.isinf(v).any()):
            return False
        v = v[(v > 0) & np.isfinite(v)]
        if v.size and (v.min() < 10.0 ** -LP_RANGE or v.max() > 10.0 ** LP_RANGE):
            return False
    return True


class NodeLP:
    """The linear relaxation over a box of counts lo <= n <= hi (and T <= T_max), kept in one HiGHS model
    whose box rows change per node (warm-started from the last basis). Charnes-Cooper: columns x y with
    y = 1 / T, so that T y = 1 and the ratio A(n) / T becomes linear.

    The value returned is safe: weak duality with HiGHS's row duals and every column's finite bounds
    (implied by the rows: y <= 1 as T >= max_k c_k = 1, m_t y <= hi_t, S, Λ <= T, U <= n_a tio_a + S), so
    that any row multipliers give a valid bound and near-optimal ones a bound within rounding of the LP's
    optimum; where that bound is off the LP's optimum by more than 1e-7 (relative), the optimum raised by
    LP_SAFETY is taken instead."""

    def __init__(self, rel: Relaxation):
        from iosched.solvers.backends.highs import highs_model

        most = float(root_box(rel).sum())
        if not most <= MAX_LP_COUNTS:  # a t_min of 4.5e17 s (counts to 1e16, a y bound of 2e-19) crashed HiGHS
            raise ValueError(f"the count relaxation's LP would count up to {most:.3g} application instances in "
                             f"one pattern, past {MAX_LP_COUNTS}: the applications' time scales are too far apart")

        self.rel = rel
        K, width = rel.units, rel.rows.shape[1]
        self.y = width  # the column of y
        hi_root = root_box(rel)
        rows = [np.append(rel.rows, np.zeros((len(rel.rows), 1)), axis=1)]
        box = np.zeros((2 * K, width + 1))
        for k in range(K):  # n'_k - hi_k y <= 0, lo_k y - n'_k <= 0 (the y column set per node)
            box[2 * k, 1 + k], box[2 * k + 1, 1 + k] = 1.0, -1.0
        self.first_box = len(rel.rows)
        rows.append(box)
        A = np.vstack(rows)
        A[self.first_box:self.first_box + 2 * K:2, self.y] = -hi_root
        A[self.first_box + 1:self.first_box + 2 * K:2, self.y] = 1.0
        lo = np.zeros(width + 1)
        hi = np.ones(width + 1)  # S, Λ <= T = 1 (scaled)
        lo[0] = hi[0] = 1.0  # T y = 1
        hi[1:1 + K] = hi_root
        col = 1 + K
        for a, J, _ in rel.blockers:
            for i, _ in enumerate(J):
                hi[col + 1 + 2 * i] = hi_root[a] / rel.copies[a] * rel.tio[a] + 1.0  # U_aj <= n_a tio_a + S_a
            col += 1 + 2 * len(J)
        lo[self.y], hi[self.y] = 1.0 / rel.t_max, 1.0
        cost = np.zeros(width + 1)
        cost[1:1 + K] = -rel.gain
        self.A, self.lo, self.hi, self.cost = A, lo, hi, cost
        self.row_lo, self.row_hi = np.full(len(A), -np.inf), np.zeros(len(A))
        if not _in_range(A, cost, lo, hi):
            raise ValueError("the count relaxation's LP would hold a number past what HiGHS takes (an instance's "
                             f"values span more than 1e{-LP_RANGE}..1e{LP_RANGE})")
        csc = __import__("scipy.sparse", fromlist=["csc_matrix"]).csc_matrix(A)
        self.h = highs_model(cost, lo, hi, self.row_lo, self.row_hi, csc.indptr, csc.indices, csc.data)
        for key, value in (("threads", 1), ("primal_feasibility_tolerance", 1e-10),
                           ("dual_feasibility_tolerance", 1e-10)):
            self.h.setOptionValue(key, value)

    def solve(self, lo: np.ndarray, hi: np.ndarray) -> tuple[float, np.ndarray] | None:
        """(a safe bound on max A(n) / T over the box, the LP's counts n), or None where the box holds no
        pattern of period <= T_max."""
        import highspy

        K = self.rel.units
        if not _in_range(lo[:K], hi[:K], infinite=False):  # they become coefficients of the box rows
            raise ValueError("the count relaxation's box holds a number past what HiGHS takes")
        for k in range(K):
            r = self.first_box + 2 * k
            self.h.changeCoeff(r, self.y, -float(hi[k]))
            self.h.changeCoeff(r + 1, self.y, float(lo[k]))
            self.A[r, self.y], self.A[r + 1, self.y] = -hi[k], lo[k]
        self.h.run()
        status = self.h.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return None
        if status != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"the count relaxation's LP was not solved: {self.h.modelStatusToString(status)}")
        sol = self.h.getSolution()
        x, pi = np.asarray(sol.col_value), np.asarray(sol.row_dual)
        value = -self.h.getInfo().objective_function_value
        pi = np.where(pi > 0, 0.0, pi)  # rows are <= 0: only multipliers <= 0 bound a minimum from below
        d = self.cost - self.A.T @ pi
        safe = -float(np.minimum(d * self.lo, d * self.hi).sum())  # Σ_r π_r row_hi_r = 0
        if not safe >= value or safe > value * (1 + 1e-7):
            safe = value * (1 + LP_SAFETY)
        return safe, x[1:1 + K] / x[self.y]


@dataclass(order=True)
class _Item:
    key: float  # -bound: heapq pops the largest first
    tie: int
    lo: np.ndarray | None = field(compare=False, default=None)  # a box of counts ...
    hi: np.ndarray | None = field(compare=False, default=None)
    relaxed: np.ndarray | None = field(compare=False, default=None)  # ... and its LP's counts
    counts: tuple | None = field(compare=False, default=None)  # or a leaf: its counts
    period: float = field(compare=False, default=0.0)  # and T_lb (units)


CHUNK = 1000  # breakpoint leaves moved into the heap at a time
BLOCK = 4096  # breakpoints scored at a time
TIE = 1e-12  # a leaf within this (relative) of the best box bound is handed out before that box is split


class CountSearch:
    """Best-first branch and bound over integer counts n: boxes of counts bounded by :class:`NodeLP`, single
    count vectors (leaves) by U(n). :meth:`next_leaf` hands out leaves in decreasing U(n) (a leaf goes first
    once no box's bound exceeds its U by more than TIE) while a bound above a floor is left; :meth:`bound`
    is the largest bound of anything not handed out, valid for every count vector not yet handed out.

    Where the peak demand fits (Σ_k r_k <= B), U(n) = A(n) / max_k n_k c_k and, for a period T, the counts
    floor(T / c_k) are best: every leaf worth having is one of those at a breakpoint T = m c_k <= T_max,
    all of which are enumerated instead (no LP)."""

    def __init__(self, rel: Relaxation, deadline: Deadline | None = None):
        self.rel = rel
        self.deadline = deadline
        self.boxes: list[_Item] = []
        self.leaves: list[_Item] = []
        self.tie = 0
        self.nodes = 0
        self.seen: set[tuple] = set()
        self.lp: NodeLP | None = None
        # where the peak fits: (counts, U, T_lb sorted by decreasing U, first not in the heap)
        self.pending: tuple | None = None
        hi = root_box(rel)
        if not (hi >= rel.copies).all():
            return
        if rel.peak_fits:  # every leaf at once, by decreasing U: handed out in chunks
            points, bump, values, periods = _breakpoint_counts(rel)
            order = np.argsort(-values, kind="stable")
            self.pending = (points[order], bump[order], values[order], periods[order], 0)
            self._more()
            return
        self.lp = NodeLP(rel)
        self._box(rel.copies.copy(), hi)

    def _more(self) -> None:
        """The next chunk of the breakpoint leaves into the heap."""
        assert self.pending is not None  # (called only while chunks are left)
        points, bump, values, periods, i = self.pending
        counts = _breakpoint_counts(self.rel, points[i:i + CHUNK], bump[i:i + CHUNK])
        for m, v, T in zip(counts.tolist(), values[i:i + CHUNK].tolist(), periods[i:i + CHUNK].tolist()):
            if v > 0 and tuple(m) not in self.seen:
                self.seen.add(tuple(m))
                self._push(self.leaves, _Item(-v, 0, counts=tuple(m), period=T))
        self.pending = (points, bump, values, periods, i + CHUNK) if i + CHUNK < len(values) else None

    def _push(self, heap: list, item: _Item) -> None:
        item.tie = self.tie
        self.tie += 1
        heapq.heappush(heap, item)

    def _leaf(self, n: tuple) -> None:
        if n in self.seen:
            return
        self.seen.add(n)
        value, T = upper(self.rel, n)
        if value > 0:
            self._push(self.leaves, _Item(-value, 0, counts=n, period=T))

    def _box(self, lo: np.ndarray, hi: np.ndarray) -> None:
        self.nodes += 1
        if (lo == hi).all():
            self._leaf(tuple(int(x) for x in lo))
            return
        assert self.lp is not None  # (boxes only where the peak does not fit: there is an LP)
        out = self.lp.solve(lo, hi)
        if out is None:
            return
        value, n = out
        self._push(self.boxes, _Item(-value, 0, lo, hi, n))
        # a rounding of the relaxed counts, a leaf at once: an early good bound to compare with
        self._leaf(tuple(int(x) for x in np.clip(np.floor(n + INTEGRAL), lo, hi)))

    def bound(self) -> float:
        """The largest bound of what is not yet handed out (0 when nothing is left)."""
        rest = float(self.pending[2][self.pending[4]]) if self.pending is not None else 0.0
        return max(-self.boxes[0].key if self.boxes else 0.0, -self.leaves[0].key if self.leaves else 0.0, rest)

    def next_leaf(self, floor: float) -> tuple[tuple, float, float] | None:
        """The next leaf (counts, U(n), T_lb(n) in units), or None once nothing left has a bound above
        ``floor`` or the deadline passed (then :meth:`bound` says what is left)."""
        while self.bound() > floor:
            if self.deadline is not None and self.deadline.expired():
                return None
            if self.pending is not None and not self.leaves:
                self._more()
                continue
            leaf = -self.leaves[0].key if self.leaves else 0.0
            box = -self.boxes[0].key if self.boxes else 0.0
            if self.leaves and leaf * (1 + TIE) >= box:
                item = heapq.heappop(self.leaves)
                assert item.counts is not None  # (a leaf has its counts)
                return item.counts, -item.key, item.period
            self._branch(heapq.heappop(self.boxes))
        return None

    def _branch(self, item: _Item) -> None:
        n, lo, hi = item.relaxed, item.lo, item.hi
        assert n is not None and lo is not None and hi is not None  # (a box has them)
        frac = np.abs(n - np.round(n))
        frac[lo == hi] = -1.0
        k = int(np.argmax(frac))
        if frac[k] > INTEGRAL:  # the usual split: n_k <= floor or >= ceil
            v = math.floor(n[k])
            for a, b in ((lo[k], v), (v + 1, hi[k])):
                if a <= b:
                    lo2, hi2 = lo.copy(), hi.copy()
                    lo2[k], hi2[k] = a, b
                    self._box(lo2, hi2)
            return
        # integral: the relaxation's counts are a leaf, and the rest of the box is at most 2K boxes
        point = np.clip(np.round(n), lo, hi)
        self._leaf(tuple(int(x) for x in point))
        lo, hi = lo.copy(), hi.copy()
        for k in range(len(point)):
            for a, b in ((lo[k], point[k] - 1), (point[k] + 1, hi[k])):
                if a <= b:
                    lo2, hi2 = lo.copy(), hi.copy()
                    lo2[k], hi2[k] = a, b
                    self._box(lo2, hi2)
            lo[k] = hi[k] = point[k]


def root_box(rel: Relaxation) -> np.ndarray:
    """The most instances of each unit within the cap: q_t floor(T_max / c_t)."""
    return rel.copies * np.floor(rel.t_max / rel.cycle * (1 + 1e-12))


def _breakpoint_counts(rel: Relaxation, points: np.ndarray | None = None, bump: np.ndarray | None = None):
    """Where the peak demand fits: for each breakpoint T = m c_t in [max_t c_t, T_max], the counts q_t
    floor(T / c_t) (and, where T / c_t is within 1e-9 below an integer, that integer too: rounding must not
    hide a count that fits exactly), with U(m) and T_lb(m) = max_t ceil(m_t / q_t) c_t (units): the rows
    past the cycles are implied there (Σ_t m_t vol_t <= Σ_t m_t c_t r_t <= T Σ_t q_t r_t <= T).

    Without ``points``: every breakpoint, scored in blocks (memory of a block of points x units); returns
    (points, bump flags, U, T_lb), one entry per candidate. With ``points`` and ``bump``: their counts."""
    if points is not None:
        assert bump is not None  # (given with points)
        n = np.floor(points[:, None] / rel.cycle[None, :])
        n = n + (bump[:, None] & (points[:, None] / rel.cycle[None, :] - n > 1 - 1e-9))
        return (np.maximum(n, 1) * rel.copies).astype(np.int64)
    parts = [np.array([1.0])]  # max_t c_t, in units
    for c in rel.cycle:
        parts.append(np.arange(1, math.floor(rel.t_max / c * (1 + 1e-12)) + 1) * c)
    T = np.unique(np.concatenate(parts))
    out: dict[str, list[np.ndarray]] = {"points": [], "bump": [], "value": [], "period": []}
    for lo in range(0, len(T), BLOCK):
        t = T[lo:lo + BLOCK]
        x = t[:, None] / rel.cycle[None, :]
        n = np.floor(x)
        near = x - n > 1 - 1e-9
        for flag, rows in ((False, np.ones(len(t), bool)), (True, near.any(axis=1))):
            k = np.maximum(n[rows] + (near[rows] if flag else 0), 1)
            period = (k * rel.cycle).max(axis=1)
            value = np.where(period <= rel.t_max * (1 + 1e-12), ((k * rel.copies) @ rel.gain) / period, 0.0)
            for key, v in (("points", t[rows]), ("bump", np.full(int(rows.sum()), flag)), ("value", value),
                           ("period", period)):
                out[key].append(v)
    return tuple(np.concatenate(out[key]) for key in ("points", "bump", "value", "period"))


def capped_bound(instance: PeriodicInstance, deadline: Deadline | None = None) -> dict:
    """The period-capped integer bound: max over integer n >= 1 of U(n) = A(n) / T_lb(n) with T_lb(n) <=
    K' t_min, T_lb(n) from every row of the module's docstring: no pattern within the instance's period
    cap has a larger SysEfficiency (each row holds for every pattern; a pattern with counts n has period
    at least T_lb(n)). Exact for the relaxation up to TIE (leaves scored in closed form, boxes by safe LP
    bounds); where the peak demand fits, the optimum itself.

    Returns {"value", "counts" (the best count vector), "period" (its T_lb, s), "t_max" (s), "nodes",
    "complete"}: with ``deadline`` passed first, "complete" is False and "value" is the largest bound
    left (still valid; counts and period None)."""
    rel = relaxation(instance)
    search = CountSearch(rel, deadline)
    leaf = search.next_leaf(0.0)
    out = {"t_max": instance.period_cap(), "nodes": search.nodes, "counts": None, "period": None}
    if leaf is None:  # the deadline, or nothing within the cap
        return {**out, "value": search.bound(), "complete": not search.boxes and not search.leaves}
    return {**out, "value": max(leaf[1], search.bound()), "counts": list(leaf[0]), "period": leaf[2] * rel.scale,
            "complete": True}


def check_counts(instance: PeriodicInstance, counts) -> np.ndarray:
    """``counts`` as an array of one positive integer per application (ParameterError otherwise)."""
    if (not isinstance(counts, (list, tuple)) or len(counts) != len(instance.applications)
            or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 1 for c in counts)):
        raise ParameterError(f"counts must be {len(instance.applications)} integers >= 1, got {counts!r:.80}")
    return np.array(counts, float)

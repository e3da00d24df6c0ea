"""An interval-indexed LP relaxation of malleable scheduling: a lower bound valid for every schedule.

Cut time into intervals I_k = [tau_k, tau_{k+1}) (a grid from the first arrival to a horizon H,
then one last interval [H, inf)). Variable x_jpk >= 0 is the share of job j's work done at p
nodes during I_k; C_j is job j's completion time (s). The LP::

    min  (1/n) sum_j (C_j - a_j)            [mean completion; makespan: min z, z >= C_j]
    s.t. sum_{p,k} x_jpk = 1                                     every job done       (1)
         sum_p x_jpk t_j(p) <= tau_{k+1} - max(tau_k, a_j)       one size at a time   (2)
         sum_{j,p} x_jpk p t_j(p) <= N (tau_{k+1} - tau_k)       N nodes              (3)
         C_j >= a_j + sum_{p,k} x_jpk t_j(p)                     run time             (4)
         C_j >= sum_{p,k} x_jpk (max(tau_k, a_j) + min(t_j(q), t_j(p))) - t_j(q) / 2
                                                    for every size q, mean busy time      (5)

and, for the makespan, z at least the closed-form bound L
(:func:`iosched.models.malleable_closed.closed_form_bounds`) and the work done from tau_k on
fitting the nodes until z::

         sum_{j,p,k' >= k} x_jpk' p t_j(p) <= N (z - tau_k)        for tau_k <= L        (6)

(x_jpk = 0 on intervals ending by a_j; (2) and (3) on the finite intervals only) is a
relaxation of every schedule the evaluator accepts, so its optimum is a lower bound on the
mean completion time (and the makespan) of every schedule, whatever the grid.

*Proof.* Take any feasible schedule and let x_jpk be the share of job j's work done while it
runs at p nodes within I_k. At p nodes job j progresses at 1/t_j(p) of its work per second
(the instance's model), so it runs x_jpk t_j(p) seconds at p nodes in I_k. (1): all its work
is done. (2): it runs at one size at a time, never before its arrival. (3): at every instant
the nodes held are at most N, and a run at p nodes holds p nodes (resizes hold nodes too and
do no work: they only add to the left-hand sides' slack). (4): its completion is at least its
arrival plus its time running. (5): let W(t) be the share of its work done by t and
M_j = int t dW its mean busy time; work done in I_k is done at or after max(tau_k, a_j), so
M_j >= sum x_jpk max(tau_k, a_j). C_j - M_j = int (C_j - t) dW depends on the order of the
runs: with y_p = sum_k x_jpk the share done at p, it is least when the runs are back to back,
slowest size first (exchanging two adjacent runs A then B changes it by y_A y_B (t_B - t_A);
idle time and resizes only add to it), where it equals f(y) = (1/2) y' Q y with
Q_pq = min(t_j(p), t_j(q)). Q is a "min" kernel, positive semidefinite, so f is convex and
lies above its tangent at every vertex e_q: f(y) >= sum_p min(t_j(q), t_j(p)) y_p - t_j(q) / 2,
one row per size q (q the fastest size gives Tmin_j / 2, the weakest). (6): every schedule's
makespan is at least L >= tau_k, and the work done from tau_k on holds x p t_j(p)
node-seconds of runs, all between tau_k and the makespan (for tau_k beyond the makespan the
constraint would force z >= tau_k, hence only tau_k <= L). Every constraint holds, and the
objective is the schedule's value. No assumption on the run-time model beyond t_j(p) > 0 (the
LP chooses among all ladder sizes, so an area growing or shrinking with p is handled alike).

Solved by an interior point method (:class:`iosched.solvers.lp.LP`, on the backend ``solver`` names:
HiGHS by default; SoPlex's simplex for SCIP); the reported bound is the LP optimum lowered by a relative
1e-6 (the solvers' tolerances). Where a backend refuses an LP for its licence's size, the interval LP is
tried on a coarser grid (a weaker bound that may fit), the order LP and the Lagrangian give what they have,
and a :class:`LicenceWarning` says so. It is tight on one job alone and on jobs
that never overlap (the tests check both); a finer grid can only raise it.
"""

from __future__ import annotations

import functools
import math
import time
import warnings

import numpy as np

from iosched.instances.malleable import MalleableInstance
from iosched.models.malleable_closed import closed_form_bounds
from iosched.solvers import Deadline, LicenceLimit
from iosched.solvers.lp import LP
from iosched.status import Status

SHADE = 1e-6  # relative: the LP optimum is lowered by this much (the solvers' optimality tolerances)
MAX_VARIABLES = 250_000  # x_jpk columns: beyond this many on the coarsest grid, no LP bound
GRID_VARIABLES = 100_000  # the first grid keeps x_jpk under this many columns (on paper:400's 2,000 ladder sizes
#                           50 intervals solve within TIME_LIMIT, 80 did not: benchmarks/speed.md, constants)
MAX_INTERVALS = 80
MIN_INTERVALS = 8
TIME_LIMIT = 30.0  # s of the LP solver; past it no LP bound (the closed-form bounds remain)
LEAST_S = 0.05  # s: no LP (or round of column generation) is started with less time left before a deadline
CACHED = 64  # interval LPs remembered (:func:`_solved`)


class LicenceWarning(UserWarning):
    """A backend refused one of these LPs for its licence's size: the bound is weaker than it could be."""


def _refused(what: str, error: LicenceLimit, instead: str) -> None:
    """Say that a backend refused an LP (once per text and caller, as Python's warnings do)."""
    warnings.warn(f"{what}: {error} ({instead})", LicenceWarning, stacklevel=2)


def grid(instance: MalleableInstance, intervals: int) -> np.ndarray:
    """tau_0 < ... < tau_K = H (s), equal steps from the first arrival to H = last arrival + the
    area of all jobs at their smallest areas over N + the longest shortest run time, then inf."""
    a = np.array([j.arrival for j in instance.jobs])
    area = sum(min(p * t for p, t in zip(j.sizes, j.times)) for j in instance.jobs)
    H = a.max() + area / instance.nodes + max(min(j.times) for j in instance.jobs)
    return np.append(np.linspace(a.min(), H, intervals + 1), np.inf)


def intervals_for(instance: MalleableInstance) -> int:
    """As many intervals as keep the x variables under GRID_VARIABLES (between MIN and MAX_INTERVALS)."""
    sizes = sum(len(j.sizes) for j in instance.jobs)
    return int(max(MIN_INTERVALS, min(MAX_INTERVALS, GRID_VARIABLES // max(sizes, 1))))


def interval_lp_bound(instance: MalleableInstance, objective: str = "mean_completion",
                      intervals: int | None = None, time_limit: float = TIME_LIMIT,
                      deadline: Deadline | None = None, solver: str = "highs") -> float | None:
    """The LP's lower bound (s) on ``objective`` (``mean_completion`` or ``makespan``) for every
    schedule (module docstring), or None where the coarsest grid (MIN_INTERVALS) would exceed
    MAX_VARIABLES columns. Each solve (on backend ``solver``) gets ``time_limit`` s; where it does not
    finish, or the backend refuses it for its licence, the grid's intervals are halved (a coarser grid:
    still a bound, a weaker one) down to MIN_INTERVALS, then None; no solve outlasts ``deadline``.
    ``intervals`` fixes the grid (no halving). The first grid has :func:`intervals_for` intervals: on
    paper:400 (2,000 ladder sizes) 50, which solve within the limit, where 80 ran past it and the halving
    to 40 gave a weaker bound after more time in all (benchmarks/speed.md, constants)."""
    if intervals is not None:
        try:
            return _solved(instance, objective, intervals, _within(time_limit, deadline), solver)[0]
        except LicenceLimit as e:
            _refused(f"the interval LP on {intervals} intervals", e, "no interval LP bound")
            return None
    finest = _finest(instance, objective, time_limit, deadline, solver)
    return None if finest is None else finest[1]


def _within(time_limit: float, deadline: Deadline | None) -> float:
    """``time_limit`` cut to what is left before ``deadline``."""
    return time_limit if deadline is None else min(time_limit, deadline.remaining())


def _finest(instance: MalleableInstance, objective: str, time_limit: float,
            deadline: Deadline | None = None, solver: str = "highs") -> tuple[int, float | None] | None:
    """The intervals of the finest grid on which the LP finished (halved from :func:`intervals_for` down
    to MIN_INTERVALS, each solve on ``solver`` within ``time_limit`` s and ``deadline``; a grid the
    backend refuses for its licence is halved too) and its bound (None where none finished); None where
    the coarsest grid would exceed MAX_VARIABLES columns."""
    if sum(len(j.sizes) for j in instance.jobs) * MIN_INTERVALS > MAX_VARIABLES:
        return None
    k, first = intervals_for(instance), None
    while True:
        try:
            value = _solved(instance, objective, k, _within(time_limit, deadline), solver)[0]
        except LicenceLimit as e:
            value, first = None, first or e
        if value is not None or k <= MIN_INTERVALS:
            break
        k = max(MIN_INTERVALS, k // 2)
    if first is not None and not getattr(first, "said", False):  # once per refusal (it is remembered in _LPS)
        first.said = True
        _refused(f"the interval LP on {intervals_for(instance)} intervals", first,
                 f"{'solved' if value is not None else 'refused too'} on {k} intervals")
    return k, value


_LPS: dict = {}  # (instance, objective, intervals, solver) -> (bound, prices) where the LP finished, the LicenceLimit
#                  where the backend refused it, else the longest time limit (s) it was given and did not finish in


def _solved(instance: MalleableInstance, objective: str, intervals: int,
            time_limit: float, solver: str = "highs") -> tuple[float | None, np.ndarray | None]:
    """The interval LP's bound on ``intervals`` intervals, and the duals of its node rows (3) per finite
    interval as prices on the sum of completions (s per node-second; :func:`lagrangian_bound` starts
    from them); (None, None) where ``solver`` did not finish in ``time_limit`` s (none started under
    LEAST_S); LicenceLimit where it refused the LP. Remembered whatever the time limit: a finished LP's
    bound does not depend on it."""
    key = (instance, objective, intervals, solver)
    known = _LPS.get(key)
    if isinstance(known, tuple):
        return known
    if isinstance(known, LicenceLimit):
        raise known
    if time_limit < LEAST_S or (known is not None and time_limit <= known):
        return None, None
    if len(_LPS) >= CACHED:
        del _LPS[next(iter(_LPS))]
    try:
        out = _solve_lp(instance, objective, intervals, time_limit, solver)
    except LicenceLimit as e:
        _LPS[key] = e
        raise
    _LPS[key] = out if out[0] is not None else max(time_limit, known or 0.0)
    return out


def _solve_lp(instance: MalleableInstance, objective: str, intervals: int,
              time_limit: float, solver: str) -> tuple[float | None, np.ndarray | None]:
    """:func:`_solved` without its memory."""
    import scipy.sparse as sp

    jobs, N = instance.jobs, instance.nodes
    n = len(jobs)
    tau = grid(instance, intervals)
    known = closed_form_bounds(instance)["makespan"]  # L: every schedule runs until then
    nk = len(tau) - 1  # the last interval [H, inf) is unbounded
    a = np.array([j.arrival for j in jobs])
    first = np.searchsorted(tau, a, side="right") - 1  # the interval holding each arrival
    # one column per (job, size, interval from the job's first on): job, nodes, run time, interval
    Js: list[np.ndarray] = []
    Ps: list[np.ndarray] = []
    Ts: list[np.ndarray] = []
    Ks: list[np.ndarray] = []
    for jj, j in enumerate(jobs):
        ks = np.arange(first[jj], nk)
        for p, t in zip(j.sizes, j.times):
            Js.append(np.full(len(ks), jj))
            Ps.append(np.full(len(ks), p, dtype=float))
            Ts.append(np.full(len(ks), t))
            Ks.append(ks)
    J, P, T, K = (np.concatenate(v) for v in (Js, Ps, Ts, Ks))
    nx = len(J)
    start = np.maximum(tau[K], a[J])  # when the work of column i can start
    finite = K < nk - 1
    makespan = objective == "makespan"
    nv = nx + n + (1 if makespan else 0)  # x, then C_j, then z (and, for the makespan, A_k)
    cols = np.arange(nx)
    # (2) per (job, finite interval): rows numbered by job * nk + k, compacted below
    time_row = J[finite] * nk + K[finite]
    # (3) per finite interval
    rows = [time_row, nk * n + K[finite]]
    vals = [T[finite], (P * T)[finite]]
    cs = [cols[finite], cols[finite]]
    rhs_time = np.zeros(n * nk)
    jk = np.unique(time_row)
    rhs_time[jk] = tau[jk % nk + 1] - np.maximum(tau[jk % nk], a[jk // nk])
    rhs_cap = N * np.diff(tau[:-1])
    # (4) C_j >= a_j + sum x t
    base = len(rhs_time) + len(rhs_cap)
    rows += [base + J, base + np.arange(n)]
    vals += [T, -np.ones(n)]
    cs += [cols, nx + np.arange(n)]
    # (5) one row per job and size q: C_j >= sum x (start + min(t_j(q), t)) - t_j(q) / 2
    counts = np.array([len(j.times) for j in jobs])
    first_row = base + n + np.concatenate([[0], np.cumsum(counts)[:-1]])  # job j's rows: first_row[j] + q
    rhs_busy = []
    for q in range(counts.max()):
        has = np.flatnonzero(counts > q)
        tq = np.array([jobs[jj].times[q] for jj in has])
        col = np.flatnonzero(counts[J] > q)
        at_q = np.zeros(n)
        at_q[has] = tq
        rows += [first_row[J[col]] + q, first_row[has] + q]
        vals += [start[col] + np.minimum(at_q[J[col]], T[col]), -np.ones(len(has))]
        cs += [cols[col], nx + has]
        rhs_busy.append((first_row[has] + q - base - n, tq / 2))
    busy = np.zeros(counts.sum())
    for where, half in rhs_busy:
        busy[where] = half
    rhs = np.concatenate([rhs_time, rhs_cap, -a, busy])
    if makespan:  # z >= C_j, and the area done from tau_k on fits N (z - tau_k): A_k = area in I_k + A_{k+1}
        z, area = nx + n, nx + n + 1 + np.arange(nk)  # A_k: the area done from tau_k on (node-seconds)
        zrow = base + n + counts.sum()
        rows += [zrow + np.arange(n), zrow + np.arange(n)]
        vals += [np.ones(n), -np.ones(n)]
        cs += [nx + np.arange(n), np.full(n, z)]
        at = zrow + n  # rows: area in I_k + A_{k+1} - A_k <= 0, then A_k - N z <= -N tau_k for tau_k <= L
        before = np.flatnonzero(tau[:-1] <= known)  # (6) only where every schedule is still running
        rows += [at + K, at + np.arange(nk - 1), at + np.arange(nk), at + nk + before, at + nk + before,
                 np.array([at + 2 * nk])]
        vals += [P * T, np.ones(nk - 1), -np.ones(nk), np.ones(len(before)), np.full(len(before), -float(N)), [-1.0]]
        cs += [cols, area[1:], area, area[before], np.full(len(before), z), np.array([z])]
        cap = np.full(nk, np.inf)
        cap[before] = -N * tau[before]
        rhs = np.concatenate([rhs, np.zeros(n), np.zeros(nk), cap, [-known]])  # and z >= L
        nv += nk
    R, V, Cc = np.concatenate(rows), np.concatenate(vals), np.concatenate(cs)
    used = np.unique(R)  # drop the empty (job, interval) rows
    index = np.full(len(rhs), -1)
    index[used] = np.arange(len(used))
    A_ub = sp.csr_matrix((V, (index[R], Cc)), shape=(len(used), nv))
    A_eq = sp.csr_matrix((np.ones(nx), (J, cols)), shape=(n, nv))
    c = np.zeros(nv)
    if makespan:
        c[nx + n] = 1.0
    else:
        c[nx:nx + n] = 1.0 / n
    lp = LP(solver, "barrier")
    lp.add_rows(np.append(np.full(len(used), -np.inf), np.ones(n)), np.append(rhs[used], np.ones(n)))
    lp.add_cols(c, 0.0, np.inf, sp.vstack([A_ub, A_eq]))
    res = lp.solve(time_limit)
    if res.status != Status.OPTIMAL:
        return None, None
    assert res.value is not None and res.duals is not None  # LP.solve's at OPTIMAL
    node_rows = index[nk * n + np.arange(nk - 1)]  # the node rows, -1 where an interval has no column
    prices = np.where(node_rows >= 0, -res.duals[np.maximum(node_rows, 0)], 0.0) * (1 if makespan else n)
    value = res.value - (0.0 if makespan else float(a.mean()))
    return value - SHADE * abs(value), np.maximum(prices, 0.0)


# --- the completion-order LP (small workloads) ------------------------------------------------------

ORDER_MAX_JOBS = 6  # n! orders: ten times longer per job added past 6 (benchmarks/speed.md, constants)


@functools.lru_cache(maxsize=16)
def order_lp_bound(instance: MalleableInstance, objective: str = "mean_completion",
                   deadline: Deadline | None = None, solver: str = "highs") -> float | None:
    """A lower bound (s) on ``objective`` valid for every schedule, from the order in which jobs
    complete: the least, over the n! orders, of an LP whose phases are the completions, each solved on
    backend ``solver`` (None beyond ORDER_MAX_JOBS jobs, or where ``deadline`` passes, or the backend
    refuses or fails an LP, before every order is solved).

    Fix an order pi (job pi_k completes k-th) and let C_1 <= ... <= C_n be the completion
    times, C_0 the first arrival. y_jpk >= 0 is the time job j runs at p nodes in the phase
    [C_{k-1}, C_k], for k up to its own position k_j (it runs only before it completes). ::

        min  (1/n) sum_k (C_k - a_pi_k)          [makespan: min C_n]
        s.t. sum_{p, k <= k_j} y_jpk / t_j(p) = 1                  its work             (1)
             sum_p y_jpk <= C_k - C_{k-1}                          one size at a time   (2)
             sum_{j,p} p y_jpk <= N (C_k - C_{k-1})                N nodes              (3)
             sum_{p, k' <= k} y_jpk' <= C_k - a_j   where a_j <= L_k   not before arrival (4)
             C_{k_j} >= a_j + Tmin_j,   C_k >= C_{k-1}                                  (5)

    with L_k = max_{i <= k} (a_pi_i + Tmin_pi_i). *Proof.* Take any schedule and let pi be the
    order of its completions (ties in any order) and y_jpk the time job j runs at p nodes
    within [C_{k-1}, C_k]. A run does 1/t_j(p) of the work per second (1); within a phase a
    job runs at one size at a time (2) and the runs hold at most N nodes at every instant (3;
    resizes hold nodes and do no work, so they only add slack); job j runs only in
    [a_j, C_{k_j}], so in phases 1..k_j, and by C_k it has run at most C_k - a_j (4: written
    only where a_j <= L_k <= C_k, since C_k >= C_i >= a_pi_i + Tmin_pi_i for every i <= k,
    so that its right-hand side is never negative for a schedule); (5) holds for every
    schedule. So each schedule is feasible for the LP of its own order with its own value, and
    the least LP optimum over all orders is at most the best schedule's value. It relaxes
    preemption, the checks at which a resize may happen and the resize costs, nothing else;
    unlike the interval LP the completion times are exact, which makes it the tighter of the
    two on few jobs (random:1:6: 589.8 s against 580.1 s). The value is lowered by SHADE.
    """
    import itertools

    import scipy.sparse as sp

    jobs, N = instance.jobs, instance.nodes
    n = len(jobs)
    if n > ORDER_MAX_JOBS or objective not in ("mean_completion", "makespan"):
        return None
    a = np.array([j.arrival for j in jobs])
    tmin = np.array([min(j.times) for j in jobs])
    # columns: y_jpk for every job, size and phase (held at 0 after the job's own phase), then C_1..C_n
    cols = [(j, p, t, k) for j, job in enumerate(jobs) for p, t in zip(job.sizes, job.times) for k in range(n)]
    ny = len(cols)
    c = np.zeros(ny + n)
    if objective == "makespan":
        c[ny + n - 1] = 1.0
    else:
        c[ny:] = 1.0 / n
    A_eq = sp.csr_matrix(([1.0 / t for _, _, t, _ in cols], ([j for j, *_ in cols], range(ny))), shape=(n, ny + n))
    at = [[[i for i, cl in enumerate(cols) if cl[0] == j and cl[3] == k] for k in range(n)] for j in range(n)]
    in_phase = [[(i, float(cl[1])) for i, cl in enumerate(cols) if cl[3] == k] for k in range(n)]
    area = np.array([min(p * t for p, t in zip(job.sizes, job.times)) for job in jobs])
    orders = np.array(list(itertools.permutations(range(n))))
    low = np.maximum.accumulate(a[orders] + tmin[orders], axis=1)  # L_k per order
    # every C_k is also at least C_0 + the least area of the first k jobs over N: a cheap bound per order, the
    # LPs in its order, stopping where it reaches the best LP (the LP is at least as large)
    cheap = np.maximum(low, a.min() + np.cumsum(area[orders], axis=1) / N)
    cheap = cheap[:, -1] if objective == "makespan" else cheap.mean(axis=1)
    best = math.inf
    for o in np.argsort(cheap, kind="stable"):
        if cheap[o] >= best:
            break
        if deadline is not None and deadline.expired():  # the least over some orders is no bound
            return None
        order = orders[o]
        pos = np.empty(n, dtype=int)
        pos[order] = np.arange(n)
        R: list[int] = []
        V: list[float] = []
        X: list[int] = []
        b: list[float] = []

        def row(entries, rhs, R=R, X=X, V=V, b=b):  # this order's lists
            for col, val in entries:
                R.append(len(b))
                X.append(col)
                V.append(val)
            b.append(rhs)

        for k in range(n):
            gap = [(ny + k, -1.0)] + ([(ny + k - 1, 1.0)] if k else [])
            first = 0.0 if k else a.min()  # C_0
            for j in range(n):
                if pos[j] >= k:  # (2)
                    row([(i, 1.0) for i in at[j][k]] + gap, -first)
            row(in_phase[k] + [(x, N * v) for x, v in gap],
                -N * first)  # (3)
            if k:
                row([(ny + k - 1, 1.0), (ny + k, -1.0)], 0.0)  # (5)
        for j in range(n):
            row([(ny + pos[j], -1.0)], -(a[j] + tmin[j]))  # (5)
            for k in range(pos[j] + 1):
                if a[j] <= low[o, k]:  # (4)
                    row([(i, 1.0) for kk in range(k + 1) for i in at[j][kk]] + [(ny + k, -1.0)],
                        -a[j])
        lp = LP(solver)
        lp.add_rows(np.append(np.full(len(b), -np.inf), np.ones(n)), np.append(b, np.ones(n)))
        lp.add_cols(c, 0.0, [0.0 if k > pos[j] else np.inf for j, _, _, k in cols] + [np.inf] * n,
                    sp.vstack([sp.csr_matrix((V, (R, X)), shape=(len(b), ny + n)), A_eq]))
        try:
            res = lp.solve(TIME_LIMIT if deadline is None else max(deadline.remaining(), LEAST_S))
        except LicenceLimit as e:
            _refused("the completion-order LP", e, "no order LP bound")
            return None
        if res.status != Status.OPTIMAL or res.value is None:  # (LP.solve gives a value at OPTIMAL)
            return None
        best = min(best, res.value)
    value = best if objective == "makespan" else best - float(a.mean())
    return value - SHADE * abs(value)


# --- the Lagrangian bound: the nodes priced per interval, each job's own run exact ---------------------------

LAGRANGE_TIME_LIMIT = 20.0  # s of column generation; the best bound found by then is kept
LAGRANGE_COLUMNS = 5  # columns per job and round: completion times spread over the interval of its least value
LAGRANGE_SMOOTHING = 0.7  # prices: this share of the best prices so far, the rest the master LP's duals (of
#                           0.3, 0.5, 0.7 and 0.8 none converged faster, bounds alike: benchmarks/speed.md, constants)
LAGRANGE_GAP = 1e-4  # relative: stop where the master LP's value is this close to the bound,
LAGRANGE_STALL = 10  # or, once within LAGRANGE_NEAR of it, where neither moved (by LAGRANGE_GAP) in this many rounds
LAGRANGE_NEAR = 1e-2
LAGRANGE_SEEDS = (0.0, 0.5, 2.0)  # the master starts with runs priced at these multiples of the first prices


def _hull(job) -> tuple[np.ndarray, np.ndarray]:
    """The lower convex hull of the points (1 / t_j(p), p) of the ladder and (0, 0) (idle), as its
    segments' rises (work rate, nodes), slopes (node-seconds per unit of work) increasing."""
    points = sorted([(0.0, 0.0)] + [(1 / t, float(p)) for p, t in zip(job.sizes, job.times)])
    h: list[tuple[float, float]] = []
    for x, y in points:
        while len(h) >= 2 and (h[-1][1] - h[-2][1]) * (x - h[-2][0]) >= (y - h[-2][1]) * (h[-1][0] - h[-2][0]):
            h.pop()
        if not h or x > h[-1][0]:
            h.append((x, y))
    h_ = np.array(h)
    return np.diff(h_[:, 0]), np.diff(h_[:, 1])


def _fill(avail: np.ndarray, price: np.ndarray, dr: np.ndarray, dp: np.ndarray) -> list[np.ndarray | None]:
    """Per row of ``avail`` (seconds per interval), the node-seconds per interval of the cheapest way (at
    ``price`` per unit of work, per interval and hull segment) to do a job's whole work within it, mixing
    sizes along the hull; None where it does not fit."""
    rows, K = avail.shape
    cap = (avail[:, :, None] * dr[None, None, :]).reshape(rows, -1)  # the work each (interval, hull segment) holds
    order = np.argsort(price.ravel(), kind="stable")
    w = cap[:, order]
    take = np.clip(1 - (np.cumsum(w, axis=1) - w), 0, w)
    share = np.zeros_like(cap)
    share[:, order] = np.divide(take, w, out=np.zeros_like(w), where=w > 0)
    use = (share.reshape(rows, K, -1) * avail[:, :, None] * dp[None, None, :]).sum(axis=2)
    return [u if c >= 1 - 1e-12 else None for u, c in zip(use, cap.sum(axis=1))]


def _table(pi: np.ndarray, dr: np.ndarray, dp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What pricing a job needs of the prices and its hull alone, the same for every job of that hull: the
    price per unit of work (interval, hull segment), phi's breakpoints lambda and phi_k(lambda)."""
    price = pi[:, None] * (dp / dr)[None, :]
    lam = np.unique(np.append(price.ravel(), 0.0))  # phi's breakpoints: the best lambda is among them
    phi = np.einsum("s,ksl->kl", dr, np.maximum(0, lam[None, None, :] - price[:, :, None]))
    return price, lam, phi


def _price(arrival: float, tmin: float, tau: np.ndarray, pi: np.ndarray, dr: np.ndarray, dp: np.ndarray,
           columns: int, table=None) -> tuple[float, list[tuple[float, np.ndarray]]]:
    """A lower bound on min (C - a + sum_k pi_k U_k) over one job's runs (see lagrangian_bound), and
    runs (completion - arrival, node-seconds per interval) near its least value, to add to the master.
    ``table``: :func:`_table` of ``pi`` and the hull, if already computed for another job."""
    T = tau[-1]
    d = np.clip(tau[1:] - np.maximum(tau[:-1], arrival), 0, None)
    price, lam, phi = _table(pi, dr, dp) if table is None else table
    psi = np.cumsum(d[:, None] * phi, axis=0)  # sum_{k <= m} d_k phi_k(lambda)
    start = np.maximum(tau[:-1], arrival)
    low = np.maximum(tau[:-1], arrival + tmin)  # C in [low_m, tau_{m+1}]
    lo = (low - arrival)[:, None] + lam - (psi - d[:, None] * phi) - np.maximum(0, low - start)[:, None] * phi
    hi = (tau[1:] - arrival)[:, None] + lam - psi
    best = np.minimum(lo, hi).max(axis=1)
    if len(lam) > 1:  # where lo and hi cross between two breakpoints (both linear there)
        dl, dh = lo[:, :-1] - hi[:, :-1], lo[:, 1:] - hi[:, 1:]
        cross = dl * dh < 0
        t = np.divide(dl, dl - dh, out=np.zeros_like(dl), where=cross)
        best = np.maximum(best, np.where(cross, lo[:, :-1] + t * (lo[:, 1:] - lo[:, :-1]), -np.inf).max(axis=1))
    best = np.where(tau[1:] >= arrival + tmin, best, np.inf)
    m = int(np.argmin(best))
    if not best[m] < T - arrival:
        return T - arrival, [(T - arrival, np.zeros(len(d)))]
    C = np.linspace(low[m], tau[m + 1], columns)
    avail = np.tile(np.where(np.arange(len(d)) < m, d, 0.0), (columns, 1))  # (run, interval): seconds it may run
    avail[:, m] = np.maximum(0.0, C - start[m])
    return float(best[m]), [(c - arrival, use) for c, use in zip(C, _fill(avail, price, dr, dp)) if use is not None]


@functools.lru_cache(maxsize=16)
def lagrangian_bound(instance: MalleableInstance, time_limit: float = LAGRANGE_TIME_LIMIT,
                     deadline: Deadline | None = None, solver: str = "highs") -> float | None:
    """A lower bound (s) on the mean completion time valid for every schedule: the nodes priced per
    interval (a Lagrangian relaxation of the capacity), each job's own run exact but for its checks,
    resize costs and gaps; the prices chosen by column generation.

    Cut [first arrival, T) into the interval LP's intervals I_k (:func:`grid`; its grid as coarsened) and take
    any prices pi_k >= 0 (s per node-second). In any schedule let U_jk be the node-seconds job j
    holds while it runs within I_k; the nodes give sum_j U_jk <= N |I_k|, so ::

        sum_j (C_j - a_j) >= sum_j F_j - N sum_k pi_k |I_k|,   F_j = C_j - a_j + sum_k pi_k U_jk.

    F_j is bounded below for every run of job j. Runs that end at C >= T: F_j >= T - a_j. Runs that end
    at C in [tau_m, tau_{m+1}): C >= low_m = max(tau_m, a_j + Tmin_j). Let y_pk be the seconds job j runs
    at p nodes in I_k (sum_p y_pk <= d_k(C), its seconds of I_k after a_j and before C; sum y_pk /
    t_j(p) = 1, its work). For any lambda >= 0, sum_k pi_k U_jk = sum y_pk pi_k p = lambda - sum y_pk
    (lambda / t_j(p) - pi_k p) >= lambda - sum_k d_k(C) phi_k(lambda), with phi_k(lambda) =
    max(0, max_p lambda / t_j(p) - pi_k p). So F_j >= f(C, lambda) = C - a_j + lambda - sum_k d_k(C)
    phi_k(lambda), which is linear in C on [low_m, tau_{m+1}]: F_j >= min(f(low_m, lambda),
    f(tau_{m+1}, lambda)) for every lambda, and the method takes the largest over lambda (at the
    breakpoints of phi, and where the two cross; both are concave, so the crossing of their chords is
    below the true maximum), then the least over m and T - a_j. Nothing but the run's work, its one size
    at a time and its arrival is used: checks, resize costs, the nodes resizes and stalls hold (U
    counts runs only) and a run's contiguity are all relaxed, so every schedule the evaluator accepts
    is covered; the bound holds for any prices, whether or not the column generation converged. The
    prices are the duals of a master LP over runs found so far (each job a convex combination of its
    runs: cost C - a_j, usage U_jk), smoothed towards the best prices (LAGRANGE_SMOOTHING), until its
    value is within LAGRANGE_GAP of the bound, neither moves near it (LAGRANGE_STALL rounds),
    ``time_limit`` s pass or ``deadline`` comes (None where it leaves no time to start). The first
    prices are the interval LP's duals of its node rows (where it finished): its per-job rows hold
    for every run, so the first bound is already about the interval LP's. At its
    optimum the bound is the time-indexed LP over each job's runs. Lowered by SHADE. None where
    the interval LP's columns would exceed MAX_VARIABLES (the same size limit). The master LP and the
    interval LP run on backend ``solver``; where it refuses the master for its licence's size (the master
    grows by columns each round), the best bound of the rounds so far is kept, as any prices give one.
    """
    finest = _finest(instance, "mean_completion", TIME_LIMIT, deadline, solver)  # the interval LP's grid
    if finest is None or (deadline is not None and deadline.remaining() < LEAST_S):
        return None
    intervals = finest[0]
    try:
        warm = _solved(instance, "mean_completion", intervals, _within(TIME_LIMIT, deadline), solver)[1]
    except LicenceLimit:  # said by _finest: start from zero prices
        warm = None
    jobs, N, n = instance.jobs, instance.nodes, len(instance.jobs)
    a = np.array([j.arrival for j in jobs])
    tmin = np.array([min(j.times) for j in jobs])
    tau = grid(instance, intervals)[:-1]
    T, length = tau[-1], np.diff(tau)
    hulls = [_hull(j) for j in jobs]
    keys: dict[tuple[bytes, bytes], int] = {}  # jobs of one hull share its pricing table (paper's workloads: 3)
    kind = [keys.setdefault((dr.tobytes(), dp.tobytes()), len(keys)) for dr, dp in hulls]

    def priced(pi: np.ndarray) -> list[tuple[float, list]]:
        """Every job's _price at prices pi, one _table per hull."""
        tables: dict[int, tuple] = {}
        out = []
        for j in range(n):
            if kind[j] not in tables:
                tables[kind[j]] = _table(pi, *hulls[j])
            out.append(_price(a[j], tmin[j], tau, pi, *hulls[j], LAGRANGE_COLUMNS, tables[kind[j]]))
        return out
    import scipy.sparse as sp

    lp = LP(solver, "primal")  # each round adds columns to a solved LP: primal simplex from the last basis
    lp.add_rows(np.ones(n), np.ones(n))  # each job one (convex combination of) run
    lp.add_rows(np.full(intervals, -np.inf), N * length)

    def add(cols: list[tuple[int, float, np.ndarray]]) -> None:
        starts, index, value = [0], [], []
        for j, _, use in cols:
            nz = np.flatnonzero(use > 0)
            index += [j, *(n + nz)]
            value += [1.0, *use[nz]]
            starts.append(len(index))
        lp.add_cols([c for _, c, _ in cols], 0.0, np.inf,
                    sp.csc_matrix((value, index, starts), shape=(n + intervals, len(cols))))

    best, best_pi = -math.inf, (np.zeros(intervals) if warm is None else warm)
    add([(j, T - a[j], np.zeros(intervals)) for j in range(n)] + [  # and runs at the first prices scaled
        (j, c, use) for f in LAGRANGE_SEEDS for j, (_, runs) in enumerate(priced(f * best_pi)) for c, use in runs])
    master_pi, mu = best_pi, np.array([])
    start, last, stalled = time.perf_counter(), math.inf, 0
    while True:
        pi = LAGRANGE_SMOOTHING * best_pi + (1 - LAGRANGE_SMOOTHING) * master_pi
        value, cols = -N * float(pi @ length), []
        for j, (low, runs) in enumerate(priced(pi)):
            value += low
            cols += [(j, c, use) for c, use in runs]
        rose = value > best + LAGRANGE_GAP * abs(best)
        if value > best:
            best, best_pi = value, pi
        if len(mu):  # only runs that the master LP, at its own duals, would take
            cols = [(j, c, use) for j, c, use in cols if c + master_pi @ use < mu[j] - 1e-9 * abs(mu[j])]
        if cols:
            add(cols)
        left = time_limit - (time.perf_counter() - start)
        try:
            res = lp.solve(max(left if deadline is None else min(left, deadline.remaining()), LEAST_S))
        except LicenceLimit as e:
            _refused("the Lagrangian bound's master LP", e, "the best bound of the rounds so far is kept")
            break
        if res.status != Status.OPTIMAL or res.value is None or res.duals is None:  # (both given at OPTIMAL)
            break
        mu, master_pi = res.duals[:n], np.maximum(0, -res.duals[n:])
        master = res.value
        near = master - best <= LAGRANGE_NEAR * abs(master)  # (early rounds move the duals, not the values)
        stalled = 0 if rose or master < last - LAGRANGE_GAP * abs(last) or not near else stalled + 1
        last = min(last, master)
        if (master - best <= LAGRANGE_GAP * abs(master) or stalled >= LAGRANGE_STALL
                or time.perf_counter() - start > time_limit or (deadline is not None and deadline.expired())):
            break
    value = best / n
    return value - SHADE * abs(value)

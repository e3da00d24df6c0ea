"""The free (fluid) malleable problem: a lower bound on the mean completion time valid for every schedule, by a
branch and bound over the order of events, each order an LP over node configurations.

*The free problem.* Keep of the malleable problem (:mod:`iosched.instances.malleable`) what the completion times
depend on most: at every instant each arrived, unfinished job holds one size of its ladder or nothing, the sizes
held sum to at most N, a job holding p nodes does 1/t_j(p) of its work per second, nothing before its arrival.
Drop the checks, the resize costs, the stalls and the contiguity of a job's run (it may pause). *Every schedule the
evaluator accepts is a free schedule with the same completions*: replace each reconfiguration and each stall by
size 0 (they hold nodes and do no work, so the nodes held only fall and the work done is unchanged); what is left
runs at ladder sizes, within the nodes, after the arrival. So the free optimum of sum_j (C_j - a_j) is at most
every schedule's, and any lower bound on the free optimum is a lower bound valid for every schedule.

*A fixed order of events is an LP.* Merge the arrivals (fixed times, in time order) and the completions (in a
given order) into one sequence e_0, ..., e_{2n-1} with times E_0 <= ... (E_k = a_j for an arrival). Between
e_{i-1} and e_i the set of alive jobs (arrived, not completed) is known; a *configuration* c gives each of them a
size or 0, sum_j c_j <= N. x_ic >= 0 is the time interval i spends in configuration c::

    min  sum_{completions e} E_e - sum_j a_j
    s.t. sum_c x_ic = E_i - E_{i-1}                 every interval filled (c = 0: idle)       (L)
         sum_{i, c} x_ic / t_j(c_j) = 1             every job's work, in its alive intervals   (W)

A free schedule whose events come in this order gives a feasible point (x_ic: the time it spends in c within
interval i) of the same value, and conversely every feasible point is a free schedule (within an interval, run
the configurations one after another) whose completions are no later than the E_e, so of no larger value: the
LP's optimum is the free optimum over this order, and the least over all orders is the free optimum.
Configurations are generated as columns: the reduced cost of x_ic is alpha_i - sum_j mu_j / t_j(c_j) (alpha, mu
the duals of (L), (W)), so pricing is a multiple-choice knapsack over the N nodes (:func:`best_configuration`, a
dynamic program). An order no schedule meets is infeasible; rather than detect that, (W) of a completed job gets
a slack of cost BIG_M per unit of work missing: a relaxation, so its optimum is still a lower bound on the
order's, and an infeasible order gets a large value and is pruned.

*A node of the branch and bound* is a prefix e_0..e_r of the sequence. The prefix is modelled exactly, as above,
with D_j in [0, 1] the work a job alive at E_r has done by then ((W) reads sum x / t = D_j); each remaining job
(alive at E_r, or not arrived) gets a completion variable C_j with rows valid for every free schedule extending
the prefix (Tmin_j its least run time, A_j its least area min_p p t_j(p))::

    C_j >= E_r + Tmin_j (1 - D_j)                   alive: its remaining work at its fastest             (S1)
    C_j >= E_r + Tmin_j,  C_j >= a_j + Tmin_j      not arrived: all its work after E_r and a_j          (S2)
    sum_R C_j >= (|R| - 1) E_r + s + W_s / N      for s = E_r and for each later arrival a_f           (S3)

(S3): the remaining jobs R all complete after E_r, and the one completing last does so only after the area of
every remaining job arriving at or after s has been done from s on: W_{E_r} = sum_{alive} A_j (1 - D_j) + sum_{not
arrived} A_j, W_{a_f} = sum_{a_j >= a_f} A_j (remaining work at p nodes takes p t_j(p) >= A_j node-seconds per unit,
at most N per second). A node's bound is the larger of this LP's optimum and its parent's (its schedules are among
the parent's); a complete order's LP is exact. *Anytime:* every free schedule follows some order, which lies in an
open node, a pruned node or a solved leaf; so min(best leaf, least bound of the open nodes) is a lower bound on
the free optimum at any moment, pruned nodes being those whose bound reaches an upper bound on it (a solved leaf,
or ``upper``: the mean completion of any real schedule, as each is a free schedule). Where column generation is
cut (the deadline, MAX_ROUNDS, a backend's licence) before it converges the restricted LP bounds nothing, and the
node keeps its parent's bound. Stopping early (the deadline, a node budget, a ``floor``) leaves nodes open and
the bound valid.

*Dominance: identical jobs complete in arrival order.* Call jobs i, k identical when their ladders and run times
agree (the paper's workloads have three applications). Take an optimal free schedule where a_i <= a_k (ties: i
first by index) but C_k < C_i, and W_i(t), W_k(t) the work each has done by t. W_i(a_k) >= 0 = W_k(a_k) and
W_k(C_k) = 1 > W_i(C_k), so by continuity W_i(t*) = W_k(t*) at some t* in [a_k, C_k]. After t*, give i the sizes k
held and k those i held: the nodes at each instant are unchanged, both are arrived after t* >= a_k, their rates are
the same functions, so i now completes at C_k and k at C_i: the same value, with the pair in arrival order and
every other job untouched. Each such exchange swaps two completion times within one class and removes at least one
inversion of it, so finitely many give an optimal free schedule with every class completing in arrival order: the
search only places a job's completion after those of the identical jobs arriving before it. A completion of j
cannot precede an arrival at a_k < a_j + Tmin_j either (C_j >= a_j + Tmin_j).

The reported bound is lowered by SHADE (relative, the LP solver's tolerances), as the other malleable LP bounds
are. The search is exact over every schedule only in this sense: it bounds the free relaxation, whose optimum may
lie below the best schedule (the checks and resize costs it drops).
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field

import numpy as np

from iosched.errors import ParameterError
from iosched.instances.malleable import MalleableInstance
from iosched.solvers import Deadline, LicenceLimit
from iosched.solvers.lp import LP
from iosched.status import Status
from iosched.validate import integer, number

SHADE = 1e-6  # relative: the bound is lowered by this much (the LP solvers' optimality tolerances)
RC_TOL = 1e-9  # relative: a configuration enters where its reduced cost is below -RC_TOL (1 + |alpha|)
MAX_ROUNDS = 200  # column generation rounds per LP (paper10-0, -2: 1-3 LP solves mostly, at most 11, 17; the
#                  pool of columns found at other nodes starts most LPs close to their optimum)
TIME_LIMIT = 60.0  # s: the search's budget when no deadline is given
LEAST_S = 0.05  # s: no LP is started with less time left

ARRIVAL, COMPLETION = 0, 1
Event = tuple[int, int]  # (ARRIVAL or COMPLETION, job index)
Configuration = tuple[tuple[int, int], ...]  # (job, nodes) of the jobs that run, by job


def best_configuration(alive: list[int], price: dict[int, float], sizes: list[tuple[int, ...]],
                       rates: list[tuple[float, ...]], nodes: int) -> tuple[float, Configuration]:
    """max sum_j price_j rate_j(p_j) over the sizes p_j (a ladder size or 0) of the ``alive`` jobs with
    sum p_j <= ``nodes``: a multiple-choice knapsack, by dynamic programming over the nodes used."""
    best = np.full(nodes + 1, -np.inf)
    best[0] = 0.0
    choices = []
    for j in alive:
        new, pick = best.copy(), np.zeros(nodes + 1, dtype=np.int64)
        if price[j] > 0:
            for p, r in zip(sizes[j], rates[j]):
                if p > nodes:
                    break  # (a ladder grows)
                shifted = np.full(nodes + 1, -np.inf)
                shifted[p:] = best[:nodes + 1 - p] + price[j] * r
                better = shifted > new
                new[better], pick[better] = shifted[better], p
        choices.append(pick)
        best = new
    used = int(np.argmax(best))
    value, config = float(best[used]), []
    for j, pick in zip(reversed(alive), reversed(choices)):
        p = int(pick[used])
        if p:
            config.append((j, p))
            used -= p
    return value, tuple(sorted(config))


@dataclass(frozen=True)
class FreeSchedule:
    """A free schedule (module docstring): ``value`` sum_j (C_j - a_j) (s), the ``times`` of the events of
    ``order``, and ``runs`` (start, end, {job index: nodes}) back to back from the first arrival."""

    value: float
    times: tuple[float, ...]
    runs: tuple[tuple[float, float, dict[int, int]], ...]
    order: tuple[Event, ...]


@dataclass
class Free:
    """What the free problem needs of an instance, and the configurations found so far per alive set (reused by
    every LP of the search: a column once priced in is offered again wherever the same jobs are alive)."""

    instance: MalleableInstance
    solver: str = "highs"
    pool: dict[frozenset, set] = field(default_factory=dict)
    lps: int = 0  # LPs solved

    def __post_init__(self):
        jobs = self.instance.jobs
        self.n, self.N = len(jobs), self.instance.nodes
        self.a = [j.arrival for j in jobs]
        self.sizes = [j.sizes for j in jobs]
        self.rates = [tuple(1.0 / t for t in j.times) for j in jobs]
        self.tmin = [min(j.times) for j in jobs]
        self.area = [min(p * t for p, t in zip(j.sizes, j.times)) for j in jobs]
        self.arrivals = sorted(range(self.n), key=lambda j: (self.a[j], j))  # the arrival order
        horizon = max(self.a) + sum(self.area) / self.N + max(self.tmin)
        self.big_m = 10.0 * self.n * max(horizon, 1.0)  # per unit of work missing (any value keeps the LP a
        #                                                 relaxation; a large one prices an impossible order out)
        kinds: dict = {}
        self.kind = [kinds.setdefault((j.sizes, j.times), len(kinds)) for j in jobs]
        self.earlier = [[i for i in self.arrivals[:self.arrivals.index(j)] if self.kind[i] == self.kind[j]]
                        for j in range(self.n)]  # identical jobs that complete before j (dominance)

    def rate(self, j: int, p: int) -> float:
        return self.rates[j][self.sizes[j].index(p)]

    def children(self, prefix: tuple[Event, ...]) -> list[Event]:
        """The events that may follow ``prefix``: the next arrival, or the completion of an alive job whose
        identical predecessors have completed and which can complete before the next arrival."""
        arrived = [j for k, j in prefix if k == ARRIVAL]
        done = {j for k, j in prefix if k == COMPLETION}
        out: list[Event] = []
        nxt = self.arrivals[len(arrived)] if len(arrived) < self.n else None
        if nxt is not None:
            out.append((ARRIVAL, nxt))
        for j in arrived:
            if j in done or any(i not in done for i in self.earlier[j]):
                continue
            if nxt is not None and self.a[j] + self.tmin[j] > self.a[nxt] * (1 + 1e-12) + 1e-12:
                continue
            out.append((COMPLETION, j))
        return out

    def solve(self, prefix: tuple[Event, ...], deadline: Deadline | None = None) -> float | None:
        """The LP bound of the node ``prefix`` (module docstring; for a complete order its exact free optimum) on
        sum_j (C_j - a_j), or None where column generation did not converge by ``deadline``."""
        got = self._solve(prefix, deadline)
        return None if got is None else got[0]

    def schedule(self, order: tuple[Event, ...], deadline: Deadline | None = None) -> FreeSchedule | None:
        """The free schedule of least sum_j (C_j - a_j) whose events come in the complete ``order`` (None where
        column generation did not converge by ``deadline``)."""
        got = self._solve(order, deadline)
        if got is None:
            return None
        value, x, configs, first = got
        times = []
        for e, (k, j) in enumerate(order):
            times.append(self.a[j] if k == ARRIVAL else float(x[first[e]]))
        runs = []
        for i in range(len(order) - 1):
            start = times[i]
            for (ii, config), seconds in zip(configs, x[-len(configs):]):
                if ii == i and seconds > 0:
                    runs.append((start, start + float(seconds), dict(config)))
                    start += float(seconds)
        return FreeSchedule(value, tuple(times), tuple(runs), order)

    def _solve(self, prefix: tuple[Event, ...], deadline: Deadline | None) -> tuple | None:
        """The node's LP by column generation: (value, column values, the configuration columns (interval,
        configuration) in the order added, the column of each completion event's time), or None."""
        n, N, a = self.n, self.N, self.a
        r = len(prefix)
        comp = [e for e in range(r) if prefix[e][0] == COMPLETION]
        tvar = {e: i for i, e in enumerate(comp)}  # completion events' time columns
        done = {prefix[e][1] for e in comp}
        arrived = [j for k, j in prefix if k == ARRIVAL]
        alive_end = [j for j in arrived if j not in done]
        future = [j for j in range(n) if j not in arrived]
        remaining = alive_end + future
        alive_sets: list[tuple[int, ...]] = []
        alive: set[int] = set()  # alive_sets[i]: the jobs alive between events i and i + 1
        for e, (k, j) in enumerate(prefix):
            if e:
                alive_sets.append(tuple(sorted(alive)))
            (alive.add if k == ARRIVAL else alive.discard)(j)
        n_int = r - 1
        # rows: (L) per interval, (W) per job that ran in the prefix, (S1), (S2), (S3)
        ran = sorted(done | set(alive_end))
        wrow = {j: n_int + k for k, j in enumerate(ran)}
        rows_lo, rows_hi = [], []
        for i in range(1, r):
            rhs = (a[prefix[i - 1][1]] if prefix[i - 1][0] == ARRIVAL else 0.0) - (
                a[prefix[i][1]] if prefix[i][0] == ARRIVAL else 0.0)
            rows_lo.append(rhs)
            rows_hi.append(rhs)
        for j in ran:
            rhs = 1.0 if j in done else 0.0
            rows_lo.append(rhs)
            rows_hi.append(rhs)
        end_var = tvar.get(r - 1)  # E_r: a column, or the constant arrival time
        end_const = a[prefix[-1][1]] if end_var is None else 0.0
        suffix_rows: list[tuple[list[tuple[int, float]], float]] = []  # (entries on columns by name, lo)
        # column names: ("T", e), ("D", j), ("C", j), ("s", j); configurations added separately
        cols: list[tuple[str, int]] = [("T", e) for e in comp] + [("D", j) for j in alive_end] + [
            ("C", j) for j in remaining] + [("s", j) for j in sorted(done)]
        cidx = {c: i for i, c in enumerate(cols)}
        end_entry = [] if end_var is None else [(cidx[("T", r - 1)], -1.0)]
        for j in alive_end:  # (S1)
            suffix_rows.append(([(cidx[("C", j)], 1.0), (cidx[("D", j)], self.tmin[j])] + end_entry,
                                self.tmin[j] + end_const))
        for j in future:  # (S2); C_j >= a_j + Tmin_j is the column's bound
            suffix_rows.append(([(cidx[("C", j)], 1.0)] + end_entry, self.tmin[j] + end_const))
        if remaining:  # (S3)
            total = [(cidx[("C", j)], 1.0) for j in remaining]
            k = len(remaining) - 1
            W = sum(self.area[j] for j in remaining) / N
            suffix_rows.append((total + [(cidx[("D", j)], self.area[j] / N) for j in alive_end]
                                + [(c, (k + 1) * v) for c, v in end_entry], (k + 1) * end_const + W))
            for f in future:
                W = sum(self.area[j] for j in future if a[j] >= a[f]) / N
                suffix_rows.append((total + [(c, k * v) for c, v in end_entry], k * end_const + a[f] + W))
        base = len(rows_lo)
        for _, lo in suffix_rows:
            rows_lo.append(lo)
            rows_hi.append(np.inf)
        import scipy.sparse as sp

        R, C, V = [], [], []
        for e in comp:  # E_e in (L) of the intervals it ends (+1) and starts (-1)
            c = cidx[("T", e)]
            R.append(e - 1)
            C.append(c)
            V.append(1.0)
            if e + 1 < r:
                R.append(e)
                C.append(c)
                V.append(-1.0)
        for j in alive_end:
            R.append(wrow[j])
            C.append(cidx[("D", j)])
            V.append(-1.0)
        for j in sorted(done):
            R.append(wrow[j])
            C.append(cidx[("s", j)])
            V.append(1.0)
        for k, (entries, _) in enumerate(suffix_rows):
            for c, v in entries:
                R.append(base + k)
                C.append(c)
                V.append(v)
        cost = [{"T": 1.0, "C": 1.0, "D": 0.0, "s": self.big_m}[kind] for kind, _ in cols]
        col_lo = [a[j] + self.tmin[j] if kind == "C" and j in future else (0.0 if kind in "Ds" else -np.inf)
                  for kind, j in cols]
        col_hi = [1.0 if kind == "D" else np.inf for kind, _ in cols]
        lp = LP(self.solver)
        lp.add_rows(rows_lo, rows_hi)
        lp.add_cols(cost, col_lo, col_hi, sp.csc_matrix((V, (R, C)), shape=(len(rows_lo), len(cols))))
        offered: list[set] = []
        first: list[tuple[int, Configuration]] = []
        for i, S in enumerate(alive_sets):
            have = set(self.pool.get(frozenset(S), ())) | {()}
            for j in S:
                have.add(((j, self.sizes[j][-1]),))
            offered.append(have)
            first += [(i, c) for c in have]
        self._add(lp, first, wrow, len(rows_lo))
        added = list(first)
        for _ in range(MAX_ROUNDS):
            left = TIME_LIMIT if deadline is None else deadline.remaining()
            if left < LEAST_S:
                return None
            res = lp.solve(left)
            self.lps += 1
            if res.status != Status.OPTIMAL or res.value is None or res.duals is None:
                return None
            new = []
            for i, S in enumerate(alive_sets):
                if not S:
                    continue
                alpha = res.duals[i]
                price = {j: res.duals[wrow[j]] for j in S}
                value, config = best_configuration(list(S), price, self.sizes, self.rates, N)
                if alpha - value < -RC_TOL * (1 + abs(alpha)) and config not in offered[i]:
                    offered[i].add(config)
                    self.pool.setdefault(frozenset(S), set()).add(config)
                    new.append((i, config))
            if not new:
                assert res.x is not None  # LP.solve's at OPTIMAL
                return res.value - sum(a), res.x, added, {e: cidx[("T", e)] for e in comp}
            self._add(lp, new, wrow, len(rows_lo))
            added += new
        return None

    def _add(self, lp: LP, configs: list[tuple[int, Configuration]], wrow: dict[int, int], rows: int) -> None:
        """Configuration columns: -1 in their interval's (L), 1 / t_j(p) in each running job's (W)."""
        import scipy.sparse as sp

        R, C, V = [], [], []
        for k, (i, config) in enumerate(configs):
            R.append(i)
            C.append(k)
            V.append(-1.0)
            for j, p in config:
                R.append(wrow[j])
                C.append(k)
                V.append(self.rate(j, p))
        lp.add_cols(0.0, 0.0, np.inf, sp.csc_matrix((V, (R, C)), shape=(rows, len(configs))))


@dataclass
class Search:
    """Where the branch and bound over event orders stands: ``bound`` a lower bound (s) on the mean completion
    time valid for every schedule (None where not even the root LP finished), ``best`` the least mean completion
    of a complete order solved (an upper bound on the free optimum; None if none), ``order`` its events,
    ``complete`` whether the search closed (then ``bound`` is the free optimum, shaded), ``nodes`` expanded,
    ``lps`` solved, ``seconds`` of wall time."""

    bound: float | None
    best: float | None
    order: tuple[Event, ...] | None
    complete: bool
    nodes: int
    lps: int
    seconds: float


def _tried(free: Free, prefix: tuple[Event, ...], deadline: Deadline) -> float | None:
    """free.solve, None where the backend refuses the LP for its licence's size (the search then stops)."""
    try:
        return free.solve(prefix, deadline)
    except LicenceLimit:
        return None


def search(instance: MalleableInstance, deadline: Deadline | None = None, solver: str = "highs",
           upper: float | None = None, floor: float | None = None, max_nodes: int | None = None) -> Search:
    """Branch and bound over the order of events of the free problem (module docstring): best first, diving
    from each node expanded into its child of least bound, pruned by the best complete order and by ``upper``
    (the mean completion time of any schedule the evaluator accepts: an upper bound on the free optimum). Stops
    at ``deadline`` (default: TIME_LIMIT s) with the bound so far; LPs on backend ``solver`` (where it refuses
    one for its licence's size, the search stops there too, with the bound so far). ``floor``, a mean completion
    time (another bound's): stop, not closed, once a complete order's mean is at most it, as the search's bound
    can then be no larger. ``max_nodes``: expand at most this many nodes (a budget that, unlike the deadline,
    gives the same bound on a busy machine)."""
    if upper is not None:
        upper = number("upper", upper, 0, error=ParameterError)
    if floor is not None:
        floor = number("floor", floor, error=ParameterError)
    if max_nodes is not None:
        max_nodes = integer("max_nodes", max_nodes, 0, error=ParameterError)
    deadline = Deadline(TIME_LIMIT) if deadline is None else deadline
    began = time.perf_counter()
    free = Free(instance, solver)
    n, offset = free.n, 0
    best = math.inf if upper is None else upper * n
    best_order = None
    size = 2 * n
    root = ((ARRIVAL, free.arrivals[0]),)
    value = _tried(free, root, deadline)
    if value is None:
        return Search(None, None, None, False, 0, free.lps, time.perf_counter() - began)
    heap: list[tuple[float, int, tuple[Event, ...]]] = [(value, offset, root)]
    bounds: dict[tuple[Event, ...], float] = {root: value}
    expanded, nodes = set(), 0
    dive: tuple[Event, ...] | None = None
    tol = 1e-9 * max(1.0, abs(value))
    while floor is None or best > floor * n:
        while heap and heap[0][2] in expanded:
            heapq.heappop(heap)
        if dive is None:
            if not heap:
                break
            dive = heap[0][2]
        parent = bounds[dive]
        if parent >= best - tol:
            if dive == heap[0][2]:  # the least open bound reaches the best: every open node is pruned
                break
            dive = None
            continue
        if deadline.remaining() < LEAST_S or (max_nodes is not None and nodes >= max_nodes):
            break
        expanded.add(dive)
        nodes += 1
        kids, stopped = [], False
        for event in free.children(dive):
            child = dive + (event,)
            got = None if stopped else _tried(free, child, deadline)
            if got is None:  # the deadline came (or a refusal): the child stays open at its parent's bound
                stopped = True
                got = parent
            elif len(child) == size:
                if got < best:
                    best, best_order = got, child
                continue
            got = max(got, parent)
            if got < best - tol:
                bounds[child] = got
                offset += 1
                heapq.heappush(heap, (got, offset, child))
                kids.append((got, child))
        if stopped:
            break
        dive = min(kids)[1] if kids else None
    while heap and heap[0][2] in expanded:
        heapq.heappop(heap)
    low = min(best, heap[0][0]) if heap else best
    complete = not heap or heap[0][0] >= best - tol  # (a floor's stop leaves open nodes below the best)
    mean = low / n if math.isfinite(low) else None
    bound = None if mean is None else mean - SHADE * abs(mean)
    return Search(bound, None if best_order is None else best / n, best_order, complete, nodes, free.lps,
                  time.perf_counter() - began)

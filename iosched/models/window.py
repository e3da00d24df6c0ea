"""The exact Pareto front of a window: maximise used nodes and used burst buffer within the free capacity.

Main engine (``dp``), exact and fast at Theta's scale:

* jobs without a burst buffer request only add nodes: one bitset subset-sum over node
  totals gives, for every slack s, the most nodes they can fill, fill(s);
* jobs with a request are enumerated, largest request first, as the set of reachable
  (nodes, burst buffer) sums within the capacity, kept as one sorted array of integer
  keys and merged job by job (equal sums collapse, so equal jobs cost nothing extra);
* every reachable pair (n, b) becomes (n + fill(N - n), b); the non-dominated ones are
  the front, and a backtrack over the kept arrays gives one subset per point (it leaves
  out smaller requests, and later zero-request jobs, whenever it can).

Cross-checks: ε-constraint on a HiGHS MILP (``milp``) and on CP-SAT (``cpsat``): the
point of most nodes (then most burst buffer), then again with the burst buffer above the
last point's, until infeasible.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from iosched import lazy
from iosched.core import Status
from iosched.errors import ParameterError
from iosched.evaluate.window import FrontPoint
from iosched.instances.window import WindowInstance
from iosched.models.covers import cardinality_cuts
from iosched.solvers import Deadline, Profile, load_profile, solve_cpsat, solve_pyomo

pe = lazy.module("pyomo.environ")
if TYPE_CHECKING:
    from pyomo.environ import ConcreteModel


def _fill_table(nodes: np.ndarray, n_cap: int, deadline: Deadline | None = None):
    """Subset sums of ``nodes`` up to n_cap: best[s] = most nodes within s, and how each sum was first reached."""
    reach = np.zeros(n_cap + 1, dtype=bool)
    reach[0] = True
    via = np.full(n_cap + 1, -1, dtype=np.int64)
    for j, n in enumerate(nodes):
        _check(deadline, "node-fill")
        if n > n_cap:
            continue
        new = np.zeros_like(reach)
        new[n:] = reach[:-n] if n else reach
        fresh = new & ~reach
        via[fresh] = j
        reach |= new
    sums = np.where(reach, np.arange(n_cap + 1), -1)
    return np.maximum.accumulate(sums), via


def _pareto(n: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Indices of the non-dominated (n, b) pairs (both maximised), one per vector, by n descending."""
    order = np.lexsort((-b, -n))
    n, b = n[order], b[order]
    best_before = np.concatenate(([-1], np.maximum.accumulate(b)[:-1]))
    keep = b > best_before
    return order[keep]


def _pareto_binned(n: np.ndarray, b: np.ndarray, n_max: int) -> np.ndarray:
    """:func:`_pareto` in O(len + n_max) for integer n in [0, n_max]: one index per front vector."""
    best = np.full(n_max + 1, -1, dtype=np.int64)
    np.maximum.at(best, n, b)
    above = np.concatenate([np.maximum.accumulate(best[::-1])[::-1][1:], [-1]])  # best b at larger n
    on_front = best > above
    hit = np.flatnonzero(on_front[n] & (b == best[n]))
    _, first = np.unique(n[hit], return_index=True)
    return hit[first]


class FrontTimeLimit(RuntimeError):
    """The dynamic program did not finish within its time limit (it has no partial front to offer)."""


def _check(deadline: Deadline | None, what: str) -> None:
    if deadline is not None and deadline.expired():
        raise FrontTimeLimit(f"the exact {what} front was not finished within {deadline.seconds:g} s")


MAX_FRONT_KEYS = 50_000_000  # (nodes, BB) keys the front's dynamic program may hold over its stages (400 MB)


def pareto_dp(instance: WindowInstance, deadline: Deadline | None = None) -> tuple[FrontPoint, ...]:
    """The exact front by the structured dynamic program of the module docstring.

    Bounds prune: every reachable pair completed by the zero-request fill is a feasible
    point, so the non-dominated completions seen so far are incumbents; a pair whose
    optimistic final point (all remaining requests added, capped by the capacity) is
    weakly dominated by an incumbent cannot give a new front vector and is dropped.
    """
    from iosched.models._window_kernels import merge_shifted  # numba: loaded on the first front only

    nodes, bbs = instance.nodes(), instance.bbs()
    N, Bc = instance.capacity.nodes, instance.capacity.burst_buffer
    zero = np.flatnonzero(bbs == 0)
    withbb = np.flatnonzero((bbs > 0) & (bbs <= Bc) & (nodes <= N))
    withbb = withbb[np.argsort(-bbs[withbb], kind="stable")]  # big requests first: the bounds bite sooner
    # (nodes, BB) pairs are packed into one int64 key: count BB in units of the requests' gcd
    # (exact: a sum of multiples of g fits Bc iff it fits g * floor(Bc / g)), capped by all requests
    unit = int(np.gcd.reduce(bbs[withbb])) if len(withbb) else 1
    bbs = bbs // unit
    Bc = min(Bc // unit, int(bbs[withbb].sum()))
    if (N + 1) * (Bc + 1) >= 2**62:
        raise ParameterError(f"the exact front packs (nodes, burst buffer) into 63 bits: capacity.nodes = {N} and "
                             f"capacity.burst_buffer = {instance.capacity.burst_buffer} (in units of {unit}) are too "
                             "fine; count burst buffer in coarser units or set granularity")
    best_fill, via = _fill_table(nodes[zero], N, deadline)
    stride = Bc + 1
    rest_n = np.concatenate([np.cumsum(nodes[withbb][::-1])[::-1], [0]]) + int(best_fill[N])
    rest_b = np.concatenate([np.cumsum(bbs[withbb][::-1])[::-1], [0]])
    stages = [np.zeros(1, dtype=np.int64)]
    kept = 1  # keys held over all stages (8 bytes each), to rebuild the subsets
    incumbents: dict[tuple[int, int], tuple[int, int]] = {}  # vector -> (stage, key) reaching it
    for s in range(len(withbb) + 1):
        _check(deadline, "two-objective")
        if s:
            i = withbb[s - 1]
            keys = merge_shifted(stages[-1], int(nodes[i]) * stride + int(bbs[i]), int(nodes[i]), int(bbs[i]),
                                  N, Bc, stride)
        else:
            keys = stages[0]
        n, b = keys // stride, keys % stride
        total = n + best_fill[N - n]
        vectors = [(int(total[k]), int(b[k]), s, int(keys[k])) for k in _pareto_binned(total, b, N)]
        vectors += [(vn, vb, *where) for (vn, vb), where in incumbents.items()]
        tn, tb = np.array([v[0] for v in vectors]), np.array([v[1] for v in vectors])
        incumbents = {(vectors[k][0], vectors[k][1]): (vectors[k][2], vectors[k][3]) for k in _pareto(tn, tb)}
        opt_n, opt_b = np.minimum(N, n + rest_n[s]), np.minimum(Bc, b + rest_b[s])
        dominated = np.zeros(len(keys), dtype=bool)
        for vn, vb in incumbents:
            dominated |= (opt_n <= vn) & (opt_b <= vb)
        if s:
            stages.append(keys[~dominated])
            kept += len(stages[-1])
            if kept > MAX_FRONT_KEYS:
                raise ParameterError(f"the exact front kept {kept:,} (nodes, burst buffer) pairs ({8 * kept >> 20} MB) "
                                     f"after {s} of {len(withbb)} jobs with burst-buffer requests, more than "
                                     f"{MAX_FRONT_KEYS:,}: the requests are too diverse for the dynamic program "
                                     "(use bbsched-ga, or coarser burst-buffer units)")
        if dominated.all():
            break
    front = []
    for (vn, vb), (stage, key) in sorted(incumbents.items(), reverse=True):
        chosen = _subset(stages, stage, key, withbb, lambda i: int(nodes[i]) * stride + int(bbs[i]),
                         int(best_fill[N - key // stride]), via, zero, nodes)
        front.append(FrontPoint(vn, vb * unit, tuple(instance.jobs[i].id for i in sorted(chosen))))
    return tuple(front)


def _subset(stages, stage: int, key: int, order, shift, fill: int, via, zero, nodes) -> list[int]:
    """The jobs behind a dynamic program's ``key`` at ``stage``: job ``order[s - 1]`` is left out whenever
    the key was reachable without it (``shift(i)``: what taking job i adds to a key); then the
    zero-request jobs ``zero`` that make up ``fill`` nodes, read from the fill table's ``via``."""
    chosen = []
    for st in range(stage, 0, -1):
        prev = stages[st - 1]
        k = np.searchsorted(prev, key)
        if k < len(prev) and prev[k] == key:
            continue
        i = order[st - 1]
        chosen.append(int(i))
        key -= shift(i)
    while fill > 0:
        j = int(via[fill])
        chosen.append(int(zero[j]))
        fill -= int(nodes[zero[j]])
    return chosen


MAX_TIE_KEYS = 20_000_000  # partial sums one exact tie-break search may keep (8 bytes each: 160 MB)
REPAIR_KEYS = 2_000_000  # partial sums a cheap witness search may keep before it gives up (16 MB)
REPAIRS = 8  # witness jobs tried per repair, smallest difference first


class TieBreakTooLarge(RuntimeError):
    """An exact tie-break search would keep more partial sums than its cap."""


def _reach(nodes: np.ndarray, bbs: np.ndarray, jobs: np.ndarray, tn: int, tb: int,
           deadline: Deadline | None, max_keys: int | None = None) -> list[int] | None:
    """Some subset of ``jobs`` (indices) whose nodes sum to exactly tn and burst buffer to tb, or None.

    The front's dynamic program aimed at one target: zero-request jobs by a bitset, the others
    as sorted (nodes, BB) keys, dropping any partial sum that cannot reach the target; it stops
    at the first stage that holds the target. Raises TieBreakTooLarge past ``max_keys`` kept sums
    (default MAX_TIE_KEYS)."""
    from iosched.models._window_kernels import merge_shifted

    max_keys = MAX_TIE_KEYS if max_keys is None else max_keys
    if tn < 0 or tb < 0:
        return None
    zero = jobs[bbs[jobs] == 0]
    pos = jobs[(bbs[jobs] > 0) & (bbs[jobs] <= tb) & (nodes[jobs] <= tn)]
    unit = int(np.gcd.reduce(bbs[pos])) if len(pos) else 1
    if tb % unit:
        return None
    tb //= unit
    if (tn + 1) * (tb + 1) >= 2**62:
        raise ParameterError(f"the tie break packs (nodes, burst buffer) into 63 bits: {tn} nodes and {tb} burst "
                             f"buffer units of {unit} are too fine")
    pos = pos[np.argsort(-bbs[pos], kind="stable")]
    best_fill, via = _fill_table(nodes[zero], tn, deadline)
    stride = tb + 1
    rest_n = np.concatenate([np.cumsum(nodes[pos][::-1])[::-1], [0]]) + int(best_fill[tn])
    rest_b = np.concatenate([np.cumsum(bbs[pos][::-1] // unit)[::-1], [0]])
    stages, kept = [np.zeros(1, dtype=np.int64)], 1

    def hit(keys):
        n, b = keys // stride, keys % stride
        return np.flatnonzero((b == tb) & (best_fill[tn - n] == tn - n))

    found = hit(stages[0])
    for s, i in enumerate(pos, start=1):
        if len(found):
            break
        _check(deadline, "tie-break")
        keys = merge_shifted(stages[-1], int(nodes[i]) * stride + int(bbs[i]) // unit, int(nodes[i]),
                             int(bbs[i]) // unit, tn, tb, stride)
        n, b = keys // stride, keys % stride
        stages.append(keys[(n + rest_n[s] >= tn) & (b + rest_b[s] >= tb)])
        kept += len(stages[-1])
        if kept > max_keys:
            raise TieBreakTooLarge(f"an exact tie-break search kept more than {max_keys:,} partial sums")
        found = hit(stages[-1])
    if not len(found):
        return None
    key = int(stages[-1][found[0]])
    return _subset(stages, len(stages) - 1, key, pos, lambda i: int(nodes[i]) * stride + int(bbs[i]) // unit,
                   tn - key // stride, via, zero, nodes)


def _construct(nodes: np.ndarray, bbs: np.ndarray, pool: np.ndarray, tn: int, tb: int,
               deadline: Deadline | None) -> list[int] | None:
    """Some subset of ``pool`` summing to exactly (tn, tb), found cheaply where such subsets abound:
    take jobs with a request greedily while they fit (most burst buffer per node first, which leaves
    nodes for the zero-request jobs; then largest request first; then a seeded random order),
    then complete the remainder by a small exact search over the jobs not taken, giving back the
    last greedy jobs one by one when it fails; None when nothing is found (which proves nothing)."""
    rng = np.random.default_rng(0)
    pos = pool[bbs[pool] > 0]  # the zero-request jobs are left to the exact search, which fills nodes with them
    orders = [pos[np.argsort(-bbs[pos] / nodes[pos], kind="stable")], pos[np.argsort(-bbs[pos], kind="stable")],
              rng.permutation(pos)]
    for order in orders:
        taken, rn, rb = [], tn, tb
        for k in order:
            if nodes[k] <= rn and bbs[k] <= rb:
                taken.append(int(k))
                rn, rb = rn - int(nodes[k]), rb - int(bbs[k])
        for back in range(min(len(taken), REPAIRS) + 1):
            if back:
                k = taken.pop()
                rn, rb = rn + int(nodes[k]), rb + int(bbs[k])
            left = np.setdiff1d(pool, taken, assume_unique=True)
            try:
                rest = _reach(nodes, bbs, left, rn, rb, deadline, REPAIR_KEYS)
            except TieBreakTooLarge:
                break
            if rest is not None:
                return taken + rest
    return None


def _repair(nodes: np.ndarray, bbs: np.ndarray, witness: set[int], i: int, rest: np.ndarray,
            deadline: Deadline | None) -> set[int] | None:
    """A witness for taking job ``i``: ``witness`` (jobs after i completing the sums without i) with
    one of its jobs d swapped for jobs A of ``rest`` (after i, outside the witness) such that
    sums(A) = sums(d) - sums(i); None when no such swap is found cheaply (which proves nothing)."""
    ni, bi = int(nodes[i]), int(bbs[i])
    cands = [d for d in witness if nodes[d] >= ni and bbs[d] >= bi]
    cands.sort(key=lambda d: (int(bbs[d]) - bi, int(nodes[d]) - ni))
    for d in cands[:REPAIRS]:
        try:
            added = _reach(nodes, bbs, rest, int(nodes[d]) - ni, int(bbs[d]) - bi, deadline, REPAIR_KEYS)
        except TieBreakTooLarge:
            continue
        if added is not None:
            return (witness - {d}) | set(added)
    pool = np.sort(np.concatenate([rest, np.fromiter(witness, dtype=np.int64, count=len(witness))]))
    built = _construct(nodes, bbs, pool, int(nodes[list(witness)].sum()) - ni, int(bbs[list(witness)].sum()) - bi,
                       deadline)
    return None if built is None else set(built)


def earliest_subset(instance: WindowInstance, point: FrontPoint, deadline: Deadline | None = None
                    ) -> tuple[FrontPoint, int]:
    """``point`` with, among all subsets at its (nodes, BB) sums, the one with jobs nearest the front
    of the window (the paper's tie rule): the largest 0/1 vector in window order, built job by job,
    taking a job whenever the rest of the window can still complete the sums, and the number of
    window positions the rule was proved for (all of them, unless a search outgrew its cap).

    Each decision is proved: a job is taken on a witness (a subset of the later jobs completing the
    sums: the current witness repaired by a swap, found by small searches, else an exact search)
    and left out only when an exact search finds no completion. A search that would keep more than
    MAX_TIE_KEYS partial sums stops the rule there: the later jobs are the current witness (a
    subset at the point, not the rule's). Two objectives only (with SSD classes the point is
    returned as it is). Raises FrontTimeLimit past the deadline, ParameterError where the sums do
    not pack into 63 bits."""
    if instance.has_ssd:
        return point, len(instance.jobs)
    nodes, bbs = instance.nodes(), instance.bbs()
    index = {j.id: i for i, j in enumerate(instance.jobs)}
    witness = {index[j] for j in point.jobs}  # jobs after the current one completing the sums
    tn, tb, w = point.nodes, point.burst_buffer, len(nodes)
    chosen: list[int] = []
    outside = np.ones(w, dtype=bool)  # not in the witness
    outside[list(witness)] = False
    for i in range(w):
        if i not in witness:
            if nodes[i] > tn or bbs[i] > tb:
                continue
            rest = i + 1 + np.flatnonzero(outside[i + 1:])
            repaired = _repair(nodes, bbs, witness, i, rest, deadline)
            if repaired is None:
                try:
                    found = _reach(nodes, bbs, np.arange(i + 1, w), tn - int(nodes[i]), tb - int(bbs[i]), deadline)
                except TieBreakTooLarge:
                    jobs = sorted(chosen) + sorted(witness)
                    return replace(point, jobs=tuple(instance.jobs[k].id for k in jobs)), i
                if found is None:
                    continue
                repaired = set(found)
            witness = repaired
            outside[:] = True
            outside[list(witness)] = False
        witness.discard(i)
        chosen.append(i)
        tn, tb = tn - int(nodes[i]), tb - int(bbs[i])
    return replace(point, jobs=tuple(instance.jobs[i].id for i in chosen)), w


# --- the SSD extension: four objectives ------------------------------------------------------------

MAX_SSD_STATES = 4_000_000


def _placed_ssd(counts: np.ndarray, class_nodes: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows of nodes per SSD category (the smallest class a job may use): whether they all fit
    on the classes, and the SSD GB of the nodes they take, largest category first, each on the
    smallest classes it may use (the placement of :func:`ssd_placement`)."""
    above = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1]  # nodes needing class k or larger
    fits = np.all(above <= np.cumsum(class_nodes[::-1])[::-1], axis=1)
    free = np.broadcast_to(class_nodes, counts.shape).copy()
    used = np.zeros(len(counts), dtype=np.int64)
    for c in range(counts.shape[1] - 1, -1, -1):
        left = counts[:, c].copy()
        for k in range(c, counts.shape[1]):
            take = np.minimum(left, free[:, k])
            free[:, k] -= take
            left -= take
            used += take * sizes[k]
    return fits, used


def pareto_ssd(instance: WindowInstance, deadline: Deadline | None = None) -> tuple[FrontPoint, ...]:
    """The exact four-objective front (most nodes, BB, requested SSD; least wasted SSD).

    A dynamic program over states (c_0, ..., c_{K-1}, B, R) of the subsets of the jobs seen so
    far: c_k the nodes of jobs whose category is k (the smallest SSD class they may use), B the
    burst buffer, R the SSD requested. With the placement of :func:`ssd_placement` whether a
    subset fits and the SSD its nodes take (hence its waste) depend on the counts c only, so a
    subset's feasibility and vector (sum c, B, R, SSD taken - R) are functions of its state and
    the state of a union of disjoint subsets is the sum of theirs.

    Jobs with a burst buffer request come first, largest first, so that the BB still to come,
    rest_B, shrinks fast (zero after them). A state q is dropped at a stage when a kept state p
    there has the same counts, B_p >= B_q, R_p >= R_q, and B_p = B_q or Bc - B_p >= rest_B.
    Proof that no front vector is lost: any completion T (later jobs) that fits q fits p (same
    counts, hence same node and class use; B_p + B_T is B_q + B_T or at most B_p + rest_B <= Bc),
    and p + T has the same nodes and SSD taken, B and R at least those of q + T, so it weakly
    dominates q + T. The relation is transitive (B_p = B_q makes p as free as q), so by
    induction over the stages every front vector v = vector(q + T) is weakly dominated by the
    vector of a kept final state, hence equal to it; the non-dominated vectors of the final
    states are the front. Identical jobs collapse into one state per count taken.

    Each stage's states are one array sorted by the counts, then B and R descending; adding a job
    keeps that order, so a stage is one merge of the states with the states plus the job, which
    drops the dominated rows as it goes (:func:`~iosched.models._window_kernels.ssd_stage`);
    each state remembers its parent, to rebuild its subset. Random windows of 40 jobs (S6)
    keep about 10^5 states where the plain enumeration kept 10^7. Past MAX_SSD_STATES states at
    one stage it raises ParameterError (about 1 GB at 4 million states, two classes).
    """
    from iosched.models._window_kernels import nondominated_sorted, ssd_stage  # numba: on the first front only

    jobs = instance.jobs
    sizes = np.array(sorted(c.ssd for c in instance.capacity.ssd_classes), dtype=np.int64)
    class_nodes = np.array([c.nodes for c in sorted(instance.capacity.ssd_classes, key=lambda c: c.ssd)],
                           dtype=np.int64)
    K, N, Bc = len(sizes), instance.capacity.nodes, instance.capacity.burst_buffer
    nodes, bbs = instance.nodes(), instance.bbs()
    order = np.lexsort((-nodes, -bbs))  # largest burst buffer first, then most nodes
    rest_b = np.concatenate([np.cumsum(bbs[order][::-1])[::-1], [0]])
    tail_cap = np.cumsum(class_nodes[::-1])[::-1].copy()  # nodes of class k or larger
    states = np.zeros((1, K + 2), dtype=np.int64)  # nodes per category, BB, SSD requested
    parents, took = [], []
    for s, i in enumerate(order, start=1):
        _check(deadline, "SSD")
        delta = np.zeros(K + 2, dtype=np.int64)
        delta[int(np.searchsorted(sizes, jobs[i].ssd_per_node))] = jobs[i].nodes
        delta[K], delta[K + 1] = bbs[i], jobs[i].ssd_per_node * jobs[i].nodes
        states, parent, with_i = ssd_stage(states, delta, tail_cap, N, Bc, Bc - int(rest_b[s]))
        parents.append(parent)
        took.append(with_i)
        if len(states) > MAX_SSD_STATES:
            raise ParameterError(f"the exact SSD front passed {MAX_SSD_STATES:,} states at job {s} of "
                                 f"{len(jobs)}; use a smaller window")
    _check(deadline, "SSD")
    _, placed = _placed_ssd(states[:, :K], class_nodes, sizes)
    V = np.column_stack([states[:, :K].sum(axis=1), states[:, K], states[:, K + 1], states[:, K + 1] - placed])
    where = np.lexsort(-V[:, ::-1].T)  # lexicographically descending: only an earlier vector can dominate
    V = V[where]
    first = np.ones(len(V), dtype=bool)  # one state per vector
    first[1:] = np.any(V[1:] != V[:-1], axis=1)
    V, where = V[first], where[first]
    keep = nondominated_sorted(V)
    V, k = V[keep], where[keep]
    chosen = np.zeros((len(k), len(jobs)), dtype=bool)
    for st in range(len(order) - 1, -1, -1):
        chosen[:, order[st]] = took[st][k]
        k = parents[st][k]
    return tuple(FrontPoint(int(v[0]), int(v[1]), tuple(jobs[j].id for j in np.flatnonzero(row)), int(v[2]),
                            int(-v[3])) for v, row in zip(V, chosen))


# --- ε-constraint cross-checks ------------------------------------------------------------------


def build_milp(instance: WindowInstance, min_bb: int = 0, fix_nodes: int | None = None,
               max_nodes: int | None = None, covers: bool = False) -> ConcreteModel:
    """The window MILP: x_i binary; Σ n_i x_i <= N (and <= ``max_nodes``), min_bb <= Σ b_i x_i <= B; maximise
    nodes, or with ``fix_nodes`` the nodes fixed and the burst buffer maximised (second lexicographic step).
    With ``covers`` the :func:`~iosched.models.covers.cardinality_cuts` of both capacity rows are added
    (``cover_nodes``, ``cover_bb``): valid for every selection, so the optimum is unchanged and the LP
    relaxation no weaker."""
    nodes, bbs = instance.nodes(), instance.bbs()
    m = pe.ConcreteModel(name="window")
    m.J = pe.RangeSet(0, len(nodes) - 1)
    m.x = pe.Var(m.J, domain=pe.Binary, doc="job j starts")
    m.used_nodes = pe.Expression(expr=sum(int(nodes[j]) * m.x[j] for j in m.J))
    m.used_bb = pe.Expression(expr=sum(int(bbs[j]) * m.x[j] for j in m.J))
    cap = instance.capacity.nodes if max_nodes is None else min(instance.capacity.nodes, max_nodes)
    m.nodes = pe.Constraint(expr=m.used_nodes <= cap)
    m.bb = pe.Constraint(expr=pe.inequality(min_bb, m.used_bb, instance.capacity.burst_buffer))
    if covers:
        for name, sizes, c in (("cover_nodes", nodes, cap), ("cover_bb", bbs, instance.capacity.burst_buffer)):
            rows = cardinality_cuts(sizes, c)
            setattr(m, name, pe.Constraint(range(len(rows)), rule=lambda m, k, rows=rows: (
                sum(m.x[i] for i in rows[k][0]) <= rows[k][1])))
    if fix_nodes is None:
        m.obj = pe.Objective(expr=m.used_nodes, sense=pe.maximize)
    else:
        m.fixed = pe.Constraint(expr=m.used_nodes == fix_nodes)
        m.obj = pe.Objective(expr=m.used_bb, sense=pe.maximize)
    return m


def _point(instance, chosen) -> FrontPoint:
    nodes, bbs = instance.nodes(), instance.bbs()
    return FrontPoint(int(sum(nodes[chosen])), int(sum(bbs[chosen])),
                      tuple(instance.jobs[i].id for i in sorted(chosen)))


def pareto_milp(instance: WindowInstance, profile: Profile) -> tuple[list[FrontPoint], bool, str]:
    """ε-constraint on the profile's backend: (the front points proved, whether the whole front was, why not).

    Where the second step (nodes fixed at the first's optimum) is infeasible, the first's optimum was not
    reachable by a 0/1 selection: the backend's integrality tolerance let a job in by a hair (Gurobi's 1e-5
    on random:0:30, front point 5). The first step is then solved again below that value."""
    front: list[FrontPoint] = []
    min_bb, cap = 0, None
    deadline, exact = Deadline(profile.time_limit), replace(profile, rel_gap=0.0)  # a point is proved at 0 gap
    top_bb = min(int(instance.bbs().sum()), instance.capacity.burst_buffer)  # above, no selection fits
    while min_bb <= top_bb:
        first = solve_pyomo(build_milp(instance, min_bb, max_nodes=cap), deadline.limit(exact), load=False)
        if first.status == Status.INFEASIBLE:
            break
        if first.status != Status.OPTIMAL:
            return front, False, (f"{profile.solver} did not prove front point {len(front) + 1} optimal "
                                  f"({first.message})")
        assert first.objective is not None  # (an optimal outcome has its value)
        second = build_milp(instance, min_bb, fix_nodes=round(first.objective))
        out = solve_pyomo(second, deadline.limit(exact))
        if out.status == Status.INFEASIBLE and round(first.objective) > 0:  # see above: no selection has that many
            cap = round(first.objective) - 1
            continue
        if out.status != Status.OPTIMAL:
            return front, False, f"{profile.solver} did not prove front point {len(front) + 1} optimal ({out.message})"
        chosen = [j for j in second.J if pe.value(second.x[j]) > 0.5]
        front.append(_point(instance, chosen))
        min_bb = front[-1].burst_buffer + 1
    return front, True, ""


def build_cpsat(instance: WindowInstance, min_bb: int = 0, fix_nodes: int | None = None):
    """The window MILP's model on CP-SAT (booleans ``x{j}``, in ``model.named["x"]``): within the capacities
    and at least ``min_bb`` burst buffer, maximise nodes, or with ``fix_nodes`` the nodes fixed and the
    burst buffer maximised."""
    from ortools.sat.python import cp_model

    nodes, bbs = instance.nodes().tolist(), instance.bbs().tolist()
    model: Any = cp_model.CpModel()  # (Any: it carries its variables by name in ``named``, as every CP-SAT builder's)
    model.name = "window-cpsat"
    x = [model.new_bool_var(f"x{j}") for j in range(len(nodes))]
    used_n = sum(n * v for n, v in zip(nodes, x))
    used_b = sum(b * v for b, v in zip(bbs, x))
    model.add(used_n <= instance.capacity.nodes)
    model.add(used_b <= instance.capacity.burst_buffer)
    model.add(used_b >= min_bb)
    if fix_nodes is None:
        model.maximize(used_n)
    else:
        model.add(used_n == fix_nodes)
        model.maximize(used_b)
    model.named = {"x": x}
    return model


def pareto_cpsat(instance: WindowInstance, profile: Profile) -> tuple[list[FrontPoint], bool, str]:
    """ε-constraint on CP-SAT: (the front points proved, whether the whole front was, why not)."""
    front: list[FrontPoint] = []
    min_bb = 0
    deadline, exact = Deadline(profile.time_limit), replace(profile, rel_gap=0.0)
    while True:
        best = None
        for step in (0, 1):  # most nodes, then most burst buffer at those nodes
            model = build_cpsat(instance, min_bb, None if step == 0 else best)
            x = model.named["x"]
            out, solver = solve_cpsat(model, deadline.limit(exact))
            if out.status == Status.INFEASIBLE:
                return front, True, ""
            if out.status != Status.OPTIMAL:
                return front, False, f"CP-SAT did not prove front point {len(front) + 1} optimal ({out.message})"
            assert out.objective is not None  # (an optimal outcome has its value)
            best = round(out.objective)
        chosen = [j for j, v in enumerate(x) if solver.value(v)]
        front.append(_point(instance, chosen))
        min_bb = front[-1].burst_buffer + 1


def epsilon_front(instance: WindowInstance, engine: str, profile: Profile | str | None = None):
    """The milp / cpsat ε-constraint front within the profile's time limit (for all the points):
    (the points proved optimal, whether they are the whole front, why not)."""
    if instance.has_ssd:
        raise ParameterError(f"the four-objective SSD front has the dp engine only, got {engine!r}")
    prof = load_profile(profile) if isinstance(profile, str) else profile or load_profile("default")
    if engine == "milp":
        return pareto_milp(instance, prof)
    if engine == "cpsat":
        return pareto_cpsat(instance, prof)
    raise ParameterError(f"engine must be dp, milp or cpsat, got {engine!r}")


_FRONTS: dict[WindowInstance, tuple[FrontPoint, ...]] = {}  # exact fronts by instance (the newest 64)


def clear_front_cache() -> None:
    """Forget the cached exact fronts (the harness does before each task, so a task's time is its own)."""
    _FRONTS.clear()


def pareto_front(instance: WindowInstance, engine: str = "dp", profile: Profile | str | None = None,
                 time_limit: float | None = None) -> list[FrontPoint]:
    """The exact front, most nodes first, one subset per point (dp: cached per instance).

    With SSD classes it is the four-objective front of :func:`pareto_ssd` (engine dp only).
    The dp engine raises FrontTimeLimit after ``time_limit`` seconds (None: no limit); the
    milp / cpsat engines share the profile's time limit over their solves and raise
    RuntimeError when it stops them before the whole front is proved (:func:`epsilon_front`
    gives the part that was).
    """
    if engine == "dp":
        if instance not in _FRONTS:
            deadline = Deadline(time_limit) if time_limit is not None else None
            front = pareto_ssd(instance, deadline) if instance.has_ssd else pareto_dp(instance, deadline)
            while len(_FRONTS) >= 64:
                del _FRONTS[next(iter(_FRONTS))]
            _FRONTS[instance] = front
        return list(_FRONTS[instance])
    front, complete, why = epsilon_front(instance, engine, profile)
    if not complete:
        raise RuntimeError(why)
    return front

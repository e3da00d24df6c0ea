"""The exact forwarding method over every allocation (``exact``): branch and bound on the jobs' I/O times.

**The problem as thresholds.** An allocation is scored through its node configurations only
(:mod:`iosched.models.forwarding_every`). Give every job to place a threshold theta_j and every running
job one, theta_r >= before_r (its time without the jobs placed). theta is *feasible* when one
configuration per usable node keeps every part time within its job's threshold and gives every job to
place all its compute nodes. Then

    OPT = min { F(theta) = sum_j theta_j + sum_r (theta_r - before_r) : theta feasible },

because an allocation's own times are a feasible theta of F equal to its score, and a feasible theta
has an allocation whose times are within it (F is increasing). Feasibility is monotone (a larger theta
allows more configurations), so this is a monotonic optimisation problem (Tuy, SIAM J. Optim. 11(2),
2000), solved by branch, reduce and bound over boxes of thresholds. Each theta_d ranges over a finite
sorted set: the part times it can take (below), so the optimum is reached exactly.

**Reductions, each valid for every allocation scoring below the incumbent UB:**

* LB_j: job j's least time over every allocation of j alone (:func:`own_best`); T_j >= LB_j whatever
  the others do (monotonicity: removing users never slows a part). The rest of an allocation scores at
  least LBrest_j = max(sum_{i != j} LB_i, the problem's bound without j), so an allocation below UB
  has T_j <= U_j = UB - LBrest_j, and each running job's delay <= D = UB - max(sum LB_j, the problem's
  bound).
* A configuration in which any user's part time exceeds its budget (U_j, or before_r + D) appears in
  no allocation below UB; by monotonicity neither does any configuration above it. So on each class of
  interchangeable nodes job j has at most cmax_j compute nodes (alone, with the class's running users,
  within budgets), and a set of jobs may share a node only if the configuration of one compute node
  each is within budgets (**a job whose shared time exceeds its budget must be alone**: N-1 beside a
  high-bandwidth job, 1.3 x its link time, in Figure 4). The tables enumerate the rest
  (:func:`tables`), with every time the evaluator's own (:mod:`iosched.models.forwarding_configs`).
* Thresholds: the optimum's T_j is one of j's part times in the tables (and >= LB_j); T_r is before_r
  or one of r's part times above it. A running job whose part times in the tables never exceed before_r
  is never delayed and carries no threshold.

**Feasibility of theta** is a covering problem over the classes: the configurations within theta form
a down-set, its maximal points along one job are read off each table, and the dynamic program of
:mod:`iosched.models.forwarding_cover` decides whether one per node covers every job (**integral
groups**: nodes and compute nodes are counted whole).

**Branch and bound.** A box lo <= theta <= hi (indices into the sorted sets) is pruned when F(lo) >=
UB, or when hi is infeasible (then no point of it is, by monotonicity). Otherwise each lo_d is raised to
the least value at which (lo_d, hi_others) is feasible (a binary search; every feasible point of the box
lies above it), hi is cut to what UB leaves, a feasible lo is an allocation of value F(lo) (a new
incumbent, its box solved), and the box is split in halves along its widest threshold. Boxes are taken
by least F(lo): at any moment min(UB, least F(lo) of the open boxes) is a bound valid for every
allocation, which a time-limited run reports.

**The incumbent** is the best of fixed, DFRA, MCKP, round-robin and the local search, polished one job at a
time (:mod:`iosched.models.forwarding_polish`); the method stops as soon as it meets max(the problem's
bound, sum_j LB_j). **Where the tables are too large** (many jobs that may share nodes) the search runs on
a core of the jobs instead (:func:`core_bound`): its bound plus the other jobs' LB_j is valid for every
allocation, and its allocation, the other jobs fitted around it, may improve the incumbent; the result
is then optimal only where the two meet.

**Exact over** every allocation the evaluator accepts, for total_io_time; where the search finishes,
status optimal with its bound; past the time limit (checked between oracle calls, table blocks and
program steps), the incumbent and the least F(lo) of the open boxes.

**Floating point.** Part times are monotone in exact arithmetic; the evaluator's rounding can break
that by a few units in the last place (a part at its link speed takes V c / n / (c io / n B_c)). Every
comparison with a threshold allows a relative 1e-12, which only enlarges what is allowed (the bound
stays valid), and the bound reported is lowered by the same relative 1e-12.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal, overload

import numpy as np

from iosched.core import EVERY_SOLUTION, MethodOutput, RunContext, Status, register
from iosched.evaluate.forwarding import Allocation, evaluate, machine_times, running_alone, trait_indices
from iosched.heuristics.forwarding import search
from iosched.instances.forwarding import ForwardingInstance, Job
from iosched.models.forwarding import best_start, lower_bound
from iosched.models.forwarding_configs import NodeClass, Users, node_classes, part_times, users
from iosched.models.forwarding_cover import TooLarge, Witness, cover
from iosched.models.forwarding_every import STARTS
from iosched.models.forwarding_polish import insert_rest, polish, usable_nodes
from iosched.solvers import Deadline
from iosched.validate import Integer, TimeLimit

SLACK = 1e-12  # relative allowance of every threshold comparison (module docstring)
BLOCK = 200_000  # configurations timed at once while the tables are built
SCOPE_EXACT = "every allocation the evaluator accepts"
Rows = Annotated[int, Integer(1, 10**8)]


def _within(times: np.ndarray, limit: float | np.ndarray) -> np.ndarray:
    """Absent (NaN) or at most ``limit`` (1 + SLACK)."""
    return np.logical_not(times > np.asarray(limit) * (1 + SLACK))


def problem_bound(instance: ForwardingInstance) -> float:
    """The problem's bound on total_io_time (:func:`iosched.models.forwarding.lower_bound`), valid for every
    allocation."""
    bound = lower_bound(instance, "total_io_time")
    assert bound is not None  # (None only for an objective outside MODEL_OBJECTIVES)
    return bound


# --- lower bounds per job ------------------------------------------------------------------------------


def own_best(instance: ForwardingInstance, job: Job, classes: list[NodeClass]) -> float:
    """Job ``job``'s least I/O time over every allocation in which it is the only job placed: a lower bound on
    its time in every allocation (monotonicity). On each class its part time with c compute nodes (c = 1 ..
    n, beside the class's running users) is non-decreasing in c, so within a threshold it may have the first
    ones, and the least threshold whose classes hold n compute nodes is found by bisection over those times."""
    counts = np.arange(1, job.nodes + 1)[:, None]
    times = [part_times(users(instance, [job], cls), cls.capacity, instance.interference.slowdown, counts)[:, 0]
             for cls in classes]
    values = np.unique(np.concatenate(times))
    lo, hi = 0, len(values) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        held = sum(len(cls.nodes) * int(np.cumprod(_within(t, values[mid])).sum()) for cls, t in zip(classes, times))
        if held >= job.nodes:
            hi = mid
        else:
            lo = mid + 1
    return float(values[lo])


def rest_bound(instance: ForwardingInstance, skip: int, own: list[float]) -> float:
    """A lower bound on the score of every allocation less job ``skip``'s time: the others' own bests, or the
    problem's bound for the instance without that job (removing a job never slows the others)."""
    others = sum(b for i, b in enumerate(own) if i != skip)
    if len(instance.jobs) == 1:
        return 0.0
    rest = replace(instance, jobs=tuple(j for i, j in enumerate(instance.jobs) if i != skip))
    return max(others, problem_bound(rest))


# --- the tables -----------------------------------------------------------------------------------------


@dataclass
class Table:
    """One class and one maximal set of jobs that may share its nodes: the grid of their compute nodes
    (0 .. cmax each), every user's time at each point (placed jobs, then the class's running users) and
    whether the point is within the budgets."""

    cls: int
    jobs: tuple[int, ...]
    shape: tuple[int, ...]
    times: np.ndarray  # (points, len(jobs) + running users), NaN where a job is absent
    within: np.ndarray  # (points,)


def tables(instance: ForwardingInstance, jobs: list[Job], classes: list[NodeClass], budget: np.ndarray,
           running_budget: dict[str, float], max_rows: int, deadline: Deadline) -> list[Table]:
    """Per class, per maximal set of jobs that may share a node within the budgets, the grid of
    configurations with each job at most cmax (module docstring)."""
    out, rows = [], 0
    table = instance.interference.slowdown
    for ci, cls in enumerate(classes):
        if deadline.expired():
            raise TimeoutError(f"the configuration tables of {ci} of {len(classes)} node classes were built")
        u = users(instance, jobs, cls)
        limits = np.concatenate([budget, [running_budget[r.id] for r, _ in cls.running]])
        cmax = []
        for j, job in enumerate(jobs):
            counts = np.zeros((job.nodes, len(jobs)), dtype=np.int64)
            counts[:, j] = np.arange(1, job.nodes + 1)
            ok = _within(part_times(u, cls.capacity, table, counts), limits).all(axis=1)
            cmax.append(int(np.cumprod(ok).sum()))
        groups = _maximal_sets(u, cls.capacity, table, cmax, limits, max_rows - rows, deadline)
        for group in groups:
            shape = tuple(cmax[j] + 1 for j in group)
            size = math.prod(shape)
            rows += size
            if rows > max_rows:
                raise TooLarge(f"the configuration tables pass max_rows={max_rows} (class {ci} of "
                               f"{len(classes)}, jobs {[jobs[j].id for j in group]}: {size} configurations)")
            grid = np.stack(np.meshgrid(*[np.arange(s) for s in shape], indexing="ij"), axis=-1).reshape(-1, len(group))
            keep = list(group) + list(range(len(jobs), len(jobs) + len(cls.running)))
            times, within = [], []
            for a in range(0, size, BLOCK):  # a block of configurations at a time, the deadline checked between
                if deadline.expired():
                    raise TimeoutError(f"the configuration tables of {ci} of {len(classes)} node classes were built")
                configs = np.zeros((min(size - a, BLOCK), len(jobs)), dtype=np.int64)
                configs[:, list(group)] = grid[a:a + BLOCK]
                block = part_times(u, cls.capacity, table, configs)
                times.append(block[:, keep])
                within.append(_within(block, limits).all(axis=1))
            out.append(Table(ci, tuple(group), shape, np.vstack(times), np.concatenate(within)))
    return out


def _maximal_sets(u: Users, capacity: float, table: tuple[tuple[float, ...], ...], cmax: list[int],
                  limits: np.ndarray, rows: int, deadline: Deadline) -> list[tuple[int, ...]]:
    """The maximal sets of jobs (with cmax > 0) whose configuration of one compute node each is within
    ``limits``; a set that fails has no superset that passes (monotonicity), so they grow level by level.
    TooLarge as soon as their grids would pass ``rows`` configurations: first a greedy set (largest cmax
    first), whose grid lies inside a maximal set's, then the count of sets (each has a grid of at least two
    points)."""
    k = len(cmax)
    candidates = [j for j in range(k) if cmax[j]]

    def fit(groups: list[tuple[int, ...]]) -> np.ndarray:
        configs = np.zeros((len(groups), k), dtype=np.int64)
        for g, group in enumerate(groups):
            configs[g, list(group)] = 1
        return np.all(_within(part_times(u, capacity, table, configs), limits), axis=1)

    greedy: tuple[int, ...] = ()
    for j in sorted(candidates, key=lambda j: -cmax[j]):
        if fit([greedy + (j,)])[0]:
            greedy += (j,)
        if math.prod(cmax[i] + 1 for i in greedy) > rows:
            raise TooLarge(f"{len(greedy)} jobs that may share one node would need "
                           f"{math.prod(cmax[i] + 1 for i in greedy):.3g} configurations, past max_rows")
    found: list[tuple[int, ...]] = []
    level: list[tuple[int, ...]] = [(j,) for j in candidates]
    count = len(candidates)
    while level:
        if deadline.expired():
            raise TimeoutError("the time limit stopped the enumeration of the jobs that may share a node")
        grown = [(g, j) for g in level for j in candidates if j > g[-1]]
        count += len(grown)
        if 2 * count > rows:
            raise TooLarge(f"more than {count} sets of jobs may share one node, past max_rows")
        ok = fit([g + (j,) for g, j in grown]) if grown else np.zeros(0, dtype=bool)
        extended = {g for (g, _), good in zip(grown, ok) if good}
        found += [g for g in level if g not in extended]
        level = [g + (j,) for (g, j), good in zip(grown, ok) if good]
    found.sort(key=len, reverse=True)
    kept: list[set[int]] = []
    for g in found:  # largest first: a set inside a kept one is not maximal
        if not any(set(g) <= h for h in kept):
            kept.append(set(g))
    return [tuple(sorted(h)) for h in kept]


# --- the search -----------------------------------------------------------------------------------------


@dataclass
class Dims:
    """The thresholds searched: one per job to place, one per running job that may be delayed."""

    values: list[np.ndarray]  # sorted candidate values per threshold
    running: list[str]  # running job per threshold past the jobs to place
    offset: float  # sum of those running jobs' before_r (subtracted in F)

    def score(self, index: Sequence[int]) -> float:
        return float(sum(v[i] for v, i in zip(self.values, index))) - self.offset


class Search:
    """The feasibility oracle over the tables (module docstring) and the branch and bound."""

    def __init__(self, instance: ForwardingInstance, jobs: list[Job], classes: list[NodeClass], tabs: list[Table],
                 dims: Dims, deadline: Deadline):
        self.instance, self.jobs, self.classes, self.tables, self.dims = instance, jobs, classes, tabs, dims
        self.deadline = deadline
        self.need = np.array([j.nodes for j in jobs], dtype=np.int64)
        self.checks = 0
        self.boxes = 0
        self.max_work = 10**9

    def allowed(self, theta: np.ndarray) -> list[tuple[int, int, np.ndarray]]:
        """Per class: its index, its node count and the maximal configurations within ``theta`` along each
        table's last job (the dynamic program needs no more)."""
        k = len(self.jobs)
        limit = dict(zip(self.dims.running, theta[k:]))
        per_class: dict[int, list[np.ndarray]] = {}
        for t in self.tables:
            cls = self.classes[t.cls]
            limits = np.concatenate([theta[list(t.jobs)], [limit.get(r.id, np.inf) for r, _ in cls.running]])
            ok = (t.within & _within(t.times, limits).all(axis=1)).reshape(t.shape)
            longest = np.cumprod(ok, axis=-1).sum(axis=-1) - 1  # the last job's most compute nodes, -1: none
            keep = longest >= 0
            for axis in range(longest.ndim):  # a head is dominated by the next one along any job if that allows as many
                after = np.full_like(longest, -1)
                after[(slice(None),) * axis + (slice(0, -1),)] = longest[(slice(None),) * axis + (slice(1, None),)]
                keep &= after < longest
            heads = np.argwhere(keep)
            if not len(heads):
                continue
            configs = np.zeros((len(heads), k), dtype=np.int64)
            configs[:, list(t.jobs[:-1])] = heads
            configs[:, t.jobs[-1]] = longest[tuple(heads.T)]
            per_class.setdefault(t.cls, []).append(configs)
        return [(c, len(self.classes[c].nodes), _undominated(np.unique(np.vstack(v), axis=0)))
                for c, v in sorted(per_class.items())]

    @overload
    def feasible(self, index: Sequence[int], witness: Literal[False] = False) -> bool | None: ...
    @overload
    def feasible(self, index: Sequence[int], witness: Literal[True]) -> Witness | None: ...
    def feasible(self, index: Sequence[int], witness: bool = False) -> bool | Witness | None:
        """Whether the thresholds at ``index`` are feasible; with ``witness``, the (class, configuration) of
        every node used, or None."""
        if self.deadline.expired():
            raise TimeoutError("the time limit stopped the branch and bound")
        self.checks += 1
        theta = np.array([v[i] for v, i in zip(self.dims.values, index)])
        allowed = self.allowed(theta)
        per_class = [(count, configs) for _, count, configs in allowed]
        if not witness:
            return cover(self.need, per_class, False, self.max_work, self.deadline.expired)
        found = cover(self.need, per_class, True, self.max_work, self.deadline.expired)
        if found is None:
            return None
        return [(allowed[p][0], config) for p, config in found]

    def run(self, upper: float) -> tuple[float, Witness | None, float, str | None]:
        """Branch and bound below ``upper``: (best value, its witness or None, bound valid for every
        allocation, None when finished else why it stopped: "time", or what was too large)."""
        values = self.dims.values
        top = tuple(len(v) - 1 for v in values)
        start = tuple(0 for _ in values)
        heap = [(self.dims.score(start), 0, start, top)]
        best, counter = upper, itertools.count(1)
        witness: Witness | None = None
        tolerance = SLACK * abs(upper)
        while heap:
            f, _, lo, hi = heap[0]
            if f >= best - tolerance:
                break
            self.boxes += 1
            try:
                box = self._reduce(list(lo), list(hi), f, best - tolerance)
                if box is not None and self.dims.score(box[0]) < best - tolerance and self.feasible(box[0]):
                    best, witness = self.dims.score(box[0]), self.feasible(box[0], witness=True)
                    box = None
            except TooLarge as e:
                return best, witness, f, str(e)
            except TimeoutError:
                return best, witness, f, "time"
            heapq.heappop(heap)
            if box is None or self.dims.score(box[0]) >= best - tolerance:
                continue
            lo, hi = tuple(box[0]), tuple(box[1])
            f = self.dims.score(lo)
            d = max((d for d in range(len(values)) if hi[d] > lo[d]), key=lambda d: values[d][hi[d]] - values[d][lo[d]])
            mid = (lo[d] + hi[d]) // 2
            left, right = list(hi), list(lo)
            left[d], right[d] = mid, mid + 1
            heapq.heappush(heap, (f, next(counter), tuple(lo), tuple(left)))
            heapq.heappush(heap, (self.dims.score(right), next(counter), tuple(right), tuple(hi)))
        return best, witness, best - tolerance, None

    def _reduce(self, lo: list[int], hi: list[int], f: float, upper: float) -> tuple[list[int], list[int]] | None:
        """Cut ``hi`` to what ``upper`` leaves, drop an infeasible box, raise each lo to the least feasible
        value with the others at hi (module docstring); None when the box holds nothing below ``upper``."""
        values = self.dims.values
        for d, v in enumerate(values):
            hi[d] = min(hi[d], int(np.searchsorted(v, upper - f + v[lo[d]], side="left")) - 1)
            if hi[d] < lo[d]:
                return None
        if not self.feasible(hi):
            return None
        for d in range(len(values)):
            a, b = lo[d], hi[d]
            while a < b:
                mid = (a + b) // 2
                trial = list(hi)
                trial[d] = mid
                if self.feasible(trial):
                    b = mid
                else:
                    a = mid + 1
            lo[d] = a
        return lo, hi


# --- the method -----------------------------------------------------------------------------------------


def dims_of(jobs: list[Job], classes: list[NodeClass], tabs: list[Table], own: list[float],
            before: dict[str, float]) -> Dims:
    """The sorted values each threshold can take (module docstring)."""
    values = []
    for j in range(len(jobs)):
        seen = [t.times[t.within, t.jobs.index(j)] for t in tabs if j in t.jobs]
        v = np.unique(np.concatenate(seen)) if seen else np.zeros(0)
        values.append(v[~np.isnan(v) & (v >= own[j] * (1 - SLACK))])
    running: dict[str, list[np.ndarray]] = {}
    for t in tabs:
        for k, (r, _) in enumerate(classes[t.cls].running):
            v = t.times[t.within, len(t.jobs) + k]
            running.setdefault(r.id, []).append(v[v > before[r.id]])
    names = sorted(r for r, v in running.items() if any(len(x) for x in v))
    values += [np.unique(np.concatenate([[before[r]], *running[r]])) for r in names]
    return Dims(values, names, sum(before[r] for r in names))


def allocation_of(instance: ForwardingInstance, jobs: list[Job], classes: list[NodeClass],
                  witness: Witness) -> Allocation:
    """The witness's configurations on actual nodes, each job trimmed to exactly its compute nodes (lowering a
    group keeps every time within its threshold: monotonicity)."""
    free = {c: list(cls.nodes) for c, cls in enumerate(classes)}
    groups: dict[str, list[list[int]]] = {j.id: [] for j in jobs}
    for c, config in witness:
        f = free[c].pop(0)
        for j, n in zip(jobs, config):
            if n:
                groups[j.id].append([f, int(n)])
    for j in jobs:
        extra = sum(n for _, n in groups[j.id]) - j.nodes
        for g in reversed(groups[j.id]):
            cut = min(extra, g[1])
            g[1] -= cut
            extra -= cut
    mapping = {j.id: tuple((f, n) for f, n in groups[j.id] if n) for j in jobs}
    avoid = not any(instance.node[f].anomalous for g in mapping.values() for f, _ in g)
    return Allocation(mapping, frozenset(), avoid)


def _undominated(configs: np.ndarray, limit: int = 4000) -> np.ndarray:
    """The configurations no other one covers componentwise (distinct rows; skipped past ``limit`` rows, where
    the pairwise comparison would cost more than it saves)."""
    if len(configs) > limit:
        return configs
    covered = np.zeros(len(configs), dtype=bool)
    for a in range(0, len(configs), 256):
        block = configs[a:a + 256]
        geq = np.all(configs[None, :, :] >= block[:, None, :], axis=2)
        geq[np.arange(len(block)), np.arange(a, a + len(block))] = False
        covered[a:a + len(block)] = geq.any(axis=1)
    return configs[~covered]


def threshold_search(instance: ForwardingInstance, upper: float, own: list[float], lower: float,
                     deadline: Deadline, max_rows: int) -> Search:
    """The tables and thresholds of every allocation scoring below ``upper`` (module docstring), given the jobs'
    own bests ``own`` and a bound ``lower`` valid for every allocation; TooLarge past ``max_rows``,
    TimeoutError past the deadline."""
    jobs, classes = list(instance.jobs), node_classes(instance)
    before = running_alone(instance)
    budget = np.array([upper - rest_bound(instance, i, own) for i in range(len(jobs))])
    running_budget = {r.id: before[r.id] + upper - lower for r in instance.running}
    tabs = tables(instance, jobs, classes, budget, running_budget, max_rows, deadline)
    return Search(instance, jobs, classes, tabs, dims_of(jobs, classes, tabs, own, before), deadline)


def core_bound(instance: ForwardingInstance, incumbent: Allocation, upper: float, own: list[float],
               deadline: Deadline, max_rows: int, grow: int = 3
               ) -> tuple[float, dict, tuple[Allocation, float] | None]:
    """A bound valid for every allocation from a core K of the jobs: sum_{j not in K} LB_j + the branch and
    bound's bound on the instance with only K to place. K starts as the jobs the incumbent leaves above their
    own best, and those beside a running job it delays that slow it by interference (all those beside one
    where none does), and takes up to ``grow`` more, largest links first (they compete most for capacity),
    while the tables fit and time is left; the best of those bounds (any K gives a valid one).

    Proof. Take any allocation A and remove the jobs outside K: no remaining part slows (monotonicity), so
    K's times and the running jobs' delays in A are at least those of A restricted to K, whose score on the
    instance with only K is at least OPT_K; the jobs outside K take at least their own bests. So score(A) >=
    sum_{j not in K} LB_j + OPT_K. An A below ``upper`` restricts to a score below upper - sum_{j not in K}
    LB_j, the incumbent the search on K is given, so its bound b (at most that incumbent) gives score(A) >=
    sum LB_j + b for every A. Where the search on K finds an allocation of K, the other jobs are fitted around
    it (:func:`~iosched.models.forwarding_polish.insert_rest`) and the whole is polished. Returns the bound (0
    when no core helps), what was done per core tried, and (allocation, value) when one beats ``upper``, else
    None."""
    mapping = {**{r.id: instance.groups(r) for r in instance.running}, **incumbent.mapping}
    times = machine_times(instance, mapping, list(instance.running) + list(instance.jobs))
    before = running_alone(instance)
    delayed: dict[int, list[Job]] = {}  # node -> the delayed running jobs on it
    for r in instance.running:
        if times[r.id] > before[r.id] * (1 + SLACK):
            for f, _ in instance.groups(r):
                delayed.setdefault(f, []).append(r)
    table = instance.interference.slowdown
    # job to place -> whether it slows (by interference) a delayed running job beside it
    slows: dict[str, bool | None] = {}
    for j in instance.jobs:
        beside = [r for f, _ in incumbent.mapping[j.id] for r in delayed.get(f, [])]
        slows[j.id] = any(max(table[v][a] for v in trait_indices(instance, r) for a in trait_indices(instance, j)) > 1
                          for r in beside) if beside else None
    culprits = {j for j, s in slows.items() if s} or {j for j, s in slows.items() if s is not None}
    late = [i for i, j in enumerate(instance.jobs) if times[j.id] > own[i] * (1 + SLACK) or j.id in culprits]
    others = sorted(set(range(len(instance.jobs))) - set(late),
                    key=lambda i: -instance.jobs[i].io_nodes * instance.jobs[i].node_bandwidth)
    best = 0.0
    tried: list[dict[str, Any]] = []
    better: tuple[Allocation, float] | None = None
    for extra in range(min(grow, len(others)) + 1):
        core = sorted(late + others[:extra])
        if not late or len(core) == len(instance.jobs) or deadline.expired():
            break
        rest = sum(b for i, b in enumerate(own) if i not in core)
        sub = replace(instance, jobs=tuple(instance.jobs[i] for i in core))
        mine = [own[i] for i in core]
        lower = max(problem_bound(sub), sum(mine))
        note: dict[str, Any] = {"jobs": [instance.jobs[i].id for i in core]}
        tried.append(note)
        try:
            found = threshold_search(sub, upper - rest, mine, lower, deadline, max_rows)
        except (TooLarge, TimeoutError) as e:
            note["stopped"] = str(e)
            break
        if any(not len(v) for v in found.dims.values[:len(core)]):  # nothing of K below its incumbent
            bound = upper - rest
        else:
            _, witness, bound, why = found.run(upper - rest)
            note.update(checks=found.checks, boxes=found.boxes, **({"stopped": why} if why else {}))
            if witness is not None:  # the core's allocation, the other jobs fitted around it
                core_jobs = list(sub.jobs)
                start = allocation_of(sub, core_jobs, found.classes, witness).mapping
                full = insert_rest(instance, start, usable_nodes(instance), deadline)
                if full is not None:
                    full, _ = polish(instance, full, {j.id: b for j, b in zip(instance.jobs, own)}, deadline)
                value = evaluate(instance, full).total_io_time if full is not None else math.inf
                note["fitted"] = value
                if full is not None and value < (upper if better is None else better[1]):
                    better = (full, value)
        note["bound"] = rest + max(lower, bound)
        best = max(best, note["bound"])
    return best, {"cores": tried}, better


def _search(instance: ForwardingInstance, time_limit: float, context: RunContext | None = None) -> MethodOutput:
    """The local search within half the method's time limit (the rest is for the bounds and the search)."""
    return search(instance, time_limit=time_limit / 2, context=context)


def solve_exact(instance: ForwardingInstance, deadline: Deadline, max_rows: int,
                context: RunContext | None = None) -> MethodOutput:
    """The method of the module docstring: a start, the bounds, the tables and the branch and bound (the
    heuristic starts run with the run's ``context``)."""
    start = best_start(instance, "total_io_time", deadline, {**STARTS, "search": _search}, context)
    incumbent, upper = start.allocation, start.value
    info: dict = {"scope": SCOPE_EXACT, "start": start.summary()}
    jobs, classes = list(instance.jobs), node_classes(instance)
    problem = problem_bound(instance)
    info.update(problem_bound=problem, node_classes=len(classes))

    def done(status: Status, bound: float, why: str | None = None) -> MethodOutput:
        if why:
            info["stopped"] = why
        bound = min(bound, upper)
        return MethodOutput(incumbent, status, bound=bound * (1 - SLACK), info=info)

    if upper <= problem * (1 + SLACK):
        return done(Status.OPTIMAL, problem)
    own: list[float] = []
    for j in jobs:
        if deadline.expired():
            return done(Status.TIME_LIMIT, problem, f"own bests of {len(own)} of {len(jobs)} jobs computed")
        own.append(own_best(instance, j, classes))
    lower = max(problem, sum(own))
    info["own_bests"] = sum(own)
    if upper > lower * (1 + SLACK):
        polished, moves = polish(instance, incumbent, {j.id: b for j, b in zip(jobs, own)}, deadline)
        value = evaluate(instance, polished).total_io_time
        info["polish"] = {"moves": moves, "value": value}
        if value < upper:
            incumbent, upper = polished, value
    if upper <= lower * (1 + SLACK):
        return done(Status.OPTIMAL, lower)
    try:
        found = threshold_search(instance, upper, own, lower, deadline, max_rows)
    except TooLarge as e:
        info["full_search"] = f"not run: {e}"
        bound, core, better = core_bound(instance, incumbent, upper, own, deadline, max_rows)
        info["core"] = core
        if better is not None:
            incumbent, upper = better
        return done(Status.TIME_LIMIT if deadline.expired() else Status.FEASIBLE, max(lower, bound))
    except TimeoutError as e:
        return done(Status.TIME_LIMIT, lower, str(e))
    info.update(rows=sum(len(t.within) for t in found.tables), thresholds=[len(v) for v in found.dims.values],
                delayed_running=found.dims.running)
    if any(not len(v) for v in found.dims.values[:len(jobs)]):  # a job has no configuration below the incumbent
        return done(Status.OPTIMAL, upper)
    best, witness, bound, why = found.run(upper)
    info.update(checks=found.checks, boxes=found.boxes)
    if witness is not None:
        alloc = allocation_of(instance, jobs, found.classes, witness)
        value = evaluate(instance, alloc).total_io_time
        info["search_value"] = value
        if value < upper:
            incumbent, upper = alloc, value
    bound = max(lower, bound)
    if why is None:
        return done(Status.OPTIMAL, bound)
    return done(Status.TIME_LIMIT if why == "time" else Status.FEASIBLE, bound,
                "the time limit stopped the branch and bound" if why == "time" else why)


@register("forwarding", "exact", objective="total_io_time", exact_over=EVERY_SOLUTION)
def exact(instance: ForwardingInstance, time_limit: TimeLimit = None, max_rows: Rows = 5_000_000,
          *, context: RunContext | None = None) -> MethodOutput:
    """Exact over every allocation: branch and bound on the jobs' I/O times over node configurations.

    Starts from the best of fixed, DFRA, MCKP, round-robin and the local search; bounds each job by its own
    best time and the problem's bound; keeps the configurations within what the incumbent leaves (a job whose
    shared time would exceed it stays alone); searches the thresholds (see the module docstring). Past
    ``time_limit`` s: the incumbent and the bound so far (status time_limit). Where the tables would pass
    ``max_rows`` configurations: the incumbent and the bounds (status feasible, ``info["stopped"]`` says why).
    """
    return solve_exact(instance, Deadline.for_method(time_limit, context=context), max_rows, context)

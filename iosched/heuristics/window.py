"""Window selection: the paper's GA (BBSched), NSGA-II, the decision rule, and the baselines.

Front methods return a Pareto set and the point the decision maker chooses from it:

* ``decide``: the paper's rule -- the point of most nodes, replaced by another point whose
  burst-buffer gain is more than 2x its node loss (both as shares of the free capacity, or
  of the machine with ``normalise='machine'``), the largest such gain if several. Of the
  subsets at the chosen point, the one with jobs nearest the front of the window (the
  paper's tie rule): ``exact`` finds it over all subsets (``earliest_subset``), the GAs
  among the rows they hold.

Baselines: ``naive`` (the paper's, as Slurm: window order until the first job that does not
fit; the paper's Table 1 adds EASY backfilling, which a simulator does), ``first-fit``
(window order, every job that still fits), ``bin-packing``
(repeatedly the fitting job with the largest dot product between its normalised request
and the normalised free resources), and the single-objective methods solved exactly on
the exact front (a linear objective with positive weights is maximised at a front point):
``weighted`` and ``constrained-cpu`` / ``constrained-bb`` (most of one resource within
the capacity of both, ties to more of the other).
"""

from __future__ import annotations

import math
from importlib import import_module
from typing import Annotated

import numpy as np

from iosched.core import EVERY_SOLUTION, HEURISTIC, MethodOutput, Status, register
from iosched.errors import ParameterError
from iosched.evaluate.window import (
    FrontPoint,
    Selection,
    front_hypervolume,
    front_quality,
    ssd_capacity,
    ssd_placement,
    ssd_utilisations,
    utilisations,
)
from iosched.instances.window import WindowInstance
from iosched.models.window import MAX_TIE_KEYS, FrontTimeLimit, earliest_subset, epsilon_front, pareto_front
from iosched.solvers import Deadline, load_profile
from iosched.validate import Integer, Number, OneOf


def scale(instance: WindowInstance, normalise: str = "free") -> tuple[int, int]:
    """The (nodes, burst buffer) that shares are taken of: the free capacity (``free``) or the
    whole machine (``machine``, as the authors' code does in a running system)."""
    if normalise == "free":
        return instance.capacity.nodes, instance.capacity.burst_buffer
    if normalise != "machine":
        raise ParameterError(f"normalise must be 'free' or 'machine', got {normalise!r}")
    if instance.machine is None:
        raise ParameterError("normalise='machine' needs the instance's machine totals (machine.nodes, "
                             f"machine.burst_buffer); instance {instance.name!r} has none")
    return instance.machine.nodes, instance.machine.burst_buffer


def decide(instance: WindowInstance, front: list[FrontPoint], factor: float = 2, normalise: str = "free") -> FrontPoint:
    """The paper's decision rule on a front (most nodes, then trade for > factor x burst buffer).

    Gains and losses are shares of the free capacity (or, ``normalise='machine'``, of the whole
    machine), compared exactly in integers:
    (b_p - b_f) / B > factor (n_f - n_p) / N  <=>  (b_p - b_f) N > factor (n_f - n_p) B.
    With SSD classes it is the SSD section's form, with twice the factor (4x).
    """
    if instance.has_ssd:
        return _decide_ssd(instance, front, 2 * factor, normalise)
    N, B = (max(x, 1) for x in scale(instance, normalise))
    first = max(front, key=lambda p: (p.nodes, p.burst_buffer))
    best, best_gain = first, 0  # gains in units of 1 / (N B)
    for p in front:
        gain = (p.burst_buffer - first.burst_buffer) * N
        if gain > factor * (first.nodes - p.nodes) * B and gain > best_gain:
            best, best_gain = p, gain
    return best


def _decide_ssd(instance: WindowInstance, front: list[FrontPoint], factor: float = 4, normalise: str = "free"):
    """The SSD section's rule: most nodes, replaced by the point whose gains in BB utilisation,
    SSD utilisation and reduction of the wasted-SSD share sum to more than ``factor`` x its
    node-utilisation loss (the largest such sum). SSD shares are of the free nodes' SSD."""
    from fractions import Fraction

    (N, B), total = scale(instance, normalise), ssd_capacity(instance)

    def share(x, whole):
        return Fraction(x, whole) if whole else Fraction(0)

    first = max(front, key=lambda p: p.vector())
    best, best_gain = first, Fraction(0)
    for p in front:
        gain = (share(p.burst_buffer - first.burst_buffer, B) + share(p.ssd - first.ssd, total)
                + share(first.wasted_ssd - p.wasted_ssd, total))
        if gain > factor * share(first.nodes - p.nodes, N) and gain > best_gain:
            best, best_gain = p, gain
    return best


def _objectives(instance: WindowInstance, X: np.ndarray):
    """Objective rows (all maximised: nodes, BB, and with SSD classes SSD requested and minus
    SSD wasted) of each 0/1 row of X, whether the row fits, and its nodes without a large
    enough SSD (zeros without SSD classes)."""
    n, b = X @ instance.nodes(), X @ instance.bbs()
    ok = (n <= instance.capacity.nodes) & (b <= instance.capacity.burst_buffer)
    if not instance.has_ssd:
        return np.column_stack([n, b]), ok, np.zeros(len(X), dtype=np.int64)
    placed = np.array([ssd_placement(instance, np.flatnonzero(row)) for row in X]).reshape(-1, 3)
    return np.column_stack([n, b, placed[:, 1], -placed[:, 2]]), ok & (placed[:, 0] == 0), placed[:, 0]


def _nondominated(F: np.ndarray) -> np.ndarray:
    """Mask of rows not dominated by any other row (equal vectors all kept); two objectives by a
    sort (a row is dominated by a larger first objective with a second at least as large, or by
    an equal first with a larger second), more by all pairs."""
    if F.shape[1] == 2 and len(F):
        order = np.lexsort((-F[:, 1], -F[:, 0]))  # first objective descending, then the second
        first, second = F[order, 0], F[order, 1]
        start = np.searchsorted(-first, -first, side="left")  # where each row's group of equal firsts begins
        best = np.maximum.accumulate(second)
        before = np.where(start > 0, best[np.maximum(start - 1, 0)], np.iinfo(np.int64).min)
        mask = np.empty(len(F), dtype=bool)
        mask[order] = ~((before >= second) | (second[start] > second))
        return mask
    return ~_dominated_by(F, F)


def _dominated_by(A: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Mask of the rows of F that some row of A dominates (all objectives maximised)."""
    at_least = np.greater_equal(A[None, :, :], F[:, None, :]).all(axis=2)
    above = np.greater(A[None, :, :], F[:, None, :]).any(axis=2)
    return (at_least & above).any(axis=1)


def _front_of(instance: WindowInstance, X: np.ndarray) -> list[FrontPoint]:
    """Distinct non-dominated feasible rows of X as front points (most nodes first); of rows with
    equal objectives, the one with jobs nearest the front of the window (the paper's tie rule)."""
    F, ok, _ = _objectives(instance, X)
    X, F = X[ok], F[ok]
    if len(X) == 0:
        return [FrontPoint(0, 0, ())]
    seen, front = set(), []  # per vector the row with jobs nearest the front of the window (largest 0/1 row)
    for i in sorted(np.flatnonzero(_nondominated(F)), key=lambda i: (tuple(-F[i]), tuple(-X[i]))):
        v = tuple(int(x) for x in F[i])
        if v not in seen:
            seen.add(v)
            extra = (v[2], -v[3]) if instance.has_ssd else ()
            front.append(FrontPoint(v[0], v[1], tuple(instance.jobs[j].id for j in np.flatnonzero(X[i])), *extra))
    return front


class _Placement:
    """Whether 0/1 rows of an SSD window fit: burst buffer, and nodes counted per category (the
    smallest class a job may use), those of category k or larger within the classes k or larger
    (the placement of ``ssd_placement``; k = 0: all the nodes)."""

    def __init__(self, instance: WindowInstance):
        classes = sorted(instance.capacity.ssd_classes, key=lambda c: c.ssd)
        cat = np.searchsorted([c.ssd for c in classes], [j.ssd_per_node for j in instance.jobs])
        self.M = np.zeros((len(instance.jobs), len(classes)), dtype=np.int64)  # nodes per category, by job
        self.M[np.arange(len(instance.jobs)), cat] = instance.nodes()
        self.tail_cap = np.cumsum([c.nodes for c in classes][::-1])[::-1]
        self.bbs, self.bb_cap = instance.bbs(), instance.capacity.burst_buffer

    def fits(self, C: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (np.cumsum(C[:, ::-1], axis=1)[:, ::-1] <= self.tail_cap).all(axis=1) & (b <= self.bb_cap)

    def fill(self, X: np.ndarray, order) -> np.ndarray:
        """Rows X that fit (changed in place), each job of ``order`` that still fits added: maximal selections."""
        C, b = X @ self.M, X @ self.bbs
        for j in order:
            add = (X[:, j] == 0) & self.fits(C + self.M[j], b + self.bbs[j])
            X[add, j] = 1
            C[add] += self.M[j]
            b[add] += self.bbs[j]
        return X


class _Archive:
    """The non-dominated chromosomes of all generations (0/1 rows and objective rows, all maximised)."""

    def __init__(self, X: np.ndarray, F: np.ndarray):
        self.X, self.F = X[:0], F[:0]
        self.add(X, F)

    def add(self, X: np.ndarray, F: np.ndarray) -> None:
        _, first = np.unique(X, axis=0, return_index=True)
        X, F = X[first], F[first]
        new = ~(X[:, None, :] == self.X[None, :, :]).all(axis=2).any(axis=1)  # not a copy of a kept row
        X, F = X[new], F[new]
        keep = ~_dominated_by(self.F, F) & _nondominated(F)
        X, F = X[keep], F[keep]
        if len(X):
            stay = ~_dominated_by(F, self.F)
            self.X, self.F = np.vstack([self.X[stay], X]), np.vstack([self.F[stay], F])


def initial_rows(instance: WindowInstance, population: int, rng: np.random.Generator,
                 init: str = "greedy") -> np.ndarray:
    """The first generation: ``population`` 0/1 rows that all fit.

    ``greedy``: each row takes the jobs of a fresh random order of the window, each one that
    still fits beside those taken (a maximal selection). Even rows use uniform orders; odd
    rows draw the order with probabilities growing with the job's size (weighted sampling
    without replacement, weight = node share + BB share of the free capacity), so that large
    jobs, which a uniform order seldom places before the small ones fill the machine, start
    some rows (at w = 100 uniform orders alone lost 14 pp of nodes on average against the exact
    decision, 77 pp in one window: benchmarks/window_front.py). ``one-job`` (the authors' code):
    row r holds one job alone, the r-th of a random order of the jobs that fit alone
    (cycling; empty rows if none fits). The paper only says "initialized randomly"; rows
    with each gene 1 with probability 1/2 almost never fit once a window holds more jobs
    than the free capacity takes (w >= 50 at Theta's scale), leaving a search on mutation alone.
    With SSD classes the first rows are greedy fills in the orders of :func:`_ssd_orders` (one per
    objective and per SSD class; random orders alone reached 81 % of the exact hypervolume on
    average at w = 40, S6, seeds 0-9, these rows 96 %), the others as above.
    """
    w = len(instance.jobs)
    rows = np.zeros((population, w), dtype=np.int64)
    if init == "one-job":
        alone = [i for i in range(w) if _fits(instance, [], i)]
        if alone:
            order = rng.permutation(alone)
            for r in range(population):
                rows[r, order[r % len(order)]] = 1
        return rows
    nodes, bbs = instance.nodes(), instance.bbs()
    size = nodes / max(instance.capacity.nodes, 1) + bbs / max(instance.capacity.burst_buffer, 1)
    if instance.has_ssd:
        placement, seeded = _Placement(instance), _ssd_orders(instance)[:population]
        for r, order in enumerate(seeded):
            placement.fill(rows[r:r + 1], order)
        for r in range(len(seeded), population):
            order = np.argsort(-np.log(rng.random(w)) / np.maximum(size, 1e-12)) if r % 2 else rng.permutation(w)
            placement.fill(rows[r:r + 1], order)
        return rows
    nodes, bbs = nodes.tolist(), bbs.tolist()
    for r in range(population):
        order = np.argsort(-np.log(rng.random(w)) / np.maximum(size, 1e-12)) if r % 2 else rng.permutation(w)
        chosen: list[int] = []
        n_left, b_left = instance.capacity.nodes, instance.capacity.burst_buffer
        for i in order.tolist():
            if nodes[i] <= n_left and bbs[i] <= b_left:
                chosen.append(i)
                n_left, b_left = n_left - nodes[i], b_left - bbs[i]
        rows[r, chosen] = 1
    return rows


def _ssd_orders(instance: WindowInstance) -> list[np.ndarray]:
    """Greedy orders for a first generation on SSD windows, one per objective and per SSD class: most
    nodes, burst buffer, SSD requested first; least SSD wasted per node first (on the smallest class
    the job may use); the jobs of the largest category first, and of the smallest (both by nodes)."""
    nodes, bbs = instance.nodes(), instance.bbs()
    need = np.array([j.ssd_per_node for j in instance.jobs])
    sizes = np.array(sorted(c.ssd for c in instance.capacity.ssd_classes))
    cat = np.searchsorted(sizes, need)
    keys = [-nodes, -bbs, -need * nodes, sizes[cat] - need, -cat * (nodes.max() + 1) - nodes,
            cat * (nodes.max() + 1) - nodes]
    return [np.argsort(k, kind="stable") for k in keys]


def bbsched_ga(instance: WindowInstance, generations: int = 500, population: int = 20, p_m: float = 0.0005,
               seed: int | None = 0, time_limit: float = math.inf,
               init: str = "greedy", patience: int | None = None) -> tuple[list[FrontPoint], int, str]:
    """The paper's GA. Each generation: P/2 crossovers of two random parents at one random
    point give P children; each gene flips with probability p_m; infeasible children are
    discarded. Survivors: the Pareto set of parents and children first, newer before older;
    if it holds fewer than P, the rest fill up, newer first. Ages grow by one a generation.
    Identical chromosomes count once (at their youngest age): copies of one Pareto point
    would otherwise crowd the others out of the survivors. What these operators cannot do: a child
    takes each gene from a parent, so a job that no row of the first generation holds enters only by
    mutation (at p_m = 0.05 %, about 5 flips of its gene in 500 generations of 20 children), into a
    child that keeps the rest of a parent's selection, which a full burst buffer leaves no room beside
    it: on random:7:50, seed 0, no first row holds job 8 (2,048 of the 2,196 free nodes), its 5
    mutations gave 5 children that do not fit, and the front stays at 0.151 of the exact hypervolume
    (seeds 1-19: 0.975-1.000). With SSD classes (four objectives)
    the returned front is that of every chromosome of every generation (an archive), not the
    last population's: there the Pareto set outgrows P and the aging rule replaces the best
    points with newer, smaller selections (at w = 40, S6, the last population's front fell from
    81 % of the exact hypervolume after one generation to 26 % after 500; the archive's: 98 %).
    The initial population is :func:`initial_rows` (``init``). Stops early after
    ``time_limit`` seconds, or (``patience``) once the population's Pareto set has not changed
    for that many generations (converged: every later generation would have to find a point
    the last ``patience`` did not); a window whose jobs all fit together has the one point
    "all of them", returned without a generation. Returns the front, the generations run and
    why it stopped before ``generations`` ("" when it ran them all)."""
    deadline = Deadline(time_limit)
    w = len(instance.jobs)
    if (whole := _whole_window(instance)) is not None:
        return whole
    rng = np.random.default_rng(0 if seed is None else seed)
    pop = initial_rows(instance, population, rng, init)
    age = np.zeros(population, dtype=np.int64)
    done = still = 0
    known = None
    if instance.has_ssd:
        def objectives(X):
            return _objectives(instance, X)[:2]
    else:  # the two sums, with the job vectors taken once
        job_nodes, job_bbs, cap = instance.nodes(), instance.bbs(), instance.capacity

        def objectives(X):
            n, b = X @ job_nodes, X @ job_bbs
            return np.column_stack([n, b]), (n <= cap.nodes) & (b <= cap.burst_buffer)
    columns = np.arange(w)
    bits = 1 << np.arange(w, dtype=np.int64) if w <= 62 else None  # a row as one integer, to drop copies
    pop_F = objectives(pop)[0]
    archive = _Archive(pop, pop_F) if instance.has_ssd else None  # four objectives: every Pareto point seen
    while done < generations and not deadline.expired() and (patience is None or still < patience):
        done += 1
        parents = rng.integers(0, len(pop), size=(population // 2, 2))
        cut = rng.integers(1, w, size=population // 2) if w > 1 else np.zeros(population // 2, dtype=np.int64)
        head = columns[None, :] < cut[:, None]  # one-point crossover: the first k genes of one parent
        a, c = pop[parents[:, 0]], pop[parents[:, 1]]
        kids = np.empty((2 * len(cut), w), dtype=np.int64)
        kids[0::2], kids[1::2] = np.where(head, a, c), np.where(head, c, a)
        kids ^= (rng.random(kids.shape) < p_m).astype(np.int64)
        kids_F, fit = objectives(kids)
        if archive is not None:
            archive.add(kids[fit], kids_F[fit])
        pool, pool_F = np.vstack([kids[fit], pop]), np.vstack([kids_F[fit], pop_F])
        pool_age = np.concatenate([np.zeros(int(fit.sum()), dtype=np.int64), age + 1])
        young = np.argsort(pool_age, kind="stable")  # each chromosome once, at its youngest age
        if bits is not None:
            keep = young[np.sort(np.unique((pool @ bits)[young], return_index=True)[1])]
        else:
            seen: set[bytes] = set()
            firsts: list[int] = []
            for i in young.tolist():
                row = pool[i].tobytes()
                if row not in seen:
                    seen.add(row)
                    firsts.append(i)
            keep = np.array(firsts, dtype=np.int64)
        pool, pool_age, F = pool[keep], pool_age[keep], pool_F[keep]
        pareto = _nondominated(F)
        order = np.lexsort((pool_age, ~pareto))[:population]  # Pareto set first, then newer first
        pop, age, pop_F = pool[order], pool_age[order], F[order]
        vectors = {tuple(v) for v in F[pareto].tolist()}
        still = still + 1 if vectors == known else 0
        known = vectors
    why = _stopped_early(done, generations, patience, still, deadline.expired())
    return _front_of(instance, pop if archive is None else archive.X), done, why


def _whole_window(instance: WindowInstance) -> tuple[list[FrontPoint], int, str] | None:
    """A GA's result when every job of the window fits together: the one point, no generation; else None."""
    everything = np.ones((1, len(instance.jobs)), dtype=np.int64)
    if len(instance.jobs) and _objectives(instance, everything)[1][0]:
        return _front_of(instance, everything), 0, "every job of the window fits: one point, no generation"
    return None


def _stopped_early(done: int, generations: int, patience: int | None, still: int, expired: bool,
                   otherwise: str = "") -> str:
    """Why a GA ran ``done`` of its ``generations`` ("" when it ran them all): its Pareto set unchanged
    for ``patience`` generations, its time limit, else ``otherwise``."""
    if done >= generations:
        return ""
    if patience is not None and still >= patience:
        return f"converged: the Pareto set unchanged for {patience} generations, after {done} of {generations}"
    if expired:
        return f"time_limit after {done} of {generations} generations"
    return otherwise


MATING_TRIES = 5  # pymoo's mating rounds per generation to find children that are not copies (its default: 100)


def nsga2(instance: WindowInstance, generations: int = 500, population: int = 20, p_m: float = 0.0005,
          seed: int | None = 0, time_limit: float = math.inf,
          init: str = "greedy", patience: int | None = None) -> tuple[list[FrontPoint], int, str]:
    """pymoo's NSGA-II on the same problem and budget: the GA's first generation
    (:func:`initial_rows`, distinct rows), one-point crossover, bit-flip mutation with
    per-gene probability p_m, duplicates eliminated;
    the capacities are constraints (infeasible rows lose to feasible ones). Stops early as
    :func:`bbsched_ga` does: after ``time_limit`` seconds, once the population's Pareto set has
    not changed for ``patience`` generations, and without a generation when every job fits (on
    a window with fewer distinct rows than P, pymoo's mating retried 100 times a generation for
    offspring that are not copies: 500 such generations per call kept a 200-job simulation
    from finishing; it now tries MATING_TRIES times, and a generation may have fewer than P
    children where the window has no more distinct rows to give). Returns the front, the
    generations run and why it stopped early."""
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.problem import Problem
    from pymoo.operators.crossover.pntx import SinglePointCrossover
    from pymoo.operators.mutation.bitflip import BitflipMutation

    nodes = instance.nodes()
    cap = instance.capacity
    k = 4 if instance.has_ssd else 2

    class Window(Problem):
        def __init__(self):
            super().__init__(n_var=len(nodes), n_obj=k, n_ieq_constr=k // 2 + 1, xl=0, xu=1, vtype=bool)

        def _evaluate(self, X, out, *args, **kwargs):
            X = X.astype(np.int64)
            F, _, unplaced = _objectives(instance, X)
            out["F"] = -F
            G = [F[:, 0] - cap.nodes, F[:, 1] - cap.burst_buffer]
            if instance.has_ssd:  # nodes without a large enough SSD
                G.append(unplaced)
            out["G"] = np.column_stack(G)

    if (whole := _whole_window(instance)) is not None:
        return whole
    first = np.unique(initial_rows(instance, population, np.random.default_rng(0 if seed is None else seed), init),
                      axis=0).astype(bool)
    algorithm = NSGA2(pop_size=population, sampling=first, crossover=SinglePointCrossover(),
                      mutation=BitflipMutation(prob_var=p_m), eliminate_duplicates=True)
    algorithm.mating.n_max_iterations = MATING_TRIES
    deadline = Deadline(time_limit)
    algorithm.setup(Window(), termination=("n_gen", generations), seed=0 if seed is None else seed, verbose=False)
    still, known = 0, None
    while algorithm.has_next() and not deadline.expired() and (patience is None or still < patience):
        algorithm.next()
        vectors = {tuple(v) for v in algorithm.opt.get("F").tolist()}
        still = still + 1 if vectors == known else 0
        known = vectors
    X = algorithm.pop.get("X").astype(np.int64)
    done = max((algorithm.n_gen or 1) - 1, 0)  # pymoo counts the first population as generation 1
    why = _stopped_early(done, generations, patience, still, deadline.expired(),  # else pymoo found no new child
                         f"no new child in {MATING_TRIES} mating rounds, after {done} of {generations} generations")
    return _front_of(instance, X), done, why


def _fits(instance: WindowInstance, chosen: list[int], i: int) -> bool:
    """Whether job i fits beside the jobs ``chosen`` (nodes, BB and, with classes, SSD)."""
    rows = np.zeros((1, len(instance.jobs)), dtype=np.int64)
    rows[0, chosen + [i]] = 1
    return bool(_objectives(instance, rows)[1][0])


def _point(instance: WindowInstance, chosen: list[int]) -> FrontPoint:
    rows = np.zeros((1, len(instance.jobs)), dtype=np.int64)
    rows[0, chosen] = 1
    return _front_of(instance, rows)[0]


def _in_order(instance: WindowInstance, stop_at_misfit: bool) -> list[FrontPoint]:
    """Jobs in window order, each that fits beside those taken; with ``stop_at_misfit`` stop at the first that
    does not. Without SSD classes the free capacity is counted down in plain integers (the batch simulator
    calls this at every scheduling pass)."""
    chosen: list[int] = []
    if instance.has_ssd:
        for i in range(len(instance.jobs)):
            if _fits(instance, chosen, i):
                chosen.append(i)
            elif stop_at_misfit:
                break
        return [_point(instance, chosen)]
    n_left, b_left = instance.capacity.nodes, instance.capacity.burst_buffer
    for i, (n, b) in enumerate(zip(instance.nodes().tolist(), instance.bbs().tolist())):
        if n <= n_left and b <= b_left:
            chosen.append(i)
            n_left, b_left = n_left - n, b_left - b
        elif stop_at_misfit:
            break
    cap = instance.capacity
    return [FrontPoint(cap.nodes - n_left, cap.burst_buffer - b_left, tuple(instance.jobs[i].id for i in chosen))]


def naive(instance: WindowInstance) -> list[FrontPoint]:
    """The paper's naive method (Slurm): jobs in window order until the first that does not fit."""
    return _in_order(instance, stop_at_misfit=True)


def first_fit(instance: WindowInstance) -> list[FrontPoint]:
    """Window order, every job that still fits (past the ones that do not)."""
    return _in_order(instance, stop_at_misfit=False)


def bin_packing(instance: WindowInstance, normalise: str = "free") -> list[FrontPoint]:
    """Repeatedly the fitting job of largest alignment: request . free resources, both as shares
    of the free capacity (or of the whole machine, ``normalise='machine'``)."""
    N, B = scale(instance, normalise)
    free_n, free_b = instance.capacity.nodes, instance.capacity.burst_buffer
    left = list(range(len(instance.jobs)))
    chosen: list[int] = []
    def share(x, total):
        return x / total if total else 0.0

    while True:
        fits = [i for i in left if _fits(instance, chosen, i)]
        if not fits:
            break
        free = (share(free_n, N), share(free_b, B))
        scores = {i: share(instance.jobs[i].nodes, N) * free[0] + share(instance.bb(i), B) * free[1] for i in fits}
        best = max(fits, key=lambda i: (scores[i], -i))
        chosen.append(best)
        left.remove(best)
        free_n -= instance.jobs[best].nodes
        free_b -= instance.bb(best)
    return [_point(instance, sorted(chosen))]


def _front_method(instance, front, compare, decision="paper", exact=None, normalise="free", factor=2):
    if decision == "paper":
        chosen = decide(instance, front, factor, normalise)
    else:
        chosen = max(front, key=lambda p: (p.nodes, p.burst_buffer))
    info = {}
    if compare == "exact":
        info["quality"] = front_quality(instance, front, exact if exact is not None else pareto_front(instance))
    return MethodOutput(Selection(chosen.jobs, tuple(front)), Status.FEASIBLE, info=info)


Decision = Annotated[str, OneOf(("paper", "nodes"))]
Compare = Annotated[str | None, OneOf(("exact",))]
Generations = Annotated[int, Integer(1, 1_000_000)]
Population = Annotated[int, Integer(2, 100_000)]
Rate = Annotated[float, Number(0, 1)]
Seconds = Annotated[float, Number(0, 10**7, lo_open=True)]
Init = Annotated[str, OneOf(("greedy", "one-job"))]
Patience = Annotated[int | None, Integer(1, 1_000_000)]  # generations without a change of the Pareto set
Normalise = Annotated[str, OneOf(("free", "machine"))]
Factor = Annotated[float, Number(0, 1e6)]  # the decision rule's: burst-buffer gain > factor x node loss (paper: 2)


def load_front_kernels() -> None:
    """Compile (or load from numba's cache) the exact front's kernels: the ``prepare`` of the
    methods built on the front (exact, weighted, constrained-*)."""
    import_module("iosched.models._window_kernels")


@register("window", "exact", objective="hypervolume", exact_over=EVERY_SOLUTION, prepare=load_front_kernels)
def exact(instance: WindowInstance, engine: Annotated[str, OneOf(("dp", "milp", "cpsat"))] = "dp",
          decision: Decision = "paper", profile: str = "default", compare: Compare = None,
          normalise: Normalise = "free", factor: Factor = 2) -> MethodOutput:
    """The exact Pareto front (dp, or the milp / cpsat ε-constraint cross-checks) and the decision
    (shares of the free capacity, or of the instance's machine with ``normalise='machine'``; a
    burst-buffer gain more than ``factor`` times the node loss, the paper's 2);
    the chosen point's subset is the one with jobs nearest the front of the window (two objectives).

    The milp and cpsat engines share the profile's time limit over all their solves; stopped by it,
    the result is ``time_limit`` with the front points proved so far (each at zero gap). Sizes the
    dp cannot pack into 63 bits go to cpsat (said in ``info["engine"]``).
    """
    scale(instance, normalise)  # normalise='machine' without machine totals stops here, before the front
    deadline, fallback = Deadline(load_profile(profile).time_limit), ""
    if engine == "dp":
        try:
            front, complete, why = pareto_front(instance, time_limit=deadline.seconds), True, ""
        except FrontTimeLimit as e:
            front, complete, why = [], False, str(e)
        except ParameterError as e:  # sizes beyond the dynamic program: CP-SAT counts in int64
            if instance.has_ssd:
                raise
            engine, fallback = "cpsat", f"engine cpsat: {e}"
    if engine != "dp":
        front, complete, why = epsilon_front(instance, engine, profile)
    if not front:  # the time limit struck before the first point: no selection to offer
        return MethodOutput(None, Status.TIME_LIMIT, info={"front": why, **({"engine": fallback} if fallback else {})})
    out = _front_method(instance, front, compare, decision, exact=front if complete else None, normalise=normalise,
                        factor=factor)
    chosen = next(p for p in front if p.jobs == out.solution.selected)
    try:  # the paper's tie rule: of the subsets at the chosen point, jobs nearest the front of the window
        earliest, proved = earliest_subset(instance, chosen, deadline)
    except (FrontTimeLimit, ParameterError) as e:
        out.info["ties"] = (f"not broken: {e}; the front is exact, but the subset at the chosen point is the "
                            f"{engine} engine's, not the paper's tie rule's")
    else:
        out.solution = Selection(earliest.jobs, tuple(earliest if p is chosen else p for p in front))
        if proved < len(instance.jobs):
            out.info["ties"] = (f"broken by the paper's rule for the first {proved} of {len(instance.jobs)} jobs only "
                                f"(a longer proof would keep more than {MAX_TIE_KEYS:,} partial sums): the front is "
                                "exact, the subset at the chosen point is one of its equals, not proved the rule's")
    out.status = Status.OPTIMAL if complete else Status.TIME_LIMIT
    if complete:  # no front of the window covers more: its hypervolume bounds every solution's
        out.bound = front_hypervolume(instance, front)
    if fallback:
        out.info["engine"] = fallback
    if not complete:
        out.info["front"] = f"{len(front)} point(s) proved; {why}"
    return out


@register("window", "bbsched-ga", objective="hypervolume", exact_over=HEURISTIC, randomized=True)
def ga_method(instance: WindowInstance, generations: Generations = 500, population: Population = 20,
              p_m: Rate = 0.0005, decision: Decision = "paper", compare: Compare = None,
              seed: Annotated[int | None, Integer(0)] = 0, time_limit: Seconds = 60,
              init: Init = "greedy", normalise: Normalise = "free", patience: Patience = None,
              factor: Factor = 2) -> MethodOutput:
    """The paper's GA (G = 500, P = 20, p_m = 0.05 %) and its decision rule (``factor``: see exact); runs all G
    generations, as the paper does, unless time_limit s pass first or ``patience`` is given (stop once the Pareto
    set has not changed for that many generations: faster, e.g. in the batch simulator, but at w = 50 the
    default patience=100 of before left 19 of 200 runs (random:0..9:50, GA seeds 0-19) below 0.9 of the exact
    hypervolume, all G 13: random:8:50 seed 0 0.425 against 0.984). With SSD classes the front is that of all
    its generations (:func:`bbsched_ga`).

    ``init``: the first generation, random maximal selections (``greedy``) or one job per row
    (``one-job``, the authors' code); see :func:`initial_rows`."""
    scale(instance, normalise)  # normalise='machine' without machine totals stops here, before the generations
    return _ga_output(instance, bbsched_ga(instance, generations, population, p_m, seed, time_limit, init,
                                           patience), compare, decision, normalise, factor)


def _ga_output(instance, found, compare, decision, normalise, factor) -> MethodOutput:
    front, done, stopped = found
    out = _front_method(instance, front, compare, decision, normalise=normalise, factor=factor)
    out.info["generations"] = done
    if stopped:
        out.info["stopped"] = stopped
    return out


@register("window", "nsga2", objective="hypervolume", exact_over=HEURISTIC, randomized=True)
def nsga2_method(instance: WindowInstance, generations: Generations = 500, population: Population = 20,
                 p_m: Rate = 0.0005, decision: Decision = "paper", compare: Compare = None,
                 seed: Annotated[int | None, Integer(0)] = 0, time_limit: Seconds = 60,
              init: Init = "greedy", normalise: Normalise = "free", patience: Patience = 100,
              factor: Factor = 2) -> MethodOutput:
    """pymoo's NSGA-II with the GA's budget and first generation, and the decision rule (``factor``: see exact);
    stops after time_limit s, or once its Pareto set has not changed for ``patience`` generations (None: all G)."""
    scale(instance, normalise)  # normalise='machine' without machine totals stops here, before the generations
    return _ga_output(instance, nsga2(instance, generations, population, p_m, seed, time_limit, init, patience),
                      compare, decision, normalise, factor)


def _single(points: list[FrontPoint]) -> MethodOutput:
    return MethodOutput(Selection(points[0].jobs), Status.FEASIBLE)


def _front_pick(instance: WindowInstance, time_limit: float, pick) -> MethodOutput:
    """The exact front's point ``pick(front)`` chooses; no selection (status time_limit) when the
    front is not done within ``time_limit`` seconds."""
    try:
        front = pareto_front(instance, time_limit=time_limit)
    except FrontTimeLimit as e:
        return MethodOutput(None, Status.TIME_LIMIT, info={"front": str(e)})
    return _single([pick(front)])


@register("window", "naive", objective="hypervolume", exact_over=HEURISTIC)
def naive_method(instance: WindowInstance) -> MethodOutput:
    """The paper's naive method (Slurm's): in window order, stop at the first job that does not fit."""
    return _single(naive(instance))


@register("window", "first-fit", objective="hypervolume", exact_over=HEURISTIC)
def first_fit_method(instance: WindowInstance) -> MethodOutput:
    """In window order, start every job that still fits (a stronger baseline than naive)."""
    return _single(first_fit(instance))


@register("window", "bin-packing", objective="hypervolume", exact_over=HEURISTIC)
def bin_packing_method(instance: WindowInstance, normalise: Normalise = "free") -> MethodOutput:
    """Greedy by alignment score (request · free resources, as shares of the free capacity or of the machine)."""
    return _single(bin_packing(instance, normalise))


@register("window", "weighted", objective="hypervolume",
          exact_over="one point of the exact front: a weighted sum's optimum over every selection",
          prepare=load_front_kernels)
def weighted(instance: WindowInstance, node_weight: Annotated[float | None, Number(0, 1)] = None,
             normalise: Normalise = "free", time_limit: Seconds = 60) -> MethodOutput:
    """Maximise node_weight x node utilisation + the rest shared equally by the other objectives, exactly
    (node and BB utilisation of the free capacity, or of the machine with ``normalise='machine'``).

    Default node_weight: 0.5 (two objectives), 0.25 with SSD classes (all four equal, as in the
    paper's SSD section, where the fourth is one minus the wasted-SSD share). Like every method
    built on the exact front, it gives no selection (status time_limit) when the front takes
    more than time_limit s.
    """
    scale(instance, normalise)  # normalise='machine' without machine totals stops here, before the front
    weight = node_weight if node_weight is not None else (0.25 if instance.has_ssd else 0.5)

    def best(front):
        if instance.has_ssd:
            shares = ssd_utilisations(instance, [p.vector() for p in front])
        else:
            shares = utilisations(instance, [(p.nodes, p.burst_buffer) for p in front])
        N, B = scale(instance, normalise)
        shares[:, 0] *= instance.capacity.nodes / N if N else 0.0  # shares of the free capacity -> of N, B
        shares[:, 1] *= instance.capacity.burst_buffer / B if B else 0.0
        return front[int(np.argmax(weight * shares[:, 0] + (1 - weight) * shares[:, 1:].mean(axis=1)))]

    return _front_pick(instance, time_limit, best)


@register("window", "constrained-cpu", objective="hypervolume",
          exact_over="one point of the exact front: the most nodes over every selection", prepare=load_front_kernels)
def constrained_cpu(instance: WindowInstance, time_limit: Seconds = 60) -> MethodOutput:
    """Most nodes within the capacities (ties to more burst buffer, then the SSD objectives), exactly."""
    return _front_pick(instance, time_limit, lambda front: max(front, key=lambda p: p.vector()))


@register("window", "constrained-bb", objective="hypervolume",
          exact_over="one point of the exact front: the most burst buffer over every selection",
          prepare=load_front_kernels)
def constrained_bb(instance: WindowInstance, time_limit: Seconds = 60) -> MethodOutput:
    """Most burst buffer within the capacities (ties to more nodes, then the SSD objectives), exactly."""
    return _front_pick(instance, time_limit,
                       lambda front: max(front, key=lambda p: (p.burst_buffer, p.nodes, p.ssd, -p.wasted_ssd)))


@register("window", "constrained-ssd", objective="hypervolume",
          exact_over="one point of the exact front: the most SSD over every selection", prepare=load_front_kernels)
def constrained_ssd(instance: WindowInstance, time_limit: Seconds = 60) -> MethodOutput:
    """Most requested local SSD within the capacities (SSD classes only; ties to nodes, BB, less waste)."""
    if not instance.has_ssd:
        raise ParameterError("constrained-ssd needs an instance with capacity.ssd_classes")
    return _front_pick(instance, time_limit,
                       lambda front: max(front, key=lambda p: (p.ssd, p.nodes, p.burst_buffer, -p.wasted_ssd)))

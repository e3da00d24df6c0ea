"""Exact file domains by clean segments and lock levels (``exact`` with ``engine=segments``).

The model is the evaluator's (:mod:`iosched.evaluate.filedomain`) with ``io = extent``; its
structure, argued here, is what makes the search small.

**Sequences and runs.** Each lock sequence k (a server's lock units in object order, or with
tokens all blocks in file order) holds units of data weights w_1..w_n, at cumulative data
offsets W_0 = 0 < W_1 < ... < W_n. Any solution can be rearranged inside each unit (an
owner's bytes of a unit made contiguous, the first and last owners continuing the
neighbours' runs) without raising any cost (the argument of :mod:`iosched.models.filedomain`,
checked there by brute force). In that form the sequence is cut into Y maximal runs of one
owner by Y - 1 cuts; a cut at some W_j is *clean*, any other is *dirty* and is the only
change of owner inside its unit, so the unit's owners are 1 + its dirty cuts. With Z - 1
clean cuts the data splits into Z *segments* (maximal pieces between clean cuts, whole
units), and the sequence's lock time is

    A Y + R (Y - 1 + (Y - Z)) = (A + 2R) Y - R Z - R        (A: acquire_s, R: revoke_s)

(grants = runs; conflicts = changes of owner plus the extra owners of the split units).

**The segment model.** A solution is a choice of segments (a path 0 -> n over the unit
boundaries) and, per segment g, either one *whole* owner (the segment's W_g bytes) or a
*split* into pieces for at least two owners, each at most once (two pieces of one owner in
a segment can be made adjacent and merged: the pieces' order inside a segment is free, as
the dirty cuts may fall anywhere, and merging drops a run and a dirty cut). Every solution
maps to one with at most its cost, and every assignment of the model is a solution whose
evaluated cost is at most the model's (a dirty cut that lands on a unit boundary, or two
neighbouring runs of one owner, only cost less). So the model is exact.

**Bins.** Where a node holds an aggregator at least as fast as the node (b_a >= b_node), the
node is one bin written by that aggregator: moving the data of the node's other aggregators
to it keeps its load within the node's b_node T (so within b_a T) and never adds a run or an
owner of a unit (two owners become one). This breaks the symmetry of the aggregators of one
node. Other aggregators are bins of their own, under their node's row.

**Lock levels.** For a target time T, every term of T is a capacity: bin b carries at most
rate_b T bytes, node n at most b_n T, and sequence k allows (Y, Z) with
base_k + (A + 2R) Y - R Z - R <= T (base_k: the server's data over its bandwidth; 0 for the
token sequence, whose servers' times are a floor of their own). With T fixed the model is a
feasibility problem whose knapsack rows have fixed right-hand sides (HiGHS finds covers and
cliques on them: e.g. that no bin holds two segments that must stay whole). Feasibility
grows with T and the set of allowed (Y, Z) only changes at the *levels*
base_k + A Y + R (2Y - Z - 1). :func:`search` therefore

1. tests T = LB (1 + gap / 2) (LB: :func:`iosched.models.filedomain_relax.time_bound`): a solution
   there is optimal within the gap;
2. bisects over the levels between the bound and the best solution, each test just below a
   level L: infeasible proves that no solution takes less than L (for T between the level
   below and L the structures allowed are the same and the capacities smaller), feasible
   gives a solution, evaluated, under L;
3. in the last band (no level left between them) minimises the time over the structures
   allowed below the incumbent, with the capacities of the test kept as rows (their
   strength) and T as the objective (loads <= rate T, base_k + lock_k <= T): its optimum is
   the optimum, its dual bound a bound. A feasibility test undecided in its share of the time
   (a quarter of what is left) sends the search to this step at once, with all the time left.

Every infeasible test is a bound valid for every solution (capacities are the whole bytes a
rate carries in T, relaxed by 10^-9, so that HiGHS's tolerances cannot cut off a solution at
T; the lock rows' right-hand sides sit midway between admitted and refused structures); the
best of them, the solver's dual bound of step 3 and ``time_bound`` is the Result's bound, so a
run stopped by its time limit still reports a certified gap. The bytes of split segments are
integer columns where rounding could matter beside the gap (:func:`needs_whole_bytes`), else
continuous (a relaxation): read back, they are rounded to bytes keeping each segment's total,
and the evaluator gives the time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from iosched import lazy
from iosched.core import Status
from iosched.errors import ParameterError
from iosched.evaluate.filedomain import Domains, evaluate
from iosched.instances.filedomain import GB, FileDomainInstance
from iosched.models.filedomain_relax import time_bound
from iosched.models.filedomain_units import (
    BOUND_SLACK,
    OutOfTime,
    Units,
    from_sequence,
    lock_units,
    ticking,
)
from iosched.models.matrix import Matrix
from iosched.models.matrix import solve as solve_matrix
from iosched.solvers import Deadline, Profile

pe = lazy.module("pyomo.environ")
if TYPE_CHECKING:
    from pyomo.environ import ConcreteModel

# columns of one segment model: more is refused (building is cheap; HiGHS's memory grows with its search
# more than with the model: benchmarks/speed.md, constants)
MAX_COLUMNS = 300_000
RELAX = 1e-9  # relative slack on every capacity of a test: HiGHS's tolerances cannot cut off a solution at T
BELOW = 1e-9  # a test "just below" level L is at L (1 - BELOW)
SHARE = 4  # a feasibility test gets at most this fraction of the time left (the last band gets all of it)


# --- what the model is built on --------------------------------------------------------------------

@dataclass(frozen=True)
class Bins:
    """Who writes: bin b is aggregator ``aggregator[b]`` at ``rate[b]`` bytes/s (for a node-bin, the
    node's rate); ``node[b]`` indexes ``node_rate`` (bytes/s) where a node row binds, else -1."""

    aggregator: np.ndarray
    rate: np.ndarray
    node: np.ndarray
    node_rate: np.ndarray


def bins(instance: FileDomainInstance) -> Bins:
    """The bins of the module docstring: one per node that has an aggregator at least as fast as the
    node (its fastest writes the node's data), else one per aggregator (with the node's row where
    the node is slower than its aggregators together)."""
    bw = np.asarray(instance.bandwidth.aggregator, dtype=float) * GB
    P = instance.aggregators
    if instance.bandwidth.node is None:
        return Bins(np.arange(P), bw, np.full(P, -1), np.zeros(0))
    node_bw = np.asarray(instance.bandwidth.node, dtype=float) * GB
    nodes = np.asarray(instance.aggregator_nodes)
    order = np.lexsort((-bw, nodes))  # by node, fastest first
    first = np.r_[True, nodes[order][1:] != nodes[order][:-1]]
    node_of_group = nodes[order][first]
    fastest = order[first]
    total = np.add.reduceat(bw[order], np.flatnonzero(first))
    merged = bw[fastest] >= node_bw[node_of_group]
    group = np.cumsum(first) - 1  # the node group of each aggregator in ``order``
    alone = order[~merged[group]]  # aggregators of the other nodes: a bin each
    g = group[~merged[group]]
    binds = node_bw[node_of_group] < total
    rows = np.cumsum(binds & ~merged) - 1  # a row per unmerged node whose row binds
    return Bins(np.r_[fastest[merged], alone], np.r_[node_bw[node_of_group[merged]], bw[alone]],
                np.r_[np.full(int(merged.sum()), -1), np.where(binds[g], rows[g], -1)],
                node_bw[node_of_group[binds & ~merged]])


@dataclass(frozen=True)
class Sequence:
    """One lock sequence: positions into the Units (in lock order), their data bytes, and the fixed
    time (s) its lock time adds to (the server's data over its bandwidth; 0 for the token sequence)."""

    units: np.ndarray
    weight: np.ndarray
    base: float

    @property
    def bounds(self) -> np.ndarray:
        return np.r_[0, np.cumsum(self.weight)]


def sequences(instance: FileDomainInstance, units: Units) -> list[Sequence]:
    return [Sequence(seq, units.weight[seq], float(units.server_time[s]) if s >= 0 else 0.0)
            for seq, s in zip(units.sequences, units.sequence_server)]


def lock_time(instance: FileDomainInstance, runs, segments):
    """The lock time (s) of a sequence cut into ``runs`` runs over ``segments`` clean segments."""
    A, R = instance.acquire_s, instance.revoke_s
    return A * runs + R * (2 * runs - segments - 1)


MAX_LEVELS = 10**6  # (runs, segments) pairs enumerated for the levels; beyond, the search bisects on time


def levels(instance: FileDomainInstance, seqs: list[Sequence], lo: float, hi: float) -> np.ndarray | None:
    """The distinct values base_k + lock_time(Y, Z) in (lo, hi), sorted: where the allowed structures
    change (None: more than MAX_LEVELS pairs to enumerate)."""
    A, R = instance.acquire_s, instance.revoke_s
    if A + 2 * R <= 0:
        return np.zeros(0)
    out, pairs = [], 0
    for base, n in {(s.base, len(s.weight)) for s in seqs}:
        Z = np.arange(1, n + 1)
        top = int(max(0.0, (hi - base + R + R * n) / (A + 2 * R))) + 1  # the most runs a level below hi allows
        pairs += top * n
        if pairs > MAX_LEVELS:
            return None
        Y = np.arange(1, top + 1)
        YY, ZZ = np.meshgrid(Y, Z)
        v = base + lock_time(instance, YY[YY >= ZZ], ZZ[YY >= ZZ])
        out.append(v[(v > lo) & (v < hi)])
    return np.unique(np.concatenate(out)) if out else np.zeros(0)


@dataclass
class SegmentModel:
    """The segment model at time ``time_s`` (module docstring), with what is needed to read a solution.

    ``pieces[k]``: per segment (i, j) of sequence k, its z column and its (bin, column, kind) pieces,
    kind "whole" (a binary for the whole segment) or "split" (the bytes column, scaled).
    ``tau``: the objective column (time over ``time_s``) when the model minimises the time;
    ``unit``: bytes per unit of a split piece's column.
    """

    matrix: Matrix
    time_s: float
    unit: float
    bins: Bins
    seqs: list[Sequence]
    units: Units
    pieces: list[dict]
    tau: int | None


def capacities(rate: np.ndarray, time_s: float) -> np.ndarray:
    """Whole bytes each rate (bytes/s) carries in ``time_s`` (relaxed by RELAX), as int64."""
    return np.floor(np.asarray(rate) * time_s * (1 + RELAX)).astype(np.int64)


def check_size(instance: FileDomainInstance, units: Units | None = None) -> Units:
    """The lock units, once the segment model's smallest size (a z column per segment) is known to fit
    MAX_COLUMNS (else a ParameterError naming it): checked before anything else runs."""
    units = units or lock_units(instance, 10**7)
    segments = sum(len(s) * (len(s) + 1) // 2 for s in units.sequences)
    if segments > MAX_COLUMNS:
        raise ParameterError(f"the segment model would have at least {segments} columns (one per run of whole "
                             f"lock units of one sequence); it takes at most {MAX_COLUMNS}: use engine=milp")
    return units


def estimate_columns(instance: FileDomainInstance, time_s: float, units: Units | None = None) -> int:
    """Columns of the segment model at ``time_s`` (counted before it is built)."""
    units = units or lock_units(instance, 10**7)
    caps = np.sort(capacities(bins(instance).rate, time_s))
    total = 0
    for s in sequences(instance, units):
        n = len(s.weight)
        W = s.bounds
        span = (W[None, :] - W[:, None])[np.triu_indices(n + 1, 1)]
        total += len(span) + int((len(caps) - np.searchsorted(caps, span)).sum())  # z, and whole where it fits
        if _split_allowed(instance, s, time_s):
            total += len(span) * (1 + 2 * len(caps))
    return total


def _split_allowed(instance: FileDomainInstance, seq: Sequence, time_s: float) -> bool:
    """Some (Y, Z) with a dirty cut (Y = Z + 1, best at Z = 1) fits the sequence's lock budget."""
    return seq.base + lock_time(instance, 2, 1) <= time_s * (1 + RELAX)


def _lock_budget(instance: FileDomainInstance, seq: Sequence, time_s: float) -> float:
    """The right-hand side b of (A + 2R) Y - R Z <= b that admits exactly the integer (Y, Z) whose
    lock time fits in ``time_s`` (as the evaluator adds it up, with RELAX): midway between the
    largest admitted value of the left-hand side and the smallest refused one, so that no solver
    tolerance can admit a structure of the next level."""
    A, R = instance.acquire_s, instance.revoke_s
    limit = time_s * (1 + RELAX)

    def fits(y: int, z: int) -> bool:
        return y >= z and seq.base + lock_time(instance, y, z) <= limit

    admitted, refused = [], []
    for z in range(1, len(seq.weight) + 1):
        y = max(z - 1, math.floor((limit - seq.base + R + R * z) / (A + 2 * R)))
        while fits(y + 1, z):  # the floor's rounding put right against the evaluator's own sum
            y += 1
        while y >= z and not fits(y, z):
            y -= 1
        if y >= z:
            admitted.append((A + 2 * R) * y - R * z)
        refused.append((A + 2 * R) * max(y + 1, z) - R * z)
    if not admitted:
        return min(refused) / 2
    return (max(admitted) + min(refused)) / 2


def needs_whole_bytes(instance: FileDomainInstance, units: Units, gap: float = 1e-4) -> bool:
    """Whether split bytes must be integer columns: rounding continuous ones adds at most a byte per
    piece, so at most one per lock unit to a bin; beside the data per bin (data / bins) that must
    stay under a tenth of ``gap`` for a rounded solution to meet a bound of the continuous model."""
    return len(units.weight) * len(bins(instance).rate) > gap / 10 * instance.data_bytes


def build(instance: FileDomainInstance, time_s: float, minimise: bool = False, lower_s: float = 0.0,
          units: Units | None = None, whole_bytes: bool | None = None, deadline: Deadline | None = None
          ) -> SegmentModel:
    """The segment model with every capacity at ``time_s`` (s); with ``minimise`` the time as the
    objective (at least ``lower_s``); the bytes of split segments integer (``whole_bytes``, by
    default where :func:`needs_whole_bytes`) or continuous. Refuses (ParameterError) more than
    MAX_COLUMNS columns; stops (OutOfTime) once ``deadline`` has passed."""
    units = units or lock_units(instance, 10**7)
    if whole_bytes is None:
        whole_bytes = needs_whole_bytes(instance, units)
    estimate = estimate_columns(instance, time_s, units)
    if estimate > MAX_COLUMNS:
        raise ParameterError(f"the segment model at {time_s:.6g} s would have {estimate} columns "
                             f"(segments x bins); it takes at most {MAX_COLUMNS}: use engine=milp")
    b = bins(instance)
    seqs = sequences(instance, units)
    A, R = instance.acquire_s, instance.revoke_s
    scale = float(max(units.weight.max(), 1))
    cap_bytes = capacities(b.rate, time_s)
    caps = cap_bytes / scale
    unit = 1.0 if whole_bytes else scale  # bytes per unit of a split piece's column
    M = Matrix()
    floor = float(units.server_time.max())  # every server's data over its bandwidth
    tau = M.col(max(lower_s, floor) / time_s, 1.0, integer=False, cost=1.0) if minimise else None
    if floor > time_s * (1 + RELAX):
        M.row([], [], lo=1)  # no solution: a server alone takes longer
    loads: list[tuple[list, list]] = [([], []) for _ in range(len(caps))]
    pieces = []
    for seq in ticking(seqs, deadline):
        n, Wb = len(seq.weight), seq.bounds  # whole bytes: compared as integers, entered scaled
        split = _split_allowed(instance, seq, time_s)
        out: list[list[int]] = [[] for _ in range(n + 1)]
        into: list[list[int]] = [[] for _ in range(n + 1)]
        runs, segs, mine = [], [], {}
        for i in range(n):
            for j in range(i + 1, n + 1):
                size = int(Wb[j] - Wb[i])
                weight = size / scale
                z = M.col(0, 1)
                out[i].append(z)
                into[j].append(z)
                segs.append(z)
                parts, got = [], []
                for fits in np.flatnonzero(cap_bytes >= size):
                    v = M.col(0, 1)
                    parts.append(v)
                    runs.append(v)
                    got.append((int(fits), v, "whole"))
                    loads[fits][0].append(v)
                    loads[fits][1].append(weight)
                if split:
                    s = M.col(0, 1)
                    parts.append(s)
                    xs, ys = [], []
                    for bb in range(len(caps)):
                        top = min(size, int(cap_bytes[bb])) / unit
                        y, x = M.col(0, 1), M.col(0, top, integer=whole_bytes)
                        M.row([x, y], [1, -top], hi=0)  # bytes only with a piece
                        M.row([y, s], [1, -1], hi=0)  # pieces only in a split segment
                        xs.append(x)
                        ys.append(y)
                        runs.append(y)
                        got.append((bb, x, "split"))
                        loads[bb][0].append(x)
                        loads[bb][1].append(unit / scale)
                    M.row(xs + [s], [1] * len(xs) + [-size / unit], lo=0, hi=0)  # the segment's bytes
                    M.row(ys + [s], [1] * len(ys) + [-2], lo=0)  # at least two owners
                M.row(parts + [z], [1] * len(parts) + [-1], lo=0, hi=0)  # whole or split, when chosen
                mine[i, j] = (z, got)
        M.row(out[0], [1] * len(out[0]), lo=1, hi=1)
        for p in range(1, n):
            M.row(out[p] + into[p], [1] * len(out[p]) + [-1] * len(into[p]), lo=0, hi=0)
        pieces.append(mine)
        if A + 2 * R > 0:  # base + (A + 2R) Y - R Z - R <= T, in units of T
            coefs = [(A + 2 * R) / time_s] * len(runs) + [-R / time_s] * len(segs)
            M.row(runs + segs, coefs, hi=_lock_budget(instance, seq, time_s) / time_s)
            if minimise:
                M.row(runs + segs + [tau], coefs + [-1.0], hi=(R - seq.base) / time_s + RELAX)
    for bb, (cols, coefs) in enumerate(loads):
        M.row(cols, coefs, hi=caps[bb])
        if minimise:
            M.row(cols + [tau], list(coefs) + [-b.rate[bb] * time_s / scale * (1 + RELAX)], hi=0)  # not floored
    for n in range(len(b.node_rate)):
        members = np.flatnonzero(b.node == n)
        cols = [c for bb in members for c in loads[bb][0]]
        coefs = [c for bb in members for c in loads[bb][1]]
        cap = capacities(b.node_rate[n:n + 1], time_s)[0] / scale
        M.row(cols, coefs, hi=cap)
        if minimise:
            M.row(cols + [tau], coefs + [-b.node_rate[n] * time_s / scale * (1 + RELAX)], hi=0)
    return SegmentModel(M, time_s, unit, b, seqs, units, pieces, tau)


def build_segments(instance: FileDomainInstance, time_s: float | None = None) -> ConcreteModel:
    """The segment model (module docstring) at ``time_s`` seconds (default: the cheap bound
    ``time_bound``), minimising the time below it, as a Pyomo model for inspection."""
    t = time_bound(instance) * (1 + 1e-4) if time_s is None else float(time_s)
    return build(instance, t, minimise=True).matrix.pyomo("filedomain-segments")


# --- solving and reading ----------------------------------------------------------------------------

@dataclass
class Outcome:
    """One solve of a segment model: status, domains (if a solution), dual bound (s, or None), wall time (s)."""

    status: Status
    domains: Domains | None
    bound_s: float | None
    wall_s: float


def run(model: SegmentModel, profile: Profile, instance: FileDomainInstance) -> Outcome:
    """Solve ``model`` on the profile's backend (:func:`iosched.models.matrix.solve`: HiGHS directly, the
    others through MPS); a minimising model's dual bound comes back in seconds, less BOUND_SLACK."""
    outcome, x = solve_matrix(model.matrix, profile)
    domains = read(model, x, instance) if outcome.has_solution and x is not None else None  # (x with a solution)
    bound = None
    if model.tau is not None and outcome.status in (Status.OPTIMAL, Status.TIME_LIMIT) and outcome.bound is not None:
        bound = outcome.bound * model.time_s * (1 - BOUND_SLACK)
    return Outcome(outcome.status, domains, bound, outcome.wall_time_s)


def read(model: SegmentModel, x: np.ndarray, instance: FileDomainInstance) -> Domains:
    """Domains from a solution of the model: per sequence its segments in order, their pieces laid
    out over the units (split amounts rounded to bytes keeping each segment's total)."""
    per_unit: list[list[tuple[int, int]]] = [[] for _ in range(len(model.units.weight))]
    agg = model.bins.aggregator
    for seq, mine in zip(model.seqs, model.pieces):
        n, W = len(seq.weight), seq.bounds
        at, last = 0, -1
        while at < n:
            j = next(j for j in range(at + 1, n + 1) if x[mine[at, j][0]] > 0.5)
            got = mine[at, j][1]
            whole = [bb for bb, c, kind in got if kind == "whole" and x[c] > 0.5]
            if whole:
                owners, amounts = [whole[0]], [int(W[j] - W[at])]
            else:
                owners, amounts = _split(got, x * model.unit, int(W[j] - W[at]), last)
            last = owners[-1]
            lay_pieces(per_unit, seq, at, owners, amounts, agg)
            at = j
    owners = [a for unit in per_unit for a, _ in unit]
    amounts = [n for unit in per_unit for _, n in unit]
    return from_sequence(instance, owners, amounts)


def _split(got, x, total: int, previous: int) -> tuple[list[int], list[int]]:
    """The pieces of a split segment: bins with bytes (rounded off HiGHS's tolerances to sum ``total``), the previous
    segment's owner first when it has a piece (the run then goes on)."""
    bins_, amounts = zip(*[(bb, x[c]) for bb, c, kind in got if kind == "split" and x[c] > 0.5])
    amounts = np.asarray(amounts) * (total / sum(amounts))
    whole = np.floor(amounts).astype(np.int64)
    whole[np.argsort(-(amounts - whole), kind="stable")[:total - int(whole.sum())]] += 1
    order = sorted(range(len(bins_)), key=lambda i: bins_[i] != previous)
    return [bins_[i] for i in order if whole[i] > 0], [int(whole[i]) for i in order if whole[i] > 0]


def lay_pieces(per_unit: list, seq: Sequence, start: int, owners: list[int], amounts: list[int],
               agg: np.ndarray) -> None:
    """Lay consecutive pieces (bin, bytes) over the sequence's units from unit ``start`` on, appending
    (aggregator ``agg[bin]``, bytes) to ``per_unit`` (one list per lock unit, in file order)."""
    u, room = start, int(seq.weight[start])
    for owner, amount in zip(owners, amounts):
        while amount > 0:
            take = min(amount, room)
            per_unit[int(seq.units[u])].append((int(agg[owner]), take))
            amount -= take
            room -= take
            if room == 0 and u + 1 < len(seq.weight):
                u += 1
                room = int(seq.weight[u])


# --- the search ---------------------------------------------------------------------------------------

def search(instance: FileDomainInstance, profile: Profile, deadline: Deadline, incumbent: Domains,
           info: dict, incumbent_s: float | None = None) -> tuple[Domains, float, bool]:
    """The level search of the module docstring from ``incumbent`` (a solution: the best heuristic's, of
    time ``incumbent_s`` where known: on 10^6 aggregators an evaluation takes seconds):
    (best domains, bound valid for every solution, proved optimal within the profile's gap).
    ``info["tests"]`` gets each test: its time (s), whether it minimised, its result (infeasible,
    feasible, optimal when minimising, time_limit) and the time (s) of the solution it found."""
    units = check_size(instance)
    lb = time_bound(instance, incumbent_s, deadline)
    best, ub = incumbent, evaluate(instance, incumbent).time if incumbent_s is None else incumbent_s
    tol = max(profile.rel_gap, 2e-6)
    seqs = sequences(instance, units)
    tests: list[dict] = []
    info["tests"] = tests
    estimate = estimate_columns(instance, ub, units)  # the largest model the search may build
    if estimate > MAX_COLUMNS:
        raise ParameterError(f"the segment model would have up to {estimate} columns (segments x bins); "
                             f"it takes at most {MAX_COLUMNS}: use engine=milp")
    passed = lb  # the highest level proved out of reach (a test just below it was infeasible)
    first, stuck = True, False
    while ub - lb > tol * ub and not deadline.expired():  # tests at gap / 2 leave room for RELAX
        level, minimise = None, False
        if first:
            t = lb * (1 + tol / 2)
        else:
            inside = levels(instance, seqs, max(lb, passed), ub * (1 - tol))
            if inside is None:  # too many levels to list: bisect on the time
                t = math.sqrt(max(lb, passed) * ub)
            elif len(inside) and not stuck:
                level = float(inside[len(inside) // 2])
                t = level * (1 - BELOW)
            else:  # the last band, or a test undecided: minimise below the incumbent with all the time left
                minimise, t = True, ub * (1 - tol / 2)
        first = False
        try:
            model = build(instance, t, minimise=minimise, lower_s=lb, units=units, deadline=deadline)
        except OutOfTime:
            break
        share = deadline.remaining() if minimise else max(deadline.remaining() / SHARE, min(1.0, deadline.remaining()))
        out = run(model, deadline.limit(replace(profile, time_limit=min(profile.time_limit, share))), instance)
        result = "feasible" if out.status == Status.OPTIMAL and not minimise else out.status.value
        record = {"time_s": t, "minimise": minimise, "result": result, "solver_time_s": out.wall_s}
        tests.append(record)
        if out.domains is not None:
            value = evaluate(instance, out.domains).time
            record["found_s"] = value
            if value < ub:
                best, ub = out.domains, value
        if out.status == Status.INFEASIBLE:
            lb = max(lb, t * (1 - RELAX))
            passed = max(passed, level or t)
        elif out.bound_s is not None:
            lb = max(lb, min(t * (1 - RELAX), out.bound_s))
        if minimise or out.status == Status.ERROR:
            break
        stuck = out.domains is None and out.status != Status.INFEASIBLE  # undecided in its share
    return best, lb, ub - lb <= tol * ub

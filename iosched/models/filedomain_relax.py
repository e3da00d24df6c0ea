"""The count relaxation of the file-domain time, its search on T, and the problem's bound built on it
(:func:`time_bound`): a bound for every partition.

**Runs and split units.** As in :mod:`iosched.models.filedomain_segments`, any partition can be
rearranged inside each lock unit (an owner's bytes of a unit made contiguous, the first and last
owners continuing the neighbours' runs) without raising any term, since aggregator and node bytes
stay the same and a sequence's grants and conflicts do not grow. In that form a lock sequence k
(a server's units in object order with extent locking; all blocks in file order with tokens) of
data D_k in U_k units is cut into Y_k runs (grants) by Y_k - 1 cuts, E_k of which lie inside a
unit (dirty); a unit with o > 1 owners holds o - 1 dirty cuts, so conflicts = Y_k - 1 + E_k and at
most E_k units are split. With ``io = stripe`` grants are only more, so bounds for ``io = extent``
hold for both.

**The count relaxation** at T (:func:`relaxed_test`) keeps of a partition only integers: per
sequence (Y_k, E_k) under the lock staircase; per (sequence, aggregator) its runs n, data bytes
q, whole units m_j of each weight class j, pieces p in split units and their bytes r; per
aggregator and node the byte capacity. Every partition whose terms are all <= T gives a point
(the argument per constraint is in :func:`relaxed_test`), so "no point" proves that every
partition has a term > T, hence >= the next value a term can take (the next *event*, see
:func:`count_bound`). That is each step of :func:`count_bound`'s search on T. A step is proved by
counting alone (:func:`setting`: integers compared, no solver) or by CP-SAT on the model, whose
arithmetic on integers is exact: no tolerance enters the proof, and where the search closes, its
result is an event, a value the evaluator itself produces, so it can meet a solution's evaluated
time exactly.

On the library's sweep:8:30 (8 servers x 16 stripes of 1 MiB, 30 aggregators at 0.25 GB/s) the
counting is issue 47's argument: below 5 MiB / 0.25 GB/s every aggregator holds < 5 MiB, so each
server's 16 MiB needs 4 runs; with 4 runs its lock staircase admits no dirty cut, so its runs are
whole stripes, at most 4 MiB each: 4 runs of exactly 4 MiB, and an aggregator (< 5 MiB) holds one
such run at most; 8 x 4 = 32 runs > 30 aggregators.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from iosched.errors import ParameterError
from iosched.evaluate.filedomain import evaluate
from iosched.instances.filedomain import FileDomainInstance
from iosched.models.filedomain_bounds import (
    Capacities,
    byte_time,
    caps_at,
    cheap_bound,
    lock_term,
    next_down,
    next_up,
    rates,
)
from iosched.models.filedomain_units import aggregator_classes, lock_units, node_classes
from iosched.solvers import Deadline

MAX_CLASSES = 8  # unit weight classes per sequence kept exact; rarer weights become free bytes
MAX_RELAX_CELLS = 20_000  # sequences x aggregators x (classes + 4) variables: larger instances skip the relaxation
MAX_TABLE = 4096  # lock staircase entries per sequence; beyond, a weaker linear form (still valid)
MAX_LEVELS = 20_000  # lock levels listed for the search; beyond, the search cannot close (its bound stays valid)
MAX_RELAX_BYTES = 2**52  # data bytes for the relaxation (CP-SAT's int64 sums stay far from overflow)
RELAX_WALL_S = 30.0  # wall-clock guard of the search (or what is left of the method's budget)
RELAX_DETERMINISTIC_S = 1.0  # CP-SAT deterministic time for one whole search (reproducible)
# and for one test: the proofs come almost always from :func:`setting`'s counting (on the library and on
# generated instances no test that passed it was proved by CP-SAT, which then only finds points, or not:
# an undecided test moves the upper end as a feasible one does)
TEST_DETERMINISTIC_S = 0.03


# --- the lock staircase -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sequence:
    """A lock sequence for the bounds: unit data weights in lock order, its base time (the server's
    data time; 0 for the token sequence) and its server (-1 for the token sequence)."""

    weights: np.ndarray
    base: float
    server: int = -1

    @property
    def data(self) -> int:
        return int(self.weights.sum())


def bound_sequences(instance: FileDomainInstance) -> list[Sequence]:
    units = lock_units(instance, 10**7)
    return [Sequence(units.weight[seq], float(units.server_time[s]) if s >= 0 else 0.0, s)
            for seq, s in zip(units.sequences, units.sequence_server)]


def _last_true(pred, lo: int, hi: int) -> int:
    """The largest x in [lo, hi] with pred(x) (pred monotone decreasing, true at lo)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if pred(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _fits(instance: FileDomainInstance, base: float, y, c, T: float):
    """Whether the lock terms of (grants y, conflicts c) (arrays) are <= T, as the evaluator adds them up."""
    lock = instance.acquire_s * np.asarray(y, dtype=float) + instance.revoke_s * np.asarray(c, dtype=float)
    return (base + lock if instance.locking == "extent" else lock) <= T


def lock_table(instance: FileDomainInstance, seq: Sequence, T: float, ycap: int):
    """The pairs (runs Y, dirty cuts E) of ``seq`` whose lock term is <= T, with Y <= ``ycap`` and
    E <= Y - 1 (dirty cuts are cuts): None when even one run is too much, else (Ymax, emax, None) where
    emax[Y - 1] is the most E at Y (a list), or (Ymax, None, cmax1) when the staircase is longer
    than MAX_TABLE (then only Y <= Ymax and Y - 1 + E <= cmax1, the conflicts one run allows). The
    estimates from the real-valued line are put right against the evaluator's own sums."""
    A, R = instance.acquire_s, instance.revoke_s
    base = seq.base if instance.locking == "extent" else 0.0
    if not _fits(instance, base, 1, 0, T):
        return None
    if A + R == 0:
        ymax = max(1, ycap)
    else:
        ymax = int(min(max(1, ycap), max(1.0, (T - base + R) / (A + R))))
        while ymax < ycap and _fits(instance, base, ymax + 1, ymax, T):
            ymax += 1
        while ymax > 1 and not _fits(instance, base, ymax, ymax - 1, T):
            ymax -= 1
    if ymax > MAX_TABLE:
        return ymax, None, _last_true(lambda c: bool(_fits(instance, base, 1, c, T)), 0, 2 * ycap)
    y = np.arange(1, ymax + 1)
    if R > 0:
        e = np.floor((T - base - A * y - R * (y - 1)) / R).astype(np.int64)
    else:
        e = y - 1
    e = np.clip(e, 0, y - 1)
    while True:  # the estimate within an ulp or two of the evaluator's sums: put right
        up = (e < y - 1) & _fits(instance, base, y, y - 1 + e + 1, T)
        down = (e > 0) & ~_fits(instance, base, y, y - 1 + e, T)
        if not up.any() and not down.any():
            return ymax, e.tolist(), None
        e = e + up - down


def longest_run(weights: np.ndarray, cap: int, clean: bool) -> int:
    """The most data one run can hold: at most ``cap`` bytes and the sequence's data; with ``clean``
    (no dirty cut allowed) a run is whole consecutive units, so the largest such sum <= cap."""
    total = int(weights.sum())
    if not clean:
        return min(total, cap)
    best, s, i = 0, 0, 0
    w = weights.tolist()
    for j in range(len(w)):  # two pointers: the window ending at j
        s += w[j]
        while s > cap:
            s -= w[i]
            i += 1
        best = max(best, s)
    return best

# --- the count relaxation -------------------------------------------------------------------------------

@dataclass
class Relaxed:
    """A point of the count relaxation: per (sequence, aggregator) its bytes, per sequence (runs, dirty
    cuts) and server (-1 with tokens), and ``value``, the largest of its terms (a float <= the T tested)."""

    value: float
    loads: np.ndarray  # sequences x aggregators (bytes)
    runs: list
    dirty: list
    servers: list


def relaxation_size(instance: FileDomainInstance, seqs: list[Sequence]) -> int:
    """Variables of the count relaxation (about): sequences x aggregators x (weight classes + 4)."""
    classes = sum(min(MAX_CLASSES, len(np.unique(s.weights))) + 4 for s in seqs)
    return classes * instance.aggregators


@dataclass
class Setting:
    """What the count relaxation at T is built from: per aggregator its byte capacity (its own, within
    its node's where that is less), binding node capacities, and per sequence its staircase, longest
    run L, least run ρ, whether dirty cuts are possible at all and the fewest runs ⌈D_k / L⌉."""

    T: float
    cap: list
    node_cap: dict
    node_members: dict
    tables: list
    longest: list
    least: list
    clean: list
    fewest: list


def setting(instance: FileDomainInstance, seqs: list[Sequence], T: float, caps: Capacities | None = None
            ) -> Setting | None:
    """The data of the count relaxation at T, or None when a counting argument alone already shows it
    has no point: a server (token: the servers' floor) over T, the data over the aggregators' and
    nodes' capacities, one run over the staircase, a sequence needing more runs ⌈D_k / L_k⌉ than its
    staircase allows, or more runs needed Σ_k ⌈D_k / L_k⌉ than the aggregators can hold when every
    run holds at least min_k ρ_k bytes (Σ_a ⌊cap_a / ρ⌋). Runs hold at most the largest capacity, so
    a sequence has at least ⌈D_k / L_k⌉ runs; where no staircase entry with that many runs admits a
    dirty cut, its runs are whole units and L_k shrinks to the largest whole-unit window (repeated
    until it holds)."""
    bw = instance.bandwidth
    P, D = instance.aggregators, instance.data_bytes
    if instance.locking == "token" and float((instance.server_bytes() / rates(bw.server)).max()) > T:
        return None
    caps = caps or Capacities(instance)
    if caps.total(T) < D:
        return None
    cap = caps.aggregators(T).astype(np.int64)
    node_cap: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    if bw.node is not None:
        for a, n in enumerate(instance.aggregator_nodes):
            members.setdefault(n, []).append(a)
        node_rates = rates(bw.node)
        distinct, inverse = np.unique(node_rates, return_inverse=True)
        per_node = caps_at(distinct, T, D)[inverse]
        for n, group in members.items():
            c = int(per_node[n])
            if c < int(cap[group].sum()):
                node_cap[n] = c
                cap[group] = np.minimum(cap[group], c)
    capmax = int(cap.max())
    tables, longest, least, clean, fewest = [], [], [], [], []
    for s in seqs:
        table = lock_table(instance, s, T, min(s.data, P * len(s.weights), 2**31))
        if table is None:
            return None
        ymax, emax, _ = table
        L, only_clean = min(s.data, capmax), False
        while True:  # runs hold <= L, so Y >= ⌈D_k / L⌉; if no such Y admits a dirty cut, runs are whole units
            ymin = -(-s.data // L) if L else ymax + 1
            if ymin > ymax:
                return None
            only_clean = emax is not None and max(emax[ymin - 1:]) == 0
            shorter = longest_run(s.weights, capmax, only_clean)
            if shorter == L:
                break
            L = shorter
        tables.append(table)
        longest.append(L)
        least.append(max(1, s.data - L * (ymax - 1)))
        clean.append(only_clean)
        fewest.append(ymin)
    if int((cap // min(least)).sum()) < sum(fewest):
        return None
    return Setting(T, cap.tolist(), node_cap, members, tables, longest, least, clean, fewest)


def relaxed_test(instance: FileDomainInstance, seqs: list[Sequence], T: float, det_s: float, wall_s: float,
                 caps: Capacities | None = None):
    """(result, point, deterministic time used): ('infeasible', None, .) when no point of the count
    relaxation has every term <= T (a proof that every partition takes more than T), ('feasible',
    Relaxed, .) with a point, or ('unknown', None, .) when CP-SAT's budget ran out.

    Validity, constraint by constraint, for a partition in the rearranged form whose terms are <= T
    (module docstring): (Y_k, E_k) lies under the staircase, Y_k >= ⌈D_k / L_k⌉ (:func:`setting`);
    Σ_a n_ka = Y_k (each run has one owner);
    Σ_a q_ka = D_k; n_ka <= q_ka (a run holds a byte) and q_ka <= L_k n_ka (no run holds more than L_k,
    see :func:`longest_run`: with no dirty cut allowed a run is whole units); q_ka >= D_k - L_k (Y_k -
    n_ka) (the other runs hold at most L_k each); units of weight class j are whole to one owner or
    split: Σ_a m_kja + σ_kj = c_kj and Σ_j σ_kj <= E_k (a split unit holds a dirty cut); a run
    holds a whole unit or a piece of a split one (or free bytes): n_ka <= Σ_j m_kja + p_ka + f_ka;
    pieces in split units lie at run ends, p_ka <= 2 n_ka; a split unit of o owners has o pieces and
    o - 1 dirty cuts, 2 σ <= Σ_a p_ka <= σ + E_k; each piece has 1 to ω - 1 bytes, p <= r <= (ω_max -
    1) p, Σ_a r_ka = Σ_j ω_j σ_kj; q_ka = Σ_j ω_j m_kja + r_ka + f_ka; B_a = Σ_k q_ka <= cap_a(T), a
    node's sum <= its cap; Σ_k ρ_k n_ka <= cap_a with ρ_k = D_k - L_k (Ymax_k - 1) (each run holds at
    least that); interchangeable aggregators and nodes (:func:`aggregator_classes`, :func:`node_classes`)
    ordered by bytes.
    """
    from ortools.sat.python import cp_model

    st = setting(instance, seqs, T, caps)
    if st is None:
        return "infeasible", None, 0.0
    P = instance.aggregators
    cap = st.cap
    m = cp_model.CpModel()
    load: list[list[cp_model.IntVar]] = [[] for _ in range(P)]
    rho_terms: list[list[tuple[int, cp_model.IntVar]]] = [[] for _ in range(P)]
    seq_vars = []
    for k, s in enumerate(seqs):
        U, Dk, L = len(s.weights), s.data, st.longest[k]
        ymax, emax, cmax1 = st.tables[k]
        split = not st.clean[k]
        Y = m.new_int_var(st.fewest[k], ymax, f"Y{k}")
        emax_top = max(emax) if emax is not None else min(ymax - 1, max(0, cmax1))
        E = m.new_int_var(0, emax_top, f"E{k}")
        m.add(E <= Y - 1)
        if emax is not None:
            bound_e = m.new_int_var(0, emax_top, f"Emax{k}")
            m.add_element(Y - 1, emax, bound_e)
            m.add(E <= bound_e)
        else:
            m.add(Y - 1 + E <= cmax1)
        weights, counts = np.unique(s.weights, return_counts=True)
        order = np.argsort(-counts, kind="stable")
        keep = order[:MAX_CLASSES] if len(order) <= MAX_CLASSES else order[:MAX_CLASSES - 1]
        cls = [(int(weights[j]), int(counts[j])) for j in keep]
        free = Dk - sum(w * c for w, c in cls)
        wmax = max(w for w, _ in cls)
        sigma = [m.new_int_var(0, c if split else 0, f"s{k}_{j}") for j, (_, c) in enumerate(cls)]
        if split:
            m.add(sum(sigma) <= E)
        rho = st.least[k]
        nmax = min(U, ymax)
        n_vars, q_vars, p_vars, r_vars, f_vars = [], [], [], [], []
        m_vars: list[list[cp_model.IntVar]] = [[] for _ in cls]
        for a in range(P):
            n = m.new_int_var(0, nmax, f"n{k}_{a}")
            q = m.new_int_var(0, min(Dk, cap[a], L * nmax), f"q{k}_{a}")
            ms = [m.new_int_var(0, min(c, cap[a] // w), f"m{k}_{j}_{a}") for j, (w, c) in enumerate(cls)]
            parts = [w * mv for (w, _), mv in zip(cls, ms)]
            extra = []
            if split:
                p = m.new_int_var(0, min(2 * nmax, U), f"p{k}_{a}")
                r = m.new_int_var(0, min(cap[a], (wmax - 1) * min(2 * nmax, U)), f"r{k}_{a}")
                m.add(p <= 2 * n)
                m.add(r >= p)
                m.add(r <= (wmax - 1) * p)
                parts.append(r)
                extra.append(p)
                p_vars.append(p)
                r_vars.append(r)
            if free:
                f = m.new_int_var(0, min(free, cap[a]), f"f{k}_{a}")
                parts.append(f)
                extra.append(f)
                f_vars.append(f)
            m.add(q == sum(parts))
            m.add(n <= q)
            m.add(q <= L * n)
            m.add(q >= Dk - L * Y + L * n)
            m.add(n <= sum(ms) + sum(extra))
            n_vars.append(n)
            q_vars.append(q)
            for j, mv in enumerate(ms):
                m_vars[j].append(mv)
            load[a].append(q)
            rho_terms[a].append((rho, n))
        m.add(sum(n_vars) == Y)
        m.add(sum(q_vars) == Dk)
        for j, (_, c) in enumerate(cls):
            m.add(sum(m_vars[j]) + sigma[j] == c)
        if split:
            m.add(sum(r_vars) == sum(w * sg for (w, _), sg in zip(cls, sigma)))
            m.add(sum(p_vars) <= sum(sigma) + E)
            m.add(sum(p_vars) >= 2 * sum(sigma))
        if free:
            m.add(sum(f_vars) == free)
        seq_vars.append((Y, E, q_vars))
    B = []
    for a in range(P):
        b = m.new_int_var(0, cap[a], f"B{a}")
        m.add(b == sum(load[a]))
        B.append(b)
        g = math.gcd(*[r for r, _ in rho_terms[a]])
        m.add(sum((r // g) * n for r, n in rho_terms[a]) <= cap[a] // g)
    for n, c in st.node_cap.items():
        m.add(sum(B[a] for a in st.node_members[n]) <= c)
    for group in aggregator_classes(instance):
        for a, a_next in zip(group, group[1:]):
            m.add(B[a] >= B[a_next])
    for node_group in node_classes(instance):
        for members, next_members in zip(node_group, node_group[1:]):
            m.add(sum(B[a] for a in members) >= sum(B[a] for a in next_members))
    solver = cp_model.CpSolver()
    prm = solver.parameters
    prm.num_workers = 1
    prm.random_seed = 0
    prm.max_deterministic_time = max(det_s, 1e-3)
    prm.max_time_in_seconds = max(wall_s, 1e-3)
    code = solver.solve(m)
    used = solver.deterministic_time
    if code == cp_model.INFEASIBLE:
        return "infeasible", None, used
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return "unknown", None, used
    loads = np.array([[solver.value(q) for q in qs] for _, _, qs in seq_vars], dtype=np.int64).reshape(len(seqs), P)
    agg_bytes = loads.sum(axis=0)
    runs = [solver.value(Y) for Y, _, _ in seq_vars]
    dirty = [solver.value(E) for _, E, _ in seq_vars]
    bw = instance.bandwidth
    terms = [byte_time(b, r) for b, r in zip(agg_bytes.tolist(), rates(bw.aggregator))]
    for n, members in st.node_members.items():
        terms.append(byte_time(int(agg_bytes[members].sum()), rates(bw.node)[n]))
    for s, y, e in zip(seqs, runs, dirty):
        terms.append(lock_term(instance, s.base, y, y - 1 + e))
    if instance.locking == "token":
        terms.append(float((instance.server_bytes() / rates(bw.server)).max()))
    return "feasible", Relaxed(max(terms), loads, runs, dirty, [s.server for s in seqs]), used

# --- the search on T ---------------------------------------------------------------------------------------

@dataclass
class CountBound:
    """The count relaxation's bound: ``value`` (every partition's evaluated time is >= it), whether the
    search closed (``exact``: the relaxation has no point below ``value``), the last point found (or
    None), the tests run (T, result), why it stopped short (``note``) and whether more budget would
    change it (``final``)."""

    value: float
    exact: bool
    point: Relaxed | None
    tests: list
    note: str = ""
    final: bool = False  # more budget would not change it


def lock_levels(instance: FileDomainInstance, seqs: list[Sequence], lo: float, hi: float) -> list[float] | None:
    """The lock terms lock_term(base_k, Y, Y - 1 + E), E < Y, in (lo, hi], sorted, the token servers'
    floor among them: where a staircase changes (None when there are more than MAX_LEVELS, or more
    than that many pairs to look at). The pairs start a little below where the real-valued terms
    pass ``lo``."""
    A, R = instance.acquire_s, instance.revoke_s
    out: set[float] = set()
    if instance.locking == "token":
        floor = float((instance.server_bytes() / rates(instance.bandwidth.server)).max())
        out |= {floor} if lo < floor <= hi else set()
    looked = 0
    for base in {s.base for s in seqs}:
        b = base if instance.locking == "extent" else 0.0
        if A + R == 0:  # every pair gives the same term
            v = lock_term(instance, base, 1, 0)
            out |= {v} if lo < v <= hi else set()
            continue
        y = max(1, math.floor((lo - b + 2 * R) / (A + 2 * R)) - 2)  # below it, even E = Y - 1 stays <= lo
        while lock_term(instance, base, y, y - 1) <= hi:
            e0 = 0 if R == 0 else max(0, min(y - 1, math.floor((lo - b - A * y - R * (y - 1)) / R) - 2))
            for e in range(e0, y):
                v = lock_term(instance, base, y, y - 1 + e)
                looked += 1
                if v > hi:
                    break
                if v > lo:
                    out.add(v)
            if len(out) > MAX_LEVELS or looked > 10 * MAX_LEVELS:
                return None
            y += 1
    return sorted(out)


def event_rates(instance: FileDomainInstance) -> list[float]:
    """The distinct rates (bytes/s) of aggregators and nodes: their byte events are fl(B / r)."""
    bw = instance.bandwidth
    out = set(rates(bw.aggregator).tolist())
    return sorted(out | set(rates(bw.node).tolist()) if bw.node is not None else out)


def next_event(instance: FileDomainInstance, seqs: list[Sequence], x: float, hi: float) -> float:
    """The least event above ``x`` (at most ``hi``); the float above ``x`` where the lock levels are too
    many to list. Every partition whose time is > x takes at least it."""
    levels = lock_levels(instance, seqs, x, hi)
    if levels is None:
        return next_up(x)
    out = [hi] + levels[:1]
    for r in event_rates(instance):
        b = int(caps_at(np.array([r]), x, instance.data_bytes)[0]) + 1
        while byte_time(b, r) <= x:  # fl(b / r) repeats for b over 2^53
            b += 1
        out.append(byte_time(b, r))
    return min(out)


def event_below(instance: FileDomainInstance, seqs: list[Sequence], x: float) -> float:
    """The greatest event below ``x`` (0.0 when none is known)."""
    below = next_down(x)
    out = [0.0] + (lock_levels(instance, seqs, 0.0, below) or [])[-1:]
    out += [byte_time(int(caps_at(np.array([r]), below, instance.data_bytes)[0]), r) for r in event_rates(instance)]
    return max(out)


def trivial_time(instance: FileDomainInstance, seqs: list[Sequence]) -> float:
    """The evaluated time of one aggregator (the one whose own and node's rates are largest) writing
    everything: one run and no conflict per sequence; the relaxation has a point there."""
    bw = instance.bandwidth
    D = instance.data_bytes
    agg = rates(bw.aggregator)
    own = agg if bw.node is None else np.minimum(agg, rates(bw.node)[np.asarray(instance.aggregator_nodes)])
    a = int(np.argmax(own))
    terms = [byte_time(D, agg[a])]
    if bw.node is not None:
        terms.append(byte_time(D, rates(bw.node)[instance.aggregator_nodes[a]]))
    terms += [lock_term(instance, s.base, 1, 0) for s in seqs]
    if instance.locking == "token":
        terms.append(float((instance.server_bytes() / rates(bw.server)).max()))
    return max(terms)


def fits_relaxation(instance: FileDomainInstance) -> bool:
    """Whether the count relaxation is built for this instance (MAX_RELAX_CELLS, MAX_RELAX_BYTES),
    judged before its lock units are listed (at least 5 variables per server with data and aggregator)."""
    if instance.data_bytes > MAX_RELAX_BYTES:
        return False
    units = (instance.region_end - 1) // instance.unit_size - instance.region_offset // instance.unit_size + 1
    sequences = 1 if instance.locking == "token" else min(instance.stripe_count, units)
    return 5 * sequences * instance.aggregators <= MAX_RELAX_CELLS and units <= 10**6


def count_bound(instance: FileDomainInstance, lo: float, hi: float | None = None,
                det_s: float = RELAX_DETERMINISTIC_S, wall_s: float = RELAX_WALL_S) -> CountBound:
    """The least T at which the count relaxation has a point, searched in [lo, hi]: ``lo`` is a bound
    already proved (every partition's time is >= lo), ``hi`` the evaluated time of some partition
    (at most :func:`trivial_time`, the default), where the relaxation has a point.

    **Events.** Everything the relaxation at T is built from (:func:`setting`) is a function of T that
    changes only at *events*: the lock levels (:func:`lock_levels`, the token servers' floor among
    them), where a staircase changes, and for each distinct aggregator or node rate r the values
    fl(B / r), B integer, where a capacity of rate r reaches B bytes (capacities, longest and least
    runs follow). Between two consecutive events the relaxation is the same as at the lower one, and
    from one event to the next it only loosens, so its feasibility is monotone in T.

    **Search.** A test at an event e either proves the relaxation has no point there (every partition
    > e, so >= the next event) or moves the upper end to e. The proofs come almost always from
    :func:`setting`'s counting alone, which is cheap and itself monotone in T; CP-SAT's tests
    (:func:`relaxed_test`) cost far more, mostly to find points above the threshold. So the search
    runs twice: with counting alone, then, only where CP-SAT proves the relaxation empty at the first
    event counting lets through, with CP-SAT above it. Each run first tries the event just below the
    upper end (which closes it where the known partition is optimal), then, for each family in turn
    (levels, then each rate) within the interval left, gallops up from the highest event proved and
    bisects; in the CP-SAT run a point found first has its own value tried (often the threshold: the
    event below it is then proved at once). When no event of any family lies strictly between the
    highest event proved and the upper end, the relaxation has no point below the upper end, which
    is the bound (``exact``). Stopped by its budget (CP-SAT
    deterministic time ``det_s`` over all tests, TEST_DETERMINISTIC_S at most per test, and ``wall_s``), or
    with too many lock levels to list, it returns :func:`next_event` above the highest event proved.
    Instances the model does not fit (:func:`fits_relaxation`) get ``lo`` back with a note."""
    tests: list = []
    if not fits_relaxation(instance):
        return CountBound(lo, False, None, tests, "too large for the count relaxation", final=True)
    seqs = bound_sequences(instance)
    if relaxation_size(instance, seqs) > MAX_RELAX_CELLS:
        return CountBound(lo, False, None, tests, "too large for the count relaxation", final=True)
    hi = trivial_time(instance, seqs) if hi is None else min(hi, trivial_time(instance, seqs))
    if lo >= hi:
        return CountBound(lo, True, None, tests, final=True)
    caps = Capacities(instance)
    start, spent, best = time.perf_counter(), 0.0, None

    def out_of_budget(solve: bool) -> bool:
        return solve and spent >= det_s or time.perf_counter() - start >= wall_s

    def test(T, solve: bool) -> bool:
        """Whether the relaxation was proved to have no point at T: by :func:`setting`'s counting
        alone, or (``solve``) by CP-SAT."""
        nonlocal spent, best
        if not solve:
            refused = setting(instance, seqs, T, caps) is None
            tests.append((T, "infeasible" if refused else "counted"))
            return refused
        result, point, used = relaxed_test(instance, seqs, T, min(det_s - spent, TEST_DETERMINISTIC_S),
                                           wall_s - (time.perf_counter() - start), caps)
        spent += used
        tests.append((T, result))
        best = point or best
        return result == "infeasible"

    def narrow(proved: float, hi: float, solve: bool) -> tuple[float, float, bool]:
        """(proved, hi, whether no event is left strictly between them) after the event search."""
        nonlocal best
        below = event_below(instance, seqs, hi)  # the known partition is often optimal: then this closes it
        if below > proved and test(below, solve):
            proved = below
        pending, unlisted = True, False  # events left in (proved, hi); lock levels too many to list
        while pending and not out_of_budget(solve):
            pending = False
            for r in [None] + event_rates(instance):  # None: the lock levels
                if best is not None and proved < best.value < hi:  # a point's own value: often the threshold,
                    if test(best.value, solve):  # and the event below it is then proved at once
                        proved = best.value
                    else:
                        hi = best.value
                        below = event_below(instance, seqs, hi)
                        if below > proved and test(below, solve):
                            proved = below
                if r is None:
                    levels = lock_levels(instance, seqs, proved, next_down(hi))
                    unlisted |= levels is None
                    first, last = 0, len(levels or []) - 1

                    def event(k, ev=levels):
                        return ev[k]
                else:
                    first = int(caps_at(np.array([r]), proved, instance.data_bytes)[0]) + 1
                    last = int(caps_at(np.array([r]), next_down(hi), instance.data_bytes)[0])

                    def event(b, rate=r):
                        return byte_time(b, rate)
                if first > last:
                    continue
                pending = True
                step, k = 1, first  # gallop up: the events before k are proved
                while k <= last and not out_of_budget(solve):
                    e = event(k)
                    if e > proved and not test(e, solve):
                        hi, last = e, k - 1
                        break
                    proved, first = max(proved, e), k + 1
                    k, step = k + step, step * 2
                while first <= last and not out_of_budget(solve):  # then bisect on first..last
                    mid = (first + last) // 2
                    e = event(mid)
                    if e <= proved or test(e, solve):
                        proved, first = max(proved, e), mid + 1
                    else:
                        hi, last = e, mid - 1
        return proved, hi, not pending and not unlisted

    top = hi
    proved, hi, complete = narrow(next_down(lo), hi, False)  # counting alone: cheap, monotone in T
    if complete and hi < top and test(hi, True):  # CP-SAT where counting first lets a point through
        proved, hi, complete = narrow(hi, top, True)
    if complete:
        return CountBound(hi, True, best, tests, final=True)
    note = "budget spent" if out_of_budget(True) else "too many lock levels to list"
    return CountBound(max(lo, next_event(instance, seqs, proved, hi)), False, best, tests, note,
                      final=note != "budget spent")


# --- the problem's bound --------------------------------------------------------------------------------------

_BOUNDS: dict = {}  # instance -> (bound, final, wall-clock budget, the relaxation's last point): the last few


def time_bound(instance: FileDomainInstance, upper: float | None = None, deadline: Deadline | None = None) -> float:
    """A lower bound on the modelled time valid for every solution, in the evaluator's arithmetic (no
    deflation): :func:`cheap_bound`, raised by :func:`count_bound` where the instance fits the count
    relaxation. ``upper`` is the evaluated time of a known partition (default: the best of the
    heuristics, run here); the search needs none when the cheap bound meets it. ``deadline`` (the end
    of the running method's budget when :func:`iosched.solve` attaches the bound) cuts the search's
    wall-clock guard; a search stopped by it still gives a valid bound, not kept for later
    calls with more time. The last few results are kept per instance."""
    wall = RELAX_WALL_S if deadline is None else min(RELAX_WALL_S, deadline.remaining())
    known = _BOUNDS.get(instance)
    if known is not None and (known[1] or wall <= known[2] or upper is not None and known[0] >= upper):
        return known[0]
    lo = cheap_bound(instance)
    if not fits_relaxation(instance) or wall <= 0:
        return lo
    start = time.perf_counter()
    if upper is None:
        upper = heuristics_best(instance, Deadline(wall))
    found = count_bound(instance, lo, upper, wall_s=wall - (time.perf_counter() - start))
    value = max(lo, found.value)
    if len(_BOUNDS) >= 16:
        del _BOUNDS[next(iter(_BOUNDS))]
    _BOUNDS[instance] = (value, found.final, wall, found.point)
    return value


def relaxation_point(instance: FileDomainInstance):
    """The last point of the count relaxation that :func:`time_bound` met on ``instance`` (a
    :class:`iosched.models.filedomain_relax.Relaxed`, or None): its loads suggest domains."""
    known = _BOUNDS.get(instance)
    return known[3] if known is not None else None


def heuristics_best(instance: FileDomainInstance, deadline: Deadline | None = None) -> float:
    """The least evaluated time among the registered heuristics' domains (an upper end for the search;
    inf where none runs), those started before ``deadline``."""
    from iosched.core import METHODS

    best = math.inf
    for method in METHODS.values():
        if method.problem == "filedomain" and method.name != "exact":
            if deadline is not None and deadline.expired():
                break
            try:
                domains = method.run(instance).solution
            except ParameterError:
                continue
            if domains is not None:
                best = min(best, evaluate(instance, domains).time)
    return best

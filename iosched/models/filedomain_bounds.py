"""Lower bounds on the file-domain time in the evaluator's own arithmetic: no deflation, no tolerance.

**The evaluator's arithmetic.** :func:`iosched.evaluate.filedomain.evaluate` computes every term of
the time in IEEE double precision from integers: an aggregator's ``fl(fl(B) / r)`` (B its data
bytes, r = ``fl(gbs x 10^9)``), a node's the same with its rate, an extent server's
``fl(base + fl(fl(A g) + fl(R c)))`` (base = its bytes over its rate as above, g grants, c
conflicts, A = ``acquire_s``, R = ``revoke_s``), the token manager's ``fl(fl(A g) + fl(R c))``, and
the time is the largest term. Rounding to nearest is monotone, so every term is a nondecreasing
function of each integer it reads. Hence for a float T the integers that keep a term <= T form a
down-set: bytes B <= ``cap(r, T)`` (the largest such B, found by bisection on the integers with
the evaluator's own expression), and (grants, conflicts) pairs below a staircase
(:func:`iosched.models.filedomain_relax.lock_table`).
A bound here is a float T with a proof that every partition has some term >= T *as the evaluator
computes it*: it is never above the evaluated time of any solution, and it can equal the evaluated
time of a solution exactly (gap 0, not 10^-9).

**The bounds.** :func:`cheap_bound` counts bytes and runs without a model (:func:`data_bound`: the
data in whole bytes over the aggregators' and nodes' capacities, the counting bound with ceil;
:func:`counting_bound`: P' writers make P' runs; each server's data and one grant). The problem's
bound, :func:`iosched.models.filedomain_relax.time_bound`, raises it by the count relaxation, whose
search on T proves, step by step, that no partition takes less than its result.
"""

from __future__ import annotations

import math

import numpy as np

from iosched.instances.filedomain import GB, FileDomainInstance

# --- the evaluator's arithmetic ---------------------------------------------------------------------

def rates(gbs) -> np.ndarray:
    """Bytes per second as the evaluator forms them: ``fl(gbs x 10^9)``."""
    return np.asarray(gbs, dtype=float) * GB


def byte_time(b, rate) -> float:
    """The evaluator's time of ``b`` bytes at ``rate`` bytes/s: fl(fl(b) / rate)."""
    return float(np.float64(b) / np.float64(rate))


def caps_at(rate, T: float, top: int) -> np.ndarray:
    """Per rate (bytes/s, an array), the largest integer B in [0, top] with fl(fl(B) / rate) <= T
    (bisection on the integers: the evaluator's expression is monotone in B), started from a bracket
    around T x rate that is checked (the whole range where the check fails)."""
    r = np.atleast_1d(np.asarray(rate, dtype=float))
    top = int(top)
    guess = np.clip(np.floor(T * r), 0, top).astype(np.int64)
    slack = guess // 2**40 + 4  # T x rate is within a few ulps of the boundary
    lo, hi = np.maximum(guess - slack, 0), np.minimum(guess + slack, top)
    ok_lo = lo.astype(float) / r <= T
    ok_past = (hi == top) | ((hi + 1).astype(float) / r > T)
    lo = np.where(ok_lo & ok_past, lo, 0)  # 0 bytes take 0 s <= T
    hi = np.where(ok_lo & ok_past, hi, top)
    while True:
        open_ = lo < hi
        if not open_.any():
            return lo
        mid = lo + (hi - lo + 1) // 2
        ok = mid.astype(float) / r <= T
        lo = np.where(open_ & ok, mid, lo)
        hi = np.where(open_ & ~ok, mid - 1, hi)


def lock_term(instance: FileDomainInstance, base: float, grants: int, conflicts: int) -> float:
    """The evaluator's lock term of a sequence: base + (A g + R c) on an extent server (base its
    data time), A g + R c at the token manager."""
    lock = instance.acquire_s * float(grants) + instance.revoke_s * float(conflicts)
    return base + lock if instance.locking == "extent" else lock


def next_up(x: float) -> float:
    return math.nextafter(x, math.inf)


def next_down(x: float) -> float:
    return math.nextafter(x, -math.inf)


def smallest_feasible(feasible, lo: float, hi: float) -> float:
    """The least float in (lo, hi] where ``feasible`` (monotone) holds, given it fails at ``lo`` >= 0
    and holds at ``hi``: bisection on the doubles' bit patterns (ordered as integers when positive)."""
    a, b = int(np.float64(lo).view(np.int64)), int(np.float64(hi).view(np.int64))
    while b - a > 1:
        m = (a + b) // 2
        if feasible(float(np.int64(m).view(np.float64))):
            b = m
        else:
            a = m
    return float(np.int64(b).view(np.float64))


# --- the cheap bounds: counting bytes and runs -------------------------------------------------------------

class Capacities:
    """The byte capacities of the aggregators and nodes at a time T, in the evaluator's arithmetic."""

    def __init__(self, instance: FileDomainInstance):
        bw = instance.bandwidth
        self.data = instance.data_bytes
        self.rates, self.inverse = np.unique(rates(bw.aggregator), return_inverse=True)
        self.nodes = None if bw.node is None else np.asarray(instance.aggregator_nodes)
        if self.nodes is not None:
            self.used = np.flatnonzero(np.bincount(self.nodes, minlength=instance.nodes))
            self.node_rates = rates(bw.node)[self.used]

    def aggregators(self, T: float) -> np.ndarray:
        """Per aggregator, the most bytes it can hold within T."""
        return caps_at(self.rates, T, self.data)[self.inverse]

    def total(self, T: float) -> int:
        """The most data bytes all aggregators can hold within T, each node within its own capacity
        too: Σ over nodes of min(node cap, Σ of its aggregators' caps)."""
        caps = self.aggregators(T)
        if self.nodes is None:
            return int(caps.sum())
        if int(caps.max()) * len(caps) < 2**53:
            per_node = np.bincount(self.nodes, weights=caps.astype(float))[self.used].astype(np.int64)
        else:
            per_node = np.array([int(caps[self.nodes == n].sum()) for n in self.used], dtype=object)
        return int(np.minimum(caps_at(self.node_rates, T, self.data), per_node).sum())


def data_bound(instance: FileDomainInstance) -> float:
    """The least float T at which the aggregators (and nodes) can hold the data bytes, each within
    its integer capacity: every partition puts its D bytes on aggregators in whole bytes, so below
    this T some aggregator or node holds more bytes than its capacity, a term > T. With P equal
    aggregators and no node limit this is fl(⌈D/P⌉ / r): the data bound with ceil."""
    D = instance.data_bytes
    bw = instance.bandwidth
    agg = rates(bw.aggregator)
    if bw.node is None and len(set(bw.aggregator)) == 1:
        return byte_time(-(-D // instance.aggregators), agg[0])
    caps = Capacities(instance)
    hi = byte_time(D, agg.min())  # every aggregator (and node) could hold all the data
    if bw.node is not None:
        hi = max(hi, byte_time(D, rates(bw.node).min()))
    lo = D / math.fsum(agg) * (1 - 1e-9)
    while lo > 0 and caps.total(lo) >= D:
        lo /= 2
    return smallest_feasible(lambda t: caps.total(t) >= D, lo, hi)


def counting_bound(instance: FileDomainInstance) -> float:
    """min over P' (aggregators that write) of max(the data over the P' fastest aggregators, the lock
    term of ⌈P'/K⌉ runs and their conflicts on the least loaded of the K lock sequences): P' writers
    make at least P' runs, so some sequence (a server with data, or the token manager's one) holds
    ⌈P'/K⌉ of them. With equal aggregators the data term is fl(⌈D/P'⌉ / r) in whole bytes; else D over
    the sum of the P' largest rates, lowered by (P' + 16) x 2.3e-16 (relative) for the rounding of a
    running sum of P' terms ((P' - 1) u, u = 2^-53) and of the divisions, ours and the evaluator's."""
    D = instance.data_bytes
    agg = rates(instance.bandwidth.aggregator)
    used = np.arange(1, instance.aggregators + 1)
    if len(set(agg.tolist())) == 1:
        data = (-(-D // used)).astype(float) / agg[0]
    else:
        data = D / np.cumsum(np.sort(agg)[::-1]) * (1 - (used + 16) * 2.3e-16)
    if instance.locking == "extent":
        server = instance.server_bytes()
        has = server > 0
        K, base = int(has.sum()), float((server[has] / rates(instance.bandwidth.server)[has]).min())
        runs = -(-used // K)
        lock = base + (instance.acquire_s * runs + instance.revoke_s * (runs - 1))
    else:
        runs = used
        lock = instance.acquire_s * runs + instance.revoke_s * (runs - 1)
    return float(np.maximum(data, lock).min())


def cheap_bound(instance: FileDomainInstance) -> float:
    """The bounds that need no model: :func:`data_bound`, each server's data time plus one grant
    (extent; the first write of a server's data is a grant), the servers' data times and one grant
    at the token manager (token), and :func:`counting_bound`; each is a term the evaluator computes
    (or, for unequal aggregators' counting, a few ulps below one)."""
    bw = instance.bandwidth
    server = instance.server_bytes()
    server_time = server / rates(bw.server)
    terms = [data_bound(instance), counting_bound(instance)]
    if instance.locking == "extent":
        terms.append(float((server_time + (instance.acquire_s * (server > 0) + instance.revoke_s * 0)).max()))
    else:
        terms += [float(server_time.max()), instance.acquire_s * 1 + instance.revoke_s * 0]
    return max(terms)

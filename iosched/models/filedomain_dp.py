"""The linear-partition search of :mod:`iosched.models.filedomain` (``engine=dp``): contiguous domains
in aggregator order, lock costs ignored, by bisection on the time with a greedy fill.
"""

from __future__ import annotations

import numpy as np

from iosched.errors import ParameterError
from iosched.evaluate.filedomain import Domains
from iosched.instances.filedomain import GB, FileDomainInstance
from iosched.models.filedomain_units import (
    from_sequence,
    lock_units,
)
from iosched.solvers import Deadline
from iosched.validate import choice


def dp_partition(instance: FileDomainInstance, granularity: str = "unit", deadline: Deadline | None = None
                 ) -> tuple[Domains, float, bool]:
    """Contiguous domains in aggregator order minimising the fluid time without lock costs.

    Returns the domains, that fluid time (s) and whether the bisection finished (it stops with
    the best domains so far once ``deadline`` has passed). Bisection on T: each aggregator in turn
    takes the most units (or bytes) within T x its bandwidth; T is feasible when all are taken.
    """
    choice("granularity", granularity, ("byte", "unit"), error=ParameterError)
    bw = instance.bandwidth
    cap = np.asarray(bw.aggregator, dtype=float)
    if bw.node is not None:
        if instance.nodes < instance.aggregators or len(set(instance.aggregator_nodes)) < instance.aggregators:
            raise ParameterError("engine=dp needs one aggregator per node when nodes are capacities "
                                 "(aggregators lists a node twice)")
        cap = np.minimum(cap, np.asarray(bw.node)[list(instance.aggregator_nodes)])
    cap = cap * GB
    if granularity == "unit":
        units = lock_units(instance, 10**7)
        prefix = np.r_[0, np.cumsum(units.weight)]
    else:
        prefix = None
    D = instance.data_bytes

    def fill(T: float) -> np.ndarray:
        """Data coordinates where each aggregator's domain ends (greedy)."""
        limits = np.floor(T * cap).astype(np.int64)
        if prefix is None:
            return np.minimum(np.cumsum(limits), D)
        ends, at = np.empty(len(cap), dtype=np.int64), 0
        for i, lim in enumerate(limits):
            at = int(np.searchsorted(prefix, prefix[at] + lim, side="right")) - 1
            ends[i] = prefix[at]
        return ends

    def cost(ends: np.ndarray) -> float:
        return float((np.diff(np.r_[0, ends]) / cap).max())

    # the start covers the data by construction: the fastest aggregator takes all of it (a greedy fill at
    # T = D / max(cap) can fall a unit short, floor(T x cap) rounding D - 1e-16 down); fills bisected on
    # below replace it only when they cover the data too
    fastest = int(np.argmax(cap))
    best = np.where(np.arange(len(cap)) >= fastest, D, 0).astype(np.int64)
    lo, hi = D / cap.sum() * (1 - 1e-12), cost(best)
    finished = False
    for _ in range(200):
        if hi - lo <= 1e-12 * hi:
            finished = True
            break
        if deadline is not None and deadline.expired():
            break
        mid = (lo + hi) / 2
        ends = fill(mid)
        if ends[-1] >= D:
            best, hi = ends, cost(ends)
        else:
            lo = mid
    domains = from_sequence(instance, np.arange(len(cap)), np.diff(np.r_[0, best]))
    server_time = float((instance.server_bytes() / (np.asarray(bw.server) * GB)).max())
    return domains, max(hi, server_time), finished
